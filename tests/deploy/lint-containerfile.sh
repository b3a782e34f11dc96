#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# lint-containerfile.sh: checks deploy/Containerfile without a container runtime, against this
# Debian 12 host's packages (dpkg), run by tests/deploy/check-deploy.sh.
#
# Usage: lint-containerfile.sh CONTAINERFILE REPO_ROOT BPFPROF TMPDIR
# Prints one "PASS|FAIL NAME: DETAIL" line per check; exit 0 unless the script itself broke.
# Checks:
#   stages       FROM debian:12 AS build, then FROM debian:12-slim; the exact ENTRYPOINT; no USER
#   apt          every apt-get install has --no-install-recommends, every RUN cleans its lists
#   packages     every package named exists in Debian 12 (installed here, or apt-cache knows it)
#   runtime_libs every library ldd BPFPROF loads comes from a package the runtime stage names
#                (a direct NEEDED one) or from their dependencies or the essential base
#   linked_libs  every pkg-config module of the Makefile: its -dev package in the build stage,
#                the package of its shared library named in the runtime stage (a library not
#                yet NEEDED, as json-c before the agent uses it, still counts)
#   build_tools  the Makefile's CC, CLANG, LLVM_STRIP, BPFTOOL, PROTOC_C, PKG_CONFIG and
#                LDLIBS' static libraries come from the build stage's packages or dependencies
#   headers      every <header> user/ and bpf/ include resolves to a file of those packages
#   copy_context "make -n all" succeeds in a tree holding only the build stage's COPY sources
set -u

FILE=$1
ROOT=$2
BIN=$3
WORK=$4

out() { echo "$1 $2: $3"; }
check() {	# check NAME OK_DETAIL FAIL_DETAIL BAD...: PASS when no BAD is given
	local name=$1 ok=$2 ko=$3

	shift 3
	if [ $# -eq 0 ]; then
		out PASS "$name" "$ok"
	else
		out FAIL "$name" "$ko: $*"
	fi
}

# --- parsing: instructions with continuations joined and comments dropped, per stage --------
# instr.txt: "STAGE<TAB>INSTRUCTION ARGS" (stage 0 = first FROM).
awk '
	/^[ \t]*#/ { next }
	{
		line = cont line $0
		if (sub(/\\[ \t]*$/, "", line)) { cont = line " "; line = ""; next }
		cont = ""
		if (line ~ /^[ \t]*$/) { line = ""; next }
		gsub(/[ \t]+/, " ", line); sub(/^ /, "", line)
		if (toupper(line) ~ /^FROM /) stage++
		print stage - 1 "\t" line
		line = ""
	}' "$FILE" >"$WORK/instr.txt"

# packages STAGE: the packages "apt-get install" names in that stage.
packages() {
	awk -F'\t' -v s="$1" '$1 == s && toupper($2) ~ /^RUN / {
		n = split($2, w, " ")
		for (i = 1; i <= n; i++) {
			if (w[i] == "install" && w[i - 1] == "apt-get") { on = 1; continue }
			if (w[i] == "&&" || w[i] == ";" || w[i] == "|") on = 0
			if (on && w[i] !~ /^-/) print w[i]
		}
	}' "$WORK/instr.txt" | sort -u
}
BUILD_PKGS=$(packages 0)
RUNTIME_PKGS=$(packages 1)

# --- dpkg helpers ----------------------------------------------------------------------------
dpkg-query -W -f='${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\n' >"$WORK/dpkg.txt"

# closure PKG...: the packages and, recursively, their Depends and Pre-Depends (the first of
# alternatives, as apt picks), among those installed here.
closure() {
	printf '%s\n' "$@" | awk -F'\t' '
		NR == FNR { deps[$1] = $3; next }
		{ todo[++n] = $1 }
		END {
			while (n > 0) {
				p = todo[n--]
				if (p == "" || (p in seen)) continue
				seen[p] = 1
				print p
				m = split(deps[p], d, ",")
				for (i = 1; i <= m; i++) {
					q = d[i]
					sub(/\|.*/, "", q); sub(/\(.*/, "", q); sub(/:.*/, "", q)
					gsub(/[ \t]/, "", q)
					if (q in deps) todo[++n] = q
				}
			}
		}' "$WORK/dpkg.txt" -
}
ESSENTIAL=$(awk -F'\t' '$2 == "yes" { print $1 }' "$WORK/dpkg.txt")
BASE=$(closure $ESSENTIAL | sort -u)
BUILD_ALL=$(closure $BUILD_PKGS $ESSENTIAL | sort -u)
RUNTIME_ALL=$(closure $RUNTIME_PKGS $ESSENTIAL | sort -u)

# owner FILE: the package holding FILE (usrmerge: dpkg may list it under /lib or /usr/lib),
# "?" when none. From an index of the dpkg file lists, built once (dpkg -S per file is slow).
for f in /var/lib/dpkg/info/*.list; do
	p=${f##*/}
	printf '%s\t%s\n' "${p%.list}" "$f"
done | awk -F'\t' '{ pkg = $1; sub(/:.*/, "", pkg)
	while ((getline line < $2) > 0)
		if (line ~ /^(\/usr)?\/(lib|lib64|include|bin|sbin)\//) print line "\t" pkg
	close($2) }' >"$WORK/files.tsv"
owner() {
	local f p

	for f in "$1" "$(readlink -f "$1")"; do
		for p in "$f" "${f#/usr}" "/usr$f"; do
			awk -F'\t' -v f="$p" '$1 == f { print $2; ok = 1; exit }
				END { exit !ok }' "$WORK/files.tsv" && return 0
		done
	done
	echo "?"
}

in_list() {	# in_list WORD LIST
	grep -qxF -- "$1" <<<"$2"
}

# Makefile variables, as make sees them (one make run: it runs pkg-config and clang -v).
printf 'print-vars:\n\t@$(foreach v,$(VARS),printf "%%s=%%s\\n" $(v) "$($(v))";)\n' \
	>"$WORK/printvar.mk"
make -s --no-print-directory -C "$ROOT" -f Makefile -f "$WORK/printvar.mk" print-vars \
	VARS="DEPS_PKGS CC CLANG LLVM_STRIP BPFTOOL PROTOC_C PKG_CONFIG LDLIBS" >"$WORK/vars.txt"
mkvar() {
	sed -n "s/^$1=//p" "$WORK/vars.txt"
}

# --- stages ----------------------------------------------------------------------------------
froms=$(awk -F'\t' 'toupper($2) ~ /^FROM / { print $2 }' "$WORK/instr.txt" | tr '\n' '|')
bad=()
[ "$froms" = "FROM debian:12 AS build|FROM debian:12-slim|" ] || bad+=("FROM lines '$froms'")
entry=$(awk -F'\t' '$1 == 1 && toupper($2) ~ /^ENTRYPOINT / { sub(/^[^ ]+ /, "", $2); e = $2 }
	END { print e }' "$WORK/instr.txt")
[ "$entry" = '["/usr/local/bin/bpfprof","agent"]' ] ||
	bad+=("runtime ENTRYPOINT '$entry'")
grep -qxiF $'1\tCOPY --from=build /usr/local/bin/bpfprof /usr/local/bin/bpfprof' \
	"$WORK/instr.txt" || bad+=("no COPY --from=build of /usr/local/bin/bpfprof")
grep -qiE $'^[0-9]+\tUSER ' "$WORK/instr.txt" && bad+=("a USER line (the agent must run as root)")
check containerfile_stages \
	'debian:12 build, debian:12-slim runtime, ENTRYPOINT ["/usr/local/bin/bpfprof","agent"], root' \
	'stages' "${bad[@]}"

# --- apt hygiene -----------------------------------------------------------------------------
bad=()
while IFS=$'\t' read -r stage instr; do
	[[ "$instr" == *"apt-get install"* && "$instr" != *--no-install-recommends* ]] &&
		bad+=("stage $stage: apt-get install without --no-install-recommends")
	[[ "$instr" == *"apt-get update"* && "$instr" != *"rm -rf /var/lib/apt/lists/*"* ]] &&
		bad+=("stage $stage: apt-get update without rm -rf /var/lib/apt/lists/*")
done < <(awk -F'\t' 'toupper($2) ~ /^RUN /' "$WORK/instr.txt")
[ -n "$BUILD_PKGS" ] && [ -n "$RUNTIME_PKGS" ] || bad+=("no apt-get install in a stage")
check containerfile_apt 'apt-get install --no-install-recommends, lists removed in the same RUN' \
	'apt' "${bad[@]}"

# --- every named package is a Debian 12 package ----------------------------------------------
bad=()
for p in $BUILD_PKGS $RUNTIME_PKGS; do
	awk -F'\t' -v p="$p" '$1 == p { f = 1 } END { exit !f }' "$WORK/dpkg.txt" && continue
	apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || bad+=("$p")
done
check containerfile_packages \
	"$(wc -w <<<"$BUILD_PKGS $RUNTIME_PKGS") packages, all known to Debian 12" \
	'not installed here and unknown to apt-cache' "${bad[@]}"

# --- runtime libraries -----------------------------------------------------------------------
bad=()
needed=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
nlibs=0
while read -r soname path; do
	[ -n "$path" ] || continue
	nlibs=$((nlibs + 1))
	pkg=$(owner "$path")
	if in_list "$soname" "$needed"; then
		in_list "$pkg" "$RUNTIME_PKGS" || in_list "$pkg" "$BASE" ||
			bad+=("$soname (NEEDED, package $pkg not named)")
	else
		in_list "$pkg" "$RUNTIME_ALL" || bad+=("$soname (package $pkg not pulled in)")
	fi
done < <(ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
[ "$nlibs" -gt 0 ] || bad+=("ldd resolved no library of $BIN")
check containerfile_runtime_libs \
	"the $nlibs libraries ldd resolves come from the runtime stage's packages" \
	'libraries the runtime stage would lack' "${bad[@]}"

# --- pkg-config modules: -dev in the build stage, the library's package at runtime -----------
bad=()
mods=$(mkvar DEPS_PKGS)
for m in $mods; do
	pc=$(pkg-config --path "$m" 2>/dev/null)
	if [ -z "$pc" ]; then
		bad+=("$m: no .pc file")
		continue
	fi
	dev=$(owner "$pc")
	in_list "$dev" "$BUILD_PKGS" || bad+=("$m: $dev not in the build stage")
	for l in $(pkg-config --libs-only-l "$m"); do
		so=$(gcc -print-file-name="lib${l#-l}.so")
		lib=$(owner "$(readlink -f "$so")")
		in_list "$lib" "$RUNTIME_PKGS" ||
			bad+=("$m: $lib (lib${l#-l}.so) not in the runtime stage")
	done
done
[ -n "$mods" ] || bad+=("no DEPS_PKGS in the Makefile")
check containerfile_linked_libs \
	"pkg-config modules $(echo $mods): -dev packages built with, libraries installed" \
	'missing' "${bad[@]}"

# --- build tools and static libraries --------------------------------------------------------
bad=()
for v in CC CLANG LLVM_STRIP BPFTOOL PROTOC_C PKG_CONFIG; do
	cmd=$(mkvar "$v")
	path=$(command -v "${cmd%% *}")
	pkg=$(owner "${path:-/nonexistent}")
	in_list "$pkg" "$BUILD_ALL" || bad+=("$v=$cmd ($pkg)")
done
for l in $(mkvar LDLIBS); do
	case $l in -l*) ;; *) continue ;; esac
	f=$(gcc -print-file-name="lib${l#-l}.so")
	[ "$f" = "lib${l#-l}.so" ] && f=$(gcc -print-file-name="lib${l#-l}.a")
	pkg=$(owner "$(readlink -f "$f")")
	in_list "$pkg" "$BUILD_ALL" || bad+=("$l ($pkg)")
done
check containerfile_build_tools 'compilers, generators and -l libraries come from the build stage' \
	'not installed by the build stage' "${bad[@]}"

# --- headers ---------------------------------------------------------------------------------
bad=()
dirs=$(gcc -xc -E -v - </dev/null 2>&1 |
	sed -n '/<...> search starts here:/,/End of search list./p' | grep '^ /' | tr -d ' ')
dirs+=" $(pkg-config --cflags-only-I $mods | sed 's/-I//g')"
nh=0
for h in $(cat "$ROOT"/user/*/*.[ch] "$ROOT"/user/*/*/*.[ch] "$ROOT"/bpf/*.[ch] |
	   sed -n 's/^[ \t]*#[ \t]*include[ \t]*<\([^>]*\)>.*/\1/p' | sort -u); do
	nh=$((nh + 1))
	f=
	for d in $dirs; do
		[ -e "$d/$h" ] && { f=$d/$h; break; }
	done
	if [ -z "$f" ]; then
		bad+=("<$h> (not found)")
		continue
	fi
	pkg=$(owner "$f")
	in_list "$pkg" "$BUILD_ALL" || bad+=("<$h> ($pkg)")
done
check containerfile_headers \
	"the $nh system headers user/ and bpf/ include come from the build stage" \
	'headers the build stage lacks' "${bad[@]}"

# --- the COPY set builds ---------------------------------------------------------------------
bad=()
ctx=$WORK/context
rm -rf "$ctx"
mkdir -p "$ctx"
while read -r src; do
	[ -e "$ROOT/$src" ] || { bad+=("COPY source $src does not exist"); continue; }
	cp -r "$ROOT/$src" "$ctx/"
done < <(awk -F'\t' '$1 == 0 && toupper($2) ~ /^COPY / && $2 !~ /--from/ {
	n = split($2, w, " ")
	for (i = 2; i < n; i++) print w[i] }' "$WORK/instr.txt")
if ! make -n -C "$ctx" OUTPUT="$WORK/out" all >"$WORK/make-n.txt" 2>&1; then
	bad+=("make -n all: $(grep -m1 -iE 'error|no rule|no such' "$WORK/make-n.txt")")
fi
check containerfile_copy_context "make -n all succeeds with only $(ls "$ctx" | tr '\n' ' ')" \
	'the build stage copies too little' "${bad[@]}"
exit 0

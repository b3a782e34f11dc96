#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetches and unpacks a Debian kernel package for make vmtest.
#
#   tools/vmtest/fetch-kernel.sh KERNEL VMTEST_DIR
#
# KERNEL is a series (6.1: bookworm, 6.12: bookworm-backports, 5.10: bullseye-security, 7.2:
# sid) or the path of a linux-image-*.deb. A series is resolved to its newest
# linux-image-<ver>-amd64 package through a private apt state under VMTEST_DIR/apt/<series> (its
# own sources.list, lists, cache and empty dpkg status: /etc/apt and the machine's lists are
# never touched). The .deb is kept under VMTEST_DIR/debs and reused while it is still the
# newest. The package is unpacked into VMTEST_DIR/<kver>/root (vmlinuz and lib/modules/<kver>,
# with modules.dep made by depmod, which the package leaves to its postinst). Prints <kver> on
# stdout.
# Debian's 7.x packages are split: linux-image-<kver> is an empty meta package; the image is in
# linux-binary-unsigned-<kver> (or the signed linux-binary-<kver>) as
# usr/lib/modules/<kver>/vmlinuz[.unsigned], the modules in linux-modules-<kver>, and
# modules.builtin, modules.order and the config in linux-base-<kver>. The three are fetched and
# unpacked into one root, laid out as the older packages are (boot/vmlinuz-<kver> and lib:
# symbolic links into usr/lib).
# sid (the series in SID_SERIES) changes weekly and drops a kernel once it has a newer one: the
# series is pinned, and its packages are kept in VMTEST_CACHE/<series> (default
# /var/cache/bpfprof/vmtest: outside the checkout, for CI runs in a fresh clone), the newest
# set fetched named in its file "current" (its date, then the files). When apt fails, or sid
# has no kernel of the series any more, the cached set is unpacked instead; when sid has a
# newer series, that is said too. Those lines go to stderr and to VMTEST_DIR/notice-<series>
# (.ci/run prints them at its end). With nothing cached either the exit status is 3: no
# kernel of that series to boot.
# VMTEST_MIRROR: the Debian archive (default http://deb.debian.org/debian; one that does not
# answer makes the fetch fail, as a test of the cache).
# With VMTEST_HEADERS=1 (a series only), the kernel's headers too: linux-headers-<kver> and its
# -common package, unpacked into one tree, VMTEST_DIR/<kver>/headers (what bcc compiles its
# programs against: BCC_KERNEL_SOURCE; the packages split it into an arch part and a common
# part, which bcc finds only under /lib/modules/<kver>/{build,source}). A tree of headers,
# not a kbuild tree: its Makefile and scripts point into packages not unpacked (bcc reads
# only the include paths).
set -euo pipefail

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
DEBIAN=${VMTEST_MIRROR:-http://deb.debian.org/debian}
SECURITY=http://deb.debian.org/debian-security
# The series taken from sid, pinned: when sid moves on (this script says so), move it here,
# in .ci/run, docs/vmtest.md and README.md.
SID_SERIES=7.2

log() { echo "vmtest: $*" >&2; }
die() { log "$*"; exit 1; }
# A line for whoever reads the log's end too: stderr and VMTEST_DIR/notice-<series> ($NOTICE).
notice() { log "$*"; echo "$*" >>"$NOTICE"; }

# The apt sources of a kernel series.
series_sources() {
	local opt="[arch=amd64 signed-by=$KEYRING]"
	case $1 in
	6.1)
		echo "deb $opt $DEBIAN bookworm main"
		echo "deb $opt $DEBIAN bookworm-updates main"
		echo "deb $opt $SECURITY bookworm-security main"
		;;
	6.12) echo "deb $opt $DEBIAN bookworm-backports main" ;;
	5.10) echo "deb $opt $SECURITY bullseye-security main" ;;
	"$SID_SERIES") echo "deb $opt $DEBIAN sid main" ;;
	*) die "unknown KERNEL=$1 (6.1, 6.12, 5.10, $SID_SERIES or a linux-image-*.deb)" ;;
	esac
}

# apt-get/apt-cache options that confine apt to the private state in $APT_DIR.
apt_opts() {
	APT_OPTS=(
		-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::Etc::preferences=$APT_DIR/preferences"
		-o "Dir::Etc::preferencesparts=$APT_DIR/preferences.d"
		-o "Dir::State=$APT_DIR/state" -o "Dir::State::Lists=$APT_DIR/state/lists"
		-o "Dir::State::status=$APT_DIR/state/status"
		-o "Dir::Cache=$APT_DIR/cache" -o "Dir::Cache::archives=$APT_DIR/cache/archives"
		# Kept, whatever /etc/apt says (docker-clean empties them): each apt-cache call
		# would parse the lists again (sid's: 3 s each).
		-o "Dir::Cache::pkgcache=$APT_DIR/cache/pkgcache.bin"
		-o "Dir::Cache::srcpkgcache=$APT_DIR/cache/srcpkgcache.bin"
		-o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64
		-o Acquire::Languages=none -o Acquire::Retries=3
		-o APT::Sandbox::User=root
	)
}

apt_update() {
	mkdir -p "$APT_DIR"/{state/lists/partial,cache/archives/partial,preferences.d}
	touch "$APT_DIR/state/status" "$APT_DIR/preferences"
	series_sources "$1" >"$APT_DIR/sources.list"
	log "apt-get update ($1, private state in $APT_DIR)"
	apt-get "${APT_OPTS[@]}" -qq update >&2 || die "apt-get update failed"
}

# The generic amd64 kernel versions (7.2.13+deb14-amd64) of the packages in $APT_DIR, one a
# line, sorted with sort -V: linux-image-<kver>[-unsigned] less rt, cloud and -dbg packages.
kernel_versions() {
	apt-cache "${APT_OPTS[@]}" pkgnames linux-image- |
		grep -E "^linux-image-[0-9]+\.[0-9]+[.-][0-9][^ ]*-amd64(-unsigned)?$" |
		grep -Ev -- '-(rt|cloud)-amd64' | sed -E 's/^linux-image-//; s/-unsigned$//' | sort -uV
}

# The newest kernel version of series $1 in $APT_DIR.
newest_kver() {
	local series=${1//./\\.} kver
	kver=$(kernel_versions | grep -E "^${series}[.-]" | tail -n 1)
	[ -n "$kver" ] || die "no linux-image-$1*-amd64 in $(sed 's/\[[^]]*\] //' "$APT_DIR/sources.list")"
	echo "$kver"
}

has_package() {
	apt-cache "${APT_OPTS[@]}" show "$1" >/dev/null 2>&1
}

# The packages of kernel version $1, one a line: the unsigned image when there is one (the
# same image without the Secure Boot signature), else the signed one; from 7.x, the image's
# linux-binary-* package, linux-modules-* and linux-base-* (linux-image-* is a meta package).
kernel_packages() {
	local kver=$1 p
	for p in "linux-binary-unsigned-$kver" "linux-binary-$kver" "linux-image-$kver-unsigned" \
		"linux-image-$kver"; do
		has_package "$p" || continue
		echo "$p"
		if [[ $p == linux-binary-* ]]; then
			has_package "linux-modules-$kver" || die "no linux-modules-$kver beside $p"
			echo "linux-modules-$kver"
			if has_package "linux-base-$kver"; then echo "linux-base-$kver"; fi
		fi
		return
	done
	die "no installable package for $kver"
}

# Downloads $1 (newest version) into $DEB_DIR unless there already; prints the .deb path.
# Through a temporary directory: an interrupted download leaves no .deb taken for whole.
download() {
	local pkg=$1 ver file tmp
	local arch
	ver=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" | sed -n 's/^Version: //p')
	arch=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" |
		sed -n 's/^Architecture: //p')
	[ -n "$ver" ] && [ -n "$arch" ] || die "no package $pkg in $APT_DIR"
	file=$DEB_DIR/${pkg}_${ver//:/%3a}_$arch.deb
	if [ ! -f "$file" ]; then
		log "downloading $pkg $ver"
		tmp=$(mktemp -d "$DEB_DIR/.download.XXXXXX")
		if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" -qq download "$pkg=$ver" >&2); then
			rm -rf "$tmp"
			die "apt-get download $pkg failed"
		fi
		if ! mv "$tmp/${file##*/}" "$file" 2>/dev/null; then
			rm -rf "$tmp"
			die "apt-get download did not write ${file##*/}"
		fi
		rmdir "$tmp"
	fi
	echo "$file"
}

# The .deb paths of series $1's newest kernel, one a line, fetched through $APT_DIR into
# $DEB_DIR. For sid's series, says so when sid has a newer series than the one pinned.
fetch_series() {
	local series=$1 kver newest pkgs pkg
	apt_update "$series"
	if [ "$series" = "$SID_SERIES" ]; then
		newest=$(kernel_versions | tail -n 1)
		if [ -n "$newest" ] && [[ $newest != "$series".* ]] && [[ $newest != "$series"-* ]] &&
			[ "$(printf '%s\n' "$series" "$newest" | sort -V | tail -n 1)" = "$newest" ]; then
			notice "sid has moved on to Linux $(grep -oE '^[0-9]+\.[0-9]+' <<<"$newest")" \
				"($newest): vmtest's sid" \
				"series stays $series while sid has it (SID_SERIES in tools/vmtest/fetch-kernel.sh)"
		fi
	fi
	kver=$(newest_kver "$series") || exit 1
	pkgs=$(kernel_packages "$kver") || exit 1
	for pkg in $pkgs; do
		download "$pkg" || exit 1
	done
}

# True when every line of $1 is a file's path.
all_files() {
	local f
	while read -r f; do
		[ -f "$f" ] || return 1
	done <<<"$1"
}

# sid's series ($1): the .deb paths of its newest kernel, fetched, or else of the one cached
# last (VMTEST_CACHE); exit status 3 with neither. The cache holds the newest set only.
fetch_sid() {
	local series=$1 debs current f
	DEB_DIR=${VMTEST_CACHE:-/var/cache/bpfprof/vmtest}/$series
	if ! mkdir -p "$DEB_DIR" 2>/dev/null || [ ! -w "$DEB_DIR" ]; then
		log "cannot write $DEB_DIR (VMTEST_CACHE): caching in $VMTEST_DIR/cache/$series"
		DEB_DIR=$VMTEST_DIR/cache/$series
		mkdir -p "$DEB_DIR"
	fi
	current=$DEB_DIR/current
	# One fetch at a time per cache: another checkout's may be pruning it.
	exec 9>"$DEB_DIR/.lock"
	flock -w 900 9 || die "$DEB_DIR is locked by another fetch"
	if debs=$(fetch_series "$series") && [ -n "$debs" ]; then
		{ date -u +%Y-%m-%dT%H:%MZ; sed 's|.*/||' <<<"$debs"; } >"$current.tmp"
		mv "$current.tmp" "$current"
		for f in "$DEB_DIR"/*.deb; do
			grep -qxF "$f" <<<"$debs" || rm -f "$f"
		done
		echo "$debs"
		return
	fi
	if [ -s "$current" ] && debs=$(sed "1d; s|^|$DEB_DIR/|" "$current") && [ -n "$debs" ] &&
		all_files "$debs"; then
		notice "sid's $series kernel could not be fetched (above): booting the one cached on" \
			"$(sed -n 1p "$current"), $(sed -n 2p "$current")"
		echo "$debs"
		return
	fi
	notice "sid's $series kernel could not be fetched (above), and none is cached in $DEB_DIR:" \
		"no $series kernel to boot"
	exit 3
}

# The kernel version a package holds ($1: a .deb): its boot/vmlinuz-<kver> or
# usr/lib/modules/<kver>/vmlinuz[.unsigned]; nothing for a package without an image.
image_kver() {
	local kver
	kver=$(dpkg-deb --fsys-tarfile "$1" | tar -t | sed -nE \
		-e 's|^\./boot/vmlinuz-(.+)$|\1|p' \
		-e 's|^\./usr/lib/modules/([^/]+)/vmlinuz(\.unsigned)?$|\1|p')
	echo "${kver%%$'\n'*}"	# the first (no head: its early exit would fail the pipe)
}

# Unpacks the packages $@ (one kernel) into $VMTEST_DIR/<kver>/root once; prints <kver>.
unpack() {
	local deb kver='' k dir root image
	for deb in "$@"; do
		# Not the modules' 110 MB to list: no image there.
		case ${deb##*/} in linux-modules-* | linux-base-*) continue ;; esac
		k=$(image_kver "$deb")
		[ -z "$k" ] || kver=$k
	done
	[ -n "$kver" ] || die "$*: no boot/vmlinuz-* nor usr/lib/modules/*/vmlinuz*"
	dir=$VMTEST_DIR/$kver
	root=$dir/root
	if [ ! -e "$root/.unpacked" ] || [ "$(cat "$root/.unpacked")" != "$*" ]; then
		log "unpacking $(for deb in "$@"; do basename "$deb"; done | paste -sd ' ')"
		rm -rf "$root"
		mkdir -p "$root"
		for deb in "$@"; do
			dpkg-deb -x "$deb" "$root"
		done
		# A merged /usr (7.x): the older packages' paths, which vmtest.sh, mkinitramfs.sh,
		# kernel-btf.sh and init.sh use.
		if [ ! -e "$root/lib" ] && [ -d "$root/usr/lib/modules" ]; then
			ln -s usr/lib "$root/lib"
		fi
		if [ ! -e "$root/boot/vmlinuz-$kver" ]; then
			for image in vmlinuz vmlinuz.unsigned ''; do
				[ -n "$image" ] || die "$*: no image of $kver"
				[ -f "$root/usr/lib/modules/$kver/$image" ] && break
			done
			mkdir -p "$root/boot"
			ln -s "../usr/lib/modules/$kver/$image" "$root/boot/vmlinuz-$kver"
		fi
		depmod -b "$root" "$kver"
		[ -f "$root/lib/modules/$kver/modules.dep" ] || die "depmod made no modules.dep for $kver"
		echo "$*" >"$root/.unpacked"
	fi
	echo "$kver"
}

# Unpacks the headers of <kver> ($1) into $VMTEST_DIR/<kver>/headers once: the -common
# package's tree with the arch package's (generated headers, .config) laid over it.
headers() {
	local kver=$1 arch common dir tmp
	arch=$(download "linux-headers-$kver")
	common=$(download "linux-headers-${kver%-amd64}-common")
	dir=$VMTEST_DIR/$kver/headers
	if [ -e "$dir/.unpacked" ] && [ "$(cat "$dir/.unpacked")" = "$arch $common" ]; then
		return
	fi
	log "unpacking the headers of $kver"
	rm -rf "$dir"
	tmp=$(mktemp -d "$VMTEST_DIR/$kver/headers.XXXXXX")
	dpkg-deb -x "$common" "$tmp"
	dpkg-deb -x "$arch" "$tmp"
	mv "$tmp/usr/src/linux-headers-${kver%-amd64}-common" "$dir"
	cp -a "$tmp/usr/src/linux-headers-$kver/." "$dir/"
	rm -rf "$tmp"
	[ -f "$dir/include/generated/autoconf.h" ] || die "$dir: no include/generated/autoconf.h"
	echo "$arch $common" >"$dir/.unpacked"
}

main() {
	[ $# -eq 2 ] || die "usage: $0 KERNEL VMTEST_DIR"
	local kernel=$1 list kver
	local -a debs
	VMTEST_DIR=$(realpath -m "$2")
	DEB_DIR=$VMTEST_DIR/debs
	mkdir -p "$DEB_DIR"
	case $kernel in
	*.deb)
		list=$(realpath "$kernel")
		[ -f "$list" ] || die "$kernel: no such file"
		;;
	*)
		APT_DIR=$VMTEST_DIR/apt/$kernel
		apt_opts
		series_sources "$kernel" >/dev/null
		if [ "$kernel" = "$SID_SERIES" ]; then
			NOTICE=$VMTEST_DIR/notice-$kernel
			: >"$NOTICE"
			list=$(fetch_sid "$kernel") || exit $?
		else
			NOTICE=/dev/null
			list=$(fetch_series "$kernel") || exit 1
		fi
		;;
	esac
	mapfile -t debs <<<"$list"
	kver=$(unpack "${debs[@]}")
	if [ "${VMTEST_HEADERS:-0}" = 1 ]; then
		[ -n "${APT_DIR:-}" ] ||
			die "VMTEST_HEADERS=1 needs a series (6.1, 6.12, 5.10, $SID_SERIES), not a .deb"
		headers "$kver"
	fi
	echo "$kver"
}

main "$@"

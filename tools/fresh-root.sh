#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# fresh-root.sh [-k] [-m] [-u] [-p PKGS] [-r RELEASE] [RELEASE] [DIR]: a fresh Debian root, the one
# mechanism for every root the tests and checks need (run as root). By default it runs the
# README's first two commands, `make demo` and `make test`, from a clean clone of this
# repository's HEAD in that root, entered as a container's root (its own mount namespace,
# pivot_root) on this machine's kernel: it proves that the project's own files install
# everything its build, demo and tests use, on each Debian release users install.
#   RELEASE  bookworm or 12, trixie or 13 (the default: Debian's stable), forky or 14, sid
#            (also -r RELEASE). The root is debootstrap's minbase plus make, git and
#            ca-certificates, with the release's own apt sources (deb822, as its installer
#            writes them: RELEASE, RELEASE-updates and RELEASE-security; sid has only sid).
#   DIR      the root (default build/fresh-root-RELEASE). Every run starts clean: DIR is a copy
#            of a pristine base, debootstrap'ed once per release and kept in
#            $FRESH_ROOT_CACHE/RELEASE (default /var/cache/bpfprof/fresh-root); DIR is removed
#            afterwards unless -k.
#   -u       debootstrap the release's cached base again first (sid and testing move daily).
#   -p PKGS  packages (separated by spaces or commas) apt-get installs in DIR before the
#            commands, e.g. a later CPython for a container root.
#   -m       make DIR only (with -p's packages), print its path and exit, keeping it: for
#            callers that run their own commands or containers in it. Without -m, DIR is
#            entered and CMDS run.
# The .debs apt fetches are kept in $FRESH_ROOT_CACHE/RELEASE.debs, bind-mounted on the root's
# /var/cache/apt/archives (apt checks each against the release's signed indexes): a run installs
# everything again but downloads only what changed.
# Environment: CMDS (default "make demo && make test") runs instead, CI passed through.
set -eu

# say MSG: progress on stderr (with -m, stdout carries only the root's path).
say() {
	echo "fresh-root: $*" >&2
}

usage() {
	sed -n '3,4p' "$0" | sed 's/^# //' >&2
	exit 2
}

# release_name NAME: the codename of NAME (a codename or a version number), or nothing.
release_name() {
	case "$1" in
	11 | bullseye) echo bullseye ;;
	12 | bookworm) echo bookworm ;;
	13 | trixie) echo trixie ;;
	14 | forky) echo forky ;;
	sid | unstable) echo sid ;;
	esac
}

keep=0
make_only=0
update=0
extra=
release=
while getopts kmup:r: opt; do
	case "$opt" in
	k) keep=1 ;;
	m) make_only=1 keep=1 ;;
	u) update=1 ;;
	p) extra="$extra ${OPTARG//,/ }" ;;
	r) release=$(release_name "$OPTARG")
	   [ -n "$release" ] || { echo "fresh-root: unknown release $OPTARG" >&2; exit 2; } ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ] && [ -n "$(release_name "$1")" ]; then
	release=$(release_name "$1")
	shift
fi
[ $# -le 1 ] || usage
release=${release:-trixie}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
root=$(realpath -m "${1:-$repo/build/fresh-root-$release}")
cache=$(realpath -m "${FRESH_ROOT_CACHE:-/var/cache/bpfprof/fresh-root}")
base=$cache/$release
debs=$cache/$release.debs
cmds=${CMDS:-make demo && make test}
mirror=http://deb.debian.org/debian

if [ "$(id -u)" -ne 0 ]; then
	echo "fresh-root: run as root (debootstrap, mounts, pivot_root)" >&2
	exit 1
fi
case "$root" in
/ | "$cache" | "$cache"/* | "$repo")
	echo "fresh-root: $root cannot be the root" >&2
	exit 2 ;;
esac

# sources SUITE: the deb822 apt sources of SUITE, as Debian's installer writes them.
sources() {
	local suites="$1 $1-updates"

	[ "$1" = sid ] && suites=sid
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n' "$mirror" "$suites"
	printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	[ "$1" = sid ] && return 0
	printf '\nTypes: deb\nURIs: http://security.debian.org/debian-security\n'
	printf 'Suites: %s-security\nComponents: main\n' "$1"
	printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
}

# The pristine base: made in a temporary directory, renamed into place once complete, so an
# interrupted debootstrap is never taken for a base.
if [ "$update" = 1 ] || [ ! -d "$base/etc" ]; then
	"$repo/tools/install-deps.sh" debootstrap debian-archive-keyring
	mkdir -p "$cache"
	rm -rf --one-file-system "$base.new"
	say "debootstrap --variant=minbase --include=make,git,ca-certificates $release"
	t0=$(date +%s)
	debootstrap --variant=minbase --include=make,git,ca-certificates \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$release" "$base.new" "$mirror" >"$cache/$release.log" 2>&1 || {
		tail -n 20 "$cache/$release.log" >&2
		echo "fresh-root: debootstrap $release failed (log: $cache/$release.log)" >&2
		exit 1
	}
	rm -f "$base.new/etc/apt/sources.list"
	sources "$release" >"$base.new/etc/apt/sources.list.d/debian.sources"
	rm -rf "$base.new/var/cache/apt/archives/"*.deb "$base.new/var/lib/apt/lists/"*_*
	rm -rf --one-file-system "$base"
	mv "$base.new" "$base"
	say "base $base made in $(($(date +%s) - t0)) s"
fi
mkdir -p "$debs/partial"

mounted=()
cleanup() {
	local i

	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R -l "${mounted[i]}" 2>/dev/null || true
	done
	if [ "$keep" = 0 ]; then
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT

if grep -q " $root[/ ]" /proc/mounts; then
	echo "fresh-root: $root has mounts (another run in it?)" >&2
	trap - EXIT
	exit 1
fi
# Removed only when it is a root (a previous run's) or empty: never a directory given by mistake.
if [ -d "$root" ] && [ ! -e "$root/etc/debian_version" ] && [ -n "$(ls -A "$root")" ]; then
	echo "fresh-root: $root is not empty and not a Debian root: not removed" >&2
	trap - EXIT
	exit 1
fi
rm -rf --one-file-system "$root"
mkdir -p "$(dirname "$root")"
cp -a --reflink=auto "$base" "$root"
# sid's Release file says it expires a week after it is written, and a mirror that lags (the one
# this project's machines reach is weeks behind) is refused for it: the signature is still
# checked, only the date is not, in this root alone.
if [ "$release" = sid ]; then
	echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99check-valid-until"
fi

# mnt TYPE SRC DIR [OPTS]: mounts (or with TYPE bind, rbind-mounts) SRC on the root's DIR.
mnt() {
	mkdir -p "$root$3"
	if [ "$1" = bind ]; then
		mount --rbind "$2" "$root$3"
		mount --make-rslave "$root$3"
	else
		mount -t "$1" ${4:+-o "$4"} "$2" "$root$3"
	fi
	mounted+=("$root$3")
}

# in_root CMDS: CMDS in the root, entered as a container enters its root: a mount namespace of
# its own whose "/" is the root's mount (pivot_root), not a chroot. In a chroot the kernel's
# paths (/proc/PID/maps read from outside, bpfprof's BPF path walk) and the chroot's differ, and
# pivot_root, which run-rootfs.sh uses, is refused (pivot_root(2): EINVAL after a chroot).
in_root() {
	unshare -m --propagation private /bin/sh -ec '
		mount --rbind "$1" "$1"
		cd "$1"
		mkdir -p .fresh-root-old
		pivot_root . .fresh-root-old
		shift
		exec /usr/bin/env -i "$@"' sh "$root" HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		${CI:+CI=$CI} ${NODE_EXTRA_CA_CERTS:+NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS} \
		/bin/bash -c "umount -l /.fresh-root-old && rmdir /.fresh-root-old && cd / && $1"
}

# The kernel's file systems as a booted machine has them: /sys with bpffs, tracefs and debugfs
# below it, the host's devices; its own /proc, /tmp and /run.
mnt proc proc /proc
mnt bind /sys /sys
mnt bind /dev /dev
mnt tmpfs tmpfs /tmp mode=1777
mnt tmpfs tmpfs /run mode=755
mnt bind "$debs" /var/cache/apt/archives
# The machine's network setup, not the project's: its resolver, and the local CAs it trusts (an
# egress proxy's), which npm reads through NODE_EXTRA_CA_CERTS as on the host.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/usr/local/share/ca-certificates"
cp -L /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null ||
	true
in_root 'update-ca-certificates >/dev/null'
if [ -n "${extra// /}" ]; then
	say "apt-get install$extra"
	in_root "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends $extra >/dev/null"
fi

if [ "$make_only" = 1 ]; then
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R -l "${mounted[i]}"
	done
	mounted=()
	echo "$root"
	exit 0
fi

rm -rf "$root/root/bpfprof"
git clone -q "$repo" "$root/root/bpfprof"
say "$release, $(git -C "$repo" rev-parse --short HEAD): $cmds"
start=$(date +%s)
rc=0
in_root "cd /root/bpfprof && $cmds" || rc=$?
say "$release: exit status $rc after $(($(date +%s) - start)) s"
exit "$rc"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# fresh-root.sh [-k] [DIR]: the README's first two commands, `make demo` and `make test`, from a
# clean clone of this repository's HEAD in a fresh Debian 12 root: debootstrap's minbase plus
# make, git and ca-certificates, nothing else, entered as a container's root (its own mount
# namespace, pivot_root) on this machine's kernel (run as root).
# Proves that the project's own files install everything its build, demo and tests use.
#   DIR  the root (default build/fresh-root); made with debootstrap when it has no /etc,
#        reused otherwise (-k keeps it afterwards; without -k a root this script made is removed)
# Environment: CMDS (default "make demo && make test") runs instead, CI passed through.
set -eu

keep=0
if [ "${1:-}" = -k ]; then
	keep=1
	shift
fi
repo=$(git rev-parse --show-toplevel)
root=$(realpath -m "${1:-$repo/build/fresh-root}")
cmds=${CMDS:-make demo && make test}
made=0

if [ "$(id -u)" -ne 0 ]; then
	echo "fresh-root: run as root (debootstrap, chroot, mounts)" >&2
	exit 1
fi
if [ ! -d "$root/etc" ]; then
	"$repo/tools/install-deps.sh" debootstrap
	echo "fresh-root: debootstrap --variant=minbase bookworm $root"
	debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
	made=1
fi

mounted=()
cleanup() {
	local i

	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R -l "${mounted[i]}" 2>/dev/null || true
	done
	if [ "$made" = 1 ] && [ "$keep" = 0 ]; then
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT

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

# The kernel's file systems as a booted machine has them: /sys with bpffs, tracefs and debugfs
# below it, the host's devices; its own /proc, /tmp and /run.
mnt proc proc /proc
mnt bind /sys /sys
mnt bind /dev /dev
mnt tmpfs tmpfs /tmp mode=1777
mnt tmpfs tmpfs /run mode=755
# The machine's network setup, not the project's: its resolver, and the local CAs it trusts (an
# egress proxy's), which npm reads through NODE_EXTRA_CA_CERTS as on the host.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/usr/local/share/ca-certificates"
cp -L /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null ||
	true

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

echo "fresh-root: apt-get install make git ca-certificates"
in_root 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
	apt-get install -y -qq --no-install-recommends make git ca-certificates >/dev/null &&
	update-ca-certificates >/dev/null'
rm -rf "$root/root/bpfprof"
git clone -q "$repo" "$root/root/bpfprof"
echo "fresh-root: $(git -C "$repo" rev-parse --short HEAD): $cmds"
start=$(date +%s)
rc=0
in_root "cd /root/bpfprof && $cmds" || rc=$?
echo "fresh-root: exit status $rc after $(($(date +%s) - start)) s"
exit "$rc"

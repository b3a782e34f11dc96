#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetches and unpacks a Debian kernel package for make vmtest.
#
#   tools/vmtest/fetch-kernel.sh KERNEL VMTEST_DIR
#
# KERNEL is a series (6.1: bookworm, 6.12: bookworm-backports, 5.10: bullseye-security) or the
# path of a linux-image-*.deb. A series is resolved to its newest linux-image-<ver>-amd64
# package through a private apt state under VMTEST_DIR/apt/<series> (its own sources.list,
# lists, cache and empty dpkg status: /etc/apt and the machine's lists are never touched). The
# .deb is kept under VMTEST_DIR/debs and reused while it is still the newest. The package is
# unpacked into VMTEST_DIR/<kver>/root (vmlinuz and lib/modules/<kver>, with modules.dep made
# by depmod, which the package leaves to its postinst). Prints <kver> on stdout.
# With VMTEST_HEADERS=1 (a series only), the kernel's headers too: linux-headers-<kver> and its
# -common package, unpacked into one tree, VMTEST_DIR/<kver>/headers (what bcc compiles its
# programs against: BCC_KERNEL_SOURCE; the packages split it into an arch part and a common
# part, which bcc finds only under /lib/modules/<kver>/{build,source}). A tree of headers,
# not a kbuild tree: its Makefile and scripts point into packages not unpacked (bcc reads
# only the include paths).
set -euo pipefail

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
DEBIAN=http://deb.debian.org/debian
SECURITY=http://deb.debian.org/debian-security

log() { echo "vmtest: $*" >&2; }
die() { log "$*"; exit 1; }

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
	*) die "unknown KERNEL=$1 (6.1, 6.12, 5.10 or a linux-image-*.deb)" ;;
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

# The newest linux-image-<series>.*-amd64 package: the kernel version (package name without
# linux-image- and -unsigned) sorted with sort -V; the unsigned package when there is one (the
# same image without the Secure Boot signature), else the signed one.
newest_package() {
	local series=${1//./\\.} kver
	kver=$(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- |
		grep -E "^linux-image-${series}[.-][0-9][^ ]*-amd64(-unsigned)?$" |
		grep -Ev -- '-(rt|cloud)-amd64' | sed -E 's/^linux-image-//; s/-unsigned$//' |
		sort -uV | tail -n 1)
	[ -n "$kver" ] || die "no linux-image-$1*-amd64 in $APT_DIR"
	local p
	for p in "linux-image-$kver-unsigned" "linux-image-$kver"; do
		if apt-cache "${APT_OPTS[@]}" show "$p" >/dev/null 2>&1; then
			echo "$p"
			return
		fi
	done
	die "no installable package for $kver"
}

# Downloads $1 (newest version) into $DEB_DIR unless there already; prints the .deb path.
download() {
	local pkg=$1 ver file
	local arch
	ver=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" | sed -n 's/^Version: //p')
	arch=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" |
		sed -n 's/^Architecture: //p')
	[ -n "$ver" ] && [ -n "$arch" ] || die "no package $pkg in $APT_DIR"
	file=$DEB_DIR/${pkg}_${ver//:/%3a}_$arch.deb
	if [ ! -f "$file" ]; then
		log "downloading $pkg $ver"
		(cd "$DEB_DIR" && apt-get "${APT_OPTS[@]}" -qq download "$pkg=$ver" >&2) ||
			die "apt-get download $pkg failed"
		[ -f "$file" ] || die "apt-get download did not write $file"
	fi
	echo "$file"
}

# Unpacks $1 into $VMTEST_DIR/<kver>/root once; prints <kver>.
unpack() {
	local deb=$1 kver dir
	kver=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./boot/vmlinuz-||p')
	kver=${kver%%$'\n'*}	# the first (no head: its early exit would fail the pipe)
	[ -n "$kver" ] || die "$deb: no boot/vmlinuz-*"
	dir=$VMTEST_DIR/$kver
	if [ ! -e "$dir/root/.unpacked" ] || [ "$(cat "$dir/root/.unpacked")" != "$deb" ]; then
		log "unpacking $(basename "$deb")"
		rm -rf "$dir/root"
		mkdir -p "$dir/root"
		dpkg-deb -x "$deb" "$dir/root"
		depmod -b "$dir/root" "$kver"
		echo "$deb" >"$dir/root/.unpacked"
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
	local kernel=$1 deb kver
	VMTEST_DIR=$(realpath -m "$2")
	DEB_DIR=$VMTEST_DIR/debs
	mkdir -p "$DEB_DIR"
	case $kernel in
	*.deb)
		deb=$(realpath "$kernel")
		[ -f "$deb" ] || die "$kernel: no such file"
		;;
	*)
		APT_DIR=$VMTEST_DIR/apt/$kernel
		apt_opts
		series_sources "$kernel" >/dev/null
		apt_update "$kernel"
		deb=$(download "$(newest_package "$kernel")")
		;;
	esac
	kver=$(unpack "$deb")
	if [ "${VMTEST_HEADERS:-0}" = 1 ]; then
		[ -n "${APT_DIR:-}" ] || die "VMTEST_HEADERS=1 needs a series (6.1, 6.12, 5.10), not a .deb"
		headers "$kver"
	fi
	echo "$kver"
}

main "$@"

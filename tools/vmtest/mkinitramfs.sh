#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Builds make vmtest's initramfs for an unpacked kernel package.
#
#   tools/vmtest/mkinitramfs.sh KDIR KVER OUT.cpio.gz
#
# KDIR is where fetch-kernel.sh unpacked the package (KDIR/lib/modules/KVER with modules.dep).
# The initramfs holds a static busybox, tools/vmtest/init.sh as /init, and the modules that
# mounting the host's root needs (9p over virtio) with their dependencies from
# modules.dep, decompressed (busybox insmod loads plain .ko only), and /modules/order, the
# order to load them in. Modules built into the kernel (modules.builtin) are skipped.
set -euo pipefail

MODULES=(virtio_pci 9pnet_virtio 9p)
BUSYBOX=/bin/busybox
HERE=$(dirname "$(realpath "$0")")

die() { echo "vmtest: $*" >&2; exit 1; }

# Appends module $1 (a path relative to the modules dir) after its dependencies to ORDER.
add_module() {
	local rel=$1 dep deps
	[[ " ${ORDER[*]} " == *" $rel "* ]] && return
	read -ra deps <<<"$(sed -n "s|^$rel: *||p" "$MODDIR/modules.dep")"
	for dep in "${deps[@]}"; do
		add_module "$dep"
	done
	ORDER+=("$rel")
}

# The modules.dep path of module $1, or nothing when it is built in.
module_path() {
	local name=$1 rel
	rel=$(grep -E "(^|/)$name\.ko(\.xz|\.zst|\.gz)?:" "$MODDIR/modules.dep" | cut -d: -f1)
	if [ -z "$rel" ]; then
		grep -qE "(^|/)$name\.ko$" "$MODDIR/modules.builtin" ||
			die "$name: neither a module nor built in"
	fi
	echo "$rel"
}

# Copies module $1 into $2 uncompressed.
copy_module() {
	local rel=$1 dst=$2
	case $rel in
	*.ko.xz) xz -dc "$MODDIR/$rel" >"$dst" ;;
	*.ko.zst) zstd -qdc "$MODDIR/$rel" >"$dst" ;;
	*.ko.gz) gzip -dc "$MODDIR/$rel" >"$dst" ;;
	*) cp "$MODDIR/$rel" "$dst" ;;
	esac
}

main() {
	[ $# -eq 3 ] || die "usage: $0 KDIR KVER OUT.cpio.gz"
	local kdir=$1 kver=$2 out=$3 m rel
	MODDIR=$kdir/lib/modules/$kver
	[ -f "$MODDIR/modules.dep" ] || die "$MODDIR/modules.dep missing"
	[ -x "$BUSYBOX" ] || die "$BUSYBOX missing (busybox-static)"
	! ldd "$BUSYBOX" >/dev/null 2>&1 || die "$BUSYBOX is not static (busybox-static)"

	ORDER=()
	for m in "${MODULES[@]}"; do
		rel=$(module_path "$m")
		[ -n "$rel" ] && add_module "$rel"
	done

	TREE=$(mktemp -d)
	trap 'rm -rf "$TREE"' EXIT
	mkdir -p "$TREE"/{bin,modules,proc,sys,dev,newroot}
	cp "$BUSYBOX" "$TREE/bin/busybox"
	ln -s busybox "$TREE/bin/sh"
	install -m 755 "$HERE/init.sh" "$TREE/init"
	for rel in "${ORDER[@]}"; do
		m=$(basename "${rel%.ko*}").ko
		copy_module "$rel" "$TREE/modules/$m"
		echo "$m" >>"$TREE/modules/order"
	done
	(cd "$TREE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
	echo "vmtest: initramfs modules: $(tr '\n' ' ' <"$TREE/modules/order")" >&2
}

main "$@"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The BTF of a Debian kernel package, without booting it: the vmlinux ELF (whose .BTF section
# libbpf reads) decompressed out of the package's bzImage.
#
#   tools/vmtest/kernel-btf.sh KERNEL VMTEST_DIR
#
# KERNEL as for fetch-kernel.sh (6.1, 6.12, 5.10, 7.2 or a .deb). Writes VMTEST_DIR/<kver>/vmlinux
# once and prints its path. Debian compresses its x86 kernels with xz up to 6.x and with zstd
# from 7.x: the stream starts at its magic inside the bzImage (as the kernel's
# scripts/extract-vmlinux finds it), tried at each place the magic appears until one gives an
# ELF file. Exit status 3: fetch-kernel.sh's (sid's series, neither fetched nor cached).
set -euo pipefail

# decompress IMAGE OFFSET FORMAT: the stream at OFFSET (bytes) of IMAGE on stdout. Both stop
# at the end of their stream (tail's SIGPIPE is expected); zstd complains of the bytes after
# it, which the ELF check below judges instead.
decompress() {
	{ tail -c +"$(($2 + 1))" "$1" || true; } |
		case $3 in
		xz) xz -dc --single-stream 2>/dev/null ;;
		zstd) zstd -dc 2>/dev/null ;;
		esac
}

here=$(cd "$(dirname "$0")" && pwd)
kver=$("$here/fetch-kernel.sh" "$1" "$2")
dir=$(realpath -m "$2")/$kver
out=$dir/vmlinux
if [ ! -s "$out" ]; then
	image=$dir/root/boot/vmlinuz-$kver
	found=''
	for magic in 'xz \xfd7zXZ\x00' 'zstd \x28\xb5\x2f\xfd'; do
		for off in $(LC_ALL=C grep -obUaP "${magic#* }" "$image" | cut -d: -f1 | head -n 4); do
			decompress "$image" "$off" "${magic%% *}" >"$out.tmp" || true
			if [ "$(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
				found=${magic%% *}
				break 2
			fi
		done
	done
	[ -n "$found" ] || { echo "kernel-btf: $image: no xz or zstd stream of an ELF file" >&2; exit 1; }
	# Whole output first: grep -q would stop reading, and pipefail count readelf's SIGPIPE.
	sections=$(readelf -SW "$out.tmp")
	grep -q ' \.BTF ' <<<"$sections" ||
		{ echo "kernel-btf: $image: no .BTF section (CONFIG_DEBUG_INFO_BTF off?)" >&2; exit 1; }
	mv "$out.tmp" "$out"
fi
echo "$out"

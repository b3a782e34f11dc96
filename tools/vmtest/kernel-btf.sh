#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The BTF of a Debian kernel package, without booting it: the vmlinux ELF (whose .BTF section
# libbpf reads) decompressed out of the package's bzImage.
#
#   tools/vmtest/kernel-btf.sh KERNEL VMTEST_DIR
#
# KERNEL as for fetch-kernel.sh (6.1, 6.12, 5.10 or a .deb). Writes VMTEST_DIR/<kver>/vmlinux
# once and prints its path. Debian compresses its x86 kernels with xz: the xz stream starts at
# its magic inside the bzImage (as the kernel's scripts/extract-vmlinux finds it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kver=$("$here/fetch-kernel.sh" "$1" "$2")
dir=$(realpath -m "$2")/$kver
out=$dir/vmlinux
if [ ! -s "$out" ]; then
	image=$dir/root/boot/vmlinuz-$kver
	off=$(LC_ALL=C grep -m 1 -obUaP '\xfd7zXZ\x00' "$image" | cut -d: -f1 | sed -n 1p)
	[ -n "$off" ] || { echo "kernel-btf: $image: no xz stream" >&2; exit 1; }
	# xz stops reading at the end of the stream: tail's SIGPIPE is expected.
	{ tail -c +"$((off + 1))" "$image" || true; } | xz -dc --single-stream >"$out.tmp"
	# Whole output first: grep -q would stop reading, and pipefail count readelf's SIGPIPE.
	sections=$(readelf -SW "$out.tmp")
	grep -q ' \.BTF ' <<<"$sections" ||
		{ echo "kernel-btf: $image: no .BTF section (CONFIG_DEBUG_INFO_BTF off?)" >&2; exit 1; }
	mv "$out.tmp" "$out"
fi
echo "$out"

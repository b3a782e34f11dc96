#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerates vmlinux/<arch>/vmlinux.h from a BTF file (default: the running kernel's).
# Record the kernel it came from in vmlinux/README.md.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
out="$(cd "$(dirname "$0")/.." && pwd)/vmlinux/$arch/vmlinux.h"
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf ($(uname -r))"

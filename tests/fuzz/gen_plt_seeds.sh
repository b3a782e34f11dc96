#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gen_plt_seeds.sh OUT_DIR: fuzz_plt's seeds, small builds of tests/fuzz/plt_seed.c (a few KiB:
# one page size, no build-id) with each PLT layout symtab.c names: .plt with lazy binding, .plt
# and .plt.sec (IBT: -z ibtplt), .plt.got (-z now), stripped (.dynsym only) or not (.symtab).
set -eu
out=$1
src=$(dirname "$0")/plt_seed.c
common=(-O1 -Wl,--build-id=none -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code)
mkdir -p "$out"
gcc "${common[@]}" -s -Wl,-z,lazy "$src" -o "$out/plt-lazy"
gcc "${common[@]}" -s -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy "$src" -o "$out/plt-sec"
gcc "${common[@]}" -s -Wl,-z,now "$src" -o "$out/plt-now"
gcc "${common[@]}" -fcf-protection=full -Wl,-z,ibtplt "$src" -o "$out/plt-symtab"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-rust.sh: a program built with Debian's rustc, with the legacy mangling (_ZN...17h<hash>E)
# and with v0 (_R...): frames demangled (paths, generic arguments with v0), no raw symbol and
# no ::h<hash>, in a stack complete from _start.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=1.5
HZ=999
MIN_COMPLETE_PCT=95

# test_rust LABEL BINARY COMM LEVEL2: LEVEL2 is how the mangling names the generic function.
test_rust() {
	local label=$1 bin=$2 comm=$3 level2=$4 p=$TEST_TMP/$1 chain stats

	chain="rustchain::main;rustchain::chain::level1;$level2"
	chain+=";rustchain::chain::level3;rustchain::chain::leaf"
	run_bpfprof 40 "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/$bin" "$RUN_S"
	assert_eq "${label}_exit" "$BP_RC" 0
	read -r -a stats <<<"$(chain_stats "$p.folded" "$comm" '^_start;' "$chain")"
	echo "  leaf samples: ${stats[0]}, complete from _start: ${stats[1]}"
	assert_ge "${label}_leaf_samples" "${stats[0]}" "$(cpu_floor "$p" 1 3)"
	assert_ge "${label}_demangled_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq "${label}_no_mangled_frames" \
		"$(frame_share "$p.folded" "$comm" '(_ZN|_R)[[:alnum:]_]+')" 0 "% of samples"
	assert_eq "${label}_no_hash_suffix" \
		"$(frame_share "$p.folded" "$comm" '::h[0-9a-f]{16}')" 0 "% of samples"
}

test_rust rust_legacy rustchain_legacy rustchain_legac rustchain::chain::level2
test_rust rust_v0 rustchain_v0 rustchain_v0 'rustchain::chain::level2::<u32>'

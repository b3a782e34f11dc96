#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-cxx.sh: C++ frames (namespace, template instances, operator(), const methods) appear
# demangled, never as _Z... symbols, in a stack complete from _start.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=2
HZ=999
# What the Itanium C++ ABI demangler makes of cxxchain's symbols (nm -C shows the same).
CXX_CHAIN="main"
for n in 3 2 1 0; do
	CXX_CHAIN+=";bpfprof_test::Walker<$n>::step(long)"
done
CXX_CHAIN+=";bpfprof_test::Spinner::operator()(long) const"
CXX_CHAIN+=";bpfprof_test::Spinner::spin(unsigned long) const"
MIN_COMPLETE_PCT=95

test_demangled_chain() {
	local p=$TEST_TMP/cxx stats

	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/cxxchain" "$RUN_S"
	assert_eq cxx_exit "$BP_RC" 0
	read -r -a stats <<<"$(chain_stats "$p.folded" cxxchain '^_start;' "$CXX_CHAIN")"
	echo "  Spinner::spin samples: ${stats[0]}, complete from _start: ${stats[1]}"
	assert_ge cxx_leaf_samples "${stats[0]}" "$(cpu_floor "$p" 1 4)"
	assert_ge cxx_demangled_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq cxx_no_mangled_frames "$(frame_share "$p.folded" cxxchain '_Z[[:alnum:]_]+')" 0 \
		"% of samples"
}

test_demangled_chain

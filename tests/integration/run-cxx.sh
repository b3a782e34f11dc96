#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-cxx.sh: C++ frames (namespace, template instances, operator(), const methods) appear
# demangled, never as _Z... symbols, in a stack complete from _start: by default as perf shows
# them (ns::Class<T>::method, no parameter list), with --full-names as full signatures.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=2
HZ=999
# What the Itanium C++ ABI demangler makes of cxxchain's symbols: without parameters (perf,
# c++filt --no-params), and in full (nm -C).
CXX_CHAIN="main"
CXX_CHAIN_FULL="main"
for n in 3 2 1 0; do
	CXX_CHAIN+=";bpfprof_test::Walker<$n>::step"
	CXX_CHAIN_FULL+=";bpfprof_test::Walker<$n>::step(long)"
done
CXX_CHAIN+=";bpfprof_test::Spinner::operator();bpfprof_test::Spinner::spin"
CXX_CHAIN_FULL+=";bpfprof_test::Spinner::operator()(long) const"
CXX_CHAIN_FULL+=";bpfprof_test::Spinner::spin(unsigned long) const"
MIN_COMPLETE_PCT=95

# test_demangled_chain LABEL CHAIN [OPTION...]: cxxchain's stacks hold CHAIN, names as given.
test_demangled_chain() {
	local label=$1 chain=$2 p=$TEST_TMP/$1 stats cpu_s top leaf

	shift 2
	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" "$@" -o "$p.folded" -- \
		/usr/bin/time -f '%U %S' -o "$p.time" "$TARGETS/cxxchain" "$RUN_S"
	assert_eq "${label}_exit" "$BP_RC" 0
	read -r -a stats <<<"$(chain_stats "$p.folded" cxxchain '^_start;' "$chain")"
	echo "  Spinner::spin samples: ${stats[0]}, complete from _start: ${stats[1]}"
	# Half of what cxxchain's own CPU time gives (run-rate.sh checks the rate).
	cpu_s=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$p.time" 2>/dev/null)
	assert_ge "${label}_leaf_samples" "${stats[0]}" $((${cpu_s:-0} * HZ / 2000))
	assert_ge "${label}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq "${label}_no_mangled_frames" \
		"$(frame_share "$p.folded" cxxchain '_Z[[:alnum:]_]+')" 0 "% of samples"
	# The summary's top function is the leaf, named as in the folded stacks.
	leaf=${chain##*;}
	top=$(sed -n '/top [0-9]* functions by self time/{n;p;q}' "$p.err" |
		sed 's/^bpfprof: *[0-9.]*% *[0-9]* *//')
	if [ "$top" = "$leaf" ]; then
		pass "${label}_summary_top" "$top"
	else
		fail "${label}_summary_top" "top function '$top', expected '$leaf'"
	fi
}

test_demangled_chain cxx "$CXX_CHAIN"
test_demangled_chain cxx_full_names "$CXX_CHAIN_FULL" --full-names

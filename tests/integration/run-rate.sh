#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-rate.sh: -F HZ gives HZ samples per second of the target's CPU time (not of wall time:
# an idle vCPU of this VM drops cpu-clock samples), neither lost nor duplicated.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=10
MIN_RATE_PCT=90
MAX_RATE_PCT=110

# test_rate HZ: samples of RUN_S seconds of chain against its CPU time x HZ.
test_rate() {
	local hz=$1 p=$TEST_TMP/rate-$1 samples cpu_ns expected

	run_bpfprof $((RUN_S + 40)) "$p" -F "$hz" -o "$p.folded" -- \
		"$TARGETS/chain" -t "$p.cpu" "$RUN_S"
	assert_eq "rate_f${hz}_exit" "$BP_RC" 0
	cpu_ns=$(cat "$p.cpu" 2>/dev/null)
	if ! is_number "$cpu_ns"; then
		fail "rate_f${hz}_cputime" "chain wrote no CPU time"
		return
	fi
	samples=$(folded_samples "$p.folded" chain)
	expected=$(awk -v ns="$cpu_ns" -v hz="$hz" 'BEGIN { printf "%.0f", ns / 1e9 * hz }')
	echo "  $samples samples for $(awk -v ns="$cpu_ns" 'BEGIN { printf "%.2f", ns / 1e9 }') s of CPU at $hz Hz: $expected expected"
	assert_ge "rate_f${hz}_not_lost" "$(ratio_pct "$samples" "$expected")" "$MIN_RATE_PCT" \
		" % of CPU time x Hz"
	assert_le "rate_f${hz}_not_inflated" "$(ratio_pct "$samples" "$expected")" "$MAX_RATE_PCT" \
		" % of CPU time x Hz"
}

test_rate 99
test_rate 999

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-rate.sh: -F HZ gives HZ samples per second of the target's CPU time (not of wall time:
# an idle vCPU of this VM drops cpu-clock samples), neither lost nor duplicated.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=10
MIN_RATE_PCT=90
emulated && MIN_RATE_PCT=80	# the timer, not bpfprof: lib.sh emulated()
MAX_RATE_PCT=110

# test_rate LABEL HZ SECONDS: samples of SECONDS of chain against its CPU time x HZ.
test_rate() {
	local label=$1 hz=$2 run_s=$3 p=$TEST_TMP/$1 samples cpu_ns expected

	run_bpfprof $((${run_s%.*} + 40)) "$p" -F "$hz" -o "$p.folded" -- \
		"$TARGETS/chain" -t "$p.cpu" "$run_s"
	assert_eq "${label}_exit" "$BP_RC" 0
	cpu_ns=$(cat "$p.cpu" 2>/dev/null)
	if ! is_number "$cpu_ns"; then
		fail "${label}_cputime" "chain wrote no CPU time"
		return
	fi
	samples=$(folded_samples "$p.folded" chain)
	expected=$(awk -v ns="$cpu_ns" -v hz="$hz" 'BEGIN { printf "%.0f", ns / 1e9 * hz }')
	echo "  $samples samples for $(awk -v ns="$cpu_ns" 'BEGIN { printf "%.2f", ns / 1e9 }') s of CPU at $hz Hz: $expected expected"
	assert_ge "${label}_not_lost" "$(ratio_pct "$samples" "$expected")" "$MIN_RATE_PCT" %
	assert_le "${label}_not_inflated" "$(ratio_pct "$samples" "$expected")" "$MAX_RATE_PCT" %
}

test_rate rate_f99 99 "$RUN_S"
test_rate rate_f999 999 "$RUN_S"
# A run of a fraction of a second: "-- CMD" samples from the first instruction, so even a
# short command gets its full count (a late start would lose a large part of it).
test_rate rate_short_f999 999 0.3

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-jit.sh: frames in JIT code. jit spins in jit_spin, called from x86-64 code it wrote into
# anonymous memory. With its perf map (/tmp/perf-PID.map) that frame is jit_spin_trampoline_[j];
# without it, [anon]+0xOFF; either way the stack unwinds through it (libdwfl's frame-pointer
# step, the code having no CFI) on up to _start. Under "-- CMD" and "-p PID", and with a perf
# map of millions of lines (any process writes its own: it must not stall nor bloat bpfprof).
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
RUN_S=2
# Shares of jit_spin's samples (the leaf: ~99% of jit's samples). jit_spin has CFI at every
# instruction and the trampoline keeps its frame pointer while it calls, so every one of them
# should unwind through the trampoline (100% in development runs); the margin is for noise.
MIN_CALLER_PCT=90
MIN_COMPLETE_PCT=90

# The big map: lines after the trampoline's, about 45 bytes each (8M lines, 360 MB). Read whole
# in the loop draining the ringbuf, before the fix, it held -d 2 for 6 more seconds and took
# bpfprof to 950 MiB here. Its tested budget: -d held (the drain loop never waits for the map),
# generous for a busy machine, and bpfprof's max RSS (62 MiB here, as without the map; ASan's
# quarantine adds up to 256 MiB).
BIG_MAP_LINES=8000000
BIG_MAP_EXTRA_S=3
BIG_MAP_RSS_MIB=200
sanitized && BIG_MAP_RSS_MIB=$((BIG_MAP_RSS_MIB + 256))

if [ ! -x "$TARGETS/jit" ]; then
	# The generated code is x86-64: jit.mk builds it only there.
	if [ "${CI:-}" = true ]; then
		fail jit_target "no $TARGETS/jit (x86-64 only; $(uname -m) here)"
		exit 1
	fi
	skip "no $TARGETS/jit (x86-64 only; $(uname -m) here)"
	exit 0
fi

# check_jit LABEL FOLDED CALLER: jit_spin's samples have CALLER as the frame above them (the
# JIT frame's name), and unwind from _start through main;jit_run;CALLER;jit_spin.
check_jit() {
	local label=$1 folded=$2 caller=$3 chain caller_stats complete_stats

	chain="main;jit_run;$caller;jit_spin"
	read -r -a caller_stats <<<"$(chain_stats "$folded" jit '' "$caller;jit_spin")"
	read -r -a complete_stats <<<"$(chain_stats "$folded" jit '^_start;' "$chain")"
	echo "  $label: jit_spin samples ${caller_stats[0]}, under $caller ${caller_stats[1]}," \
		"complete from _start ${complete_stats[1]};" \
		"$(folded_samples "$folded" jit) samples in all"
	echo "  top stacks:"
	awk '{ print $NF "\t" $0 }' "$folded" | sort -nr | head -4 | cut -f2- | sed 's/^/  | /'
	# Enough samples for the shares to mean something: a quarter of the count jit's CPU time
	# gives (run-rate.sh checks rates).
	assert_ge "${label}_samples" "${caller_stats[0]}" "$(cpu_floor "${folded%.folded}" 1 4)"
	assert_ge "${label}_caller" "${caller_stats[2]}" "$MIN_CALLER_PCT" %
	assert_ge "${label}_complete" "${complete_stats[2]}" "$MIN_COMPLETE_PCT" %
}

# The perf map names the JIT frame; none is left in /tmp when jit exits.
test_map() {
	local p=$TEST_TMP/map caller

	caller=$("$TARGETS/jit" --print-chain | cut -d';' -f3)
	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/jit" "$RUN_S"
	assert_eq jit_map_exit "$BP_RC" 0
	check_jit jit_map "$p.folded" "$caller"
	assert_eq jit_map_no_anon "$(frame_share "$p.folded" jit '\[anon\]\+0x[0-9a-f]+')" 0 %
}

# No perf map: the frame keeps its place, named by its offset in the anonymous mapping.
test_no_map() {
	local p=$TEST_TMP/nomap caller

	caller=$("$TARGETS/jit" -n --print-chain | cut -d';' -f3)
	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/jit" -n "$RUN_S"
	assert_eq jit_nomap_exit "$BP_RC" 0
	check_jit jit_nomap "$p.folded" "$caller"
	assert_eq jit_nomap_no_jit_names "$(frame_share "$p.folded" jit '.*_\[j\]')" 0 %
}

# The map written at exit, after every sample was handled: named all the same, from the map
# read again as the process ended.
test_map_at_exit() {
	local p=$TEST_TMP/atexit caller pid

	caller=$("$TARGETS/jit" -x --print-chain | cut -d';' -f3)
	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/jit" -x "$RUN_S"
	pid=$(sed -n 's/.*profiling .* (PID \([0-9]*\)).*/\1/p' "$p.err" | head -1)
	[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
	assert_eq jit_atexit_exit "$BP_RC" 0
	check_jit jit_atexit "$p.folded" "$caller"
	assert_eq jit_atexit_no_anon "$(frame_share "$p.folded" jit '\[anon\]\+0x[0-9a-f]+')" 0 %
}

# -p PID: the code and the map were there before bpfprof started (/proc/PID/maps).
test_pid() {
	local p=$TEST_TMP/pid duration=2 pid caller i

	caller=$("$TARGETS/jit" --print-chain | cut -d';' -f3)
	start_target pid "$TARGETS/jit" $((duration + 20))
	# The map is written before the loop starts: wait for it.
	for ((i = 0; i < 100; i++)); do
		[ -e "/tmp/perf-$pid.map" ] && break
		sleep 0.02
	done
	run_bpfprof $((duration + 40)) "$p" -p "$pid" -d "$duration" -F "$HZ" -o "$p.folded"
	stop_target "$pid"
	assert_eq jit_pid_exit "$BP_RC" 0
	check_jit jit_pid "$p.folded" "$caller"
	assert_true jit_pid_map_removed "jit removed /tmp/perf-$pid.map at exit" \
		test ! -e "/tmp/perf-$pid.map"
}

# -p PID of a process with a big perf map: -d holds, the ringbuf is drained meanwhile, memory
# stays small, the JIT frame is still named (its line is the map's first), and the part of the
# map past the cap is reported.
test_big_map() {
	local p=$TEST_TMP/big duration=2 pid caller i size profiled lost

	caller=$("$TARGETS/jit" -b 1 --print-chain | cut -d';' -f3)
	start_target pid "$TARGETS/jit" -b "$BIG_MAP_LINES" $((duration + 60))
	for ((i = 0; i < 1500; i++)); do
		[ -e "/tmp/perf-$pid.map" ] && break
		sleep 0.02
	done
	size=$(stat -c %s "/tmp/perf-$pid.map" 2>/dev/null)
	echo "  perf map: ${size:-no} bytes"
	run_bpfprof $((duration + 60)) "$p" --stats -p "$pid" -d "$duration" -F "$HZ" \
		-o "$p.folded"
	stop_target "$pid"
	assert_eq jit_big_exit "$BP_RC" 0
	profiled=$(sed -n 's/^bpfprof: profiled \([0-9.]*\) s .*/\1/p' "$p.err" | head -1)
	lost=$(sed -n 's/^bpfprof: lost: \([0-9]*\) samples.*/\1/p' "$p.err" | head -1)
	stats_totals "$p.err"
	echo "  big map: profiled ${profiled:-?} s of -d $duration, bpfprof ran ${BP_SECONDS}s," \
		"max RSS ${ST_RSS_KIB:-?} KiB, ${lost:-?} samples lost"
	assert_le jit_big_duration "${profiled:-missing}" $((duration + BIG_MAP_EXTRA_S)) " s"
	assert_le jit_big_rss "${ST_RSS_KIB:-missing}" $((BIG_MAP_RSS_MIB * 1024)) " KiB"
	# Lost only when the ringbuf is full: a busy machine, a sanitizer build; a few at most.
	assert_le jit_big_lost_pct "$(ratio_pct "${lost:-x}" "$(folded_samples "$p.folded" jit)")" 2 %
	check_jit jit_big "$p.folded" "$caller"
	assert_grep jit_big_cap_reported "$p.err" \
		'^bpfprof: perf maps: [1-9][0-9]* of [0-9]+ reads stopped at the [0-9]+ MiB cap'
}

test_map
test_no_map
test_map_at_exit
test_pid
test_big_map

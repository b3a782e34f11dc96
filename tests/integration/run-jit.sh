#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-jit.sh: frames in JIT code. jit spins in jit_spin, called from x86-64 code it wrote into
# anonymous memory. With its perf map (/tmp/perf-PID.map) that frame is jit_spin_trampoline_[j];
# without it, [anon]+0xOFF; either way the stack unwinds through it (libdwfl's frame-pointer
# step, the code having no CFI) on up to _start. Under "-- CMD" and "-p PID".
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
RUN_S=2
# Shares of jit_spin's samples (the leaf: ~99% of jit's samples). jit_spin has CFI at every
# instruction and the trampoline keeps its frame pointer while it calls, so every one of them
# should unwind through the trampoline (100% in development runs); the margin is for noise.
MIN_CALLER_PCT=90
MIN_COMPLETE_PCT=90

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

test_map
test_no_map
test_map_at_exit
test_pid

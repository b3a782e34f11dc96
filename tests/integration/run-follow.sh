#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-follow.sh: -p PID profiles PID's descendants too, those it starts after bpfprof attached
# and those running already, and ends when all of them have exited, or at once when PID had
# exited before it became a target; the summary's "expected from CPU time" adds up each
# target's own CPU time, so a command that does not reap its children (timeout killing a
# shell) is measured right.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
MIN_RATE_PCT=80
emulated && MIN_RATE_PCT=70	# the timer, not bpfprof: lib.sh emulated()
MAX_RATE_PCT=110
# The summary's own ratio of samples received to samples expected.
MIN_SUMMARY_PCT=70
MAX_SUMMARY_PCT=110

# summary_pct FILE: the percentage of "N samples received, M expected from ... (P%)".
summary_pct() {
	sed -nE 's/^bpfprof: profiled .* expected from .* of CPU time \(([0-9.]+)%\)$/\1/p' "$1" |
		head -n1
}

# check_summary LABEL ERRFILE: the summary's samples-to-expected ratio is sane.
check_summary() {
	local pct

	pct=$(summary_pct "$2")
	assert_ge "${1}_summary_not_under" "${pct:-none}" "$MIN_SUMMARY_PCT" %
	assert_le "${1}_summary_not_over" "${pct:-none}" "$MAX_SUMMARY_PCT" %
}

# -p of a shell that, once bpfprof is attached, runs a chain (fork + exec), then starts another
# and exits without waiting for it: both are sampled for their CPU time, and bpfprof ends by
# itself after the second, not with the shell. One at a time: under qemu's TCG the timer
# falls behind when both CPUs are busy (lib.sh emulated()).
test_forked_after_attach() {
	local p=$TEST_TMP/after parent samples expected cpu_a cpu_b

	start_target parent /bin/sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done
		"$0" -t "$3" 2
		"$0" -t "$2" 2 &
		exit 0' "$TARGETS/chain" "$p.go" "$p.cpu-orphan" "$p.cpu-child"
	start_bpfprof_bg 90 "$p" -p "$parent" -F "$HZ" -o "$p.folded"
	if ! wait_profiling "$p.err" "$BP_TIMEOUT_PID"; then
		fail after_attach_started "bpfprof did not start profiling: $(head -c 400 "$p.err")"
		return
	fi
	touch "$p.go"
	wait_bpfprof_bg "$p"
	# The orphan's CPU time file is written as it exits: there when bpfprof has ended.
	cpu_a=$(cat "$p.cpu-orphan" 2>/dev/null)
	cpu_b=$(cat "$p.cpu-child" 2>/dev/null)
	wait_target "$parent"
	assert_eq after_attach_exit "$BP_RC" 0
	assert_true after_attach_waits_for_orphan \
		"bpfprof ran until the chain its target left running had exited" is_number "$cpu_a"
	if ! is_number "$cpu_b"; then
		fail after_attach_cputime "the chain wrote no CPU time ('$cpu_b')"
		return
	fi
	is_number "$cpu_a" || cpu_a=0
	samples=$(folded_samples "$p.folded" chain)
	expected=$(awk -v ns=$((cpu_a + cpu_b)) -v hz="$HZ" 'BEGIN { printf "%.0f", ns / 1e9 * hz }')
	echo "  chain: $samples samples for $expected expected from $((cpu_a + cpu_b)) ns of CPU"
	assert_ge after_attach_children_sampled "$(ratio_pct "$samples" "$expected")" \
		"$MIN_RATE_PCT" %
	assert_le after_attach_children_not_inflated "$(ratio_pct "$samples" "$expected")" \
		"$MAX_RATE_PCT" %
	check_summary after_attach "$p.err"
}

# -p of a shell whose chain was running before bpfprof started: profiled too, its CPU time
# counted from the start, while it runs on past -d.
test_running_child() {
	local p=$TEST_TMP/running parent child i

	start_target parent /bin/sh -c '"$0" 60 & echo $! >"$1"; wait' "$TARGETS/chain" "$p.pid"
	for ((i = 0; i < 100; i++)); do
		child=$(cat "$p.pid" 2>/dev/null)
		[ -n "$child" ] && break
		sleep 0.05
	done
	BG_PIDS+=("${child:-}")
	run_bpfprof 60 "$p" -p "$parent" -d 3 -F "$HZ" -o "$p.folded"
	kill -TERM "$child" 2>/dev/null
	stop_target "$parent"
	assert_eq running_child_exit "$BP_RC" 0
	assert_ge running_child_sampled "$(folded_samples "$p.folded" chain)" 1 " samples"
	check_summary running_child "$p.err"
}

# -p of a process that exited before bpfprof made it a target (a zombie: kill(PID, 0) still
# succeeds, its exit hook ran before): bpfprof ends at once, not at the end of -d. The child
# exits only once its parent has become sleep, which never reaps it (a shell might).
test_exited_during_attach() {
	local p=$TEST_TMP/gone holder zombie= deadline

	start_target holder /bin/sh -c '(while [ ! -e "$1" ]; do sleep 0.05; done) &
		echo $! >"$0"; exec sleep 600' "$p.pid" "$p.go"
	# Deadlines in wall seconds: under qemu's TCG each pass forks slowly.
	deadline=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	zombie=$(cat "$p.pid" 2>/dev/null)
	touch "$p.go"
	deadline=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(awk '{ print $3 }' "/proc/${zombie:-0}/stat" 2>/dev/null)" = Z ] && break
		sleep 0.05
	done
	if [ "$(awk '{ print $3 }' "/proc/${zombie:-0}/stat" 2>/dev/null)" != Z ]; then
		fail exited_during_attach_setup "no zombie to profile (holder $(cat "/proc/$holder/comm" 2>&1), pid '${zombie:-}': $(cat "/proc/${zombie:-0}/stat" 2>&1))"
		stop_target "$holder"
		return
	fi
	run_bpfprof 60 "$p" -p "$zombie" -d 30 -o "$p.folded"
	stop_target "$holder"
	assert_eq exited_during_attach_exit "$BP_RC" 0
	assert_le exited_during_attach_prompt "$BP_SECONDS" 15 " s (-d 30)"
	assert_grep exited_during_attach_said "$p.err" "^bpfprof: PID $zombie exited before profiling started$"
}

# -- timeout 3 sh -c 'chain & wait': timeout kills the shell and the chain; the shell never
# reaps the chain, so no rusage holds its CPU time. The summary still expects its samples.
test_unreaped() {
	local p=$TEST_TMP/unreaped

	run_bpfprof 60 "$p" -F "$HZ" -o "$p.folded" -- \
		timeout 3 /bin/sh -c '"$0" 60 & wait' "$TARGETS/chain"
	assert_eq unreaped_exit "$BP_RC" 124
	assert_ge unreaped_sampled "$(folded_samples "$p.folded" chain)" 1 " samples"
	check_summary unreaped "$p.err"
}

test_forked_after_attach
test_running_child
test_exited_during_attach
test_unreaped

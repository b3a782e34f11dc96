#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-descendants.sh: "-- CMD" follows CMD's children (fork alone, fork + exec) from their start,
# and "-p A,B" profiles several processes: every process's CPU time shows up as samples.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
RUN_S=3
CHAIN=$("$TARGETS/chain" --print-chain)
MIN_COMPLETE_PCT=95
MIN_RATE_PCT=90
emulated && MIN_RATE_PCT=80	# the timer, not bpfprof: lib.sh emulated()
MAX_RATE_PCT=110
SHARE_TOLERANCE_PCT=10

# check_all_sampled LABEL FOLDED COMM CPU_NS: COMM's samples account for CPU_NS (all of its
# processes together) x HZ, and are complete chains.
check_all_sampled() {
	local label=$1 folded=$2 comm=$3 cpu_ns=$4 samples expected stats

	samples=$(folded_samples "$folded" "$comm")
	expected=$(awk -v ns="$cpu_ns" -v hz="$HZ" 'BEGIN { printf "%.0f", ns / 1e9 * hz }')
	read -r -a stats <<<"$(chain_stats "$folded" "$comm" '^_start;' "$CHAIN")"
	echo "  $comm: $samples samples for $expected expected from $cpu_ns ns of CPU; ${stats[1]} of ${stats[0]} in the leaf complete"
	assert_ge "${label}_not_lost" "$(ratio_pct "$samples" "$expected")" "$MIN_RATE_PCT" %
	assert_le "${label}_not_inflated" "$(ratio_pct "$samples" "$expected")" "$MAX_RATE_PCT" %
	assert_ge "${label}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
}

# A forked child without exec shares its parent's mappings: sampled and unwound too. chain -f
# writes the CPU time of both processes.
test_fork() {
	local p=$TEST_TMP/fork

	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- \
		"$TARGETS/chain" -f -t "$p.cpu" "$RUN_S"
	assert_eq fork_exit "$BP_RC" 0
	if ! is_number "$(cat "$p.cpu" 2>/dev/null)"; then
		fail fork_cputime "chain -f wrote no CPU time"
		return
	fi
	check_all_sampled fork "$p.folded" chain "$(cat "$p.cpu")"
}

# A shell starting two chains (fork + exec): new processes, new mappings, all followed.
test_fork_exec() {
	local p=$TEST_TMP/exec cpu_a cpu_b

	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- /bin/sh -c \
		'"$0" -t "$1" "$3" & "$0" -t "$2" "$3"; wait' \
		"$TARGETS/chain" "$p.cpu-a" "$p.cpu-b" "$RUN_S"
	assert_eq fork_exec_exit "$BP_RC" 0
	cpu_a=$(cat "$p.cpu-a" 2>/dev/null)
	cpu_b=$(cat "$p.cpu-b" 2>/dev/null)
	if ! is_number "$cpu_a" || ! is_number "$cpu_b"; then
		fail fork_exec_cputime "the chains wrote no CPU time ('$cpu_a', '$cpu_b')"
		return
	fi
	check_all_sampled fork_exec "$p.folded" chain $((cpu_a + cpu_b))
}

# -p A,B: two running processes (copies of chain under other names, so that their samples
# can be told apart by comm), each complete and with the share of samples of its CPU share.
# One name has a space, which the folded output must turn into '_'.
test_multiple_pids() {
	local p=$TEST_TMP/multi dir=$TEST_TMP/multi-bin t stats
	local -A file=([one]="chain one" [two]=chain_two) comm=([one]=chain_one [two]=chain_two)
	local -A pid cpu samples

	mkdir "$dir"
	cp "$TARGETS/libchain.so" "$dir/"
	for t in one two; do
		cp "$TARGETS/chain" "$dir/${file[$t]}"
		start_target "pid[$t]" "$dir/${file[$t]}" $((RUN_S + 30))
	done
	for t in one two; do
		cpu[$t]=$(awk '{ print $1 }' "/proc/${pid[$t]}/schedstat")
	done
	run_bpfprof $((RUN_S + 40)) "$p" -p "${pid[one]},${pid[two]}" -d "$RUN_S" \
		-F "$HZ" -o "$p.folded"
	for t in one two; do
		cpu[$t]=$(($(awk '{ print $1 }' "/proc/${pid[$t]}/schedstat") - cpu[$t]))
		stop_target "${pid[$t]}"
	done

	assert_eq multi_pid_exit "$BP_RC" 0
	assert_eq multi_pid_no_space_in_comm "$(grep -c '^chain one;' "$p.folded")" 0 " lines"
	for t in one two; do
		samples[$t]=$(folded_samples "$p.folded" "${comm[$t]}")
		read -r -a stats <<<"$(chain_stats "$p.folded" "${comm[$t]}" '^_start;' "$CHAIN")"
		echo "  ${comm[$t]}: ${samples[$t]} samples, ${stats[1]} of ${stats[0]} in the leaf complete; CPU ${cpu[$t]} ns"
		assert_ge "multi_pid_${comm[$t]}_samples" "${samples[$t]}" 1
		assert_ge "multi_pid_${comm[$t]}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
	done
	assert_within multi_pid_share \
		"$(ratio_pct "${samples[one]}" $((samples[one] + samples[two])))" \
		"$(ratio_pct "${cpu[one]}" $((cpu[one] + cpu[two])))" \
		"$SHARE_TOLERANCE_PCT" %
}

# thread_id PID NAME: the TID of PID's thread named NAME (as top -H and ps -L show it), or
# nothing after 5 s.
thread_id() {
	local i t

	for ((i = 0; i < 50; i++)); do
		for t in /proc/"$1"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] && echo "${t##*/}" && return
		done
		sleep 0.1
	done
}

# -p TID of a thread that is not its process's leader profiles the whole process, as perf
# record -p does, and says so (it used to profile nothing: 0 samples, exit 0). Given with the
# process's PID too, it is one process.
test_thread_id() {
	local p=$TEST_TMP/tid pid tid

	start_target pid "$TARGETS/threads" $((RUN_S + 30))
	tid=$(thread_id "$pid" beta)
	if [ -z "$tid" ] || [ "$tid" = "$pid" ]; then
		fail thread_id_setup "no thread beta in threads (PID $pid)"
		stop_target "$pid"
		return
	fi
	run_bpfprof $((RUN_S + 40)) "$p" -p "$tid" -d 2 -F 99 -o "$p.folded"
	assert_eq thread_id_exit "$BP_RC" 0
	assert_grep thread_id_says_so "$p.err" \
		"^bpfprof: profile PID $tid: a thread of process $pid; profiling process $pid"
	assert_grep thread_id_one_process "$p.err" '^bpfprof: profiling 1 process '
	# alpha is busy all the time: the thread not named, sampled as its process's.
	assert_ge thread_id_whole_process "$(folded_samples "$p.folded" alpha)" 1
	run_bpfprof $((RUN_S + 40)) "$p.both" -p "$tid,$pid" -d 0.5 -F 99 -o "$p.both.folded"
	assert_eq thread_id_and_pid_exit "$BP_RC" 0
	assert_grep thread_id_and_pid_one_process "$p.both.err" '^bpfprof: profiling 1 process '
	stop_target "$pid"
}

test_fork
test_fork_exec
test_multiple_pids
test_thread_id

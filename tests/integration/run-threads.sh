#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-threads.sh: threads "alpha" (busy) and "beta" (half busy), each unwound from clone3 to its
# own leaf, and each getting the share of samples that its share of CPU time calls for.
. "$(dirname "$0")/../lib.sh"
require_bpf

WORKERS="alpha beta"
declare -A CHAIN LEAF
for w in $WORKERS; do
	CHAIN[$w]=$("$TARGETS/threads" --print-chain "$w")
	LEAF[$w]=${CHAIN[$w]##*;}
done
# glibc starts threads in clone3 (clone before 2.34), which calls start_thread.
THREAD_ROOT_RE="^$THREAD_ROOT;start_thread;"
MIN_COMPLETE_PCT=95
# Samples follow CPU time: a thread's share of samples within 10 points of its share of CPU.
SHARE_TOLERANCE_PCT=10
HZ=999

# check_workers FOLDED LABEL CPU_alpha CPU_beta: per thread, complete chains and a fair share.
check_workers() {
	local folded=$1 label=$2 cpu_alpha=$3 cpu_beta=$4 w stats
	declare -A samples cpu

	cpu[alpha]=$cpu_alpha
	cpu[beta]=$cpu_beta
	for w in $WORKERS; do
		samples[$w]=$(folded_samples "$folded" "$w")
		read -r -a stats <<<"$(chain_stats "$folded" "$w" "$THREAD_ROOT_RE" "${CHAIN[$w]}")"
		echo "  $w: ${samples[$w]} samples, ${stats[0]} in ${LEAF[$w]}, ${stats[1]} complete; CPU ${cpu[$w]} ns"
		assert_ge "${label}_${w}_samples" "${samples[$w]}" 1
		assert_ge "${label}_${w}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
	done
	for w in $WORKERS; do
		assert_within "${label}_${w}_share" \
			"$(ratio_pct "${samples[$w]}" $((samples[alpha] + samples[beta])))" \
			"$(ratio_pct "${cpu[$w]}" $((cpu[alpha] + cpu[beta])))" \
			"$SHARE_TOLERANCE_PCT" "%"
	done
}

# cpu_from_file FILE NAME: the ns that threads -t wrote for thread NAME.
cpu_from_file() {
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}

# -- CMD: both threads from their creation on.
test_cmd() {
	local p=$TEST_TMP/cmd run_s=5

	run_bpfprof $((run_s + 40)) "$p" -F "$HZ" -o "$p.folded" -- \
		"$TARGETS/threads" -t "$p.cpu" "$run_s"
	assert_eq threads_cmd_exit "$BP_RC" 0
	if [ ! -s "$p.cpu" ]; then
		fail threads_cmd_cputime "threads wrote no CPU times"
		return
	fi
	check_workers "$p.folded" threads_cmd \
		"$(cpu_from_file "$p.cpu" alpha)" "$(cpu_from_file "$p.cpu" beta)"
}

# -p on the running process: all its threads; the CPU time to compare is what each thread used
# from the attach to its end (schedstat then, its own clock at the end). Its run_s start once
# bpfprof profiles (threads -w, SIGUSR2): 5.10 under qemu's TCG loaded the programs after the
# target had ended.
test_pid() {
	local p=$TEST_TMP/pid run_s=8 pid start_alpha start_beta

	start_target pid "$TARGETS/threads" -w -t "$p.cpu" "$run_s"
	if ! wait_for_threads "$pid" alpha beta; then
		fail threads_pid_setup "threads never named its threads alpha and beta"
		stop_target "$pid"
		return
	fi
	# -d is longer than the target's life: bpfprof must end when the target does.
	start_bpfprof_profiling $((run_s + 60)) "$p" threads_pid "$pid" \
		-p "$pid" -d 60 -F "$HZ" -o "$p.folded" || return
	start_alpha=$(thread_cpu_ns "$pid" alpha)
	start_beta=$(thread_cpu_ns "$pid" beta)
	kill -USR2 "$pid"
	wait_bpfprof_bg "$p"
	wait_target "$pid"

	assert_eq threads_pid_exit "$BP_RC" 0
	# From its start: loading the programs (seconds under qemu's TCG), run_s, writing.
	assert_le threads_pid_ends_with_target "$BP_SECONDS" $((run_s + 20)) s
	assert_eq threads_pid_target_exit "$TARGET_RC" 0
	if [ ! -s "$p.cpu" ] || ! is_number "$start_alpha" || ! is_number "$start_beta"; then
		fail threads_pid_cputime "no CPU times: at attach '$start_alpha' '$start_beta', file: $(cat "$p.cpu" 2>/dev/null)"
		return
	fi
	check_workers "$p.folded" threads_pid \
		$(($(cpu_from_file "$p.cpu" alpha) - start_alpha)) \
		$(($(cpu_from_file "$p.cpu" beta) - start_beta))
}

test_cmd
test_pid

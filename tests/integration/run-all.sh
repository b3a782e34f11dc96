#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-all.sh: "-a -d 3" profiles every process and kernel thread but bpfprof itself: the stacks
# of chain and sysread, running side by side, complete and each under its own comm, among all
# the others; a chain started under -a (no /proc read at its exec) complete too; kernel threads
# present, no stack of bpfprof, exit 0.
# bpfprof runs as a copy named bpfprof-self: other bpfprof processes (tests run in parallel)
# are fair game, and leaving out processes by the name "bpfprof" would not pass.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
DURATION=3
CHAIN=$("$TARGETS/chain" --print-chain)
# main;sys_f01..sys_f12;sys_leaf: sysread's, above read() and the kernel's read path.
SYS_CHAIN=$("$TARGETS/sysread" --print-chain)
MIN_COMPLETE_PCT=95
# Frames of either program, to find samples given to the other one's comm.
CHAIN_FRAMES_RE='chain_f[0-9]+|lib_f[0-9]+|cb_f[0-9]+|chain_leaf'
CHAIN_FRAMES_RE+='|(chain|libchain[.]so)[+]0x[0-9a-f]+'
SYS_FRAMES_RE='sys_f[0-9]+|sys_leaf|sysread[+]0x[0-9a-f]+'
# Kernel threads by name, or any stack of kernel frames only.
KTHREAD_COMM_RE='^(kworker/.*|ksoftirqd/.*|rcu_.*|migration/.*|jbd2/.*|kswapd.*|kcompactd.*)$'

# kthread_samples FILE: samples of kernel threads: a kernel thread's comm, or no user frame.
kthread_samples() {
	Q_COMM_RE=$KTHREAD_COMM_RE awk "$FOLDED_AWK"'
		parse($0) && (comm ~ ENVIRON["Q_COMM_RE"] || (nuser == 0 && nfr > 0)) { n += cnt }
		END { print n + 0 }' "$1"
}

# comm_samples FILE COMM...: samples of these comms, together.
comm_samples() {
	local file=$1 n=0 comm

	shift
	for comm in "$@"; do
		n=$((n + $(folded_samples "$file" "$comm")))
	done
	echo "$n"
}

# Writes and syncs a file in a loop for SECONDS: work for the kernel's writeback and journal
# threads (kworker/*, jbd2/*), which -a must sample as well.
disk_work() {
	local file=$1 end=$((SECONDS + $2))

	while [ "$SECONDS" -lt "$end" ]; do
		dd if=/dev/zero of="$file" bs=64k count=64 conv=fsync status=none
		sync
	done
	rm -f "$file"
}

test_all() {
	local p=$TEST_TMP/all self=$TEST_TMP/bpfprof-self pid sys_pid work_pid comms stats sys
	local late_pid late i cpu0 sys_cpu0 cpu sys_cpu

	# Alive past bpfprof's end, to read their CPU time then (stopped after): -a took 22 s in
	# all in a 6.12 guest, longer than DURATION + 20.
	start_target pid "$TARGETS/chain" $((DURATION + 90))
	start_target sys_pid "$TARGETS/sysread" $((DURATION + 90))
	cp "$BPFPROF" "$self"
	BPFPROF=$self start_bpfprof_bg $((DURATION + 40)) "$p" --stats -a -d "$DURATION" -F "$HZ" \
		-o "$p.folded"
	# Sampling has begun (loading takes seconds under emulation): bpfprof's own threads, by
	# name, while it runs.
	for ((i = 0; i < 300; i++)); do
		grep -q 'profiling every process' "$p.err" 2>/dev/null && break
		sleep 0.1
	done
	cpu0=$(awk '{ print $1 }' "/proc/$pid/schedstat")
	sys_cpu0=$(awk '{ print $1 }' "/proc/$sys_pid/schedstat")
	# Other processes' work, from here: loading took longer than it under qemu's TCG.
	disk_work "$TEST_TMP/disk-work" $((DURATION + 3)) &
	work_pid=$!
	BG_PIDS+=("$work_pid")
	comms=$(cat "/proc/$BP_PID"/task/*/comm 2>/dev/null | sort -u | grep -vx bpfprof-self |
		tr '\n' ' ')
	# A program started under -a: its maps are never read from /proc (the exec-time records
	# give its executable, ld.so and vDSO; mmap records its libraries).
	ln -sf "$TARGETS/chain" "$TEST_TMP/chain-late"
	start_target late_pid "$TEST_TMP/chain-late" 2
	wait_bpfprof_bg "$p"
	# The CPU time chain and sysread got while bpfprof sampled: from its start, at most
	# DURATION (writing the outputs comes after). A busy machine gives them less than that.
	cpu=$(awk '{ print $1 }' "/proc/$pid/schedstat")
	sys_cpu=$(awk '{ print $1 }' "/proc/$sys_pid/schedstat")
	# Both still run: else their CPU time is unknown, and so are the floors below.
	assert_true all_targets_alive "chain and sysread ran until bpfprof ended" \
		test -n "$cpu" -a -n "$sys_cpu"
	cpu=$((${cpu:-0} - cpu0))
	sys_cpu=$((${sys_cpu:-0} - sys_cpu0))
	cpu=$((cpu < DURATION * 1000000000 ? cpu : DURATION * 1000000000))
	sys_cpu=$((sys_cpu < DURATION * 1000000000 ? sys_cpu : DURATION * 1000000000))
	wait "$late_pid"
	forget_pid "$late_pid"
	stop_target "$pid"
	stop_target "$sys_pid"
	wait "$work_pid"
	forget_pid "$work_pid"

	assert_eq all_exit "$BP_RC" 0
	assert_ge all_duration "$BP_SECONDS" "$DURATION" s
	# -d and the outputs, not the timeout: under qemu's TCG start-up and symbolizing ~2,000
	# stacks take 10-20 times as long (14.7 s in all on 5.10).
	if emulated; then
		assert_le all_duration_max "$BP_SECONDS" $((DURATION + 30)) s
	else
		assert_le all_duration_max "$BP_SECONDS" $((DURATION + 10)) s
	fi
	read -r -a stats <<<"$(chain_stats "$p.folded" chain '^_start;' "$CHAIN")"
	# sysread's leaf is mostly read() and kernel frames below sys_leaf: all its samples count.
	read -r -a sys <<<"$(complete_share "$p.folded" sysread '^_start;' "$SYS_CHAIN")"
	read -r -a late <<<"$(chain_stats "$p.folded" chain-late '^_start;' "$CHAIN")"
	echo "  $(folded_samples "$p.folded") samples in all, of $(awk '{ sub(/;.*/, ""); print }' "$p.folded" | sort -u | wc -l) comms"
	echo "  chain: $(folded_samples "$p.folded" chain) samples, ${stats[1]} of ${stats[0]} in chain_leaf complete"
	echo "  sysread: ${sys[0]} samples, ${sys[1]} of them complete (_start to sys_leaf)"
	echo "  chain-late (started under -a): ${late[0]} samples in chain_leaf, ${late[1]} complete"
	echo "  kernel threads' stacks (most frequent first):"
	Q_COMM_RE=$KTHREAD_COMM_RE awk "$FOLDED_AWK"'
		parse($0) && (comm ~ ENVIRON["Q_COMM_RE"] || (nuser == 0 && nfr > 0))' "$p.folded" |
		sort -t' ' -k2 -rn | head -3 | cut -c1-200 | sed 's/^/    /'
	echo "  bpfprof-self's threads named otherwise: ${comms:-none}"
	check_rescans all "$p" "chain ${stats[2]}%, sysread ${sys[2]}%"
	assert_ge all_chain_samples "$(folded_samples "$p.folded" chain)" \
		$((cpu / 1000000 * HZ / 4000))
	assert_ge all_chain_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq all_chain_no_sysread_frames "$(frame_share "$p.folded" chain "$SYS_FRAMES_RE")" 0 %
	assert_ge all_sysread_samples "${sys[0]}" $((sys_cpu / 1000000 * HZ / 4000))
	assert_ge all_sysread_complete "${sys[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq all_sysread_no_chain_frames \
		"$(frame_share "$p.folded" sysread "$CHAIN_FRAMES_RE")" 0 %
	assert_ge all_late_chain_samples "${late[0]}" $((HZ / 8))
	assert_ge all_late_chain_complete "${late[2]}" "$MIN_COMPLETE_PCT" %
	assert_ge all_kernel_threads "$(kthread_samples "$p.folded")" 1 " samples"
	# Other processes than chain: the disk work's dd (or sync).
	assert_ge all_other_processes "$(comm_samples "$p.folded" dd sync)" 1 " samples"
	assert_eq all_no_bpfprof "$(comm_samples "$p.folded" bpfprof-self)" 0 " samples"
	# Its threads by their own names, too, if it names them.
	if [ -n "$comms" ]; then
		# shellcheck disable=SC2086
		assert_eq all_no_bpfprof_threads "$(comm_samples "$p.folded" $comms)" 0 \
			" samples of comms '${comms% }'"
	fi
}

test_all

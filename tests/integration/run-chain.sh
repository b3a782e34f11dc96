#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-chain.sh: chain's 28 frames (executable -> libchain.so -> callback) unwound from _start to
# the hot leaf under "-- CMD" and "-p PID"; bpfprof passes the command's exit status on.
. "$(dirname "$0")/../lib.sh"
require_bpf

# main;chain_f01;...;lib_f01;...;cb_f08;chain_leaf, straight from the program's own list.
CHAIN=$("$TARGETS/chain" --print-chain)
# The contract: 95% of the leaf's samples unwound completely.
MIN_COMPLETE_PCT=95
# chain spends all but its few ms of startup in chain_leaf: less means misnamed leaves.
MIN_LEAF_PCT=90
RUN_S=5

# check_chain FOLDED LABEL [BELOW]: the leaf holds the samples, and they hold the chain. A
# quarter of the count the target's CPU time gives is enough for the shares to mean something
# (run-rate.sh checks the rate itself). BELOW: the leaf's share only of the samples with that
# frame (leaf_share).
check_chain() {
	local folded=$1 label=$2 below=${3:-} min_samples stats

	min_samples=$(cpu_floor "${folded%.folded}" 1 4)

	read -r -a stats <<<"$(chain_stats "$folded" chain '^_start;' "$CHAIN")"
	echo "  chain_leaf samples: ${stats[0]}, complete from _start: ${stats[1]}"
	assert_ge "${label}_samples" "$(folded_samples "$folded" chain)" "$min_samples"
	assert_ge "${label}_leaf_share" "$(leaf_share "$folded" chain chain_leaf "$below")" \
		"$MIN_LEAF_PCT" %
	assert_ge "${label}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
}

# -- CMD at HZ: complete stacks from the first sample on, exit status 0 passed on.
test_cmd() {
	local hz=$1 p=$TEST_TMP/cmd-$1

	run_bpfprof $((RUN_S + 40)) "$p" -F "$hz" -o "$p.folded" -- "$TARGETS/chain" "$RUN_S"
	assert_eq "chain_cmd_f${hz}_exit" "$BP_RC" 0
	check_chain "$p.folded" "chain_cmd_f$hz"
}

# bpfprof exits with the command's status, or 128+N when a signal N killed the command.
test_exit_status() {
	local p=$TEST_TMP/status sig

	run_bpfprof 30 "$p-3" -F 99 -o "$p-3.folded" -- "$TARGETS/chain" -x 3 0.5
	assert_eq chain_cmd_exit_status_3 "$BP_RC" 3

	sig=$(kill -l TERM)
	run_bpfprof 30 "$p-sig" -F 99 -o "$p-sig.folded" -- "$TARGETS/chain" -s "$sig" 0.5
	assert_eq chain_cmd_exit_status_signal "$BP_RC" $((128 + sig))
}

# -p PID -d D on a chain already spinning: same completeness; bpfprof leaves it running.
test_pid() {
	local p=$TEST_TMP/pid hz=999 duration=4 pid alive=0 max=14

	# Under qemu's TCG loading the programs takes seconds: 4.7 s on 7.2 (2.3 s on 6.12), whose
	# run took 14.5 s in all.
	emulated && max=20
	start_target pid "$TARGETS/chain" $((duration + 20))
	run_bpfprof $((duration + 40)) "$p" -p "$pid" -d "$duration" -F "$hz" -o "$p.folded"
	kill -0 "$pid" 2>/dev/null && alive=1
	stop_target "$pid"

	assert_eq chain_pid_exit "$BP_RC" 0
	assert_ge chain_pid_duration "$BP_SECONDS" "$duration" s
	assert_le chain_pid_duration_max "$BP_SECONDS" "$max" s
	assert_eq chain_pid_target_survives "$alive" 1
	check_chain "$p.folded" chain_pid
}

# --stack-size: main's frame holds 40000 bytes more, beyond the default copy (16 KiB); a copy
# of 64 KiB still reaches _start. setarch -R fixes the stack layout (no random gap at its
# top, see test_stack_gap), so that this checks the option alone.
test_stack_size() {
	local p=$TEST_TMP/stack

	run_bpfprof 40 "$p" --stack-size 65536 -F 999 -o "$p.folded" -- \
		setarch -R "$TARGETS/chain" -b 40000 2
	assert_eq chain_stack_size_exit "$BP_RC" 0
	# The leaf's share below chain_f01: setarch's exec, ld.so and main's 40000-byte memset come
	# first (10.8% of the samples on 5.10 under qemu's TCG in CI).
	check_chain "$p.folded" chain_stack_size chain_f01
}

# A stack that grows through pages not yet present: chain -w spins 0.1 s below main's pad
# before writing it, so those samples' copies stop at the first missing page. Once written,
# the pad is stack like any other: the chain_leaf samples must be complete. (A copy limit
# remembered from those first samples once made every later stack of such a thread stop
# there: 0% complete, in CI on the run above when a sample landed during chain's memset.)
test_stack_late_pages() {
	local p=$TEST_TMP/late

	run_bpfprof 40 "$p" --stack-size 65536 -F 999 -o "$p.folded" -- \
		setarch -R "$TARGETS/chain" -b 40000 -w 0.1 2
	assert_eq chain_stack_late_pages_exit "$BP_RC" 0
	# The leaf's share below chain_f01: setarch's exec, ld.so and the 0.1 s memset come
	# before it (11.4% of the samples on 5.10 under qemu's TCG).
	check_chain "$p.folded" chain_stack_late_pages chain_f01
}

# The kernel leaves a random gap (up to 8 KiB) between the argument strings at the top of the
# main thread's stack and the argv/auxv tables; in about one run in four it spans a whole page
# that nothing ever touches. chain -g re-execs itself until that is so, to make the case
# reproducible; -b 2000 makes main's frame a few KiB deep, as many programs' are. Nothing
# between sp and _start is missing: the stacks must still be complete.
# The re-execs are CPU outside chain_leaf (exec and ld.so: 17-26% of the samples under qemu's
# TCG, as their number is random), so the leaf's share counts the samples below chain_f01 only.
test_stack_gap() {
	local p=$TEST_TMP/gap

	run_bpfprof 60 "$p" -F 999 -o "$p.folded" -- "$TARGETS/chain" -g -b 2000 2
	assert_eq chain_stack_gap_exit "$BP_RC" 0
	check_chain "$p.folded" chain_stack_gap chain_f01
}

# Samples taken in a signal handler: the unwinder must step over the kernel's signal frame
# (__restore_rt) back into the interrupted code, down to _start.
test_signal_frame() {
	local p=$TEST_TMP/signal chain stats

	chain=$("$TARGETS/chain" -S --print-chain)
	run_bpfprof 40 "$p" -F 999 -o "$p.folded" -- "$TARGETS/chain" -S 2
	assert_eq chain_signal_exit "$BP_RC" 0
	read -r -a stats <<<"$(chain_stats "$p.folded" chain '^_start;' "$chain" sig_spin)"
	echo "  sig_spin samples: ${stats[0]}, complete from _start through sig_leaf: ${stats[1]}"
	# Of the samples in the chain (below chain_f01): ld.so's start-up took 11.4% of them on
	# 5.10 under qemu's TCG.
	assert_ge chain_signal_handler_share "$(leaf_share "$p.folded" chain sig_spin chain_f01)" \
		"$MIN_LEAF_PCT" %
	assert_ge chain_signal_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %
}

# A library loaded with dlopen while profiled: its mapping appears after bpfprof read the
# target's maps, under -- CMD (from exec on) and under -p (attached before the dlopen).
test_dlopen() {
	local p=$TEST_TMP/dlopen pid run_s=2

	run_bpfprof $((run_s + 40)) "$p-cmd" -F 999 -o "$p-cmd.folded" -- \
		"$TARGETS/chain" -l 0.5 "$run_s"
	assert_eq chain_dlopen_cmd_exit "$BP_RC" 0
	check_chain "$p-cmd.folded" chain_dlopen_cmd

	# -p: the library is loaded once bpfprof profiles (SIGUSR2 ends chain's -l sleep): its
	# mapping is learnt from the mmap, not from /proc/PID/maps. Under qemu's TCG, 5.10's start
	# took longer than a fixed delay and the run.
	start_target pid "$TARGETS/chain" -l 120 "$run_s"
	start_bpfprof_profiling $((run_s + 60)) "$p-pid" chain_dlopen_pid "$pid" \
		-p "$pid" -d 60 -F 999 -o "$p-pid.folded" || return
	kill -USR2 "$pid"
	wait_bpfprof_bg "$p-pid"
	wait_target "$pid"
	assert_eq chain_dlopen_pid_exit "$BP_RC" 0
	check_chain "$p-pid.folded" chain_dlopen_pid
}

# chain without symbols (chain_stripped): a frame in one of its functions is named by the start
# of that function, "chain_stripped+0xSTART" (its FDE's initial location), as the unstripped
# chain's symbol table has it; never by the sampled address (one name per instruction split the
# leaf and every caller into several stacks). Folded stacks and the summary's top functions.
test_stripped() {
	local p=$TEST_TMP/stripped chain="" f addr stats starts fdes names r covered bad nofde cpu_ns top leaf

	for f in ${CHAIN//;/ }; do
		addr=$(nm "$TARGETS/chain" | awk -v f="$f" '$3 == f && $2 ~ /^[Tt]$/ { print $1 }')
		if [ -n "$addr" ]; then
			chain+="chain_stripped+0x$(printf '%x' "0x$addr");"
		else
			chain+="$f;"	# libchain.so keeps its symbols
		fi
	done
	chain=${chain%;}
	run_bpfprof 40 "$p" -F 999 -o "$p.folded" -- "$TARGETS/chain_stripped" -t "$p.cpu" 2
	assert_eq chain_stripped_exit "$BP_RC" 0
	cpu_ns=$(cat "$p.cpu" 2>/dev/null)
	is_number "$cpu_ns" || cpu_ns=0
	read -r -a stats <<<"$(chain_stats "$p.folded" chain_stripped '^_start;' "$chain")"
	echo "  leaf samples: ${stats[0]}, complete from _start under function-start names: ${stats[1]}"
	# Half the samples the program's own CPU time gives (run-rate.sh checks the rate).
	assert_ge chain_stripped_leaf_samples "${stats[0]}" $((cpu_ns * 999 / 2000000000))
	assert_ge chain_stripped_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %
	# Every chain_stripped+0x name is a function's start in the unstripped symbol table, or
	# the start of a PLT section, which one FDE covers whole (samples in a PLT stub: under
	# qemu's TCG, a jump target starts a translation block, where interrupts are taken), or
	# an address no FDE covers, named as it is (the symbolizer's documented fallback: crtstuff's
	# frame_dummy and .init have no CFI; under TCG the slow start-up is sampled there).
	starts=$({ nm "$TARGETS/chain" | awk '$2 ~ /^[Tt]$/ { print $1 }'
		readelf -SW "$TARGETS/chain" |
			awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 ~ /^[.]plt/ { print $3 }'; } |
		while read -r addr; do printf '0x%x ' "0x$addr"; done)
	fdes=$(readelf --debug-dump=frames "$TARGETS/chain_stripped" 2>/dev/null |
		sed -n 's/.* pc=\([0-9a-f]*\)[.][.]\([0-9a-f]*\)$/\1 \2/p' |
		while read -r lo hi; do printf '%d:%d ' "0x$lo" "0x$hi"; done)
	names=$(tr ';' '\n' <"$p.folded" | sed -n 's/^chain_stripped+\(0x[0-9a-f]*\).*/\1/p' | sort -u)
	read -r bad nofde <<<"$(for addr in $names; do
			case " $starts" in *" $addr "*) continue ;; esac
			covered=0
			for r in $fdes; do
				[ $((addr)) -ge "${r%:*}" ] && [ $((addr)) -lt "${r#*:}" ] && covered=1
			done
			echo "$covered $addr"
		done | awk '$1 { b++; print "  inside an FDE, not at a start: " $2 > "/dev/stderr" }
			!$1 { n++ } END { print b + 0, n + 0 }')"
	echo "  names at an address no FDE covers: $nofde"
	assert_eq chain_stripped_names_not_at_function_start "$bad" 0
	# The summary names the hot function as the folded stacks do: once, at its start.
	leaf=${chain##*;}
	top=$(sed -n '/top [0-9]* functions by self time/{n;p;q}' "$p.err" | awk '{ print $NF }')
	echo "  top function by self time: $top (chain_leaf: $leaf)"
	if [ -n "$top" ] && [ "$top" = "$leaf" ]; then
		pass chain_stripped_top_is_leaf_start "$top"
	else
		fail chain_stripped_top_is_leaf_start "top function '$top', expected '$leaf'"
	fi
}

test_cmd 99
test_cmd 999
test_stripped
test_exit_status
test_pid
test_stack_size
test_stack_late_pages
test_stack_gap
test_signal_frame
test_dlopen

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-dlswap.sh: a library dlclosed and another dlopened at the same address (dlswap: libdla.so,
# then libdlb.so, same layout): each one's samples carry its own names, complete, never mixed,
# under "-- CMD" and "-p PID" (attached while libdla.so is loaded).
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
# main;swap_f01..swap_f04;dla_f01..dla_f10;dla_leaf (b: dlb_*), from the libraries themselves.
CHAIN_A=$("$TARGETS/dlswap" --print-chain a)
CHAIN_B=$("$TARGETS/dlswap" --print-chain b)
MIN_COMPLETE_PCT=95
# Each library runs at least a third of the time: less than a quarter of the library samples
# means samples given to the other one (or lost).
MIN_SHARE_PCT=25
# Profiled from exec on, libdla.so's share of the library samples is its share of the CPU time
# of both phases, within this many points.
SHARE_TOLERANCE_PCT=10

# swap_stats FILE: over dlswap's samples, "A COMPLETE_A B COMPLETE_B MIXED": the samples with a
# frame of libdla.so (named dla_*, or libdla.so+0xOFF) and of those the complete chain A (from
# _start to dla_leaf), the same for libdlb.so, and the samples with frames of both.
swap_stats() {
	Q_COMM=dlswap Q_CHAIN_A=$CHAIN_A Q_CHAIN_B=$CHAIN_B awk "$FOLDED_AWK"'
		# has(RE): some frame of the sample matches RE.
		function has(re,    i) {
			for (i = 1; i <= nfr; i++)
				if (fr[i] ~ re)
					return 1
			return 0
		}
		# complete(CHAIN): the user stack starts at _start, ends with CHAIN (to its leaf).
		function complete(c,    u) {
			u = ";" user
			return user ~ /^_start;/ && substr(u, length(u) - length(c)) == ";" c
		}
		parse($0) && selected() {
			a = has("^(dla_.*|libdla[.]so[+]0x[0-9a-f]+)$")
			b = has("^(dlb_.*|libdlb[.]so[+]0x[0-9a-f]+)$")
			if (a && b)
				mixed += cnt
			else if (a) {
				na += cnt
				if (complete(ENVIRON["Q_CHAIN_A"]))
					oka += cnt
			} else if (b) {
				nb += cnt
				if (complete(ENVIRON["Q_CHAIN_B"]))
					okb += cnt
			}
		}
		END { print na + 0, oka + 0, nb + 0, okb + 0, mixed + 0 }' "$1"
}

# result_value FILE NAME: what dlswap -r wrote for NAME.
result_value() {
	awk -v n="$2" '$1 == n { print $2 }' "$1" 2>/dev/null
}

# check_swap LABEL FOLDED RESULT MIN_SAMPLES [whole]: libdlb.so replaced libdla.so at the same
# address, and each library's samples are its own complete chain, in proportion (to the CPU
# time of each phase with "whole": both phases were profiled from start to end).
check_swap() {
	local label=$1 folded=$2 result=$3 min_samples=$4 whole=${5:-} s all cpu_a cpu_b

	echo "  libdla.so text $(result_value "$result" a_text_start)-$(result_value "$result" a_text_end), libdlb.so text $(result_value "$result" b_text_start)-$(result_value "$result" b_text_end)"
	# Without the same address the run tests nothing: a loud failure, not a vacuous pass.
	assert_eq "${label}_same_address" "$(result_value "$result" same_address)" 1
	read -r -a s <<<"$(swap_stats "$folded")"
	all=$((s[0] + s[2] + s[4]))
	echo "  libdla.so: ${s[1]} of ${s[0]} samples complete; libdlb.so: ${s[3]} of ${s[2]}; both in one stack: ${s[4]}"
	echo "  CPU: libdla.so phase $(result_value "$result" a_cpu_ns) ns, libdlb.so phase $(result_value "$result" b_cpu_ns) ns"
	check_rescans "$label" "${folded%.folded}" \
		"libdla.so $(ratio_pct "${s[1]}" "${s[0]}")%, libdlb.so $(ratio_pct "${s[3]}" "${s[2]}")%"
	assert_ge "${label}_library_samples" "$all" "$min_samples"
	assert_ge "${label}_a_complete" "$(ratio_pct "${s[1]}" "${s[0]}")" "$MIN_COMPLETE_PCT" %
	assert_ge "${label}_b_complete" "$(ratio_pct "${s[3]}" "${s[2]}")" "$MIN_COMPLETE_PCT" %
	assert_eq "${label}_no_mixed_stacks" "${s[4]}" 0 " samples"
	assert_ge "${label}_a_share" "$(ratio_pct "${s[0]}" "$all")" "$MIN_SHARE_PCT" %
	assert_ge "${label}_b_share" "$(ratio_pct "${s[2]}" "$all")" "$MIN_SHARE_PCT" %
	if [ "$whole" = whole ]; then
		cpu_a=$(result_value "$result" a_cpu_ns)
		cpu_b=$(result_value "$result" b_cpu_ns)
		assert_within "${label}_a_share_of_cpu" "$(ratio_pct "${s[0]}" "$all")" \
			"$(ratio_pct "${cpu_a:-0}" $((${cpu_a:-0} + ${cpu_b:-0})))" \
			"$SHARE_TOLERANCE_PCT" %
	fi
}

# -- CMD: bpfprof sees both dlopens and the dlclose between them.
test_cmd() {
	local p=$TEST_TMP/cmd

	run_bpfprof 40 "$p" --stats -F "$HZ" -o "$p.folded" -- "$TARGETS/dlswap" -r "$p.result" \
		1.5 1.5
	assert_eq dlswap_cmd_exit "$BP_RC" 0
	check_swap dlswap_cmd "$p.folded" "$p.result" "$(cpu_floor "$p" 1 4)" whole
}

# -p: attached while libdla.so is mapped (its maps as read at attach time hold it), which
# libdlb.so then replaces. The libdla.so phase lasts 1.5 s from SIGUSR2 (dlswap -w), sent once
# bpfprof profiles: loading the BPF programs took seconds on 5.10 under qemu's TCG.
test_pid() {
	local p=$TEST_TMP/pid pid

	start_target pid "$TARGETS/dlswap" -w -r "$p.result" 1.5 1.5
	start_bpfprof_profiling 60 "$p" dlswap_pid "$pid" \
		--stats -p "$pid" -d 30 -F "$HZ" -o "$p.folded" || return
	kill -USR2 "$pid"
	wait_bpfprof_bg "$p"
	wait_target "$pid"
	assert_eq dlswap_pid_exit "$BP_RC" 0
	assert_eq dlswap_pid_target_exit "$TARGET_RC" 0
	check_swap dlswap_pid "$p.folded" "$p.result" "$(cpu_floor "$p" 1 4)"
}

test_cmd
test_pid

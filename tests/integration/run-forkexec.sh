#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-forkexec.sh: a process forks a child that spins in the parent's chain, then execs chain
# while the parent spins on: each chain complete, under the comm of the image that ran it.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
PARENT_S=1
CHILD_PRE_EXEC_S=0.3
CHILD_S=1.5
# main;spin;fe_f01..fe_f10;fe_leaf: the parent's, and the child's until it execs.
CHAIN_P=$("$TARGETS/forkexec" --print-chain)
# main;chain_f01..;lib_f01..;cb_f01..;chain_leaf: the child's after exec.
CHAIN_C=$("$TARGETS/chain" --print-chain)
MIN_COMPLETE_PCT=95
# Frames of either program, to find samples given to the other one.
FE_FRAMES_RE='fe_f[0-9]+|fe_leaf|forkexec[+]0x[0-9a-f]+'
CHAIN_FRAMES_RE='chain_f[0-9]+|lib_f[0-9]+|cb_f[0-9]+|chain_leaf'
CHAIN_FRAMES_RE+='|(chain|libchain[.]so)[+]0x[0-9a-f]+'

# check_image LABEL FOLDED COMM CHAIN FOREIGN_RE MIN_SAMPLES: COMM's samples are its chain,
# complete from _start, and none holds a frame of the other program. Sets COMPLETE_PCT.
# The leaf's share counts the samples below the chain's frame after main (the program's own
# work): the child's exec and ld.so come before it (10% of its samples on 5.10 under TCG).
check_image() {
	local label=$1 folded=$2 comm=$3 chain=$4 foreign_re=$5 min_samples=$6 stats
	local below=${chain#*;}
	below=${below%%;*}

	read -r -a stats <<<"$(chain_stats "$folded" "$comm" '^_start;' "$chain")"
	COMPLETE_PCT=${stats[2]}
	echo "  $comm: $(folded_samples "$folded" "$comm") samples, ${stats[1]} of ${stats[0]} in ${chain##*;} complete"
	assert_ge "${label}_samples" "$(folded_samples "$folded" "$comm")" "$min_samples"
	assert_ge "${label}_leaf_share" "$(leaf_share "$folded" "$comm" "${chain##*;}" "$below")" 90 %
	assert_ge "${label}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq "${label}_no_foreign_frames" "$(frame_share "$folded" "$comm" "$foreign_re")" 0 %
}

test_fork_exec() {
	local p=$TEST_TMP/fe parent_pct

	run_bpfprof 40 "$p" --stats -F "$HZ" -o "$p.folded" -- "$TARGETS/forkexec" \
		-c "$CHILD_PRE_EXEC_S" "$PARENT_S" "$TARGETS/chain" "$CHILD_S"
	assert_eq forkexec_exit "$BP_RC" 0
	# A quarter of each one's share of the samples the two processes' CPU time gives: the
	# parent spins PARENT_S + the child's whole life, and the child CHILD_PRE_EXEC_S in the
	# parent's chain too; the child spins CHILD_S in chain.
	check_image forkexec_parent "$p.folded" forkexec "$CHAIN_P" "$CHAIN_FRAMES_RE" \
		"$(awk -v a="$PARENT_S" -v b="$CHILD_S" -v c="$CHILD_PRE_EXEC_S" -v n="$(cpu_floor "$p" 1 1)" \
			'BEGIN { if (n !~ /^[0-9]+$/) { print "n/a"; exit } printf "%d", n * (a + b + 2 * c) / (a + 2 * b + 2 * c) / 4 }')"
	parent_pct=$COMPLETE_PCT
	check_image forkexec_child "$p.folded" chain "$CHAIN_C" "$FE_FRAMES_RE" \
		"$(awk -v a="$PARENT_S" -v b="$CHILD_S" -v c="$CHILD_PRE_EXEC_S" -v n="$(cpu_floor "$p" 1 1)" \
			'BEGIN { if (n !~ /^[0-9]+$/) { print "n/a"; exit } printf "%d", n * b / (a + 2 * b + 2 * c) / 4 }')"
	check_rescans forkexec "$p" "forkexec $parent_pct%, chain $COMPLETE_PCT%"
}

test_fork_exec

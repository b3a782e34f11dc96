#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-inline.sh: inlined functions appear as frames of their own, outer to inner, suffixed _[i]:
# as leaves (inline spinning in inline_inner's loop) and as callers (inline_leaf's return
# address lies in inline_inner), in stacks complete from _start.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=3
HZ=999
# main;inline_spin;inline_outer_[i];inline_inner_[i];inline_leaf, from the program itself.
FULL=$("$TARGETS/inline" --print-chain)
# The same chain without its real leaf: the samples in inline_inner's own loop.
INLINED=${FULL%;*}
MIN_COMPLETE_PCT=90
# About half of the time is spent on each side of the call; a quarter is a wide margin.
MIN_SIDE_PCT=25

test_inline_frames() {
	local p=$TEST_TMP/inline total stats

	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/inline" "$RUN_S"
	assert_eq inline_exit "$BP_RC" 0
	total=$(folded_samples "$p.folded" inline)
	echo "  inline samples: $total; the hottest stacks:"
	awk '/^inline;/ { n = $NF; sub(/ [0-9]+$/, ""); print n, $0 }' "$p.folded" | sort -rn |
		head -4 | sed 's/^/    /'
	assert_ge inline_samples "$total" "$(cpu_floor "$p" 1 2)"

	# Leaf in inlined code: ...;inline_spin;inline_outer_[i];inline_inner_[i] COUNT.
	read -r -a stats <<<"$(chain_stats "$p.folded" inline '^_start;' "$INLINED")"
	echo "  inline_inner_[i] leaf samples: ${stats[0]}, complete from _start: ${stats[1]}"
	assert_ge inline_inlined_leaf_share "$(ratio_pct "${stats[0]}" "$total")" "$MIN_SIDE_PCT" %
	assert_ge inline_inlined_leaf_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %

	# A real function called from inlined code: the caller's inline frames above it.
	read -r -a stats <<<"$(chain_stats "$p.folded" inline '^_start;' "$FULL")"
	echo "  inline_leaf samples: ${stats[0]}, complete from _start: ${stats[1]}"
	assert_ge inline_real_leaf_share "$(ratio_pct "${stats[0]}" "$total")" "$MIN_SIDE_PCT" %
	assert_ge inline_real_leaf_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %

	# Never inner above outer, never an inlined function without its _[i], never inline_leaf
	# straight under inline_spin (its caller's inline frames lost).
	assert_eq inline_no_reversed_order "$(Q_COMM=inline awk "$FOLDED_AWK"'
		parse($0) && selected() {
			o = index(";" user ";", ";inline_outer_[i];")
			i = index(";" user ";", ";inline_inner_[i];")
			if (i && (!o || i < o))
				n += cnt
		}
		END { print n + 0 }' "$p.folded")" 0 " samples"
	assert_eq inline_no_unsuffixed \
		"$(frame_share "$p.folded" inline 'inline_(inner|outer)')" 0 "%"
	assert_eq inline_no_skipped_frames "$(Q_COMM=inline awk "$FOLDED_AWK"'
		parse($0) && selected() && index(";" user ";", ";inline_spin;inline_leaf;") {
			n += cnt
		}
		END { print n + 0 }' "$p.folded")" 0 " samples"
}

test_inline_frames

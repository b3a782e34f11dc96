#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-svg.sh: bpfprof's own SVG flame graph of real runs, checked in headless Chromium
# (tests/svg/check.sh): chain's frames from _start to chain_leaf present, click-to-zoom, search;
# threads' graph (two thread names at the root) against the folded stacks of the same run, and a
# zoom into one thread that hides the other; xmllint accepts both; the unit test's fixture graph
# (every frame kind) checked the same way. The chain graph's screenshot is kept as
# $(dirname $BPFPROF)/artifacts/flamegraph.png (a CI artifact).
. "$(dirname "$0")/../lib.sh"
require_bpf

CHECK=$(cd "$(dirname "$0")/../svg" && pwd)/check.sh
ARTIFACTS=$(cd "$(dirname "$BPFPROF")" && pwd)/artifacts
# As in run-chain.sh: chain spends all but its few ms of startup in chain_leaf.
MIN_LEAF_PCT=90

# need_tool NAME PACKAGE: NAME is installed; else a failure under CI=true, a skip otherwise.
need_tool() {
	command -v "$1" >/dev/null && return 0
	if [ "${CI:-}" = true ]; then
		fail "svg_tool_$1" "$1 not found (Debian package $2); CI=true makes this a failure"
	else
		skip "$1 not found (Debian package $2)"
	fi
	return 1
}

# run_check LABEL ARGS...: runs check.sh ARGS; each of its PASS/FAIL lines becomes an assertion
# LABEL_CHECK, other lines are shown indented.
run_check() {
	local label=$1 out=$TEST_TMP/$1.check line status rest rc

	shift
	echo "+ check.sh $*"
	"$CHECK" "$@" >"$out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"PASS "*|"FAIL "*)
			status=${line%% *}
			rest=${line#* }
			record "$status" "${label}_${rest%%:*}" "${rest#*: }"
			;;
		"DONE "*) ;;
		*) echo "  | $line" ;;
		esac
	done <"$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		fail "${label}_check" "check.sh exited $rc without naming a failed check"
	fi
}

# svg_count FILE NAME: the samples of the frames named NAME (a plain name), summed over the graph.
svg_count() {
	grep -o "<title>$2 ([0-9]* samples" "$1" | awk '{ gsub(/[^0-9]/, "", $2); n += $2 }
		END { print n + 0 }'
}

# svg_pct FILE NAME: the percentage in the title of the widest frame named NAME.
svg_pct() {
	grep -o "<title>$2 ([0-9]* samples, [0-9.]*%)" "$1" |
		awk '{ gsub(/[^0-9.]/, "", $4); if ($4 + 0 > p) p = $4 + 0 } END { print p + 0 }'
}

# folded_count FILE NAME: samples of the stacks holding a frame NAME (comm included).
folded_count() {
	Q_NAME=$2 awk "$FOLDED_AWK"'
		parse($0) {
			if (comm == ENVIRON["Q_NAME"]) { n += cnt; next }
			for (i = 1; i <= nfr; i++)
				if (fr[i] == ENVIRON["Q_NAME"]) { n += cnt; break }
		}
		END { print n + 0 }' "$1"
}

# The command of the lead's example: chain's 28 frames, from main to chain_leaf.
test_chain() {
	local p=$TEST_TMP/chain frames

	run_bpfprof 60 "$p" -F 999 --format svg -o "$p.svg" -- "$TARGETS/chain" 2
	assert_eq svg_chain_exit "$BP_RC" 0
	assert_true svg_chain_written "chain.svg is an SVG document" \
		grep -q '^<svg version="1.1"' "$p.svg"
	need_tool xmllint libxml2-utils &&
		assert_true svg_chain_xmllint "xmllint --noout accepts chain.svg" \
			xmllint --noout --nonet "$p.svg"
	assert_ge svg_chain_leaf_share "$(svg_pct "$p.svg" chain_leaf)" "$MIN_LEAF_PCT" %

	IFS=';' read -r -a frames <<<"$("$TARGETS/chain" --print-chain)"
	mkdir -p "$ARTIFACTS"
	# chain_f05: its callers (to "all") greyed, its 23 callees scaled; the libchain.so and
	# callback frames nest in one stack, so the matched share counts each sample once.
	need_tool chromium chromium &&
		run_check svg_chain --click chain_f05 --search '^(lib|cb)_f0[1-8]$' \
			--screenshot "$ARTIFACTS/flamegraph.png" \
			"$p.svg" all chain _start "${frames[@]}"
}

# threads: "alpha" and "beta" side by side at the root. The SVG and the folded stacks of one
# run hold the same counts; zooming into alpha hides beta and its whole chain.
test_threads() {
	local p=$TEST_TMP/threads alpha beta name n_svg n_folded

	run_bpfprof 60 "$p" -F 999 -o "$p.svg" -o "$p.folded" -- "$TARGETS/threads" 1
	assert_eq svg_threads_exit "$BP_RC" 0
	need_tool xmllint libxml2-utils &&
		assert_true svg_threads_xmllint "xmllint --noout accepts threads.svg" \
			xmllint --noout --nonet "$p.svg"
	assert_eq svg_threads_total "$(svg_count "$p.svg" all)" "$(folded_samples "$p.folded")" \
		" samples"
	for name in alpha beta alpha_leaf beta_leaf lib_f01 lib_g01; do
		n_svg=$(svg_count "$p.svg" "$name")
		n_folded=$(folded_count "$p.folded" "$name")
		echo "  $name: $n_svg samples in the graph, $n_folded in the folded stacks"
		assert_eq "svg_threads_${name}_count" "$n_svg" "$n_folded" " samples"
	done
	assert_ge svg_threads_beta_samples "$(svg_count "$p.svg" beta)" 20

	IFS=';' read -r -a alpha <<<"$("$TARGETS/threads" --print-chain alpha)"
	IFS=';' read -r -a beta <<<"$("$TARGETS/threads" --print-chain beta)"
	# At least beta and its chain are hidden.
	need_tool chromium chromium &&
		run_check svg_threads --click alpha --min-hidden $((${#beta[@]} + 1)) \
			--search '_leaf$' "$p.svg" alpha beta "${alpha[@]}" "${beta[@]}"
}

# The unit test's fixture (tests/unit/output/test_flamegraph.c): every frame kind, a name with markup
# characters, siblings at each level, nested search matches (inner_loop holds helper). Written by
# the unit test binary (make unit), here run again if it was built.
test_unit_fixture() {
	local build svg unit

	build=$(cd "$(dirname "$BPFPROF")" && pwd)
	svg=$build/tests/flamegraph-unit.svg
	unit=$build/tests/unit/test_flamegraph
	[ -x "$unit" ] && "$unit" >"$TEST_TMP/unit.out" 2>&1
	if [ ! -s "$svg" ]; then
		skip "no $svg: build and run the unit tests first (make unit)"
		return
	fi
	need_tool chromium chromium &&
		run_check svg_fixture --click compute --min-hidden 12 --search 'inner|help' "$svg" \
			demo helper _start main compute inner_loop 'std::sort<int*, cmp<&a>>' \
			entry_SYSCALL_64 vfs_read vfs_write jit_fn worker idle
}

test_chain
test_threads
test_unit_fixture

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-go.sh: Go binaries without symbols, DWARF or CFI (-ldflags='-s -w', Debian's gofmt): their
# functions named from .gopclntab (inline frames too), and unwound by it (each function's pcsp
# table, as Go's own traceback does), leaf functions without a frame pointer included, across
# the runtime's stack switches (the garbage collector's runtime.systemstack, runtime.mcall,
# runtime.morestack: from the g0 stack sampled to the goroutine's, copied by BPF as
# RECORD_GO_STACK; a cgo call's runtime.asmcgocall), and through recursions deeper than the copy
# (RECORD_FP_CHAIN).
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=499
RUN_S=3
# The machine's Go (Debian's golang-go: 1.19 on Debian 12, 1.24 on 13); src is a link that
# gofmt would not walk into.
GOROOT=$(go env GOROOT 2>/dev/null) || GOROOT=
GOFMT=${GOROOT:-/nonexistent}/bin/gofmt
GO_SRC=$(realpath -q "${GOROOT:-/nonexistent}/src") || GO_SRC=${GOROOT:-/nonexistent}/src
CHAIN='runtime.goexit;runtime.main;main.main;main.level1;main.level2;main.leafSpin'
# Go into C: Go's frames (pcsp), the cgo call's switch to the thread's stack, C's (CFI).
CGO_RE='^runtime\.goexit;runtime\.main;main\.main;main\.goLevel1;main\.goCall;main\._Cfunc_c_entry;'
CGO_RE+='runtime\.cgocall;runtime\.asmcgocall;_cgo_[0-9a-f]+_Cfunc_c_entry;c_entry;c_level1;c_leaf_spin$'
MIN_CHAIN_PCT=95
MIN_NAMED_PCT=99
# gochain alloc: samples reaching a root (98.8-99.2% in development runs), and of the samples
# on a g0 stack (runtime.systemstack in their stack: 99.1-99.9%; 69-95% before -- CMD armed the
# process for RECORD_GO_STACKs ahead of its exec, when the runtime's first collections came
# before its first sample was handled).
MIN_ALLOC_ROOT_PCT=95
MIN_SWITCHED_ROOT_PCT=95
# gofmt: 8% of its samples are in go/printer's recursions deeper than the largest copy
# (--max-stack-size 128K holds ~3,000 frames; up to 14,000), unwound with the frame-pointer
# chain BPF records past the copy (RECORD_FP_CHAIN, 5.17+): 99.1-99.3% reach a root (92.8-93.8%
# with the copy alone; 96.5% with --max-frames 8192, the default before: 2.6% stopped there).
MIN_GOFMT_ROOT_PCT=98
ROOT_RE='^runtime\.(goexit|mstart|rt0_go);'



test_chain() {
	local p=$TEST_TMP/gochain share

	run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" --stats -o "$p.folded" -- \
		"$TARGETS/gochain_stripped" "$RUN_S"
	assert_eq go_chain_exit "$BP_RC" 0
	read -r -a share <<<"$(complete_share "$p.folded" gochain_strippe '^runtime\.goexit;' \
		"$CHAIN")"
	assert_ge go_chain_samples "${share[0]}" "$(cpu_floor "$p" 1 2)"
	assert_ge go_chain_complete "${share[2]}" "$MIN_CHAIN_PCT" % \
		"${share[1]} of ${share[0]} samples; most common: $(sort -t' ' -k2 -nr "$p.folded" |
			head -2 | cut -c1-300)"
	# A walk that reached runtime.goexit is complete: --stats says so.
	assert_ge go_chain_rooted "$(awk '/unwound to root:/ { sub(/%/, "", $5); print $5 }' \
		"$p.err")" "$MIN_CHAIN_PCT" %
}

# The garbage collector on the g0 stacks: stacks through runtime.systemstack reach the
# goroutine's first frame.
test_alloc() {
	local p=$TEST_TMP/goalloc share go_line

	run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" --stats -o "$p.folded" -- \
		"$TARGETS/gochain_stripped" "$RUN_S" alloc
	assert_eq go_alloc_exit "$BP_RC" 0
	read -r -a share <<<"$(complete_share_re "$p.folded" gochain_strippe "$ROOT_RE" '.')"
	assert_ge go_alloc_samples "${share[0]}" "$(cpu_floor "$p" 1 2)"
	assert_ge go_alloc_root "${share[2]}" "$MIN_ALLOC_ROOT_PCT" %
	read -r -a share <<<"$(complete_share_re "$p.folded" gochain_strippe "$ROOT_RE" \
		';runtime\.systemstack;')"
	# Inline frames from .gopclntab's inline trees (the runtime inlines lock, unlock...).
	assert_grep go_alloc_inline_frames "$p.folded" ';runtime\.[^;]+_\[i\];'
	# Of the samples through runtime.systemstack: the same ratio among them.
	assert_ge go_alloc_systemstack_samples "$(grep -c ';runtime\.systemstack;' "$p.folded")" 1
	# --stats: the copies of the goroutine stacks, all used by their samples.
	assert_ge go_alloc_stacks_used "$(sed -n 's/^bpfprof: Go stack switches: \([0-9]*\) samples.*/\1/p' \
		"$p.err")" 1
	# Lost only when the ringbuf is full (a busy machine, a sanitizer build): a few at most.
	read -r -a go_line <<<"$(sed -n \
		's/^bpfprof: Go stack switches: .*; \([0-9]*\) copied by BPF, \([0-9]*\) lost.*/\1 \2/p' \
		"$p.err")"
	assert_le go_alloc_stacks_lost_pct "$(ratio_pct "${go_line[1]:-x}" "${go_line[0]:-x}")" 10 %
	assert_ge go_alloc_switched_root "$(awk -v re="$ROOT_RE" '
		{ split($1, f, ";"); u = substr($1, length(f[1]) + 2) }
		u ~ /(^|;)runtime\.systemstack;/ { t += $NF; if (u ~ re) r += $NF }
		END { printf "%.1f\n", t ? 100 * r / t : 0 }' "$p.folded")" "$MIN_SWITCHED_ROOT_PCT" % \
		"$(awk -v re="$ROOT_RE" '{ split($1, f, ";"); u = substr($1, length(f[1]) + 2) }
			u ~ /runtime\.systemstack;/ && u !~ re' "$p.folded" | sort -t' ' -k2 -nr |
			head -2 | cut -c1-300)"
}

# cgo: the chain from runtime.goexit through runtime.asmcgocall into the C functions, in order
# (98.5-98.9% in development runs; runtime.cgocall was missing before asmcgocall was crossed
# like systemstack), and the frames of both kinds counted by --stats.
test_cgo() {
	local p=$TEST_TMP/gocgo share

	run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" --stats -o "$p.folded" -- \
		"$TARGETS/gocgo_stripped" "$RUN_S"
	assert_eq go_cgo_exit "$BP_RC" 0
	# Of the samples in c_leaf_spin: the whole chain from runtime.goexit.
	read -r -a share <<<"$(chain_stats "$p.folded" gocgo_stripped "$CGO_RE" c_leaf_spin)"
	assert_ge go_cgo_samples "${share[0]}" "$(cpu_floor "$p" 1 2)"
	assert_ge go_cgo_chain "${share[2]}" "$MIN_CHAIN_PCT" % \
		"${share[1]} of ${share[0]} samples; most common: $(sort -t' ' -k2 -nr "$p.folded" |
			head -2 | cut -c1-300)"
	assert_grep go_cgo_methods "$p.err" "module $TARGETS/gocgo_stripped: .*\\(CFI [1-9][0-9]*, Go pcsp [1-9]"
}

# Debian's gofmt over Go's own sources: every user frame named (module+0xADDR before).
test_gofmt() {
	local p=$TEST_TMP/gofmt

	if [ ! -x "$GOFMT" ] || [ ! -d "$GO_SRC" ]; then
		fail gofmt_available "$GOFMT or $GO_SRC is missing (make deps installs golang-go)"
		return
	fi
	# Names: a folded file (2048 frames a stack: go/printer's deepest stacks make 200 MB of
	# folded text at the default 16384).
	run_bpfprof 120 "$p" -F 999 --max-frames 2048 -o "$p.folded" -- "$GOFMT" -l "$GO_SRC"
	# gofmt -l exits 2: some of Go's testdata does not parse, on purpose.
	assert_le gofmt_exit "$BP_RC" 2
	assert_ge gofmt_named "$(awk '{
		n = split($1, f, ";")
		for (i = 2; i <= n; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			t += $NF
			if (f[i] !~ /^gofmt\+0x/)
				named += $NF
		}
	} END { printf "%.2f\n", t ? 100 * named / t : 0 }' "$p.folded")" "$MIN_NAMED_PCT" %
	# Roots, at the default depth: --stats (a walk that reached runtime.goexit, mstart or
	# rt0_go is complete), pprof output.
	run_bpfprof 120 "$p-root" -F 999 --stats -o "$p-root.pb.gz" -- "$GOFMT" -l "$GO_SRC"
	assert_le gofmt_root_exit "$BP_RC" 2
	assert_ge gofmt_root "$(sed -n 's/^bpfprof: unwound to root: \([0-9.]*\)%.*/\1/p' \
		"$p-root.err")" "$MIN_GOFMT_ROOT_PCT" % "$(grep -E 'unwound to root|deeper' \
		"$p-root.err")"
	# The frame-pointer chains past the copies, read by their samples' unwinds.
	assert_ge gofmt_chains "$(sed -n \
		's/^bpfprof: Go stacks deeper than the copy: \([0-9]*\) samples.*/\1/p' \
		"$p-root.err")" 1
}

test_chain
test_alloc
test_cgo
test_gofmt

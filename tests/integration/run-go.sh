#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-go.sh: Go binaries without symbols, DWARF or CFI (-ldflags='-s -w', Debian's gofmt): their
# functions named from .gopclntab, and unwound by it (each function's pcsp table, as Go's own
# traceback does), leaf functions without a frame pointer included.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=499
RUN_S=3
GOFMT=/usr/lib/go-1.19/bin/gofmt
GO_SRC=/usr/share/go-1.19/src
CHAIN='runtime.goexit;runtime.main;main.main;main.level1;main.level2;main.leafSpin'
MIN_CHAIN_PCT=95
MIN_NAMED_PCT=99



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

# Debian's gofmt over Go's own sources: every user frame named (module+0xADDR before).
test_gofmt() {
	local p=$TEST_TMP/gofmt

	if [ ! -x "$GOFMT" ] || [ ! -d "$GO_SRC" ]; then
		fail gofmt_available "$GOFMT or $GO_SRC is missing (make deps installs golang-go)"
		return
	fi
	run_bpfprof 120 "$p" -F 999 -o "$p.folded" -- "$GOFMT" -l "$GO_SRC"
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
}

test_chain
test_gofmt

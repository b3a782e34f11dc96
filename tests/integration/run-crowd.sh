#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-crowd.sh: 200 processes of chain at once (crowd forks them, then lets them all exec
# together): most of them sampled and unwound root to leaf, each ELF file opened once for all
# of them, bpfprof's memory and file descriptors bounded.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
# Under qemu's TCG (lib.sh emulated) bpfprof's unwinding runs 10-20 times slower while the
# guest's timer keeps the sample rate: at 999 Hz the ringbuf overflowed (8180 samples and 1565
# mapping events lost on 5.10), which measures the emulator. 199 Hz there.
emulated && HZ=199
PROCS=200
# Each chain spins this long (wall time) after its exec: 200 share the CPUs all the while.
CHAIN_S=2
CHAIN=$("$TARGETS/chain" --print-chain)
MIN_COMPLETE_PCT=95
# Processes with samples (--stats' process lines): each chain gets ~1/100 of a CPU for
# CHAIN_S, ~20 samples at HZ on 2 CPUs, so nearly all of them have some.
MIN_PROCS_SAMPLED=150
# ELF files opened in the whole run: crowd, chain, libchain.so, libc.so.6, ld-linux: each
# once, shared by all 200 processes; a per-process open would count hundreds.
MAX_FILES_OPENED=10
# The tested budget: bpfprof's max RSS with 200 processes sharing ELF data (the ELF files and
# their CFI once, per-process state small), and its file descriptors as it exits (not one per
# process, nor any left for processes long gone).
MAX_RSS_KIB=$((150 * 1024))
MAX_FDS=64
# All the children alive at the same time for at least this long (crowd's first exit after
# their release): the profile covers 200 concurrent processes, not a sequence.
MIN_OVERLAP_MS=1000

# result_value FILE NAME: what crowd -t wrote for NAME.
result_value() {
	awk -v n="$2" '$1 == n { print $2 }' "$1" 2>/dev/null
}

# procs_sampled FILE: processes with samples, from --stats: the process lines (the first 20)
# plus N of "N more processes with fewer samples".
procs_sampled() {
	awk '/^bpfprof: process [0-9]+ \(.*\): [0-9]+ samples/ { n++ }
		/^bpfprof: [0-9]+ more processes with fewer samples$/ { n += $2 }
		END { print n + 0 }' "$1"
}

test_crowd() {
	local p=$TEST_TMP/crowd stats sampled

	# 200 busy processes on 2 CPUs leave bpfprof 1/100 of a CPU at normal priority: the
	# ringbuf fills. --realtime (SCHED_FIFO, as perf record -r) is the documented answer.
	run_bpfprof 60 "$p" --stats --realtime 1 -F "$HZ" -o "$p.folded" -- \
		"$TARGETS/crowd" -n "$PROCS" -t "$p.result" "$TARGETS/chain" "$CHAIN_S"
	assert_eq crowd_exit "$BP_RC" 0
	assert_eq crowd_children "$(result_value "$p.result" children)" "$PROCS"
	assert_eq crowd_children_failed "$(result_value "$p.result" failed)" 0
	echo "  children exited $(result_value "$p.result" first_exit_ms) to $(result_value "$p.result" last_exit_ms) ms after their release"
	assert_ge crowd_all_alive "$(result_value "$p.result" first_exit_ms)" "$MIN_OVERLAP_MS" " ms"

	grep -E '^bpfprof: ([0-9]+ more processes|[0-9]+ ELF files|[0-9]+ mmap|max RSS)' "$p.err" |
		sed 's/^/  > /'
	stats_totals "$p.err"
	sampled=$(procs_sampled "$p.err")
	read -r -a stats <<<"$(chain_stats "$p.folded" chain '^_start;' "$CHAIN")"
	echo "  crowd: bpfprof max RSS ${ST_RSS_KIB:-?} KiB, ${ST_FDS:-?} file descriptors open, ${ST_FILES_OPENED:-?} ELF files opened in all (${ST_FILES_OPEN:-?} open at the end), $sampled processes sampled"
	echo "  chain: $(folded_samples "$p.folded" chain) samples, ${stats[1]} of ${stats[0]} in chain_leaf complete"
	check_rescans crowd "$p" "chain ${stats[2]}%"
	# One process more than the chains may be among them: crowd itself.
	assert_ge crowd_processes_sampled "$sampled" "$MIN_PROCS_SAMPLED"
	assert_le crowd_elf_files_opened "${ST_FILES_OPENED:-missing}" "$MAX_FILES_OPENED"
	assert_le crowd_max_rss "${ST_RSS_KIB:-missing}" "$MAX_RSS_KIB" " KiB"
	assert_le crowd_fds "${ST_FDS:-missing}" "$MAX_FDS"
	# The spin itself, not the 200 execs and dynamic loadings: the chains spend CHAIN_S on
	# every CPU in chain_leaf, a quarter of one CPU's nominal count is a floor.
	assert_ge crowd_chain_leaf_samples "${stats[0]}" $((CHAIN_S * HZ / 4))
	assert_ge crowd_chain_complete "${stats[2]}" "$MIN_COMPLETE_PCT" %
}

test_crowd

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-kernel.sh: samples taken inside read(2) end in kernel frames ("_[k]", leaf end only),
# named after the read path, with the user part above them still unwound to _start.
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=3
HZ=999
CHAIN=$("$TARGETS/sysread" --print-chain)
# read()ing 256 KiB of /dev/zero is kernel work (clearing the buffer) nearly all the time.
MIN_KERNEL_PCT=50
MIN_COMPLETE_PCT=95
# The read path in the kernel: these names have been stable for many releases.
READ_PATH_RE='(ksys_read|vfs_read|__x64_sys_read|read_zero|read_iter_zero)_\[k\]'
MIN_READ_PATH_PCT=50

test_syscall_stacks() {
	local p=$TEST_TMP/kernel stats

	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/sysread" "$RUN_S"
	assert_eq kernel_exit "$BP_RC" 0
	# TOTAL KERNEL MISPLACED COMPLETE_PCT
	read -r -a stats <<<"$(kernel_stats "$p.folded" sysread '^_start;' "$CHAIN")"
	echo "  sysread: ${stats[0]} samples, ${stats[1]} with kernel frames, ${stats[2]} with a user frame below a kernel one"
	assert_ge kernel_samples "${stats[0]}" "$(cpu_floor "$p" 1 4)"
	assert_ge kernel_share "$(ratio_pct "${stats[1]}" "${stats[0]}")" "$MIN_KERNEL_PCT" %
	assert_eq kernel_frames_at_leaf_end "${stats[2]}" 0 " samples"
	assert_ge kernel_user_part_complete "${stats[3]}" "$MIN_COMPLETE_PCT" %
	assert_ge kernel_read_path_named \
		"$(frame_share "$p.folded" sysread "$READ_PATH_RE")" "$MIN_READ_PATH_PCT" %
}

test_syscall_stacks

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-lifecycle.sh: how a profile ends and is written: a -p target exiting early, SIGINT and
# SIGTERM, the -o file replaced whole (never half-written, no temp file left), stdout output.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999

# check_folded_file NAME FILE: well-formed folded output: "comm;frames COUNT" lines, sorted,
# one line per stack, ending in a newline.
check_folded_file() {
	local name=$1 file=$2

	assert_eq "${name}_malformed_lines" "$(malformed_lines "$file")" 0
	assert_eq "${name}_duplicate_stacks" "$(duplicate_stacks "$file")" 0
	assert_true "${name}_sorted" "lines sorted (LC_ALL=C)" env LC_ALL=C sort -c "$file"
	assert_true "${name}_ends_with_newline" "the last byte is a newline" \
		test "$(tail -c 1 "$file" | od -An -c | tr -d ' ')" = '\n'
}

# only_file DIR FILE: DIR holds FILE and nothing else (no leftover temporary file).
only_file() {
	[ "$(ls -A "$1")" = "$2" ]
}

# -p on a target that exits after a moment, with -d far longer: bpfprof ends with the target,
# writes what it sampled and exits 0. The target spins its second once bpfprof profiles
# (SIGUSR2 ends chain -l's sleep): loading the programs took seconds on 5.10 under qemu's TCG.
test_target_exits() {
	local p=$TEST_TMP/early pid

	start_target pid "$TARGETS/chain" -l 120 1
	start_bpfprof_profiling 40 "$p" pid_target_exits "$pid" \
		-p "$pid" -d 20 -F "$HZ" -o "$p.folded" || return
	kill -USR2 "$pid"
	wait_bpfprof_bg "$p"
	wait_target "$pid"
	assert_eq pid_target_exits_exit "$BP_RC" 0
	assert_le pid_target_exits_ends_early "$BP_SECONDS" 10 s
	assert_ge pid_target_exits_samples "$(folded_samples "$p.folded" chain)" 1
}

# test_stop_signal SIG: SIGINT or SIGTERM ends a -p run: output written, exit 0, promptly.
# Meanwhile the -o file must keep its old content (written elsewhere, renamed at the end), and
# no temporary file may remain after.
test_stop_signal() {
	local sig=$1 name out_dir p pid before sent

	name=sig$(tr '[:upper:]' '[:lower:]' <<<"$sig")
	out_dir=$TEST_TMP/$name-out
	p=$TEST_TMP/$name
	mkdir "$out_dir"
	echo "old;content 1" >"$out_dir/profile.folded"
	start_target pid "$TARGETS/chain" 60
	start_bpfprof_bg 60 "$p" -p "$pid" -d 50 -F "$HZ" -o "$out_dir/profile.folded"
	wait_profiling "$p.err" "$BP_TIMEOUT_PID"
	sleep 1
	before=$(cat "$out_dir/profile.folded")
	sent=$(date +%s.%N)
	[ -n "$BP_PID" ] && kill -"$sig" "$BP_PID"
	wait_bpfprof_bg "$p"
	stop_target "$pid"

	assert_true "${name}_old_file_kept_while_running" "the -o file was untouched during the run" \
		test "$before" = "old;content 1"
	assert_eq "${name}_exit" "$BP_RC" 0
	# -d 50 was far away: bpfprof stopped because of the signal.
	# Unwinding, symbolizing and writing what it has: 2.3 s on 6.1 under qemu's TCG, 5.4 s on
	# 5.10 (emulated() in lib.sh); well under a second on the host.
	assert_le "${name}_ends_promptly" \
		"$(awk -v s="$sent" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')" \
		"$(emulated && echo 15 || echo 5)" " s after SIG$sig"
	assert_ge "${name}_samples" "$(folded_samples "$out_dir/profile.folded" chain)" 1
	assert_true "${name}_no_stray_files" \
		"$(basename "$out_dir") holds only profile.folded: $(ls -A "$out_dir" | tr '\n' ' ')" \
		only_file "$out_dir" profile.folded
	check_folded_file "${name}_output" "$out_dir/profile.folded"
}

# A normal -- CMD run with -o: only the output file in its directory, well formed; stderr
# holds only "bpfprof: " lines (chain itself writes nothing there).
test_output_file() {
	local out_dir=$TEST_TMP/o-out p=$TEST_TMP/o

	mkdir "$out_dir"
	run_bpfprof 40 "$p" -F "$HZ" -o "$out_dir/out.folded" -- "$TARGETS/chain" 1
	assert_eq output_file_exit "$BP_RC" 0
	assert_true output_file_no_stray_files "$(basename "$out_dir") holds only out.folded: $(ls -A "$out_dir" | tr '\n' ' ')" \
		only_file "$out_dir" out.folded
	assert_ge output_file_samples "$(folded_samples "$out_dir/out.folded" chain)" 1
	check_folded_file output_file "$out_dir/out.folded"
	assert_eq output_file_stdout_empty "$(wc -c <"$p.out")" 0 " bytes"
	assert_grep output_file_stderr_summary "$p.err" '^bpfprof: '
	assert_eq output_file_stderr_prefixed "$(grep -vc '^bpfprof: ' "$p.err")" 0 \
		" stderr lines without 'bpfprof: '"
}

# -o - writes the profile to stdout (and -e cpu-clock, the default, may be named). Without -o,
# -- CMD's profile goes to bpfprof.folded: run-outputs.sh.
test_stdout() {
	local p=$TEST_TMP/stdout

	run_bpfprof 40 "$p" -e cpu-clock -F "$HZ" -o - -- "$TARGETS/chain" 1
	assert_eq stdout_exit "$BP_RC" 0
	assert_ge stdout_samples "$(folded_samples "$p.out" chain)" 1
	check_folded_file stdout_output "$p.out"
}

test_target_exits
test_stop_signal INT
test_stop_signal TERM
test_output_file
test_stdout

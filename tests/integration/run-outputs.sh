#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-outputs.sh: the files bpfprof writes (-o, --raw-capture): FIFOs and links another user
# planted, the mode of a replaced file, checks before CMD runs, a full disk, the default output
# of -- CMD (never CMD's stdout), formats from file names, and the counts bpfprof reports.
. "$(dirname "$0")/../lib.sh"
require_bpf

# These runs test files, not unwinding: no differential replay (it adds a --raw-capture).
BPFPROF_DIFF=0
HZ=99
NOBODY=65534
EX_USAGE=64

as_nobody() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"
}

# nobody must reach the directories below.
chmod 711 "$TEST_TMP"

# leak_reader VAR FIFO LEAK: nobody reads FIFO into LEAK in the background (pid in VAR), as an
# attacker waiting for what root writes.
leak_reader() {
	local _lr_var=$1 fifo=$2 leak=$3

	# setpriv itself in the background (not a function's subshell): $! is the reader.
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		sh -c 'exec cat "$1" >"$2"' sh "$fifo" "$leak" </dev/null 2>/dev/null &
	BG_PIDS+=("$!")
	printf -v "$_lr_var" '%s' "$!"
}

# assert_same NAME ACTUAL EXPECTED: string equality.
assert_same() {
	if [ "$2" = "$3" ]; then
		pass "$1" "'$2'"
	else
		fail "$1" "actual '$2', expected '$3'"
	fi
}

# assert_not_ran NAME MARKER: the command that creates MARKER never ran.
assert_not_ran() {
	if [ -e "$2" ]; then
		fail "$1" "CMD ran: $(basename "$2") exists"
	else
		pass "$1" "CMD did not run"
	fi
}

# A FIFO planted in a sticky world-writable directory, no reader: bpfprof fails at the start
# (it used to run CMD, then block in open() at the end for good, deaf to signals), for the
# FIFO is another user's.
test_planted_fifo() {
	local d=$TEST_TMP/sticky-fifo p=$TEST_TMP/fifo

	mkdir -m 1777 "$d"
	as_nobody mkfifo "$d/prof.folded"
	run_bpfprof 20 "$p" -F "$HZ" -o "$d/prof.folded" -- touch "$p.ran"
	assert_eq planted_fifo_exit "$BP_RC" 1
	assert_not_ran planted_fifo_cmd_not_run "$p.ran"
	assert_grep planted_fifo_message "$p.err" "create $d/prof.folded: a FIFO of user $NOBODY"
	assert_true planted_fifo_kept "prof.folded is still nobody's FIFO" test -p "$d/prof.folded"
}

# A FIFO another user planted and reads: refused before CMD runs, nothing leaks (the whole
# profile used to go to the reader, exit 0). /dev/null and a pipe of ours as /dev/stdout work.
test_planted_fifo_reader() {
	local d=$TEST_TMP/sticky-fifo-reader p=$TEST_TMP/fiforeader reader

	mkdir -m 1777 "$d"
	as_nobody mkfifo -m 666 "$d/prof.folded"
	as_nobody touch "$d/leak"
	leak_reader reader "$d/prof.folded" "$d/leak"
	# The reader waits at the FIFO before bpfprof starts (else: no reader, refused anyway).
	for _ in $(seq 50); do
		ls -l "/proc/$reader/fd" 2>/dev/null | grep -q "$d/prof.folded" && break
		sleep 0.1
	done
	run_bpfprof 30 "$p" -F "$HZ" -o "$d/prof.folded" -- sh -c 'touch "$1"; exec "$2" 0.5' \
		sh "$p.ran" "$TARGETS/chain"
	assert_eq planted_fifo_reader_exit "$BP_RC" 1
	assert_not_ran planted_fifo_reader_cmd_not_run "$p.ran"
	assert_grep planted_fifo_reader_message "$p.err" \
		"^bpfprof: create $d/prof.folded: a FIFO of user $NOBODY: not written"
	assert_eq planted_fifo_reader_leaked "$(stat -c %s "$d/leak")" 0 " bytes"
	stop_target "$reader"

	run_bpfprof 30 "$p.null" -F "$HZ" -o /dev/null -- "$TARGETS/chain" 0.3
	assert_eq dev_null_output_exit "$BP_RC" 0
	p=$TEST_TMP/own-pipe
	echo "+ bpfprof -o /dev/stdout -- chain 0.5 | cat"
	"$BPFPROF" -F "$HZ" -o /dev/stdout -- "$TARGETS/chain" 0.5 2>"$p.err" | cat >"$p.folded"
	assert_eq own_pipe_output_exit "${PIPESTATUS[0]}" 0
	assert_ge own_pipe_output_samples "$(folded_samples "$p.folded" chain)" 1
}

# The raw capture (stack memory) into a FIFO another user reads: refused, nothing leaks.
test_planted_fifo_capture() {
	local d=$TEST_TMP/sticky-cap p=$TEST_TMP/fifocap reader

	mkdir -m 1777 "$d"
	as_nobody mkfifo "$d/run.raw"
	as_nobody touch "$d/leak"
	leak_reader reader "$d/run.raw" "$d/leak"
	run_bpfprof 30 "$p" -F "$HZ" --raw-capture "$d/run.raw" -o "$p.folded" \
		-- "$TARGETS/chain" 0.5
	assert_eq planted_fifo_capture_exit "$BP_RC" 1
	assert_eq planted_fifo_capture_leaked "$(stat -c %s "$d/leak")" 0 " bytes"
	stop_target "$reader"
}

# A link nobody planted in a sticky directory, to nobody's FIFO with a reader: not followed,
# and -o is checked before CMD runs.
test_planted_link_sticky() {
	local d=$TEST_TMP/sticky-link p=$TEST_TMP/linksticky reader

	mkdir -m 1777 "$d"
	as_nobody mkfifo "$d/leak.fifo"
	as_nobody touch "$d/leak"
	as_nobody ln -s "$d/leak.fifo" "$d/prof.folded"
	leak_reader reader "$d/leak.fifo" "$d/leak"
	run_bpfprof 30 "$p" -F "$HZ" -o "$d/prof.folded" -- touch "$p.ran"
	assert_eq planted_link_sticky_exit "$BP_RC" 1
	assert_not_ran planted_link_sticky_cmd_not_run "$p.ran"
	assert_grep planted_link_sticky_message "$p.err" "symbolic link of user $NOBODY: not followed"
	assert_eq planted_link_sticky_leaked "$(stat -c %s "$d/leak")" 0 " bytes"
	assert_true planted_link_sticky_kept "prof.folded is still nobody's link" \
		test -L "$d/prof.folded"
	stop_target "$reader"
}

# The same link in a directory nobody owns (no sticky bit: the kernel's protected_symlinks
# does not apply): the raw capture used to stream into nobody's reader.
test_planted_link_capture() {
	local d=$TEST_TMP/nobody-home p=$TEST_TMP/linkcap reader

	mkdir "$d"
	chown $NOBODY:$NOBODY "$d"
	as_nobody mkfifo "$d/leak.fifo"
	as_nobody touch "$d/leak"
	as_nobody ln -s "$d/leak.fifo" "$d/run.raw"
	leak_reader reader "$d/leak.fifo" "$d/leak"
	run_bpfprof 30 "$p" -F "$HZ" --raw-capture "$d/run.raw" -o "$p.folded" \
		-- "$TARGETS/chain" 0.5
	assert_eq planted_link_capture_exit "$BP_RC" 1
	assert_eq planted_link_capture_leaked "$(stat -c %s "$d/leak")" 0 " bytes"
	stop_target "$reader"
}

# An existing 0600 profile stays 0600 when replaced.
test_mode_kept() {
	local p=$TEST_TMP/mode

	echo "old 1" >"$p.folded"
	chmod 600 "$p.folded"
	run_bpfprof 30 "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/chain" 0.5
	assert_eq mode_kept_exit "$BP_RC" 0
	assert_eq mode_kept_mode "$(stat -c %a "$p.folded")" 600
	assert_ge mode_kept_samples "$(folded_samples "$p.folded" chain)" 1
}

# -o in a missing directory fails before CMD runs (it used to fail after, losing the run).
test_missing_dir() {
	local p=$TEST_TMP/missing

	run_bpfprof 30 "$p" -F "$HZ" -o "$TEST_TMP/no-such-dir/x.folded" -- touch "$p.ran"
	assert_eq missing_dir_exit "$BP_RC" 1
	assert_not_ran missing_dir_cmd_not_run "$p.ran"
	assert_grep missing_dir_message "$p.err" 'no-such-dir.*No such file or directory'
}

test_empty_names() {
	local p=$TEST_TMP/empty

	run_bpfprof 20 "$p" -o '' -- touch "$p.ran"
	assert_eq empty_output_name_exit "$BP_RC" "$EX_USAGE"
	assert_not_ran empty_output_name_cmd_not_run "$p.ran"
	run_bpfprof 20 "$p.cap" --raw-capture '' -- touch "$p.ran"
	assert_eq empty_capture_name_exit "$BP_RC" "$EX_USAGE"
}

# A read-only directory (a read-only mount: root ignores mode bits): -o and --raw-capture fail
# before CMD runs, with the real errno, exit 1.
test_readonly_dir() {
	local m=$TEST_TMP/ro p=$TEST_TMP/ro-run

	mkdir "$m"
	if ! mount -t tmpfs -o ro,size=64k bpfprof-test "$m" 2>"$p.mount"; then
		if [ "${CI:-}" = true ]; then
			fail readonly_dir_mount "mount tmpfs: $(cat "$p.mount"); CI=true makes this a failure"
		else
			skip "read-only directory: cannot mount a tmpfs: $(cat "$p.mount")"
		fi
		return
	fi
	run_bpfprof 30 "$p" -F "$HZ" -o "$m/prof.folded" -- touch "$p.ran"
	assert_eq readonly_dir_output_exit "$BP_RC" 1
	assert_not_ran readonly_dir_output_cmd_not_run "$p.ran"
	assert_grep readonly_dir_output_erofs "$p.err" "$m/prof.folded.*Read-only file system"
	run_bpfprof 30 "$p.c" -F "$HZ" --raw-capture "$m/run.raw" -o "$p.folded" -- touch "$p.ran"
	assert_eq readonly_dir_capture_exit "$BP_RC" 1
	assert_not_ran readonly_dir_capture_cmd_not_run "$p.ran"
	assert_grep readonly_dir_capture_erofs "$p.c.err" "$m/run.raw.*Read-only file system"
	umount "$m"
}

# A full disk: the real errno (ENOSPC, not EIO), a non-zero exit, no temp file left.
test_full_disk() {
	local m=$TEST_TMP/full p=$TEST_TMP/full-run

	mkdir "$m"
	if ! mount -t tmpfs -o size=64k bpfprof-test "$m" 2>"$p.mount"; then
		if [ "${CI:-}" = true ]; then
			fail full_disk_mount "mount tmpfs: $(cat "$p.mount"); CI=true makes this a failure"
		else
			skip "full disk: cannot mount a tmpfs: $(cat "$p.mount")"
		fi
		return
	fi
	run_bpfprof 30 "$p" -F "$HZ" --raw-capture "$m/run.raw" -o "$p.folded" \
		-- "$TARGETS/chain" 0.5
	assert_eq full_disk_capture_exit "$BP_RC" 1
	assert_grep full_disk_capture_enospc "$p.err" "$m/run.raw: No space left on device"
	assert_eq full_disk_capture_no_temp "$(ls -A "$m" | wc -l)" 0 " files"
	# The disk filled, then a profile: the same.
	head -c 1M /dev/zero >"$m/fill" 2>/dev/null
	run_bpfprof 30 "$p.o" -F "$HZ" -o "$m/prof.folded" -- "$TARGETS/chain" 0.5
	assert_eq full_disk_output_exit "$BP_RC" 1
	assert_grep full_disk_output_enospc "$p.o.err" "$m/prof.folded: No space left on device"
	assert_same full_disk_output_no_temp "$(ls -A "$m")" fill
	umount "$m"
}

# Without -o, the profile of -- CMD goes to bpfprof.folded, never into CMD's stdout (the
# README's "bpfprof -- make > build.folded" mixed make's output into the profile).
test_default_output() {
	local d=$TEST_TMP/cwd p=$TEST_TMP/default

	mkdir "$d"
	cd "$d" || return
	run_bpfprof 30 "$p" -F "$HZ" -- sh -c 'echo cmd-output; exec "$1" 0.5' sh "$TARGETS/chain"
	cd - >/dev/null || return
	assert_eq default_output_exit "$BP_RC" 0
	assert_same default_output_stdout_is_cmds "$(cat "$p.out")" cmd-output
	assert_ge default_output_samples "$(folded_samples "$d/bpfprof.folded" chain)" 1
	assert_grep default_output_says_where "$p.err" 'bpfprof\.folded'
	# -o - asks for stdout.
	run_bpfprof 30 "$p.stdout" -F "$HZ" -o - -- "$TARGETS/chain" 0.5
	assert_ge stdout_output_samples "$(folded_samples "$p.stdout.out" chain)" 1
}

# gzip_magic FILE: prints the first two bytes in hex.
gzip_magic() {
	od -An -tx1 -N2 "$1" | tr -d ' \n'
}

# Three processes of one program: their stacks fold into the same lines. The "wrote N folded
# stacks" line counts the lines written (it used to count stacks per process: 1066 for 777).
# The capture feeds the format tests: each name gives its format; an unknown extension gives
# folded stacks and one line saying so.
test_counts_and_formats() {
	local p=$TEST_TMP/crowd cap=$TEST_TMP/crowd.raw q ext written lines

	run_bpfprof 60 "$p" -F 199 --raw-capture "$cap" -o "$p.folded" \
		-- "$TARGETS/crowd" -n 3 "$TARGETS/chain" 1
	assert_eq crowd_exit "$BP_RC" 0
	lines=$(wc -l <"$p.folded")
	written=$(grep -m1 '^bpfprof: wrote .*folded stacks' "$p.err" | grep -oE '[0-9]+' | head -1)
	assert_eq written_stacks_are_lines "${written:-none}" "$lines"
	written=$(grep -m1 '^bpfprof: wrote .*folded stacks' "$p.err" |
		sed -nE 's/.*\(([0-9]+) samples\).*/\1/p')
	assert_eq written_samples_are_counts "${written:-none}" "$(folded_samples "$p.folded")"

	q=$TEST_TMP/fmt
	run_limited 60 "$q.1" "$BPFPROF" report "$cap" -o "$q.pb" -o "$q.pb.gz" -o "$q.pprof.gz"
	run_limited 60 "$q.2" "$BPFPROF" report "$cap" -o "$q.pprof" -o "$q.svg" -o "$q.gz"
	for ext in pb pb.gz pprof pprof.gz; do
		assert_same "format_${ext//./_}_is_pprof" "$(gzip_magic "$q.$ext")" 1f8b
	done
	assert_true format_pprof_gz_decodes "$q.pprof.gz is a gzip stream" gzip -t "$q.pprof.gz"
	assert_grep format_svg_is_svg "$q.svg" '^<svg '
	assert_ge format_unknown_is_folded "$(folded_samples "$q.gz")" 1
	assert_grep format_unknown_says_so "$q.2.err" "$q\.gz: extension unknown, writing folded"
	assert_eq format_known_silent "$(grep -c 'extension unknown' "$q.1.err")" 0
	lines=$(wc -l <"$q.gz")
	written=$(grep -m1 "^bpfprof: wrote .*folded stacks.* to $q.gz" "$q.2.err" |
		grep -oE '[0-9]+' | head -1)
	assert_eq report_written_stacks_are_lines "${written:-none}" "$lines"
}

test_planted_fifo
test_planted_fifo_reader
test_planted_fifo_capture
test_planted_link_sticky
test_planted_link_capture
test_mode_kept
test_missing_dir
test_readonly_dir
test_empty_names
test_full_disk
test_default_output
test_counts_and_formats

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-errors.sh: exit codes and messages: usage errors (64), --help/-h/--version (0), the man
# page, subcommands, PID lists, an unknown PID, an event the machine may lack, and a user
# without CAP_BPF/CAP_PERFMON (1).
. "$(dirname "$0")/../lib.sh"
require_bpf

EX_USAGE=64

# usage_error NAME ARGS...: bpfprof ARGS is refused as a usage error, with a message.
usage_error() {
	local name=$1 p=$TEST_TMP/$1

	shift
	run_bpfprof 20 "$p" "$@"
	assert_eq "${name}_exit" "$BP_RC" "$EX_USAGE"
	assert_grep "${name}_message" "$p.err" '.'
}

test_usage_errors() {
	usage_error usage_no_arguments
	usage_error usage_unknown_option --no-such-option -- /bin/true
	usage_error usage_bad_frequency -F not-a-number -- /bin/true
	usage_error usage_missing_pid -p
	# Numbers that parsed before: nan, an empty PID, a directory as the agent's config.
	usage_error usage_duration_nan -d nan -- /bin/true
	usage_error usage_interval_nan --exec --interval nan -- /bin/true
	usage_error usage_empty_pid -p "$$,,$$" -d 1
	usage_error usage_config_dir agent --config "$TEST_TMP" --output-dir "$TEST_TMP" \
		--metrics-addr off
	assert_grep usage_config_dir_says_why "$TEST_TMP/usage_config_dir.err" 'not a regular file'
	# A subcommand after options would have run a program of that name.
	usage_error usage_subcommand_late -q record -- /bin/true
}

# PIDs are decimal (as ps prints them, a leading 0 is not octal) and a PID given twice is one
# process.
test_pid_list() {
	local p=$TEST_TMP/pidlist pid

	start_target pid sleep 60
	run_bpfprof 30 "$p" -p "0$pid" -d 0.5 -o "$p.folded"
	assert_eq pid_leading_zero_exit "$BP_RC" 0
	assert_grep pid_leading_zero_one_process "$p.err" '^bpfprof: profiling 1 process '
	run_bpfprof 30 "$p" -p "$pid,$pid" -p "$pid" -d 0.5 -o "$p.folded"
	assert_eq pid_twice_exit "$BP_RC" 0
	assert_grep pid_twice_one_process "$p.err" '^bpfprof: profiling 1 process '
	stop_target "$pid"
}

# bpfprof record -- CMD runs CMD (as perf record does), not a program named record: CMD's
# exit status comes back (127 would be "record" not found).
test_record() {
	local p=$TEST_TMP/record

	run_bpfprof 30 "$p" record -o "$p.folded" -- /bin/sh -c 'exit 3'
	assert_eq record_runs_cmd_exit "$BP_RC" 3
	assert_grep record_runs_cmd "$p.err" '^bpfprof: profiling /bin/sh '
}

# wait_grep FILE ERE SECONDS: until a line of FILE matches ERE.
wait_grep() {
	local i

	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# A command that cannot start (a typo; `bpfprof help`, a program named help; a file that is
# not executable) profiled nothing: the last profile stays as it was, no temp file is left
# (it used to be truncated to 0 bytes), exit 127 or 126. A command that ran and exited 127
# itself is profiled as any other. --exec too (its profiler is detached: waited for).
test_cmd_cannot_start() {
	local d=$TEST_TMP/keep p=$TEST_TMP/typo cmd

	kept() { test "$(cat bpfprof.folded)" = "main;old 7"; }
	mkdir "$d"
	echo "main;old 7" >"$d/bpfprof.folded"
	cd "$d" || return
	for cmd in no-such-program-bpfprof help; do
		if command -v "$cmd" >/dev/null && ! [ "$(type -t "$cmd")" = builtin ]; then
			continue # a program of that name exists here
		fi
		run_bpfprof 30 "$p.$cmd" -F 99 -- "$cmd"
		assert_eq "cannot_start_${cmd//-/_}_exit" "$BP_RC" 127
		assert_grep "cannot_start_${cmd//-/_}_message" "$p.$cmd.err" \
			"^bpfprof: run $cmd: No such file or directory; nothing profiled"
		assert_true "cannot_start_${cmd//-/_}_kept" "bpfprof.folded as it was" kept
	done
	echo 'not a program' >not-exec
	run_bpfprof 30 "$p.noexec" -F 99 -o bpfprof.folded -- ./not-exec
	assert_eq cannot_start_not_executable_exit "$BP_RC" 126
	assert_true cannot_start_not_executable_kept "bpfprof.folded as it was" kept
	run_limited 30 "$p.exec" "$BPFPROF" --exec -F 99 -- no-such-program-bpfprof
	assert_eq cannot_start_exec_exit "$BP_RC" 127
	assert_true cannot_start_exec_profiler_done "the detached profiler ended" \
		wait_grep "$p.exec.err" 'nothing profiled, no output written' 20
	assert_true cannot_start_exec_kept "bpfprof.folded as it was" kept
	assert_true cannot_start_no_temp "no temp file left: $(ls -A | tr '\n' ' ')" \
		test "$(ls -A | wc -l)" = 2
	# It ran: 127 is its own status, and its profile is written.
	run_bpfprof 30 "$p.ran" -F 99 -- sh -c 'exit 127'
	assert_eq ran_exit_127_exit "$BP_RC" 127
	assert_true ran_exit_127_written "bpfprof.folded rewritten" \
		test "$(cat bpfprof.folded)" != "main;old 7"
	cd - >/dev/null || return
}

test_help_version() {
	local p=$TEST_TMP/help

	run_bpfprof 20 "$p" --help
	assert_eq help_exit "$BP_RC" 0
	# The help names the two modes.
	cat "$p.out" "$p.err" >"$p.all"
	assert_grep help_mentions_pid "$p.all" '(^|[^[:alnum:]])-p'
	assert_grep help_mentions_command "$p.all" '--( |$)'

	p=$TEST_TMP/version
	run_bpfprof 20 "$p" --version
	assert_eq version_exit "$BP_RC" 0
	cat "$p.out" "$p.err" >"$p.all"
	assert_grep version_number "$p.all" '[0-9]+\.[0-9]+'

	# -h is --help; each subcommand has its own usage line.
	p=$TEST_TMP/help_short
	run_bpfprof 20 "$p" -h
	assert_eq help_short_exit "$BP_RC" 0
	assert_grep help_short_usage "$p.out" '^Usage: bpfprof '
	for a in "report -h" "report --help" "record -h" "check --help" "agent -h"; do
		p=$TEST_TMP/help_${a// /_}
		# shellcheck disable=SC2086 # subcommand and option
		run_bpfprof 20 "$p" $a
		assert_eq "help_${a// /_}_exit" "$BP_RC" 0
		assert_grep "help_${a// /_}_usage" "$p.out" "^Usage: bpfprof ${a%% *} "
	done
}

# build/bpfprof.1 (help2man, next to the binary) renders without a groff warning and holds
# the options and subcommands.
test_man_page() {
	local p=$TEST_TMP/man page

	page=$(dirname "$BPFPROF")/bpfprof.1
	if [ ! -f "$page" ]; then
		fail man_page_built "no $page: make builds it with the binary"
		return
	fi
	MANWIDTH=80 run_limited 20 "$p" man --warnings -l "$page"
	assert_eq man_page_renders "$BP_RC" 0
	assert_eq man_page_warnings "$(wc -c <"$p.err")" 0 " bytes on stderr"
	col -b <"$p.out" >"$p.txt"
	assert_grep man_page_name "$p.txt" '^ +bpfprof - '
	assert_grep man_page_synopsis "$p.txt" '^ +bpfprof \[OPTION\.\.\.\] -- CMD'
	assert_grep man_page_options "$p.txt" '^ +-p, --pid=PID'
	assert_grep man_page_subcommands "$p.txt" '^ +report FILE'
	assert_grep man_page_examples "$p.txt" '^EXAMPLES'
}

test_unknown_pid() {
	local p=$TEST_TMP/nopid pid

	pid=$(unused_pid)
	run_bpfprof 30 "$p" -p "$pid" -d 2 -o "$p.folded"
	assert_eq unknown_pid_exit "$BP_RC" 1
	assert_grep unknown_pid_message "$p.err" "^bpfprof: .*[^0-9]$pid([^0-9]|$)"
}

# cycles needs a hardware PMU: where there is one, it works; where not (this VM), bpfprof says
# which event failed and exits 1. Anything else (a crash, a hang, exit 0 without samples) fails.
test_cycles() {
	local p=$TEST_TMP/cycles samples

	run_bpfprof 40 "$p" -e cycles -F 99 -o "$p.folded" -- "$TARGETS/chain" 1
	case $BP_RC in
	0)
		samples=$(folded_samples "$p.folded" chain)
		assert_ge cycles_works_with_pmu "$samples" 1 " samples"
		;;
	1)
		pass cycles_exit "exit 1 (no PMU for cycles here)"
		assert_grep cycles_message_names_event "$p.err" '^bpfprof: .*cycles'
		;;
	*)
		fail cycles_exit "actual exit $BP_RC, expected 0 (with samples) or 1 (event unavailable)"
		;;
	esac
}

# As nobody with no capability at all: a clear refusal naming both capabilities.
test_no_privileges() {
	local p=$TEST_TMP/unpriv dir=$TEST_TMP/unpriv-bin

	# nobody must reach and run the binary: a copy in a world-readable directory.
	mkdir "$dir"
	cp "$BPFPROF" "$dir/bpfprof"
	chmod 755 "$dir" "$dir/bpfprof"
	chmod 711 "$TEST_TMP"
	run_limited 30 "$p" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$dir/bpfprof" -F 99 -- /bin/true
	assert_eq unprivileged_exit "$BP_RC" 1
	assert_grep unprivileged_names_cap_bpf "$p.err" 'CAP_BPF'
	assert_grep unprivileged_names_cap_perfmon "$p.err" 'CAP_PERFMON'
}

test_usage_errors
test_help_version
test_man_page
test_pid_list
test_record
test_cmd_cannot_start
test_unknown_pid
test_cycles
test_no_privileges

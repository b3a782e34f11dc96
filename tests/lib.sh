# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# lib.sh: helpers of the integration tests (sourced): privileges, named assertions, folded-stack
# queries, time-limited bpfprof runs, background targets and a temp dir, both cleaned up on exit.
#
# Environment: BPFPROF (absolute path of the binary), TARGETS (directory of the test programs),
# INTEGRATION_RESULTS (file where each assertion appends "PASS|FAIL|SKIP name: detail"; set by
# tests/run-integration.sh, a private file when a script runs alone), CI (true: no skipping).
# A bpfprof built with SANITIZE=1 writes its reports into SANITIZER_LOG_DIR: each fails the
# script (assertion TEST_sanitizer, tests/sanitizer-env.sh).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/sanitizer-env.sh"

: "${BPFPROF:?BPFPROF must be the absolute path of bpfprof}"
: "${TARGETS:?TARGETS must be the directory of the built test programs}"

TEST_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "/tmp/bpfprof-${TEST_NAME}.XXXXXX")
if [ -z "${INTEGRATION_RESULTS:-}" ]; then
	INTEGRATION_RESULTS=$TEST_TMP/results
	LIB_OWN_RESULTS=1
else
	LIB_OWN_RESULTS=0
fi
: >>"$INTEGRATION_RESULTS"
BG_PIDS=()
# Root writes anywhere: owned by the user of the unprivileged runs (setpriv to 65534), so they
# can write their reports too, and nobody else.
SANITIZER_LOG_DIR=$(mktemp -d "/tmp/bpfprof-sanitizer-${TEST_NAME}.XXXXXX")
[ "$(id -u)" = 0 ] && chown 65534:65534 "$SANITIZER_LOG_DIR"
sanitizer_env "$SANITIZER_LOG_DIR"

# Kills what the script left running (by pid, only ours), removes the temp dir; when the
# script runs alone, prints its own count and fails if an assertion failed.
lib_cleanup() {
	local rc=$? pid failed=0 i

	# SIGTERM first: a timeout process passes it on to the bpfprof it runs.
	for pid in "${BG_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for ((i = 0; i < 30; i++)); do
		alive_pids || break
		sleep 0.1
	done
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	check_sanitizer_reports
	if [ "$LIB_OWN_RESULTS" = 1 ]; then
		failed=$(grep -c '^FAIL ' "$INTEGRATION_RESULTS")
		echo "$TEST_NAME: $(grep -c '^PASS ' "$INTEGRATION_RESULTS") passed, $failed failed"
	fi
	rm -rf "$TEST_TMP" "$SANITIZER_LOG_DIR"
	[ "$failed" -gt 0 ] && exit 1
	exit "$rc"
}

# Records TEST_sanitizer: FAIL with each report a sanitized bpfprof wrote during the script
# (printed whole), PASS when there was none and the binary is a sanitized one.
check_sanitizer_reports() {
	local f n=0

	for f in "$SANITIZER_LOG_DIR"/report.*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		echo "--- sanitizer report $(basename "$f"):"
		cat "$f"
		fail "${TEST_NAME}_sanitizer" "$(grep -m1 -E 'ERROR|runtime error' "$f" | head -c 300)"
	done
	[ "$n" -eq 0 ] && sanitized && pass "${TEST_NAME}_sanitizer" "no ASan, UBSan or LSan report"
	return 0
}

# Whether BPFPROF was built with SANITIZE=1 (linked with the ASan runtime).
sanitized() {
	readelf -d "$BPFPROF" 2>/dev/null | grep -q 'NEEDED.*libasan'
}

# Some process of BG_PIDS still runs (zombies count as gone).
alive_pids() {
	local pid state

	for pid in "${BG_PIDS[@]}"; do
		state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
		[ -n "$state" ] && [ "$state" != Z ] && return 0
	done
	return 1
}

# forget_pid PID: PID was waited for; it must not be signalled at exit (it may be reused).
forget_pid() {
	local pid kept=()

	for pid in "${BG_PIDS[@]}"; do
		[ "$pid" = "$1" ] || kept+=("$pid")
	done
	BG_PIDS=("${kept[@]}")
}
trap lib_cleanup EXIT
trap 'exit 130' INT TERM

# --- results -------------------------------------------------------------------------------

record() {	# record STATUS NAME DETAIL
	echo "$1 $2: $3"
	echo "$1 $2: $3" >>"$INTEGRATION_RESULTS"
}
pass() { record PASS "$1" "$2"; }
fail() { record FAIL "$1" "$2"; }
skip() { record SKIP "$TEST_NAME" "$1"; }

is_number() {
	[[ "$1" =~ ^-?[0-9]+([.][0-9]+)?$ ]]
}

# assert_cmp NAME ACTUAL OP EXPECTED [UNIT]: numeric comparison (OP: >= <= == !=).
assert_cmp() {
	local name=$1 actual=$2 op=$3 expected=$4 unit=${5:-}

	if ! is_number "$actual"; then
		fail "$name" "actual '$actual' is not a number, expected $op $expected$unit"
	elif ! is_number "$expected"; then
		fail "$name" "actual $actual$unit, expected $op '$expected', not a number"
	elif awk -v a="$actual" -v e="$expected" -v op="$op" 'BEGIN {
		exit !((op == ">=" && a >= e) || (op == "<=" && a <= e) ||
		       (op == "==" && a == e) || (op == "!=" && a != e)) }'; then
		pass "$name" "actual $actual$unit, expected $op $expected$unit"
	else
		fail "$name" "actual $actual$unit, expected $op $expected$unit"
	fi
}
assert_ge() { assert_cmp "$1" "$2" ">=" "$3" "${4:-}"; }
assert_le() { assert_cmp "$1" "$2" "<=" "$3" "${4:-}"; }
assert_eq() { assert_cmp "$1" "$2" "==" "$3" "${4:-}"; }

# assert_within NAME ACTUAL EXPECTED TOLERANCE [UNIT]: |ACTUAL - EXPECTED| <= TOLERANCE.
assert_within() {
	local name=$1 actual=$2 expected=$3 tol=$4 unit=${5:-}

	if ! is_number "$actual" || ! is_number "$expected"; then
		fail "$name" "actual '$actual', expected '$expected' +/- $tol$unit (not numbers)"
	elif awk -v a="$actual" -v e="$expected" -v t="$tol" \
		'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }'; then
		pass "$name" "actual $actual$unit, expected $expected$unit +/- $tol$unit"
	else
		fail "$name" "actual $actual$unit, expected $expected$unit +/- $tol$unit"
	fi
}

# assert_grep NAME FILE ERE: some line of FILE matches ERE (case-sensitive).
assert_grep() {
	local name=$1 file=$2 re=$3

	if grep -Eq -- "$re" "$file" 2>/dev/null; then
		pass "$name" "$(basename "$file") matches /$re/"
	else
		fail "$name" "$(basename "$file") does not match /$re/; it holds: $(head -c 600 "$file" 2>/dev/null | tr '\n' '|')"
	fi
}

# assert_true NAME DESCRIPTION CMD...: CMD succeeds.
assert_true() {
	local name=$1 desc=$2

	shift 2
	if "$@"; then
		pass "$name" "$desc"
	else
		fail "$name" "not true: $desc"
	fi
}

# kernel_at_least MAJOR MINOR: uname -r is that release or later.
kernel_at_least() {
	local r maj min

	r=$(uname -r)
	maj=${r%%.*}
	min=${r#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

# Whether this runs under instruction emulation (make vmtest with qemu's TCG): there the
# guest's cpu-clock timer fires late while both vCPUs are busy (88% of the samples the CPU time
# calls for, none lost by bpfprof, in a run of two chains at 999 Hz on 6.1), so sample-rate
# floors are lower. Everything else is asserted as on real hardware.
emulated() { [ "${VMTEST_ACCEL:-}" = tcg ]; }

# --- privileges ----------------------------------------------------------------------------

# Effective capabilities hold CAP_BPF (39) and CAP_PERFMON (38), or CAP_SYS_ADMIN (21).
has_bpf_caps() {
	local hex

	hex=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	[ -n "$hex" ] || return 1
	(( (0x$hex >> 39 & 1) && (0x$hex >> 38 & 1) )) || (( 0x$hex >> 21 & 1 ))
}

# The kernel loads perf_event programs and has ring buffers (what bpfprof needs).
bpf_works() {
	local probe

	command -v bpftool >/dev/null || return 1
	probe=$(bpftool feature probe kernel 2>/dev/null)
	grep -q 'program_type perf_event is available' <<<"$probe" &&
		grep -q 'map_type ringbuf is available' <<<"$probe"
}

# Skips the script when BPF cannot be used, with the reason; under CI=true that is a failure.
require_bpf() {
	local reason=

	if ! has_bpf_caps; then
		reason="needs root, or CAP_BPF and CAP_PERFMON (uid $(id -u))"
	elif ! bpf_works; then
		reason="this kernel cannot load BPF perf_event programs with a ring buffer (bpftool feature probe kernel)"
	fi
	[ -z "$reason" ] && return 0
	if [ "${CI:-}" = true ]; then
		fail "${TEST_NAME}_require_bpf" "$reason; CI=true makes this a failure"
		exit 1
	fi
	skip "$reason"
	exit 0
}

# --- running bpfprof and targets -----------------------------------------------------------

# Differential unwinding (BPFPROF_DIFF=1, the default; 0 turns it off): every live bpfprof run
# of run_bpfprof and start_bpfprof_bg also writes a raw capture, replayed right after the run
# with --unwinder=diff (libdwfl and the CFI tables on every sample, compared). Each replay is
# a named assertion "unwind_diff_PREFIX": no sample may unwind differently.
: "${BPFPROF_DIFF:=1}"
DIFF_SEQ=0

# diff_setup ARGS...: for a bpfprof run with ARGS, sets DIFF_ARGS (to put before ARGS),
# DIFF_CAP (the capture to replay after the run, or empty) and DIFF_OWN (1: ours, deleted
# after the replay). Not for subcommands (which must stay argv[1]) nor --help; a run with its
# own --raw-capture has that one replayed, and kept.
diff_setup() {
	local a prev=

	DIFF_ARGS=()
	DIFF_CAP=
	DIFF_OWN=0
	[ "$BPFPROF_DIFF" = 1 ] || return 0
	case ${1:-} in
	record|report|check|agent) return 0 ;;
	esac
	for a in "$@"; do
		[ "$a" = -- ] && break
		case $a in
		--help|--usage|--version|-V|-\?|-h) return 0 ;;
		--raw-capture=*) DIFF_CAP=${a#--raw-capture=}; return 0 ;;
		esac
		if [ "$prev" = --raw-capture ]; then
			DIFF_CAP=$a
			return 0
		fi
		prev=$a
	done
	DIFF_SEQ=$((DIFF_SEQ + 1))
	DIFF_CAP=$TEST_TMP/diff-$DIFF_SEQ.cap
	DIFF_OWN=1
	DIFF_ARGS=(--raw-capture "$DIFF_CAP")
}

# diff_replay PREFIX: replays DIFF_CAP (if the run wrote one) with --unwinder=diff and records
# unwind_diff_<PREFIX's basename>: the divergent samples' count and the first diverging frame.
# Leaves BP_RC and BP_SECONDS as the run set them.
diff_replay() {
	local prefix=$1 name line first rc n m

	[ -n "$DIFF_CAP" ] || return 0
	name=unwind_diff_$(basename "$prefix")
	if [ ! -s "$DIFF_CAP" ]; then
		# No capture: bpfprof failed before it could write one (the test checks that).
		[ "$BP_RC" = 0 ] && fail "$name" "the run exited 0 without writing $DIFF_CAP"
		return 0
	fi
	timeout -k 5 300 "$BPFPROF" report "$DIFF_CAP" --unwinder=diff -o "$prefix.diff.folded" \
		>"$prefix.diff.out" 2>"$prefix.diff.err"
	rc=$?
	line=$(grep -m1 -E '^bpfprof: unwinder diff: [0-9]+ samples' "$prefix.diff.err")
	first=$(grep -m1 '^bpfprof: unwinder diff: sample' "$prefix.diff.err")
	read -r n m <<<"$(sed -E 's/.* ([0-9]+) samples .* ([0-9]+) divergent.*/\1 \2/' <<<"$line")"
	if [ -z "$line" ] || ! is_number "${m:-x}"; then
		line="replay of $(basename "$DIFF_CAP") exited $rc without its unwinder diff line"
		fail "$name" "$line: $(head -c 400 "$prefix.diff.err" | tr '\n' '|')"
	elif [ "$m" -eq 0 ]; then
		pass "$name" "$n samples unwound both ways, 0 divergent"
	else
		fail "$name" "$m of $n samples divergent; first: ${first#bpfprof: unwinder diff: }"
	fi
	rm -f "$prefix.diff.folded"
	[ "$DIFF_OWN" = 1 ] && rm -f "$DIFF_CAP"
	DIFF_CAP=
}

# run_bpfprof LIMIT_S PREFIX ARGS...: runs bpfprof ARGS under a time limit, stdout to
# PREFIX.out and stderr to PREFIX.err. Sets BP_RC (124 or 137: timed out) and BP_SECONDS.
# A live run is then replayed with the unwinders compared (BPFPROF_DIFF above).
run_bpfprof() {
	local limit=$1 prefix=$2

	shift 2
	diff_setup "$@"
	run_limited "$limit" "$prefix" "$BPFPROF" "${DIFF_ARGS[@]}" "$@"
	diff_replay "$prefix"
}

# run_limited LIMIT_S PREFIX CMD...: the same for any command line (e.g. setpriv ... bpfprof).
run_limited() {
	local limit=$1 prefix=$2 start

	shift 2
	echo "+ ${*//"$BPFPROF"/bpfprof}"
	start=$(date +%s.%N)
	timeout -k 5 "$limit" "$@" >"$prefix.out" 2>"$prefix.err"
	BP_RC=$?
	BP_SECONDS=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	report_run "$prefix"
}

# Prints how a run ended, and its stderr (indented): progress and summary help read failures.
report_run() {
	local prefix=$1

	case $BP_RC in
	124|137) echo "  bpfprof timed out (exit $BP_RC) after ${BP_SECONDS}s" ;;
	*) echo "  exit $BP_RC after ${BP_SECONDS}s" ;;
	esac
	sed -n '1,25s/^/  | /p' "$prefix.err"
}

# wait_profiling ERRFILE [PID]: waits (up to 60 s: a busy machine, or qemu's TCG, loads BPF
# slowly) until bpfprof's stderr says it is profiling (the agent's "agent: profiling" too); fails when PID (the background
# bpfprof's, BP_TIMEOUT_PID of start_bpfprof_bg) ended before.
wait_profiling() {
	local i

	for ((i = 0; i < 1200; i++)); do
		grep -Eq '^bpfprof: (agent: )?profiling' "$1" 2>/dev/null && return 0
		if [ -n "${2:-}" ]; then
			case "$(awk '{ print $3 }' "/proc/$2/stat" 2>/dev/null)" in
			'' | Z) return 1 ;;
			esac
		fi
		sleep 0.05
	done
	return 1
}

# start_bpfprof_profiling LIMIT_S PREFIX LABEL PID ARGS...: start_bpfprof_bg LIMIT_S PREFIX
# ARGS, then waits until it profiles (wait_profiling). If it never does: fails LABEL_started,
# stops the target PID and returns 1. The caller then makes the target act (kill -USR2 PID)
# and ends with wait_bpfprof_bg PREFIX.
start_bpfprof_profiling() {
	local limit=$1 prefix=$2 label=$3 pid=$4

	shift 4
	start_bpfprof_bg "$limit" "$prefix" "$@"
	wait_profiling "$prefix.err" "$BP_TIMEOUT_PID" && return 0
	fail "${label}_started" "bpfprof did not start profiling: $(head -c 400 "$prefix.err")"
	stop_target "$pid"
	return 1
}

# start_bpfprof_bg LIMIT_S PREFIX ARGS...: like run_bpfprof, in the background. Sets BP_TIMEOUT_PID
# (the timeout process) and BP_PID (bpfprof itself); finish with wait_bpfprof_bg PREFIX.
start_bpfprof_bg() {
	local limit=$1 prefix=$2 i

	shift 2
	echo "+ bpfprof $* &"
	BP_START=$(date +%s.%N)
	# timeout catches SIGINT itself, so bpfprof starts with SIGINT at its default, not
	# ignored as bash leaves it for background jobs.
	diff_setup "$@"
	BG_DIFF_CAP=$DIFF_CAP
	BG_DIFF_OWN=$DIFF_OWN
	timeout -k 5 "$limit" "$BPFPROF" "${DIFF_ARGS[@]}" "$@" >"$prefix.out" 2>"$prefix.err" &
	BP_TIMEOUT_PID=$!
	BG_PIDS+=("$BP_TIMEOUT_PID")
	BP_PID=
	# A wall-clock deadline, not a count of passes: under qemu's TCG each pass forks slowly.
	i=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$i" ] && kill -0 "$BP_TIMEOUT_PID" 2>/dev/null; do
		BP_PID=$(cat "/proc/$BP_TIMEOUT_PID/task/$BP_TIMEOUT_PID/children" 2>/dev/null)
		BP_PID=${BP_PID%% *}
		[ -n "$BP_PID" ] && break
		sleep 0.05
	done
	[ -n "$BP_PID" ] && BG_PIDS+=("$BP_PID")
}

wait_bpfprof_bg() {
	local prefix=$1

	wait "$BP_TIMEOUT_PID"
	BP_RC=$?
	forget_pid "$BP_TIMEOUT_PID"
	forget_pid "$BP_PID"
	BP_SECONDS=$(awk -v s="$BP_START" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	report_run "$prefix"
	DIFF_CAP=$BG_DIFF_CAP
	DIFF_OWN=$BG_DIFF_OWN
	diff_replay "$prefix"
}

# start_target VAR CMD...: starts a test program in the background, its pid in VAR; it is
# killed at exit if still running. Waits until it has exec'd (its comm is CMD's basename).
start_target() {
	# Locals prefixed: printf -v must reach the caller's variable, not one of these.
	local _st_var=$1 _st_pid _st_comm _st_i

	shift
	"$@" &
	_st_pid=$!
	BG_PIDS+=("$_st_pid")
	_st_comm=$(basename "$1")
	for ((_st_i = 0; _st_i < 100; _st_i++)); do
		[ "$(cat "/proc/$_st_pid/comm" 2>/dev/null)" = "${_st_comm:0:15}" ] && break
		sleep 0.02
	done
	printf -v "$_st_var" '%s' "$_st_pid"
}

# stop_target PID: ends a target started by start_target (SIGTERM) and reaps it.
stop_target() {
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	forget_pid "$1"
}

# wait_target PID: waits for a target to exit by itself; its exit status in TARGET_RC.
wait_target() {
	wait "$1"
	TARGET_RC=$?
	forget_pid "$1"
}

# all_threads_named PID NAME...: PID has a thread with each of these names.
all_threads_named() {
	local pid=$1 name

	shift
	for name in "$@"; do
		grep -qx -- "$name" /proc/"$pid"/task/*/comm 2>/dev/null || return 1
	done
}

# wait_for_threads PID NAME...: waits (up to 5 s) until PID has threads with these names.
wait_for_threads() {
	local i

	for ((i = 0; i < 250; i++)); do
		all_threads_named "$@" && return 0
		sleep 0.02
	done
	return 1
}

# thread_cpu_ns PID NAME: CPU time (ns, from schedstat) of PID's thread named NAME.
thread_cpu_ns() {
	local pid=$1 name=$2 task

	for task in /proc/"$pid"/task/*; do
		if [ "$(cat "$task/comm" 2>/dev/null)" = "$name" ]; then
			awk '{ print $1 }' "$task/schedstat"
			return 0
		fi
	done
	echo "n/a"
}

# paranoid_at_most_2: sets kernel.perf_event_paranoid to 2 for the rest of the script when it is
# above (Debian's and Ubuntu's kernels default to 3, a patch of theirs: perf_events only with
# CAP_SYS_ADMIN, CAP_PERFMON not enough), for runs without CAP_SYS_ADMIN that test something
# else; the value is put back at exit. PARANOID holds the value found.
paranoid_at_most_2() {
	PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$PARANOID" -gt 2 ]; then
		sysctl -qw kernel.perf_event_paranoid=2
		trap 'sysctl -qw kernel.perf_event_paranoid=$PARANOID; lib_cleanup' EXIT
	fi
}

# cpu_floor PREFIX NUM DEN: NUM/DEN of the samples bpfprof's summary (PREFIX.err) expects from
# the targets' own CPU time ("M expected from S s of CPU time"), "n/a" when it printed none. A
# floor for sample counts that holds on a busy machine, where wall time says nothing about the
# CPU a target got.
cpu_floor() {
	local n

	n=$(sed -n 's/.* samples received, \([0-9]*\) expected from .*/\1/p' "$1.err" | tail -n 1)
	if [ -z "$n" ]; then
		echo "n/a"
	else
		echo $((n * $2 / $3))
	fi
}

# unused_pid: a pid no process or thread has now.
unused_pid() {
	local pid

	pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
	while [ -e "/proc/$pid" ]; do
		pid=$((pid - 1))
	done
	echo "$pid"
}

# ratio_pct PART WHOLE: 100 * PART / WHOLE with one decimal, "n/a" when WHOLE is 0.
ratio_pct() {
	awk -v p="$1" -v w="$2" 'BEGIN { if (w + 0 == 0) print "n/a"; else printf "%.1f", 100 * p / w }'
}

# --- --stats totals: the last three lines bpfprof --stats prints on stderr ----------------------

# Matched whole, strictly: a change of wording fails the tests that read them, loudly.
STATS_TOTALS_RE='^bpfprof: [0-9]+ ELF files open [(][0-9]+ opened in all[)], [0-9]+ Dwfls open, '
STATS_TOTALS_RE+='[0-9]+ processes tracked, [0-9]+ events lost [(][0-9]+ task, [0-9]+ mmap[)], '
STATS_TOTALS_RE+='[0-9]+ samples lost$'
STATS_MAPS_RE='^bpfprof: [0-9]+ mmap and [0-9]+ munmap records; /proc/PID/maps read [0-9]+ '
STATS_MAPS_RE+='times, [0-9]+ of them re-scans on a pc in no mapping; [0-9]+ processes swept$'
STATS_SELF_RE='^bpfprof: max RSS [0-9]+ KiB, [0-9]+ file descriptors open$'

# stats_numbers FILE RE: the numbers of the first line of FILE matching RE, in order.
stats_numbers() {
	Q_RE=$2 awk '$0 ~ ENVIRON["Q_RE"] { gsub(/[^0-9]+/, " "); sub(/^ /, ""); print; exit }' "$1"
}

# stats_totals FILE: parses the totals lines of FILE (bpfprof's stderr) into ST_FILES_OPEN,
# ST_FILES_OPENED (opened in all), ST_DWFLS, ST_PROCS (tracked), ST_EVENTS_LOST, ST_TASK_LOST,
# ST_MMAP_LOST, ST_SAMPLES_LOST; ST_MMAPS, ST_MUNMAPS, ST_MAPS_READS, ST_RESCANS, ST_SWEPT;
# ST_RSS_KIB, ST_FDS. A line that is missing or worded otherwise leaves its variables empty.
stats_totals() {
	read -r ST_FILES_OPEN ST_FILES_OPENED ST_DWFLS ST_PROCS ST_EVENTS_LOST ST_TASK_LOST \
		ST_MMAP_LOST ST_SAMPLES_LOST <<<"$(stats_numbers "$1" "$STATS_TOTALS_RE")"
	read -r ST_MMAPS ST_MUNMAPS ST_MAPS_READS ST_RESCANS ST_SWEPT \
		<<<"$(stats_numbers "$1" "$STATS_MAPS_RE")"
	read -r ST_RSS_KIB ST_FDS <<<"$(stats_numbers "$1" "$STATS_SELF_RE")"
}

# check_rescans LABEL PREFIX COMPLETE: prints the run's /proc/PID/maps reads and re-scans, its
# lost events and COMPLETE (its complete-chain shares, as text) on one "maps LABEL:" line for
# the CI log; with no event lost, asserts that no pc fell outside the known mappings (re-scans
# 0): the mmap records told bpfprof of every mapping. Lost events may hide mappings: then the
# figures are only reported.
check_rescans() {
	local label=$1 prefix=$2 complete=$3

	stats_totals "$prefix.err"
	echo "  maps $label: /proc/PID/maps read ${ST_MAPS_READS:-?} times, ${ST_RESCANS:-?} of them re-scans; ${ST_EVENTS_LOST:-?} events lost (${ST_TASK_LOST:-?} task, ${ST_MMAP_LOST:-?} mmap), ${ST_SAMPLES_LOST:-?} samples lost; complete chains: $complete"
	if ! is_number "${ST_EVENTS_LOST:-x}" || ! is_number "${ST_RESCANS:-x}"; then
		fail "${label}_rescans" "no --stats totals in $(basename "$prefix.err") matching /$STATS_TOTALS_RE/ and /$STATS_MAPS_RE/"
	elif [ "$ST_EVENTS_LOST" -eq 0 ]; then
		assert_eq "${label}_rescans" "$ST_RESCANS" 0 " re-scans"
	else
		echo "  $ST_EVENTS_LOST events lost: ${label}_rescans not asserted (${ST_RESCANS} re-scans)"
	fi
}

# --- folded stacks: "comm;root;...;leaf COUNT", kernel frames "name_[k]" at the leaf end ------

# The awk part shared by the queries below: parse() splits one line into comm, cnt, nfr frames
# fr[1..nfr], nuser (user frames: those before the first kernel frame) and user (the user
# frames joined with ';'). Frames may hold spaces (C++), so COUNT is what follows the last one.
FOLDED_AWK='
function parse(line,    parts, n, i) {
	cnt = line
	sub(/.* /, "", cnt)
	n = split(substr(line, 1, length(line) - length(cnt) - 1), parts, ";")
	comm = parts[1]
	nfr = n - 1
	split("", fr)
	for (i = 2; i <= n; i++)
		fr[i - 1] = parts[i]
	nuser = nfr
	for (i = 1; i <= nfr; i++)
		if (fr[i] ~ /_\[k\]$/) {
			nuser = i - 1
			break
		}
	user = ""
	for (i = 1; i <= nuser; i++)
		user = user (i > 1 ? ";" : "") fr[i]
	return cnt ~ /^[0-9]+$/
}
function selected() { return want_comm == "" || comm == want_comm }
# Parameters come through the environment: awk -v would process backslashes in regexes.
BEGIN {
	want_comm = ENVIRON["Q_COMM"]
	root_re = ENVIRON["Q_ROOT_RE"]
	chain = ENVIRON["Q_CHAIN"]
	leaf = ENVIRON["Q_LEAF"]
	frame_re = "^(" ENVIRON["Q_FRAME_RE"] ")$"
}
function pct(p, w) { return w ? sprintf("%.1f", 100 * p / w) : "n/a" }
'

# folded_samples FILE [COMM]: total sample count (of COMM's threads only, when given).
folded_samples() {
	Q_COMM=${2:-} awk "$FOLDED_AWK"'
		parse($0) && selected() { total += cnt }
		END { print total + 0 }' "$1"
}

# chain_stats FILE COMM ROOT_RE CHAIN [LEAF]: for the samples of COMM whose user leaf is LEAF
# (default: the last frame of CHAIN, ';'-separated), prints "SELECTED COMPLETE PCT": how many
# there are, how many hold root to leaf (the user stack matches ROOT_RE, e.g. "^_start;", and
# holds CHAIN as a contiguous run of frames) and their share in %.
chain_stats() {
	Q_COMM=$2 Q_ROOT_RE=$3 Q_CHAIN=$4 Q_LEAF=${5:-} awk "$FOLDED_AWK"'
		BEGIN { if (leaf == "") { leaf = chain; sub(/.*;/, "", leaf) } }
		parse($0) && selected() && nuser > 0 && fr[nuser] == leaf {
			sel += cnt
			if (user ~ root_re && index(";" user ";", ";" chain ";"))
				ok += cnt
		}
		END { print sel + 0, ok + 0, pct(ok, sel) }' "$1"
}

# complete_share FILE COMM ROOT_RE CHAIN: over all of COMM's samples, whatever their leaf, prints
# "TOTAL COMPLETE PCT": those whose user stack matches ROOT_RE and holds CHAIN contiguously
# (a program that spends its time in a system call below CHAIN's leaf: sysread).
complete_share() {
	Q_COMM=$2 Q_ROOT_RE=$3 Q_CHAIN=$4 awk "$FOLDED_AWK"'
		parse($0) && selected() {
			total += cnt
			if (user ~ root_re && index(";" user ";", ";" chain ";"))
				ok += cnt
		}
		END { print total + 0, ok + 0, pct(ok, total) }' "$1"
}

# complete_share_re FILE COMM ROOT_RE CHAIN_RE: complete_share with CHAIN_RE a regular expression
# matched against ";USER-STACK;" (JIT frames, whose names carry source positions and tiers).
complete_share_re() {
	Q_COMM=$2 Q_ROOT_RE=$3 Q_CHAIN=$4 awk "$FOLDED_AWK"'
		parse($0) && selected() {
			total += cnt
			if (user ~ root_re && (";" user ";") ~ chain)
				ok += cnt
		}
		END { print total + 0, ok + 0, pct(ok, total) }' "$1"
}

# leaf_share FILE COMM LEAF [BELOW]: % of COMM's samples whose user leaf is LEAF; with BELOW,
# of those samples only whose stack holds the frame BELOW (the program's own work, not its
# exec and dynamic loading).
leaf_share() {
	Q_COMM=$2 Q_LEAF=$3 awk -v below="${4:-}" "$FOLDED_AWK"'
		function has(f,    i) { for (i = 1; i <= nfr; i++) if (fr[i] == f) return 1; return 0 }
		parse($0) && selected() && (below == "" || has(below)) {
			total += cnt
			if (nuser > 0 && fr[nuser] == leaf)
				n += cnt
		}
		END { print pct(n, total) }' "$1"
}

# The root of a thread's stack, glibc's clone3 (clone before 2.34): glibc 2.41 (Debian 13) has
# no "clone3" symbol left, only "__clone3" and its internal alias (symtab names the former).
THREAD_ROOT='(__)?(clone3|clone)'

# rooted_share FILE COMM ROOT_RE: % of COMM's samples (all when COMM is "") whose user stack
# matches ROOT_RE, e.g. "^(_start|$THREAD_ROOT)(;|$)": the unwinder reached a thread's root.
rooted_share() {
	Q_COMM=$2 Q_ROOT_RE=$3 awk "$FOLDED_AWK"'
		parse($0) && selected() { total += cnt; if (user ~ root_re) n += cnt }
		END { print pct(n, total) }' "$1"
}

# frame_share FILE COMM FRAME_RE: % of COMM's samples with a frame matching ^FRAME_RE$.
frame_share() {
	Q_COMM=$2 Q_FRAME_RE=$3 awk "$FOLDED_AWK"'
		parse($0) && selected() {
			total += cnt
			for (i = 1; i <= nfr; i++)
				if (fr[i] ~ frame_re) {
					n += cnt
					break
				}
		}
		END { print pct(n, total) }' "$1"
}

# kernel_stats FILE COMM ROOT_RE CHAIN: prints "TOTAL KERNEL MISPLACED COMPLETE_PCT" for COMM:
# its samples, those with kernel frames, those with a user frame after a kernel frame (kernel
# frames must all be at the leaf end), and the % of kernel samples whose user part matches
# ROOT_RE and holds CHAIN contiguously.
kernel_stats() {
	Q_COMM=$2 Q_ROOT_RE=$3 Q_CHAIN=$4 awk "$FOLDED_AWK"'
		parse($0) && selected() {
			total += cnt
			if (nuser == nfr)
				next
			kern += cnt
			for (i = nuser + 1; i <= nfr; i++)
				if (fr[i] !~ /_\[k\]$/) {
					misplaced += cnt
					break
				}
			if (user ~ root_re && index(";" user ";", ";" chain ";"))
				ok += cnt
		}
		END { print total + 0, kern + 0, misplaced + 0, pct(ok, kern) }' "$1"
}

# malformed_lines FILE: lines that are not "comm;frame;... COUNT" with COUNT > 0.
malformed_lines() {
	awk "$FOLDED_AWK"'!parse($0) || cnt + 0 <= 0 || nfr < 1 || comm == "" { n++ }
		END { print n + 0 }' "$1"
}

# duplicate_stacks FILE: stacks that appear on more than one line.
duplicate_stacks() {
	awk "$FOLDED_AWK"'parse($0) { s = substr($0, 1, length($0) - length(cnt) - 1); if (seen[s]++) n++ }
		END { print n + 0 }' "$1"
}

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-hostile.sh: what another user can do to the files of a profiled process must neither hang
# nor kill bpfprof, nor make it print another file's names. chain runs from a private copy of
# itself and libchain.so; once it mapped the library:
# - the library's path becomes a FIFO. bpfprof without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE
#   (no /proc/PID/map_files) opens the path instead: it must finish in time, answer SIGTERM, and
#   so must a report of its capture once chain is gone;
# - the library is truncated in place, or rewritten in place (cp over it) with a copy whose
#   function names differ, after bpfprof opened it and before it reads its names (at the end):
#   bpfprof must not die of SIGBUS, and the library's frames become libchain.so+0xOFF.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=199
RUN_S=3
LIMIT_S=40
# setpriv's bounding set without what /proc/PID/map_files needs.
NO_MAP_FILES=(setpriv --bounding-set=-sys_admin,-checkpoint_restore)
LIB_RE='^libchain[.]so[+]0x[0-9a-f]+$'

if ! command -v setpriv >/dev/null || ! command -v mkfifo >/dev/null; then
	fail hostile_tools "setpriv and mkfifo (util-linux, coreutils) are needed"
	exit 1
fi
# The runs without CAP_SYS_ADMIN test how files are opened, not Debian's paranoid=3.
paranoid_at_most_2

# start_chain DIR: chain from a private copy in DIR (pid in CHAIN_PID), once it mapped the
# library.
start_chain() {
	local dir=$1 i

	mkdir "$dir"
	cp "$TARGETS/chain" "$TARGETS/libchain.so" "$dir/"
	start_target CHAIN_PID "$dir/chain" 120
	for ((i = 0; i < 500; i++)); do
		grep -q " $dir/libchain.so\$" "/proc/$CHAIN_PID/maps" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "hostile_${dir##*/}_mapped" "chain did not map $dir/libchain.so"
}

# start_limited_bg LIMIT_S PREFIX CMD...: CMD (bpfprof, maybe under setpriv) in the background
# under timeout; BP_TIMEOUT_PID and BP_PID (the process that runs bpfprof) as start_bpfprof_bg
# sets them. Finish with wait_limited_bg PREFIX.
start_limited_bg() {
	local limit=$1 prefix=$2 i

	shift 2
	echo "+ ${*//"$BPFPROF"/bpfprof} &"
	BP_START=$(date +%s.%N)
	timeout -k 5 "$limit" "$@" >"$prefix.out" 2>"$prefix.err" &
	BP_TIMEOUT_PID=$!
	BG_PIDS+=("$BP_TIMEOUT_PID")
	BP_PID=
	for ((i = 0; i < 100; i++)); do
		BP_PID=$(cat "/proc/$BP_TIMEOUT_PID/task/$BP_TIMEOUT_PID/children" 2>/dev/null)
		BP_PID=${BP_PID%% *}
		[ -n "$BP_PID" ] && [ "$(cat "/proc/$BP_PID/comm" 2>/dev/null)" = bpfprof ] && break
		sleep 0.05
	done
	[ -n "$BP_PID" ] && BG_PIDS+=("$BP_PID")
}

wait_limited_bg() {
	wait "$BP_TIMEOUT_PID"
	BP_RC=$?
	forget_pid "$BP_TIMEOUT_PID"
	forget_pid "$BP_PID"
	BP_SECONDS=$(awk -v s="$BP_START" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	report_run "$1"
}

# has_open PID FILE: PID maps FILE or has it open (an fd), whichever way it reads ELF files.
has_open() {
	grep -q " $2\$" "/proc/$1/maps" 2>/dev/null && return 0
	find "/proc/$1/fd" -lname "$2" 2>/dev/null | grep -q .
}

# wait_open PID FILE: waits (up to 20 s) until has_open PID FILE.
wait_open() {
	local i

	for ((i = 0; i < 400; i++)); do
		has_open "$1" "$2" && return 0
		sleep 0.05
	done
	return 1
}

# exited_within PID SECONDS: PID is gone (or a zombie) within SECONDS.
exited_within() {
	local i state

	for ((i = 0; i < $2 * 20; i++)); do
		state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
		[ -z "$state" ] || [ "$state" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# check_profile LABEL FOLDED: the run ended by itself, exit 0, chain's samples written, each
# through libchain.so+0xOFF frames (its names could not be read) below named chain frames.
check_profile() {
	local label=$1 folded=$2

	assert_true "${label}_in_time" "bpfprof ended by itself (exit $BP_RC after ${BP_SECONDS}s)" \
		test "$BP_RC" != 124 -a "$BP_RC" != 137
	assert_eq "${label}_exit" "$BP_RC" 0
	assert_ge "${label}_samples" "$(folded_samples "$folded" chain)" 1
	assert_ge "${label}_leaf_named" "$(frame_share "$folded" chain '^chain_leaf$')" 95 %
	assert_ge "${label}_lib_unnamed" "$(frame_share "$folded" chain "$LIB_RE")" 95 %
}

# A FIFO at the library's path. As root, bpfprof opens the mapped file through map_files and
# names its frames; without map_files it opens the path: it must go on, the frames unnamed. A
# report of the first run's capture, once chain is gone, opens the path the capture recorded.
test_fifo() {
	local dir=$TEST_TMP/fifo p=$TEST_TMP/fifo-root q=$TEST_TMP/fifo-nocap r=$TEST_TMP/fifo-report

	start_chain "$dir"
	rm "$dir/libchain.so"
	mkfifo "$dir/libchain.so"
	run_limited "$LIMIT_S" "$p" "$BPFPROF" -p "$CHAIN_PID" -d "$RUN_S" -F "$HZ" \
		--raw-capture "$p.cap" -o "$p.folded"
	assert_eq hostile_fifo_root_exit "$BP_RC" 0
	assert_ge hostile_fifo_root_lib_named "$(frame_share "$p.folded" chain '^lib_f0[1-8]$')" 95 %

	run_limited "$LIMIT_S" "$q" "${NO_MAP_FILES[@]}" "$BPFPROF" -p "$CHAIN_PID" -d "$RUN_S" \
		-F "$HZ" -o "$q.folded"
	check_profile hostile_fifo_pid "$q.folded"
	stop_target "$CHAIN_PID"

	run_limited "$LIMIT_S" "$r" "$BPFPROF" report "$p.cap" -o "$r.folded"
	check_profile hostile_fifo_report "$r.folded"
}

# The same FIFO, bpfprof asked to stop with SIGTERM long before its -d.
test_fifo_sigterm() {
	local dir=$TEST_TMP/sigterm p=$TEST_TMP/sigterm-run stopped=0

	start_chain "$dir"
	rm "$dir/libchain.so"
	mkfifo "$dir/libchain.so"
	start_limited_bg 90 "$p" "${NO_MAP_FILES[@]}" "$BPFPROF" -p "$CHAIN_PID" -d 60 -F "$HZ" \
		--drain-interval 200 -o "$p.folded"
	# Once it profiles: time to take samples in the library and to look for its file.
	wait_profiling "$p.err"
	sleep 2
	kill -TERM "$BP_PID" 2>/dev/null
	exited_within "$BP_PID" 10 && stopped=1
	assert_eq hostile_fifo_sigterm_stopped "$stopped" 1
	[ "$stopped" = 1 ] || kill -KILL "$BP_PID" 2>/dev/null
	wait_limited_bg "$p"
	stop_target "$CHAIN_PID"
	assert_eq hostile_fifo_sigterm_exit "$BP_RC" 0
	assert_ge hostile_fifo_sigterm_samples "$(folded_samples "$p.folded" chain)" 1
}

# The library changed in place (HOW: truncated, or rewritten with other names) once bpfprof has
# it open, before it reads the names (after -d).
test_changed() {
	local how=$1 dir=$TEST_TMP/$1 p=$TEST_TMP/$1-run opened=0

	start_chain "$dir"
	# The same library, its function names spelled otherwise: the same layout, other names.
	sed 's/lib_f0/LIB_F0/g; s/lib_g0/LIB_G0/g' "$TARGETS/libchain.so" >"$TEST_TMP/other.so"
	start_limited_bg "$LIMIT_S" "$p" "$BPFPROF" -p "$CHAIN_PID" -d "$RUN_S" -F "$HZ" \
		--drain-interval 200 -o "$p.folded"
	wait_open "$BP_PID" "$dir/libchain.so" && opened=1
	if [ "$how" = truncated ]; then
		truncate -s 0 "$dir/libchain.so"
	else
		cp "$TEST_TMP/other.so" "$dir/libchain.so"
	fi
	wait_limited_bg "$p"
	stop_target "$CHAIN_PID"

	assert_eq "hostile_${how}_opened_before" "$opened" 1
	check_profile "hostile_$how" "$p.folded"
	assert_eq "hostile_${how}_no_lib_names" "$(frame_share "$p.folded" chain '^(lib|LIB)_[fg]0[1-8]$')" 0.0 %
}

test_fifo
test_fifo_sigterm
test_changed truncated
test_changed rewritten

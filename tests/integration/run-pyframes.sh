#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-pyframes.sh: Python frames. A script with a known chain (tests/targets/pychain.py:
# <module> -> main -> Worker.run -> middle -> leaf_spin) shows it, in order, under native frames
# that reach _start (clone for threads), for -- CMD, -p and -a, threaded, asyncio and through a
# C extension's callback; on Debian's python3 (3.11 on Debian 12, 3.13 on Debian 13; stripped:
# .dynsym only; the py311 labels name it) and on each pyenv
# CPython 3.10, 3.12 and 3.13 present (sid's 3.13-3.15, in a container: run-pycontainer.sh, with
# the same cases, tests/python.sh). Short-lived processes get their frames named; a process
# changing under the walk neither crashes nor hangs bpfprof; pprof has the files and lines.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../python.sh"
require_bpf

# Debian's python3: the versioned binary it links to (its file name is the process's comm).
PYTHON=$(realpath -e /usr/bin/python3 2>/dev/null || echo /usr/bin/python3)
PY_COMM=$(basename "$PYTHON")
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
MIN_SHORT_PCT=90

# Debian's own python3, whichever it is (its labels say py311 on every release).
test_debian() {
	if [ ! -x "$PYTHON" ]; then
		fail python311_available "$PYTHON is missing (make deps installs python3)"
		return
	fi
	test_cases py311 "$PYTHON"
}

# The other CPythons on the machine (pyenv builds: PIE, libpython3.X.so, DWARF); 3.12 and 3.13
# with a subinterpreter too. 3.10's code
# objects have no co_qualname: methods show as their bare name (run, not Worker.run).
test_versions() {
	local v py run iter

	for v in 3.10 3.12 3.13; do
		py=$(ls -d "$PYENV/$v".*/bin/python"$v" 2>/dev/null | grep -v -- '-dev/\|[0-9]t/' |
			tail -1)
		if [ -z "$py" ] || [ ! -x "$py" ]; then
			echo "  CPython $v: not installed here ($PYENV/$v.*), not tested"
			continue
		fi
		run=Worker.run iter=JSONEncoder.iterencode
		[ "$v" = 3.10 ] && run=run iter=iterencode
		test_cmd "py${v/./}" "$py" plain "$ROOT_RE" \
			"<module>_[py];main_[py];${run}_[py];middle_[py];leaf_spin_[py]"
		test_cmd "py${v/./}_threads" "$py" threads "$THREAD_ROOT_RE" \
			"${run}_[py];middle_[py];leaf_spin_[py]"
		test_cmd "py${v/./}_callback" "$py" callback "$ROOT_RE" \
			"<module>_[py];main_[py];${run}_[py];middle_[py];dumps_[py]" \
			"${iter}_[py]" 'on_default_[py]'
		[ "$v" = 3.10 ] && continue
		# A subinterpreter's frames below the main interpreter's, C between.
		test_cmd "py${v/./}_subinterp" "$py" subinterp "$ROOT_RE" \
			'<module>_[py];main_[py];SubWorker.run_sub_[py];<module>_[py];sub_leaf_[py]' \
			'SubWorker.run_sub_[py]' '<module>_[py]'
	done
}

# A CPython bpfprof does not know (3.9, when pyenv has it): native frames as without Python
# support, and one line saying why.
test_unknown_version() {
	local p=$TEST_TMP/py39 py

	py=$(ls -d "$PYENV"/3.9.*/bin/python3.9 2>/dev/null | tail -1)
	if [ -z "$py" ]; then
		echo "  CPython 3.9: not installed here, the unknown-version case not tested"
		return
	fi
	run_bpfprof 60 "$p" -F "$HZ" -o "$p.folded" -- "$py" "$SCRIPT" 1 plain
	assert_eq py39_exit "$BP_RC" 0
	assert_eq py39_said_once "$(grep -c 'CPython 3.9: bpfprof reads the frames of 3.10 to 3.15' \
		"$p.err")" 1
	assert_eq py39_no_python_frames "$(grep -c '_\[py\]' "$p.folded")" 0
	assert_ge py39_evaluator "$(frame_share "$p.folded" python3.9 _PyEval_EvalFrameDefault)" 50 %
}

# A PID namespace (a container's): the threads' native_thread_id is not the kernel's tid there;
# the walk matches them by their thread pointer.
test_pidns() {
	test_cmd py311_pidns "$PYTHON" threads "$THREAD_ROOT_RE" \
		'Worker.run_[py];middle_[py];leaf_spin_[py]' -- unshare --pid --fork
}

# --no-python: native frames only, as before Python frames.
test_no_python() {
	local p=$TEST_TMP/pynone

	run_bpfprof 60 "$p" --no-python -F "$HZ" -o "$p.folded" -- "$PYTHON" "$SCRIPT" 1 plain
	assert_eq py311_no_python_exit "$BP_RC" 0
	assert_eq py311_no_python_frames "$(grep -c '_\[py\]' "$p.folded")" 0
	assert_ge py311_no_python_evaluator \
		"$(frame_share "$p.folded" "$PY_COMM" _PyEval_EvalFrameDefault)" 50 %
}

# start_working VAR: starts pychain.py (until killed), its pid in VAR, and waits (up to 120 s:
# a busy machine, qemu's TCG) until its start-up is done and its work began.
start_working() {
	local i ready=$TEST_TMP/ready.$RANDOM

	PYCHAIN_READY=$ready start_target "$1" "$PYTHON" "$SCRIPT" 0 plain
	for ((i = 0; i < 1200; i++)); do
		[ -e "$ready" ] && return 0
		sleep 0.1
	done
	fail "${1}_started" "pychain.py did not start its work in 120 s"
}

# -p: a running process, found through /proc/PID/maps.
test_pid() {
	local p=$TEST_TMP/pypid pid

	start_working pid
	run_bpfprof 60 "$p" -F "$HZ" -d "$RUN_S" -o "$p.folded" -p "$pid"
	stop_target "$pid"
	assert_eq py311_pid_exit "$BP_RC" 0
	check_chain py311_pid "$p.folded" "$PY_COMM" "$ROOT_RE" "$CHAIN"
}

# -a: every process; the script's among them (running before bpfprof started).
test_all() {
	local p=$TEST_TMP/pyall pid

	start_working pid
	# 6 s: a process that ran before bpfprof is armed at its first sample user space reads,
	# and with -a that first read waits behind every other process's (their files opened):
	# up to ~0.2 s of its samples without Python frames on a busy machine.
	run_bpfprof 60 "$p" -a -F "$HZ" -d 6 -o "$p.folded"
	stop_target "$pid"
	assert_eq py311_all_exit "$BP_RC" 0
	check_chain py311_all "$p.folded" "$PY_COMM" "$ROOT_RE" "$CHAIN"
}

# 200 processes of 50 ms: the samples running Python code (a Python frame, or the evaluator
# left in place) have their Python frames, all named.
test_shortlived() {
	local p=$TEST_TMP/pyshort share

	run_bpfprof 300 "$p" -F "$HZ" -o "$p.folded" -- sh -c "
		for i in \$(seq 200); do
			$PYTHON -c 'import time
def spin_50ms():
    end = time.monotonic() + 0.05
    while time.monotonic() < end:
        pass
spin_50ms()' || exit 1
		done"
	assert_eq py311_short_exit "$BP_RC" 0
	read -r -a share <<<"$(Q_COMM=$PY_COMM awk "$FOLDED_AWK"'
		parse($0) && selected() && (index(user, "_[py]") || user ~ /_PyEval_EvalFrameDefault/) {
			total += cnt
			if (user !~ /_PyEval_EvalFrameDefault/ && user !~ /\[unknown\]_\[py\]/)
				ok += cnt
			if (index(user, ";spin_50ms_[py]"))
				spin += cnt
		}
		END { print total + 0, ok + 0, pct(ok, total), spin + 0 }' "$p.folded")"
	assert_ge py311_short_samples "${share[0]}" 200
	assert_ge py311_short_named "${share[2]}" "$MIN_SHORT_PCT" % \
		"${share[1]} of ${share[0]} samples running Python code"
	assert_ge py311_short_spin "${share[3]}" 100
}

# The process changes under the walk: threads exit, code objects are freed, at 999 Hz. bpfprof
# must end normally, with the main thread's chain intact.
test_churn() {
	local p=$TEST_TMP/pychurn

	run_bpfprof 90 "$p" -F 999 --stats -o "$p.folded" -- "$PYTHON" "$SCRIPT" 5 churn
	assert_eq py311_churn_exit "$BP_RC" 0
	# The main thread's samples (the other thread's change all the time).
	PY_SELECT_RE=$ROOT_RE check_chain py311_churn_main "$p.folded" "$PY_COMM" "$ROOT_RE" \
		"$CHAIN"
	assert_grep py311_churn_stats "$p.err" 'Python frames'
}

# pprof: each Python frame's function, file and line (go tool pprof -list reads the source).
test_pprof() {
	local p=$TEST_TMP/pyprof line

	run_bpfprof 60 "$p" -F "$HZ" -o "$p.pb.gz" -- "$PYTHON" "$SCRIPT" 2 plain
	assert_eq py311_pprof_exit "$BP_RC" 0
	HOME=$TEST_TMP go tool pprof -list 'leaf_spin' "$p.pb.gz" >"$p.list" 2>"$p.list.err"
	assert_grep py311_pprof_file "$p.list" "pychain.py"
	# The loop's line, from the code object's line table, holds most of leaf_spin's samples.
	line=$(grep -m1 -n 'x += i \* i' "$SCRIPT" | cut -d: -f1)
	assert_true py311_pprof_line "go tool pprof -list shows samples on line $line" awk -v l="$line" '
		$0 ~ "^ +[0-9.]+(ms|s) +[0-9.]+(ms|s) +" l ":" { found = 1 } END { exit !found }' \
		"$p.list"
}

test_debian
test_versions
test_unknown_version
test_no_python
test_pidns
test_pid
test_all
test_shortlived
test_churn
test_pprof

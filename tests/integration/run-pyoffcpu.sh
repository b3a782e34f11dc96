#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-pyoffcpu.sh: Python frames in off-CPU and waker stacks. tests/targets/pyoffcpu.py waits on
# its main thread, each kind of wait under a Python function of its own: wait_sleep
# (time.sleep), wait_lock (a threading.Lock that a thread under release_lock releases after a
# delay), wait_pipe (a pipe that a thread under write_pipe writes after a delay); every wait ends
# before it exits, and it writes the time each kind took by its own monotonic clock. Under
# bpfprof --off-cpu the time off CPU of the stacks whose leaf-most Python frame is that function
# must be within 10% of it; under --wakers the lock wait's waker stack holds release_lock and the
# pipe wait's write_pipe. On Debian's python3 (-- CMD, --on-cpu, -p, --no-python, the agent)
# and, -- CMD with --wakers, each pyenv CPython 3.12 and 3.13 present and a container root's
# 3.13, 3.14 and 3.15 (tests/container.sh's sid root: test_container). The program's first wait (wait_first, a sleep
# before any other blocking call of the program's own) is checked the same way: bpfprof arms a
# CPython before its first record (-- CMD: the command's file, or the libpython3.X.so it needs,
# in py_binaries before its exec; -p: the process's mappings read at once), so its first blocked
# stack has its Python frames. Not in the container root: the command there is unshare, and the
# interpreter its child execs is found at its first record. Before Linux 5.17 --off-cpu refuses
# (run-offcpu.sh checks its message).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../container.sh"
require_bpf

PYTHON=$(realpath -e /usr/bin/python3 2>/dev/null || echo /usr/bin/python3)
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
SCRIPT=$(cd "$(dirname "$0")/../targets" && pwd)/pyoffcpu.py
ROUNDS=3
DELAY_S=0.2
# The issue's bound: each wait's time off CPU within 10% of what the program measured (its
# measure also holds the few microseconds of Python around the blocking call).
TOLERANCE_PCT=10
# The waits whose waker part (after "--") holds the releasing thread's Python function: the
# lock's holder wakes its waiter at its release; a few periods (the GIL taken back after the
# wait) are woken by another thread's drop of the GIL.
MIN_WAKER_PCT=90

# wait_us FOLDED FUNC: microseconds off CPU of the stacks whose leaf-most Python frame (before
# any waker part) is FUNC_[py]; with --on-cpu (ON_CPU=1) only the blocked ones, under
# [off-cpu].
wait_us() {
	awk -v f="$2_[py]" -v on_cpu="${ON_CPU:-0}" '{
			if (on_cpu && !index($0, ";[off-cpu];")) next
			cnt = $NF; line = $0; sub(/ [0-9]+$/, "", line); sub(/;--;.*/, "", line)
			n = split(line, fr, ";"); leaf = ""
			for (i = n; i >= 1; i--)
				if (fr[i] ~ /_\[py\]$/) { leaf = fr[i]; break }
			if (leaf == f) t += cnt
		} END { print t + 0 }' "$1"
}

# waker_pct FOLDED FUNC WAKER: of the microseconds wait_us counts for FUNC, the % whose waker
# part holds WAKER_[py]; then those microseconds.
waker_pct() {
	awk -v f="$2_[py]" -v wk=";$3_[py];" '{
			cnt = $NF; line = $0; sub(/ [0-9]+$/, "", line)
			waker = ""
			if ((i = index(line, ";--;"))) { waker = substr(line, i + 3) ";"; line = substr(line, 1, i - 1) }
			n = split(line, fr, ";"); leaf = ""
			for (i = n; i >= 1; i--)
				if (fr[i] ~ /_\[py\]$/) { leaf = fr[i]; break }
			if (leaf != f) next
			all += cnt
			if (index(waker, wk)) ok += cnt
		} END { printf "%.1f %d\n", all ? 100 * ok / all : 0, all }' "$1"
}

# check_waits PREFIX LABEL: each kind's profiled time against the program's account; the first
# wait's too unless NO_FIRST=1.
check_waits() {
	local p=$1 label=$2 kind ns runq us kinds="first sleep lock pipe"

	if [ ! -s "$p.res" ]; then
		fail "${label}_accounts" "pyoffcpu.py wrote no accounts"
		return
	fi
	[ "${NO_FIRST:-0}" = 1 ] && kinds="sleep lock pipe"
	for kind in $kinds; do
		ns=$(awk -v k="$kind" '$1 == k { print $2 }' "$p.res")
		runq=$(awk -v k="$kind" '$1 == k { print $3 + 0 }' "$p.res")
		us=$(wait_us "$p.folded" "wait_$kind")
		echo "  wait_$kind: measured $((ns / 1000)) us ($((runq / 1000)) us of it runnable)," \
			"profiled $us us off CPU under wait_${kind}_[py]"
		# Within TOLERANCE_PCT, less what the thread spent runnable but not running (a busy
		# machine's: after the system call's exit it is no time blocked; before, it is).
		assert_within "${label}_${kind}_us" "$us" $(((ns - runq / 2) / 1000)) \
			$(((ns * TOLERANCE_PCT / 100 + runq / 2) / 1000)) " us"
	done
}

# check_wakers PREFIX LABEL: the lock's and the pipe's waits woken under the Python function of
# the thread that released or wrote.
check_wakers() {
	local p=$1 label=$2 share

	read -r -a share <<<"$(waker_pct "$p.folded" wait_lock release_lock)"
	echo "  wait_lock: ${share[1]} us, ${share[0]}% woken under release_lock_[py]"
	assert_ge "${label}_lock_waker_pct" "${share[0]}" "$MIN_WAKER_PCT" % \
		"$(grep -- ';--;' "$p.folded" | grep 'wait_lock_\[py\]' | sort -t' ' -k2 -nr |
			head -2 | cut -c1-800)"
	read -r -a share <<<"$(waker_pct "$p.folded" wait_pipe write_pipe)"
	echo "  wait_pipe: ${share[1]} us, ${share[0]}% woken under write_pipe_[py]"
	assert_ge "${label}_pipe_waker_pct" "${share[0]}" "$MIN_WAKER_PCT" %
}

# test_cmd LABEL PYTHON ARGS...: bpfprof ARGS -- PYTHON pyoffcpu.py, checked.
test_cmd() {
	local label=$1 py=$2 p=$TEST_TMP/$1

	shift 2
	run_bpfprof 90 "$p" "$@" -o "$p.folded" -- "$py" "$SCRIPT" "$p.res" "$ROUNDS" "$DELAY_S"
	assert_eq "${label}_exit" "$BP_RC" 0
	check_waits "$p" "$label"
}

# --off-cpu --on-cpu: the blocked half of a wall-clock profile has the Python frames too.
test_on_cpu() {
	ON_CPU=1 test_cmd pyoffcpu_on_cpu "$PYTHON" --off-cpu --on-cpu -F 99
}

# -p on a running pyoffcpu.py: its waits start once bpfprof profiles (-w, SIGUSR2).
test_pid() {
	local p=$TEST_TMP/pid pid i blk

	start_target pid "$PYTHON" "$SCRIPT" -w "$p.res" "$ROUNDS" "$DELAY_S"
	# SIGUSR2 blocked (bit 11 of SigBlk, hex): its sigwait takes the signal.
	for ((i = 0; i < 250; i++)); do
		blk=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$blk" ] && (((16#${blk: -3} & 0x800) != 0)) && break
		sleep 0.02
	done
	start_bpfprof_profiling 90 "$p" pyoffcpu_pid "$pid" --off-cpu -p "$pid" \
		-o "$p.folded" || return
	kill -USR2 "$pid"
	wait_target "$pid"
	wait_bpfprof_bg "$p"
	assert_eq pyoffcpu_pid_exit "$BP_RC" 0
	check_waits "$p" pyoffcpu_pid
}

# --no-python: the same waits, native frames only.
test_no_python() {
	local p=$TEST_TMP/nopy

	run_bpfprof 90 "$p" --off-cpu --no-python -o "$p.folded" -- "$PYTHON" "$SCRIPT" \
		"$p.res" 1 "$DELAY_S"
	assert_eq pyoffcpu_no_python_exit "$BP_RC" 0
	assert_grep pyoffcpu_no_python_blocked "$p.folded" 'PyThread_acquire_lock_timed'
	assert_eq pyoffcpu_no_python_frames "$(grep -c '_\[py\]' "$p.folded")" 0
}

# bpfprof agent --off-cpu: the service's off-CPU profile has the Python functions that waited.
test_agent() {
	local p=$TEST_TMP/agent f i

	start_bpfprof_bg 90 "$p" agent -F 49 --interval 2 --output-dir "$p.dir" --metrics-addr off \
		--off-cpu
	if ! wait_profiling "$p.err" "$BP_TIMEOUT_PID"; then
		fail pyoffcpu_agent_started "the agent did not start: $(head -c 400 "$p.err")"
		return
	fi
	"$PYTHON" "$SCRIPT" "$p.res" "$ROUNDS" "$DELAY_S"
	sleep 3
	kill -TERM "$BP_PID"
	wait_bpfprof_bg "$p"
	assert_eq pyoffcpu_agent_exit "$BP_RC" 0
	f=$(find "$p.dir" -name "*_$(basename "$PYTHON")*.off-cpu.pb.gz" | sort)
	assert_true pyoffcpu_agent_off_cpu_file "an off-CPU profile of $(basename "$PYTHON") in $p.dir" \
		test -n "$f"
	[ -n "$f" ] || return
	for i in $f; do
		HOME=${HOME:-$TEST_TMP} GOCACHE=$TEST_TMP/gocache go tool pprof -traces "$i" 2>/dev/null
	done >"$p.traces"
	assert_grep pyoffcpu_agent_lock "$p.traces" '^ +wait_lock$'
	assert_grep pyoffcpu_agent_pipe "$p.traces" '^ +wait_pipe$'
}

# The CPythons of the tests' sid container root (tests/container.sh: python3.13, 3.14 and
# 3.15; made once, cached), each run there as a container runs on a host (its own mount and PID
# namespaces, pivot_root), the script on stdin and the accounts on stdout. With CI=true a root
# that cannot be made is a failure.
test_container() {
	local v label p root cmd

	# shellcheck disable=SC2086 # the packages are words
	if ! container_root root "$CONTAINER_PY_RELEASE" $CONTAINER_PY_PACKAGES; then
		if [ "${CI:-}" = true ]; then
			fail pyoffcpu_root "tools/fresh-root.sh could not make the sid root (above)"
		else
			skip "no sid root (tools/fresh-root.sh failed, above): sid's CPythons not tested"
		fi
		return
	fi
	mkdir -p "$TEST_TMP/ct"
	container_cmd cmd "$root" "$TEST_TMP/ct"
	for v in 3.13 3.14 3.15; do
		if [ ! -x "$root/usr/bin/python$v" ]; then
			fail "pyoffcpu_root_py${v/./}" "$root/usr/bin/python$v is missing"
			continue
		fi
		label=pyoffcpu_root_py${v/./}
		p=$TEST_TMP/$label
		run_bpfprof 90 "$p" --wakers -o "$p.folded" -- "${cmd[@]}" "python$v" - - "$ROUNDS" \
			"$DELAY_S" <"$SCRIPT"
		assert_eq "${label}_exit" "$BP_RC" 0
		cp "$p.out" "$p.res"
		NO_FIRST=1 check_waits "$p" "$label"
		check_wakers "$p" "$label"
	done
}

test_versions() {
	local v py

	for v in 3.12 3.13; do
		py=$(ls -d "$PYENV/$v".*/bin/python"$v" 2>/dev/null | grep -v -- '-dev/\|[0-9]t/' |
			tail -1)
		if [ -z "$py" ] || [ ! -x "$py" ]; then
			echo "  CPython $v: not installed here ($PYENV/$v.*), not tested"
			continue
		fi
		test_cmd "pyoffcpu_py${v/./}" "$py" --wakers
		check_wakers "$TEST_TMP/pyoffcpu_py${v/./}" "pyoffcpu_py${v/./}"
	done
}

if ! kernel_at_least 5 17; then
	# No off-CPU programs before 5.17: --off-cpu says so (run-offcpu.sh checks the message).
	run_bpfprof 60 "$TEST_TMP/old" --off-cpu -o "$TEST_TMP/old.folded" -- "$PYTHON" -c pass
	assert_eq pyoffcpu_old_kernel_exit "$BP_RC" 1
elif [ ! -x "$PYTHON" ]; then
	fail pyoffcpu_python "$PYTHON is missing (make deps installs python3)"
else
	test_cmd pyoffcpu_cmd "$PYTHON" --off-cpu
	test_cmd pyoffcpu_wakers "$PYTHON" --wakers
	check_wakers "$TEST_TMP/pyoffcpu_wakers" pyoffcpu_wakers
	test_on_cpu
	test_pid
	test_no_python
	test_agent
	test_versions
	test_container
fi

# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# python.sh: the Python frame checks the Python scripts share (sourced after lib.sh by
# run-pyframes.sh on the host's interpreters and run-pycontainer.sh on a container root's):
# the known chain of tests/targets/pychain.py and its share of samples, one run of it under
# bpfprof -- CMD, and the set of cases each interpreter gets.

SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")/targets" && pwd)/pychain.py
HZ=499
RUN_S=4
MIN_CHAIN_PCT=95
ROOT_RE='^_start;'
THREAD_ROOT_RE="^$THREAD_ROOT;"
CHAIN='<module>_[py];main_[py];Worker.run_[py];middle_[py];leaf_spin_[py]'

# The interpreter's start-up, not the script's work: the dynamic loader, the interpreter's
# initialization, imports. With both CPUs busy a 4 s run gets half a CPU, and start-up took 5% of
# the asyncio case's samples (94.3% against the 95% floor; 97-98% on a quiet machine). A failed
# Python walk leaves none of these native frames: such samples still count.
STARTUP_RE='(^|;)(_dl_start|_Py_PreInitializeFromPyArgv|Py_InitializeFromConfig|_find_and_load(_unlocked)?_\[py\])(;|$)'

# py_share FILE COMM ROOT_RE CHAIN [BETWEEN_A BETWEEN_B]: "TOTAL OK PCT" over COMM's samples
# (those of the threads whose name matches PY_COMM_RE instead, when set) but the start-up's
# (STARTUP_RE; only those whose user stack matches PY_SELECT_RE, when set):
# OK are those whose user stack matches ROOT_RE and whose Python frames, in stack order, hold
# CHAIN (';'-separated) as a contiguous run: native frames may lie between two of them (CPython
# 3.10 evaluates each Python call in a C call of its own), other Python frames not. With
# BETWEEN_A and BETWEEN_B, also Python frame A, then one or more native frames (a C function),
# then Python frame B: Python -> C -> Python, in that order.
py_share() {
	Q_COMM=$2 Q_ROOT_RE=$3 Q_CHAIN=$4 Q_SELECT=${PY_SELECT_RE:-} Q_STARTUP=$STARTUP_RE \
		Q_COMM_RE=${PY_COMM_RE:-} awk -v a="${5:-}" -v b="${6:-}" \
		"$FOLDED_AWK"'
		function c_between(    i, j) {
			for (i = 1; i < nuser; i++) {
				if (fr[i] != a)
					continue
				for (j = i + 1; j <= nuser && fr[j] !~ /_\[py\]$/; j++)
					;
				if (j > i + 1 && j <= nuser && fr[j] == b)
					return 1
			}
			return 0
		}
		function python(    i, s) {
			s = ""
			for (i = 1; i <= nuser; i++)
				if (fr[i] ~ /_\[py\]$/)
					s = s ";" fr[i]
			return s ";"
		}
		parse($0) &&
		    (ENVIRON["Q_COMM_RE"] == "" ? selected() : comm ~ ENVIRON["Q_COMM_RE"]) &&
		    (ENVIRON["Q_SELECT"] == "" || user ~ ENVIRON["Q_SELECT"]) &&
		    user !~ ENVIRON["Q_STARTUP"] {
			total += cnt
			if (user ~ root_re && index(python(), ";" chain ";") && (a == "" || c_between()))
				ok += cnt
		}
		END { print total + 0, ok + 0, pct(ok, total) }' "$1"
}

# check_chain LABEL FILE COMM ROOT_RE CHAIN [A B]: asserts py_share >= MIN_CHAIN_PCT.
check_chain() {
	local label=$1 share

	shift
	read -r -a share <<<"$(py_share "$@")"
	assert_ge "${label}_samples" "${share[0]}" 50
	assert_ge "${label}_chain" "${share[2]}" "$MIN_CHAIN_PCT" %
	is_number "${share[2]}" && awk -v p="${share[2]}" -v m="$MIN_CHAIN_PCT" 'BEGIN { exit !(p < m) }' &&
		echo "  ${share[1]} of ${share[0]} samples; the most common stacks:" &&
		awk '{ print $NF "\t" $0 }' "$1" | sort -nr | head -3 | cut -f2- | cut -c1-600 |
		sed 's/^/    /'
	return 0
}

# test_cmd LABEL PYTHON MODE ROOT_RE CHAIN [A B] [-- WRAPPER...]: -- [WRAPPER...] PYTHON
# SCRIPT RUN_S MODE (SCRIPT: pychain.py's path as PYTHON sees it, in a container its copy).
test_cmd() {
	local label=$1 py=$2 mode=$3 p=$TEST_TMP/$1 args=() wrap=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift && wrap=("$@")
	run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" -o "$p.folded" -- "${wrap[@]}" "$py" "$SCRIPT" \
		"$RUN_S" "$mode"
	assert_eq "${label}_exit" "$BP_RC" 0
	check_chain "$label" "$p.folded" "$(basename "$py")" "${args[@]}"
}

# test_cases LABEL PYTHON [-- WRAPPER...]: the chain, threads, asyncio, a Python -> C -> Python
# callback and a generator, each a -- CMD run of PYTHON (a path, or a name WRAPPER finds), its
# assertions named LABEL_CASE_*. For 3.11 and later (co_qualname).
test_cases() {
	local label=$1 py=$2 comm threads_re wrap=()

	comm=$(basename "$py")
	threads_re="^(${comm//./\\.}|Thread-[0-9]+_\\(run\\))\$"
	shift 2
	[ $# -gt 0 ] && wrap=("$@")
	test_cmd "$label" "$py" plain "$ROOT_RE" "$CHAIN" "${wrap[@]}"
	# Thread.run calls the bound method Worker.run through C (method_vectorcall). From 3.14 on,
	# threading names its threads' OS threads after them ("Thread-1 (run)": folded, spaces
	# are underscores): the threads' samples are under either name.
	PY_COMM_RE=$threads_re test_cmd "${label}_threads" "$py" \
		threads "$THREAD_ROOT_RE" \
		'Thread._bootstrap_[py];Thread._bootstrap_inner_[py];Thread.run_[py]' \
		'Thread.run_[py]' 'Worker.run_[py]' "${wrap[@]}"
	PY_COMM_RE=$threads_re check_chain "${label}_threads_leaf" \
		"$TEST_TMP/${label}_threads.folded" "$comm" "$THREAD_ROOT_RE" \
		'Worker.run_[py];middle_[py];leaf_spin_[py]'
	# asyncio.run, its event loop, then the task's step in C, then the coroutine.
	test_cmd "${label}_asyncio" "$py" asyncio "$ROOT_RE" \
		'<module>_[py];main_[py];run_[py];Runner.run_[py]' \
		'Handle._run_[py]' 'Worker.run_async_[py]' "${wrap[@]}"
	check_chain "${label}_asyncio_leaf" "$TEST_TMP/${label}_asyncio.folded" "$comm" \
		"$ROOT_RE" 'Worker.run_async_[py];middle_[py];leaf_spin_[py]'
	# Python -> C (the _json encoder) -> Python (its default= callback).
	test_cmd "${label}_callback" "$py" callback "$ROOT_RE" \
		'<module>_[py];main_[py];Worker.run_[py];middle_[py];dumps_[py]' \
		'JSONEncoder.iterencode_[py]' 'on_default_[py]' "${wrap[@]}"
	check_chain "${label}_callback_leaf" "$TEST_TMP/${label}_callback.folded" "$comm" \
		"$ROOT_RE" 'on_default_[py];leaf_spin_[py]'
	# A generator's frame, resumed by sum() (C), and an exception raised and caught below.
	test_cmd "${label}_generator" "$py" generator "$ROOT_RE" \
		'<module>_[py];main_[py];Worker.run_[py];middle_[py]' 'middle_[py]' 'spin_gen_[py]' \
		"${wrap[@]}"
	check_chain "${label}_generator_leaf" "$TEST_TMP/${label}_generator.folded" "$comm" \
		"$ROOT_RE" 'spin_gen_[py];leaf_spin_[py]'
}

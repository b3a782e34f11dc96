#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-python.sh: a program nobody here built (Debian's python3, no frame pointers, symbols from
# .dynsym) running a pure-Python loop: stacks reach a root frame, and the interpreter loop's
# activation is replaced by the Python frame it runs (<module>_[py]: the BPF walk of CPython's
# frames, on every kernel vmtest runs this on; run-pyframes.sh tests the rest on the host).
. "$(dirname "$0")/../lib.sh"
require_bpf

PYTHON=/usr/bin/python3
RUN_S=4
HZ=999
ROOT_RE="^(_start|$THREAD_ROOT)(;|\$)"
MIN_ROOTED_PCT=90
# "Most samples": the loop runs inside the interpreter's frame evaluator, which runs <module>.
MIN_EVAL_PCT=50
# Left in place: the BPF walk found no Python frames for the sample (at most start-up's).
MAX_EVAL_LEFT_PCT=10

# Busy in bytecode for RUN_S seconds; the clock is read once per 10000 iterations only.
SCRIPT="
import time
end = time.monotonic() + $RUN_S
n = 0
while time.monotonic() < end:
    for i in range(10000):
        n += i * i
"

test_python_loop() {
	# The kernel names the process after the file name exec'd: python3, not python3.11.
	local p=$TEST_TMP/python comm=python3

	if [ ! -x "$PYTHON" ]; then
		fail python_available "$PYTHON is missing (make deps installs python3)"
		return
	fi
	run_bpfprof $((RUN_S + 40)) "$p" -F "$HZ" -o "$p.folded" -- "$PYTHON" -c "$SCRIPT"
	assert_eq python_exit "$BP_RC" 0
	assert_ge python_samples "$(folded_samples "$p.folded" "$comm")" "$(cpu_floor "$p" 1 2)"
	assert_ge python_rooted "$(rooted_share "$p.folded" "$comm" "$ROOT_RE")" "$MIN_ROOTED_PCT" %
	assert_ge python_module_frame \
		"$(frame_share "$p.folded" "$comm" '<module>_\[py\]')" "$MIN_EVAL_PCT" %
	assert_le python_eval_frame_left \
		"$(frame_share "$p.folded" "$comm" _PyEval_EvalFrameDefault)" "$MAX_EVAL_LEFT_PCT" %
}

test_python_loop

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-java.sh: HotSpot's JIT code (Debian's default JDK: 17 on Debian 12, 21 on Debian 13;
# -XX:+PreserveFramePointer), named by a perf map the JVM writes only as it exits
# (-XX:+DumpPerfMapAtExit), after every sample was handled:
# tests/targets/JavaChain.java's chain main -> level1 -> level2 -> leafSpin, from the thread's
# root (clone3 or clone, start_thread).
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=499
RUN_S=3
# HotSpot's names: "RETURN-TYPE CLASS.METHOD(ARGS)", interpreted frames "Interpreter".
# HotSpot names a frame the interpreter runs "Interpreter" (level1 and level2 until compiled).
m() { echo "(long|void) JavaChain\\.$1\\([^;]*\\)_\\[j\\]"; }
mi() { echo "($(m "$1")|Interpreter_\\[j\\])"; }
CHAIN=";$(mi main);$(mi level1);$(mi level2);$(m leafSpin);"
NAMED_CHAIN=";$(mi main);$(m level1);$(m level2);$(m leafSpin);"
# Of the Java main thread's samples, start-up and exit included (98% in development runs).
MIN_CHAIN_PCT=90
# The same with level1 and level2 compiled, named (the first ~7% run interpreted: 91.5%).
MIN_NAMED_PCT=75
# Debian's default JDK (default-jdk-headless), not another one first in PATH.
JAVA=${JAVA_HOME_DEBIAN:-/usr/lib/jvm/default-java}/bin/java

if [ ! -x "$JAVA" ] || [ ! -f "$TARGETS/JavaChain.class" ]; then
	fail java_available "$JAVA or $TARGETS/JavaChain.class is missing (make deps installs" \
		"default-jdk-headless)"
	exit 1
fi

p=$TEST_TMP/java
run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" -o "$p.folded" -- "$JAVA" -XX:+PreserveFramePointer \
	-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaChain::* \
	-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$TARGETS" JavaChain "$RUN_S"
pid=$(sed -n 's/.*profiling .* (PID \([0-9]*\)).*/\1/p' "$p.err" | head -1)
assert_true java_map_at_exit "the JVM wrote /tmp/perf-$pid.map at exit" \
	test -n "$pid" -a -f "/tmp/perf-$pid.map"
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
assert_eq java_exit "$BP_RC" 0
# The main thread ("java"): the JVM's other threads (compilers, GC) have their own names.
read -r -a share <<<"$(complete_share_re "$p.folded" java "^$THREAD_ROOT;start_thread;" \
	"$CHAIN")"
assert_ge java_samples "${share[0]}" "$(cpu_floor "$p" 1 2)"
assert_ge java_chain "${share[2]}" "$MIN_CHAIN_PCT" % \
	"${share[1]} of ${share[0]} samples; most common: $(sort -t' ' -k2 -nr "$p.folded" |
		head -1 | cut -c1-400)"
read -r -a share <<<"$(complete_share_re "$p.folded" java "^$THREAD_ROOT;start_thread;" \
	"$NAMED_CHAIN")"
assert_ge java_chain_named "${share[2]}" "$MIN_NAMED_PCT" %

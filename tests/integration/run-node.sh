#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-node.sh: V8's JIT code (node --perf-basic-prof --interpreted-frames-native-stack), named
# by node's perf map as it is when the profile is written: tests/targets/jschain.js's chain
# main -> level1 -> level2 -> leafSpin, leafSpin compiled while it runs, complete from _start.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=499
RUN_S=3
SCRIPT=$(cd "$(dirname "$0")/../targets" && pwd)/jschain.js
# JS frames: V8's tag for the code, then a tier mark ("~" interpreted or baseline, "*" optimized,
# "^" Sparkplug, "+" Maglev), the function, its file:line:column, the folded JIT suffix. The tag
# is "JS:" from V8 11 (node 20 and later: Debian 13's, nodesource's); V8 10 and before tell
# kinds of code apart: node 18 (Debian 12's 18.20) names the chain "LazyCompile:main",
# "LazyCompile:~leafSpin", "Function:^leafSpin", "LazyCompile:*leafSpin" (and no column after
# the line); older V8s named interpreted frames' trampoline copies "InterpretedFunction:".
js() { echo "(JS|LazyCompile|Function|InterpretedFunction):[~*^+]?$1 [^;]*_\\[j\\]"; }
CHAIN=";$(js main);$(js level1);$(js level2);$(js leafSpin);"
# Of all node's samples, start-up and exit included (~3% in development runs: 96.0%; node 20
# linked to libnode, Debian 13's, spends ~0.15 s of CPU starting: 91-95%). The chain runs
# RUN_S seconds of CPU time, so that a busy machine does not shrink its share.
MIN_CHAIN_PCT=90

if ! command -v node >/dev/null; then
	fail node_available "node is missing (make deps installs nodejs)"
	exit 1
fi

p=$TEST_TMP/node
# In the test's directory: V8 may write an isolate log into its working directory.
cd "$TEST_TMP" || exit 1
run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" -o "$p.folded" -- node --perf-basic-prof \
	--interpreted-frames-native-stack --allow-natives-syntax "$SCRIPT" "$RUN_S"
pid=$(sed -n 's/.*profiling .* (PID \([0-9]*\)).*/\1/p' "$p.err" | head -1)
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
assert_eq node_exit "$BP_RC" 0
read -r -a share <<<"$(complete_share_re "$p.folded" node '^_start;' "$CHAIN")"
assert_ge node_samples "${share[0]}" "$(cpu_floor "$p" 1 2)"
assert_ge node_chain "${share[2]}" "$MIN_CHAIN_PCT" % \
	"${share[1]} of ${share[0]} samples; most common: $(sort -t' ' -k2 -nr "$p.folded" |
		head -1 | sed 's/.*Builtins_JSEntryTrampoline;//' | cut -c1-400)"
# Code V8 compiled after the samples (31% of the samples were "[anon]+0x..." when JIT frames were
# named as they were handled).
assert_le node_anon "$(frame_share "$p.folded" node '\[anon\]\+0x[0-9a-f]+')" 1 %

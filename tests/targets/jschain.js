// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// jschain.js: node spins SECONDS of its CPU time in a known chain of JavaScript functions,
// main -> level1 -> level2 -> leafSpin, for run-node.sh (CPU time, not wall time: on a busy
// machine, the chain's share of node's samples, start-up included, stays what it is on an idle
// one; start-up costs more with Debian 13's node, linked to libnode). Run it with
//   node --perf-basic-prof --interpreted-frames-native-stack --allow-natives-syntax
// (V8 writes /tmp/perf-PID.map and gives each interpreted function a native frame of its
// own). level1, level2 and main are never optimized, so V8 cannot inline them; leafSpin is
// compiled by TurboFan while it runs (on-stack replacement), after bpfprof has handled the
// first samples: its name comes from the map as it is when the profile is written.
'use strict';

function leafSpin(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x * 1103515245 + 12345 + i) % 2147483647;
	return x;
}

function level2(n) {
	return leafSpin(n) + 1;
}

function level1(n) {
	return level2(n) + 1;
}

// The process's CPU time in seconds (its threads': V8's compiler and GC threads are a few %).
function cpuSeconds() {
	const u = process.cpuUsage();

	return (u.user + u.system) / 1e6;
}

function main() {
	const end = cpuSeconds() + parseFloat(process.argv[2]);
	let r = 0;

	while (cpuSeconds() < end)
		r += level1(200000);
	return r;
}

%NeverOptimizeFunction(level1);
%NeverOptimizeFunction(level2);
%NeverOptimizeFunction(main);
if (process.argv.length !== 3 || !(parseFloat(process.argv[2]) > 0)) {
	process.stderr.write('usage: node ... jschain.js SECONDS\n');
	process.exit(2);
}
process.exitCode = main() ? 0 : 1;

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JavaChain.java: the JVM spins SECONDS (wall time) in a known chain of Java methods,
 * main -> level1 -> level2 -> leafSpin, for run-java.sh. Run with -XX:+PreserveFramePointer
 * (JIT code keeps rbp: bpfprof unwinds it without CFI), -XX:CompileCommand=dontinline,
 * JavaChain::* (each method keeps its frame) and a perf map: -XX:+DumpPerfMapAtExit writes
 * /tmp/perf-PID.map only as the JVM exits, after every sample was handled.
 */
public class JavaChain {
	static long leafSpin(long n) {
		long x = 0;

		for (long i = 0; i < n; i++)
			x = (x * 1103515245L + 12345L + i) % 2147483647L;
		return x;
	}

	static long level2(long n) {
		return leafSpin(n) + 1;
	}

	static long level1(long n) {
		return level2(n) + 1;
	}

	public static void main(String[] args) {
		if (args.length != 1) {
			System.err.println("usage: java ... JavaChain SECONDS");
			System.exit(2);
		}
		long end = System.nanoTime() + (long)(Double.parseDouble(args[0]) * 1e9);
		long r = 0;

		while (System.nanoTime() < end)
			r += level1(200000);
		System.exit(r != 0 ? 0 : 1);
	}
}

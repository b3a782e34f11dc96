// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* jit.c: spins in a C function called from machine code it generated, named by a perf map. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "targets.h"

static const char usage[] =
	"usage: jit [-n|-x|-b LINES] SECONDS\n"
	"       jit [-n|-x|-b LINES] --print-chain\n"
	"Spins SECONDS (wall time) in jit_spin, called from jit_run through x86-64 code written\n"
	"into anonymous memory (the trampoline), the way a JIT runs generated code. The\n"
	"trampoline is named jit_spin_trampoline in /tmp/perf-PID.map (the perf map convention:\n"
	"Linux tools/perf/Documentation/jit-interface.txt), removed at exit.\n"
	"-n: no perf map: the trampoline stays anonymous.\n"
	"-x: the perf map is written at exit and left there (the JVM's -XX:+DumpPerfMapAtExit):\n"
	"    whoever ran jit removes /tmp/perf-PID.map.\n"
	"-b LINES: a big perf map: after the trampoline's line, LINES lines naming code that is\n"
	"    not there (a long-running JIT's map, node's --perf-basic-prof), written before the\n"
	"    loop starts (the map appears whole, by a rename).\n"
	"--print-chain prints the frames from main to jit_spin as bpfprof names them in folded\n"
	"stacks, ';'-separated: jit_spin_trampoline_[j], or [anon]+0xOFF with -n.\n";

/*
 * Unwinding through the trampoline. It has no CFI, so libdwfl steps out of it with its x86-64
 * frame-pointer fallback: return address at [rbp + 8], caller's rbp at [rbp], caller's sp at
 * rbp + 16. For that:
 * - the trampoline sets up a frame pointer (push rbp; mov rbp, rsp) and keeps it while it
 *   calls: rbp points at its saved rbp, with its return address above;
 * - jit_spin, below it, has CFI (it is built without frame pointers, like every target), which
 *   restores rbp to the trampoline's value if jit_spin uses rbp itself;
 * - above it, jit_run and main need CFI whose CFA rules use only rsp or rbp: the fallback step
 *   recovers rip, rsp and rbp only, so the other callee-saved registers (rbx, r12-r15) are
 *   unknown from there on. GCC's x86-64 CFI computes the CFA from rsp (or rbp in functions
 *   with a frame pointer or a variable-size frame); glibc's start code does the same. A caller
 *   without CFI would need a frame pointer of its own, since the step hands it its saved rbp;
 * - jit_run calls the trampoline in a non-tail position (-fno-optimize-sibling-calls and work
 *   after the call), so its return address is in jit_run, not in main.
 */

/* Machine code of long trampoline(long (*fn)(long), long arg): return fn(arg). */
static const uint8_t trampoline_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0x89, 0xf7,	/* mov %rsi,%rdi */
	0xff, 0xd0,		/* call *%rax */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};
/* Where the trampoline starts in its page (int3 before it), and its call's return address. */
#define TRAMPOLINE_OFF 0x40
#define RETURN_OFF (TRAMPOLINE_OFF + 12)

typedef long trampoline_fn(long (*fn)(long), long arg);

/* jit_spin iterations per call: about a millisecond. */
#define SPIN_ITERATIONS 1000000L

static volatile sig_atomic_t stop;

/* Writes the perf map at path: line, then filler lines like node's (about 45 bytes each), at
 * addresses far from the trampoline; through a rename, so it is never seen half-written. */
static void write_big_map(const char *path, const char *line, long filler)
{
	char tmp[80];
	FILE *f;
	long i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(line, f) < 0) {
		perror(tmp);
		exit(2);
	}
	for (i = 0; i < filler; i++)
		fprintf(f, "%lx 40 JS:*filler_%ld /app/f.js:1\n", 0x200000000000ul + i * 0x40ul, i);
	if (fclose(f) || rename(tmp, path)) {
		perror(path);
		exit(2);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The hot leaf. */
CHAIN_KEEP long jit_spin(long iterations)
{
	volatile long n = 0;
	long i;

	for (i = 0; i < iterations; i++)
		n++;
	return n;
}

/* Calls the generated code; reads scratch after the call so the call is not a tail call. */
CHAIN_KEEP long jit_run(trampoline_fn *trampoline, long iterations)
{
	volatile long scratch = iterations;

	return trampoline(jit_spin, iterations) + scratch;
}

/* Writes the trampoline into a new anonymous mapping, then makes it executable. */
static trampoline_fn *make_trampoline(uint8_t **page, size_t *page_sz)
{
	*page_sz = sysconf(_SC_PAGESIZE);
	*page = mmap(NULL, *page_sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*page == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(*page, 0xcc, *page_sz);	/* int3 */
	memcpy(*page + TRAMPOLINE_OFF, trampoline_code, sizeof(trampoline_code));
	/* bpfprof sees the code at this mprotect (its mmap record for the now-executable VMA). */
	if (mprotect(*page, *page_sz, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		exit(1);
	}
	return (trampoline_fn *)(void *)(*page + TRAMPOLINE_OFF);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	bool with_map = true, at_exit = false;
	char map_path[64], line[128];
	trampoline_fn *trampoline;
	size_t page_sz;
	uint8_t *page;
	long long end;
	long r = 0, filler = 0;
	int arg = 1;

	if (argc > 1 && !strcmp(argv[1], "-n")) {
		with_map = false;
		arg++;
	} else if (argc > 1 && !strcmp(argv[1], "-x")) {
		at_exit = true;
		arg++;
	} else if (argc > 2 && !strcmp(argv[1], "-b")) {
		filler = atol(argv[2]);
		arg += 2;
	}
	if (argc == arg + 1 && !strcmp(argv[arg], "--print-chain")) {
		if (with_map)
			printf("main;jit_run;jit_spin_trampoline_[j];jit_spin\n");
		else	/* callers are named at their call: return address - 1 */
			printf("main;jit_run;[anon]+0x%x;jit_spin\n", RETURN_OFF - 1);
		return 0;
	}
	if (argc != arg + 1 || !strcmp(argv[arg], "--help")) {
		fputs(usage, argc == arg + 1 ? stdout : stderr);
		return argc == arg + 1 ? 0 : 2;
	}
	end = clock_ns(CLOCK_MONOTONIC) + (long long)(parse_seconds(argv[arg]) * 1e9);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	trampoline = make_trampoline(&page, &page_sz);
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(line, sizeof(line), "%lx %zx jit_spin_trampoline\n",
		 (unsigned long)(uintptr_t)trampoline, sizeof(trampoline_code));
	if (filler)
		write_big_map(map_path, line, filler);
	else if (with_map && !at_exit)
		write_result(map_path, line);
	while (!stop && clock_ns(CLOCK_MONOTONIC) < end)
		r += jit_run(trampoline, SPIN_ITERATIONS);
	if (at_exit)
		write_result(map_path, line);
	else if (with_map)
		unlink(map_path);
	munmap(page, page_sz);
	/* jit_spin returns its iteration count: never 0. */
	return r || stop ? 0 : 99;
}

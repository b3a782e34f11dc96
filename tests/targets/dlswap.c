// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dlswap.c: spins in libdla.so, dlcloses it, dlopens libdlb.so at the same address, spins there. */
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "targets.h"

static const char usage[] =
	"usage: dlswap [-w] [-r RESULT_FILE] A_SECONDS B_SECONDS\n"
	"       dlswap --print-chain a|b\n"
	"dlopens libdla.so and spins A_SECONDS (wall time) in dla_leaf below main ->\n"
	"swap_f01..swap_f04 -> dla_f01..dla_f10, dlcloses it (and checks that it is unmapped),\n"
	"then does the same with libdlb.so (dlb_*) for B_SECONDS. Both libraries have the same\n"
	"layout, so libdlb.so's text lands where libdla.so's was: /proc/self/maps must show it,\n"
	"else dlswap says so on stderr and exits 3 (after both phases).\n"
	"RESULT_FILE gets \"NAME VALUE\" lines: per library (a_*, b_*) its executable mapping\n"
	"(text_start, text_end), its entry point (entry) and the CPU time of its phase in ns\n"
	"(cpu_ns); then same_address 1 or 0.\n"
	"-w: the libdla.so phase spins until SIGUSR2 arrives, then A_SECONDS more (a test sends it\n"
	"    once its profiler is attached).\n"
	"--print-chain prints a library's chain from main to its leaf, ';'-separated.\n";

/* Leaf iterations per pass down the chain: about a millisecond. */
#define SPIN_ITERATIONS 1000000L

/* The program's part of the chain, down to the library's entry. */
#define SWAP_STEPS(X)			\
	X(swap_f01, swap_f02)		\
	X(swap_f02, swap_f03)		\
	X(swap_f03, swap_f04)		\
	X(swap_f04, ctx->lib_entry)

SWAP_STEPS(CHAIN_DECLARE)
SWAP_STEPS(CHAIN_DEFINE)

/* One library and what its phase found. */
struct phase {
	const char *file;	/* found through the executable's RUNPATH ($ORIGIN) */
	const char *prefix;	/* of its symbols */
	void *handle;
	chain_fn *entry;
	const char *(*frames)(void);
	uintptr_t text_start, text_end;
	long long cpu_ns;
};

static struct phase phases[] = {
	{ .file = "libdla.so", .prefix = "dla" },
	{ .file = "libdlb.so", .prefix = "dlb" },
};

/* dlopens the phase's library and finds its two exports; exits 2 on failure. */
static void open_lib(struct phase *ph)
{
	char sym[32];

	ph->handle = dlopen(ph->file, RTLD_NOW | RTLD_LOCAL);
	if (!ph->handle) {
		fprintf(stderr, "dlswap: %s\n", dlerror());
		exit(2);
	}
	snprintf(sym, sizeof(sym), "%s_f01", ph->prefix);
	ph->entry = (chain_fn *)dlsym(ph->handle, sym);
	snprintf(sym, sizeof(sym), "%s_frames", ph->prefix);
	ph->frames = (const char *(*)(void))dlsym(ph->handle, sym);
	if (!ph->entry || !ph->frames) {
		fprintf(stderr, "dlswap: %s: no %s_f01 or %s_frames\n", ph->file, ph->prefix,
			ph->prefix);
		exit(2);
	}
}

/* The mapping of /proc/self/maps that holds addr when it belongs to file (0), or -1. */
static int mapping_of(const char *file, uintptr_t addr, uintptr_t *start, uintptr_t *end)
{
	unsigned long lo, hi;
	char line[1024], *path;
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		path = strrchr(line, '/');
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !path || strcmp(path + 1, file))
			continue;
		if (addr && (addr < lo || addr >= hi))
			continue;
		*start = lo;
		*end = hi;
		ret = 0;
		break;
	}
	if (f)
		fclose(f);
	return ret;
}

/* Set by SIGUSR2: -w's wait is over. */
static volatile sig_atomic_t go;

static void on_usr2(int sig)
{
	go = 1;
}

/* Runs the chain through the phase's library for seconds of wall time (after SIGUSR2 when
 * wait). Its own frame (not inlined into main), so the chain the tests expect does not depend
 * on the compiler. */
CHAIN_KEEP static long run_phase(struct phase *ph, double seconds, bool wait)
{
	struct chain_ctx ctx = { .lib_entry = ph->entry, .spin = SPIN_ITERATIONS };
	long long cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID), end;
	long sum = 0;

	while (wait && !go)
		sum += swap_f01(&ctx, 1);
	end = clock_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end)
		sum += swap_f01(&ctx, 1);
	ph->cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	return sum;
}

/* dlcloses the phase's library; exits 2 unless it is gone from the process. */
static void close_lib(struct phase *ph)
{
	uintptr_t start, end;

	dlclose(ph->handle);
	if (dlopen(ph->file, RTLD_NOW | RTLD_NOLOAD) || !mapping_of(ph->file, 0, &start, &end)) {
		fprintf(stderr, "dlswap: %s is still loaded after dlclose\n", ph->file);
		exit(2);
	}
}

static int print_chain(const char *which)
{
	struct phase *ph;
	const char *frames;

	if (strcmp(which, "a") && strcmp(which, "b"))
		return 2;
	ph = &phases[which[0] == 'b'];
	open_lib(ph);
	frames = ph->frames();
	/* The library's list ends with "leaf;": drop that last ';'. */
	printf("main;run_phase;%s%.*s\n", SWAP_STEPS(CHAIN_NAME), (int)strlen(frames) - 1, frames);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct phase *a = &phases[0], *b = &phases[1];
	const char *result_file = NULL;
	double seconds[2];
	char text[1024];
	int opt, same, i;
	bool wait = false;
	long r = 0;

	signal(SIGUSR2, on_usr2);
	while ((opt = getopt_long(argc, argv, "wr:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			wait = true;
			break;
		case 'r':
			result_file = optarg;
			break;
		case 'P':
			if (!print_chain(optarg))
				return 0;
			fputs(usage, stderr);
			return 2;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 2) {
		fputs(usage, stderr);
		return 2;
	}
	seconds[0] = parse_seconds(argv[optind]);
	seconds[1] = parse_seconds(argv[optind + 1]);

	for (i = 0; i < 2; i++) {
		struct phase *ph = &phases[i];

		open_lib(ph);
		if (mapping_of(ph->file, (uintptr_t)ph->entry, &ph->text_start, &ph->text_end)) {
			fprintf(stderr, "dlswap: %s_f01 is in no mapping of %s\n", ph->prefix,
				ph->file);
			return 2;
		}
		r += run_phase(ph, seconds[i], wait && i == 0);
		close_lib(ph);
	}

	same = a->text_start == b->text_start && a->text_end == b->text_end &&
	       a->entry == b->entry;
	if (!same)
		fprintf(stderr,
			"dlswap: libdlb.so's text %#lx-%#lx (entry %p) is not where\n"
			"dlswap: libdla.so's was, %#lx-%#lx (entry %p): the swap was not tested\n",
			(unsigned long)b->text_start, (unsigned long)b->text_end, (void *)b->entry,
			(unsigned long)a->text_start, (unsigned long)a->text_end, (void *)a->entry);
	if (result_file) {
		snprintf(text, sizeof(text),
			 "a_text_start %#lx\na_text_end %#lx\na_entry %p\na_cpu_ns %lld\n"
			 "b_text_start %#lx\nb_text_end %#lx\nb_entry %p\nb_cpu_ns %lld\n"
			 "same_address %d\n",
			 (unsigned long)a->text_start, (unsigned long)a->text_end, (void *)a->entry,
			 a->cpu_ns, (unsigned long)b->text_start, (unsigned long)b->text_end,
			 (void *)b->entry, b->cpu_ns, same);
		write_result(result_file, text);
	}
	/* r is never 0 (the leaves count up from depth > 0): only keeps the result used. */
	if (!r)
		return 99;
	return same ? 0 : 3;
}

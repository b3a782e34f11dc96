// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* targets.h: call-chain building blocks and small helpers shared by the bpfprof test programs. */
#ifndef BPFPROF_TEST_TARGETS_H
#define BPFPROF_TEST_TARGETS_H

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct chain_ctx;

/* Every frame of a chain has this signature, so chains can cross libchain.so and come back. */
typedef long chain_fn(const struct chain_ctx *ctx, long depth);

/* What the frames pass down unchanged to the bottom of a chain. */
struct chain_ctx {
	chain_fn *lib_entry;	/* the first libchain.so frame, for programs that call it indirectly */
	chain_fn *callback;	/* where the last libchain.so frame calls back into the program */
	chain_fn *leaf;		/* the last frame, for programs with several leaves */
	long spin;		/* the leaf's parameter (program specific) */
};

/*
 * noipa: never inlined, never cloned into a renamed .constprop/.isra copy, and callers assume
 * nothing about the body, so every frame survives -O2 under its own name.
 */
#define CHAIN_KEEP __attribute__((noipa))

/*
 * Chains are X-macro lists of X(name, next) pairs, root to leaf. The same list declares the
 * frames, defines them and spells their names (--print-chain), so the names a test expects
 * are exactly the frames the program has.
 */
#define CHAIN_DECLARE(name, next)	CHAIN_KEEP long name(const struct chain_ctx *ctx, long depth);
#define CHAIN_NAME(name, next)		#name ";"

/*
 * One frame: calls next, then reads its scratch array, so the call is never a sibling call
 * and the frame stays on the stack. The scratch size differs from frame to frame
 * (__COUNTER__) so that the unwinder meets several CFA offsets, not one repeated layout.
 */
#define CHAIN_DEFINE(name, next)					\
	CHAIN_KEEP long name(const struct chain_ctx *ctx, long depth)	\
	{								\
		volatile long scratch[1 + __COUNTER__ % 5];		\
									\
		scratch[0] = depth;					\
		return next(ctx, depth + 1) + scratch[0];		\
	}

/* libchain.so's two chains of 8 frames; the last frame of each calls ctx->callback. */
#define CHAIN_EXPORT __attribute__((visibility("default")))
CHAIN_EXPORT long lib_f01(const struct chain_ctx *ctx, long depth);
CHAIN_EXPORT long lib_g01(const struct chain_ctx *ctx, long depth);
/* Their frame names, root to leaf, each followed by ';'. */
CHAIN_EXPORT const char *libchain_f_frames(void);
CHAIN_EXPORT const char *libchain_g_frames(void);

/* Parses a positive number of seconds (fractions allowed); exits with status 2 otherwise. */
static inline double parse_seconds(const char *arg)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(arg, &end);
	if (errno || end == arg || *end || !(s > 0)) {
		fprintf(stderr, "invalid SECONDS: %s\n", arg);
		exit(2);
	}
	return s;
}

static inline long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins until the calling thread has used ms more milliseconds of CPU (not wall) time. */
static inline void spin_cpu_ms(long ms)
{
	long long until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000LL;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		;
}

/* Writes text to path through a temporary file, so a reader never sees half of it. */
/*
 * Options of the process drivers (crowd, shortlived): "-n COUNT -t RESULT_FILE PROGRAM
 * [ARGS...]"; everything after PROGRAM is PROGRAM's. Returns the index of PROGRAM in argv, or
 * -1 after printing usage (*exit_code: 0 for -h, 2 for a mistake).
 */
static inline int parse_driver_args(int argc, char **argv, const char *usage, long *count,
				    const char **result_file, int *exit_code)
{
	int opt;

	while ((opt = getopt(argc, argv, "+n:t:h")) != -1) {
		switch (opt) {
		case 'n':
			*count = atol(optarg);
			break;
		case 't':
			*result_file = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			*exit_code = 0;
			return -1;
		default:
			fputs(usage, stderr);
			*exit_code = 2;
			return -1;
		}
	}
	if (optind >= argc || *count <= 0) {
		fputs(usage, stderr);
		*exit_code = 2;
		return -1;
	}
	return optind;
}

static inline void write_result(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		perror(path);
		exit(2);
	}
}

#endif /* BPFPROF_TEST_TARGETS_H */

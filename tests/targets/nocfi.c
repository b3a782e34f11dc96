// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nocfi.c: spins inside libnocfi.so, a library without CFI, below a chain of its own. */
#include <string.h>
#include "targets.h"

static const char usage[] =
	"usage: nocfi SECONDS\n"
	"       nocfi --print-chain\n"
	"Spins SECONDS (wall time) in libnocfi.so's ncf_leaf below main -> nocfi_f01..nocfi_f04\n"
	"-> ncf_f01..ncf_f08. libnocfi.so has no unwind information: the frames below ncf_leaf\n"
	"cannot be unwound with CFI.\n"
	"--print-chain prints the frames from main to ncf_leaf, ';'-separated.\n";

/* Leaf iterations per pass down the chain: about a millisecond. */
#define SPIN_ITERATIONS 1000000L

#define NOCFI_STEPS(X)			\
	X(nocfi_f01, nocfi_f02)		\
	X(nocfi_f02, nocfi_f03)		\
	X(nocfi_f03, nocfi_f04)		\
	X(nocfi_f04, ncf_f01)

/* libnocfi.so's entry and frame names (not in targets.h: only this program uses them). */
long ncf_f01(const struct chain_ctx *ctx, long depth);
const char *libnocfi_frames(void);

NOCFI_STEPS(CHAIN_DECLARE)
NOCFI_STEPS(CHAIN_DEFINE)

int main(int argc, char **argv)
{
	struct chain_ctx ctx = { .spin = SPIN_ITERATIONS };
	long long end;
	long r = 0;

	if (argc == 2 && !strcmp(argv[1], "--print-chain")) {
		printf("main;%s%s\n", NOCFI_STEPS(CHAIN_NAME), libnocfi_frames());
		return 0;
	}
	if (argc != 2 || !strcmp(argv[1], "--help")) {
		fputs(usage, argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	end = clock_ns(CLOCK_MONOTONIC) + (long long)(parse_seconds(argv[1]) * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end)
		r += nocfi_f01(&ctx, 1);
	/* The leaf counts up from depth > 0: never 0. */
	return r ? 0 : 99;
}

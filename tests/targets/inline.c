// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inline.c: spins in a chain of always_inline helpers, main -> inline_spin -> inline_outer
 * (inlined) -> inline_inner (inlined), about half of the time in inline_inner's own loop and
 * half in inline_leaf, a real function inline_inner calls: the profile must show the inlined
 * frames, outer to inner, as leaves and as callers.
 */
#include <string.h>
#include "targets.h"

static const char usage[] =
	"usage: inline SECONDS\n"
	"       inline --print-chain\n"
	"Spins SECONDS of wall time in main -> inline_spin -> inline_outer -> inline_inner\n"
	"(both inlined) and inline_leaf below them, then exits 0.\n"
	"--print-chain prints the folded frames from main to inline_leaf, ';'-separated, the\n"
	"inlined ones with the folded format's _[i] suffix.\n";

#define INLINE static inline __attribute__((always_inline))

static volatile unsigned long sink = 1;

/* A real function called from inlined code: its return address lies in inline_inner. */
CHAIN_KEEP unsigned long inline_leaf(unsigned long n)
{
	unsigned long i, s = 0;

	for (i = 0; i < n; i++)
		s += i ^ sink;
	return s;
}

INLINE unsigned long inline_inner(unsigned long n)
{
	unsigned long i, s = 0;

	for (i = 0; i < n; i++)
		s += i * sink;
	return s + inline_leaf(n);
}

INLINE unsigned long inline_outer(unsigned long n)
{
	return inline_inner(n) ^ sink;
}

CHAIN_KEEP unsigned long inline_spin(double seconds)
{
	long long end = clock_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	unsigned long s = 0;

	while (clock_ns(CLOCK_MONOTONIC) < end)
		s += inline_outer(200000);
	return s;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--print-chain")) {
		printf("main;inline_spin;inline_outer_[i];inline_inner_[i];inline_leaf\n");
		return 0;
	}
	if (argc != 2 || !strcmp(argv[1], "--help")) {
		fputs(usage, argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	sink = inline_spin(parse_seconds(argv[1]));
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * deep.c: deep_recurse() nests LEVELS times with 1 KiB of locals each, then spins in
 * deep_leaf(): about LEVELS KiB of live stack under the leaf. Tests that a stack copy size
 * grows to hold it (bpfprof's --stack-size starts at 16 KiB, --max-stack-size 128 KiB).
 * With -s, deep_small() nests instead, with 16 bytes of locals: thousands of frames in a
 * stack that a copy still holds (real recursion: a GC's marking, a parser).
 * Usage: deep [-s] SECONDS [LEVELS] (default 80).
 */
#include <string.h>
#include "targets.h"

static volatile unsigned long sink;

CHAIN_KEEP static unsigned long deep_leaf(const struct timespec *end)
{
	struct timespec now;
	unsigned long x = 0;

	do {
		for (int i = 0; i < 100000; i++)
			x += i * i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end->tv_sec ||
		 (now.tv_sec == end->tv_sec && now.tv_nsec < end->tv_nsec));
	return x;
}

CHAIN_KEEP static unsigned long deep_recurse(long level, const struct timespec *end)
{
	volatile char pad[1024];

	pad[0] = (char)level;
	if (level <= 1)
		return deep_leaf(end) + pad[0];
	return deep_recurse(level - 1, end) + pad[0];
}

CHAIN_KEEP static unsigned long deep_small(long level, const struct timespec *end)
{
	volatile char pad[16];

	pad[0] = (char)level;
	if (level <= 1)
		return deep_leaf(end) + pad[0];
	return deep_small(level - 1, end) + pad[0];
}

int main(int argc, char **argv)
{
	unsigned long (*recurse)(long, const struct timespec *) = deep_recurse;
	struct timespec end;
	long levels = 80;
	double s;
	int i = 1;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		recurse = deep_small;
		i++;
	}
	if (argc <= i) {
		fprintf(stderr, "usage: deep [-s] SECONDS [LEVELS]\n");
		return 2;
	}
	s = parse_seconds(argv[i]);
	if (argc > i + 1)
		levels = atol(argv[i + 1]);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)s;
	end.tv_nsec += (long)((s - (time_t)s) * 1e9);
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	sink = recurse(levels, &end);
	return 0;
}

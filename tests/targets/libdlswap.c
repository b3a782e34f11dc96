// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libdlswap.c: libdla.so / libdlb.so (DL_PREFIX dla / dlb), one 10-frame chain, same layout. */
#include "targets.h"

/*
 * Built twice from this one file, with prefixes of the same length: both libraries have the
 * same code at the same offsets, so that dlswap can load the second where the first was and
 * only the names tell them apart.
 */
#ifndef DL_PREFIX
#error "build with -DDL_PREFIX=dla or -DDL_PREFIX=dlb"
#endif

#define DL_CAT2(a, b)	a##_##b
#define DL_CAT(a, b)	DL_CAT2(a, b)
/* DL(f01) is dla_f01 or dlb_f01. */
#define DL(name)	DL_CAT(DL_PREFIX, name)
#define DL_STR2(x)	#x
#define DL_STR(x)	DL_STR2(x)

#define DL_STEPS(X)		\
	X(f01, f02)		\
	X(f02, f03)		\
	X(f03, f04)		\
	X(f04, f05)		\
	X(f05, f06)		\
	X(f06, f07)		\
	X(f07, f08)		\
	X(f08, f09)		\
	X(f09, f10)		\
	X(f10, leaf)

/* The chain macros of targets.h, applied to the prefixed names (expanded before use). */
#define DL_DECLARE(name, next)	CHAIN_DECLARE(DL(name), DL(next))
#define DL_DEFINE(name, next)	CHAIN_DEFINE(DL(name), DL(next))
#define DL_NAME(name, next)	DL_STR(DL(name)) ";"

/* The only exports: the chain's entry and its frame names (dlsym'd by dlswap). */
CHAIN_EXPORT long DL(f01)(const struct chain_ctx *ctx, long depth);
CHAIN_EXPORT const char *DL(frames)(void);

CHAIN_KEEP long DL(leaf)(const struct chain_ctx *ctx, long depth);
DL_STEPS(DL_DECLARE)
DL_STEPS(DL_DEFINE)

/* The hot leaf: ctx->spin iterations (a millisecond or so), calling nothing. */
CHAIN_KEEP long DL(leaf)(const struct chain_ctx *ctx, long depth)
{
	volatile long n = depth;
	long i;

	for (i = 0; i < ctx->spin; i++)
		n++;
	return n;
}

/* The frames from the entry to the leaf, each followed by ';' (the leaf too). */
const char *DL(frames)(void)
{
	return DL_STEPS(DL_NAME) DL_STR(DL(leaf)) ";";
}

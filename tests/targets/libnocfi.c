// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libnocfi.c: libnocfi.so, an 8-frame chain built without unwind tables or frame pointers. */
#include "targets.h"

/*
 * targets.mk builds this file with -fno-asynchronous-unwind-tables -fno-unwind-tables
 * -fomit-frame-pointer and no debug info: no .eh_frame and no .debug_frame entry covers these
 * functions, so an unwinder has nothing to step out of them with.
 */
#define NCF_STEPS(X)			\
	X(ncf_f01, ncf_f02)		\
	X(ncf_f02, ncf_f03)		\
	X(ncf_f03, ncf_f04)		\
	X(ncf_f04, ncf_f05)		\
	X(ncf_f05, ncf_f06)		\
	X(ncf_f06, ncf_f07)		\
	X(ncf_f07, ncf_f08)		\
	X(ncf_f08, ncf_leaf)

CHAIN_EXPORT long ncf_f01(const struct chain_ctx *ctx, long depth);
CHAIN_EXPORT const char *libnocfi_frames(void);

CHAIN_KEEP long ncf_leaf(const struct chain_ctx *ctx, long depth);
NCF_STEPS(CHAIN_DECLARE)
NCF_STEPS(CHAIN_DEFINE)

/* The hot leaf: ctx->spin iterations (a millisecond or so), calling nothing. */
CHAIN_KEEP long ncf_leaf(const struct chain_ctx *ctx, long depth)
{
	volatile long n = depth;
	long i;

	for (i = 0; i < ctx->spin; i++)
		n++;
	return n;
}

/* The frames from the entry to the leaf, ';'-separated. */
const char *libnocfi_frames(void)
{
	return NCF_STEPS(CHAIN_NAME) "ncf_leaf";
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libchain.c: libchain.so, two 8-frame chains that call back into the program that loaded it. */
#include "targets.h"

/*
 * Built with -fvisibility=hidden: only the entry points are exported, so calls inside a chain
 * are direct calls, not PLT jumps that ELF interposition could redirect.
 */
#define LIB_F_STEPS(X)			\
	X(lib_f01, lib_f02)		\
	X(lib_f02, lib_f03)		\
	X(lib_f03, lib_f04)		\
	X(lib_f04, lib_f05)		\
	X(lib_f05, lib_f06)		\
	X(lib_f06, lib_f07)		\
	X(lib_f07, lib_f08)		\
	X(lib_f08, ctx->callback)

#define LIB_G_STEPS(X)			\
	X(lib_g01, lib_g02)		\
	X(lib_g02, lib_g03)		\
	X(lib_g03, lib_g04)		\
	X(lib_g04, lib_g05)		\
	X(lib_g05, lib_g06)		\
	X(lib_g06, lib_g07)		\
	X(lib_g07, lib_g08)		\
	X(lib_g08, ctx->callback)

LIB_F_STEPS(CHAIN_DECLARE)
LIB_G_STEPS(CHAIN_DECLARE)
LIB_F_STEPS(CHAIN_DEFINE)
LIB_G_STEPS(CHAIN_DEFINE)

const char *libchain_f_frames(void)
{
	return LIB_F_STEPS(CHAIN_NAME);
}

const char *libchain_g_frames(void)
{
	return LIB_G_STEPS(CHAIN_NAME);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* python_kind.c: the frame kind of Python functions. */
#include "runtime/python/python_kind.h"

/* Blue (R 60..100, G 110..160, B 190..240). */
const struct frame_kind frame_kind_python = {
	.name = "python",
	.suffix = "_[py]",
	.colour = { .base = { 60, 110, 190 },
		    .shade = { { 0, 0, 40 }, { 50, 0, 0 }, { 0, 50, 0 } } },
	.rank = 5,
};

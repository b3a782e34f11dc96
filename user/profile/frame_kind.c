// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* frame_kind.c: the builtin frame kinds. */
#include "profile/frame_kind.h"

/* Red to yellow (R 205..255, G 0..230, B 0..55). */
const struct frame_kind frame_kind_user = {
	.name = "user",
	.suffix = "",
	.colour = { .base = { 205, 0, 0 }, .shade = { { 0, 0, 50 }, { 230, 0, 0 }, { 0, 55, 0 } } },
	.rank = 0,
};

/* Brown (R 160..200, G 100..145, B 55..80). */
const struct frame_kind frame_kind_kernel = {
	.name = "kernel",
	.suffix = "_[k]",
	.colour = { .base = { 160, 100, 55 },
		    .shade = { { 40, 0, 0 }, { 35, 10, 0 }, { 0, 0, 25 } } },
	.rank = 1,
};

/* Grey (R = G = B, 170..200), as the flame graph's root "all". */
const struct frame_kind frame_kind_comm = {
	.name = "comm",
	.suffix = "",
	.colour = { .base = { 170, 170, 170 },
		    .shade = { { 30, 0, 0 }, { 30, 0, 0 }, { 30, 0, 0 } } },
	.rank = 2,
};

/* Teal (R 0..40, G 165..220, B 165..220). */
const struct frame_kind frame_kind_inline = {
	.name = "inline",
	.suffix = "_[i]",
	.colour = { .base = { 0, 165, 165 },
		    .shade = { { 0, 0, 40 }, { 55, 0, 0 }, { 0, 55, 0 } } },
	.rank = 3,
};

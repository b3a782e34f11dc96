// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_svg.c: aggregate frames -> flamegraph.c. */
#include <errno.h>
#include <stdlib.h>
#include "output/output_svg.h"
#include "util/util.h"

struct svg_ctx {
	struct aggregate *agg;
	struct flamegraph *fg;
	const char **names;
	const struct frame_kind **kinds;
	size_t cap;
	uint64_t samples; /* added */
};

static int add_stack(const struct agg_frame *frames, size_t n, uint64_t count,
		     const struct agg_stack *st, void *arg)
{
	struct svg_ctx *c = arg;
	size_t i;

	if (n > c->cap) {
		size_t cap = c->cap;

		if (array_grow((void **)&c->names, &cap, n, sizeof(*c->names), 64) ||
		    array_grow((void **)&c->kinds, &c->cap, n, sizeof(*c->kinds), 64))
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		c->names[i] = aggregate__str(c->agg, frames[i].name);
		c->kinds[i] = frames[i].kind;
	}
	c->samples += count;
	return flamegraph__add(c->fg, c->names, c->kinds, n, count);
}

int output_svg__write(struct aggregate *agg, FILE *fp, const struct flamegraph_opts *o,
		      struct output_counts *counts)
{
	struct svg_ctx c = { .agg = agg };
	int err;

	c.fg = flamegraph__new();
	if (!c.fg)
		return -errno;
	err = aggregate__for_each_frames(agg, add_stack, &c);
	if (!err)
		err = flamegraph__write_svg(c.fg, fp, o);
	if (!err && counts)
		*counts = (struct output_counts){ .samples = c.samples };
	flamegraph__free(c.fg);
	free(c.names);
	free(c.kinds);
	return err;
}

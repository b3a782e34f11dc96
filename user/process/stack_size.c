// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stack_size.c: raise a process's stack copy size on truncated unwinds, lower it when idle. */
#include <errno.h>
#include "process/stack_size.h"

static uint32_t pow2_at_least(uint64_t v)
{
	uint64_t p = 512;

	while (p < v)
		p <<= 1;
	return p > UINT32_MAX ? UINT32_MAX : p;
}

static int64_t set_size(const struct stack_size_opts *o, struct stack_size_state *st, uint32_t tgid,
			uint32_t bytes)
{
	int err = o->set ? o->set(o->ctx, tgid, bytes) : 0;

	if (err)
		return err;
	st->copy_sz = bytes;
	st->window = 0;
	st->window_used = 0;
	st->changes++;
	return bytes;
}

int64_t stack_size__observe(const struct stack_size_opts *o, struct stack_size_state *st,
			    uint32_t tgid, const struct sample_record *s, bool truncated,
			    uint32_t used)
{
	uint32_t cur = stack_size__current(o, st), want;

	if (truncated && (s->flags & SAMPLE_F_STACK_CAPPED)) {
		st->window_used = cur; /* no lowering in this window */
		/* Samples copied before the last raise are still queued: raise once per size. */
		if (s->stack_len < cur || cur >= o->max_sz)
			return 0;
		want = pow2_at_least((uint64_t)cur * 2);
		return set_size(o, st, tgid, want < o->max_sz ? want : o->max_sz);
	}
	if (used > st->window_used)
		st->window_used = used;
	if (++st->window < STACK_SIZE_WINDOW || cur <= o->init_sz)
		return 0;
	if ((uint64_t)st->window_used * 4 > cur) {
		st->window = 0;
		st->window_used = 0;
		return 0;
	}
	want = pow2_at_least((uint64_t)st->window_used * 2);
	return set_size(o, st, tgid, want > o->init_sz ? want : o->init_sz);
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stack_size.h: per-process user stack copy sizes, learnt from unwinds. A process starts at
 * --stack-size; when an unwind runs out of copied stack while the live stack went on
 * (SAMPLE_F_STACK_CAPPED), its size doubles, up to --max-stack-size; when a window of samples
 * unwinds within a quarter of the size, it halves again (not below --stack-size). The BPF
 * side reads the sizes from the copy_sizes map.
 */
#ifndef BPFPROF_STACK_SIZE_H
#define BPFPROF_STACK_SIZE_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/record.h"

/* Samples without a truncated unwind before a size may be lowered. */
#define STACK_SIZE_WINDOW 256

/* The learning state of one process (in struct proc). */
struct stack_size_state {
	uint32_t copy_sz;     /* bytes set for the process; 0: the initial --stack-size */
	uint32_t window;      /* samples since the last change */
	uint32_t window_used; /* most stack bytes an unwind needed in the window */
	uint32_t changes;     /* sizes set */
};

struct stack_size_opts {
	uint32_t init_sz; /* --stack-size, bytes */
	uint32_t max_sz;  /* --max-stack-size, bytes */
	/* Sets tgid's size in the BPF map (loader__set_copy_size()); NULL in a replay. */
	int (*set)(void *ctx, uint32_t tgid, uint32_t bytes);
	void *ctx;
};

/*
 * Learns from one unwound sample s of process tgid: truncated when its unwind ended for lack of
 * copied stack (UNWIND_STOP_TRUNCATED, unwind/unwind.h), used the stack bytes it read (from stack_addr to the last frame's sp, plus what that frame reads).
 * Returns the size now set (bytes) when it changed, 0 when not, or a negative errno from set.
 */
int64_t stack_size__observe(const struct stack_size_opts *o, struct stack_size_state *st,
			    uint32_t tgid, const struct sample_record *s, bool truncated,
			    uint32_t used);

/* The copy size in force for a process, bytes. */
static inline uint32_t stack_size__current(const struct stack_size_opts *o,
					   const struct stack_size_state *st)
{
	return st->copy_sz ? st->copy_sz : o->init_sz;
}

#endif /* BPFPROF_STACK_SIZE_H */

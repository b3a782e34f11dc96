/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sample.h: one sample through the pipeline: process table -> unwind -> aggregate. */
#ifndef BPFPROF_SAMPLE_H
#define BPFPROF_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/aggregate.h"
#include "bpf/record.h"
#include "process/proc_table.h"
#include "sampling/stack_size.h"

struct unwind_stats;
struct python;

struct sample_handler_opts {
	uint32_t stack_cap;	     /* copy size of samples without SAMPLE_F_STACK_CAPPED (older
				 * captures): a copy this long was cut, bytes */
	struct stack_size_opts copy; /* per-process copy sizes; zeroed: not learnt */
	uint32_t max_frames;	     /* user frames kept per sample */
	struct unwind_stats *stats;  /* --stats counters (borrowed), or NULL */
	struct python *python;	     /* Python frames (borrowed), or NULL */
};

struct sample_handler;

/* pt and agg are borrowed and must outlive the handler. Returns NULL and sets errno. */
struct sample_handler *sample_handler__new(struct proc_table *pt, struct aggregate *agg,
					   const struct sample_handler_opts *opts);
void sample_handler__free(struct sample_handler *sh);

/* Counts later samples into agg (borrowed; the agent's next interval). The old aggregate stays
 * the caller's. */
void sample_handler__set_aggregate(struct sample_handler *sh, struct aggregate *agg);

/*
 * Unwinds s and adds its stack to the aggregate: "comm;user root..user leaf;
 * kernel root..kernel leaf", with the Python frames of a CPython thread in place of the
 * _PyEval_EvalFrameDefault activations that run them (python/python.h). A sample that cannot be unwound still counts, with what could be
 * named. Returns 0 or -ENOMEM.
 */
int sample_handler__handle(struct sample_handler *sh, const struct sample_record *s);

#endif /* BPFPROF_SAMPLE_H */

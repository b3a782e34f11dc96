/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sample.h: one sample through the pipeline: process table -> unwind -> aggregate. */
#ifndef BPFPROF_SAMPLE_H
#define BPFPROF_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/aggregate.h"
#include "bpf/record.h"
#include "process/proc_table.h"
#include "process/stack_size.h"

struct proc_stats;
struct unwind_stats;
struct ksyms;
struct off_cpu;

struct sample_handler_opts {
	uint32_t stack_cap;	     /* copy size of samples without SAMPLE_F_STACK_CAPPED (older
				 * captures): a copy this long was cut, bytes */
	struct stack_size_opts copy; /* per-process copy sizes; zeroed: not learnt */
	uint32_t max_frames;	     /* user frames kept per sample */
	struct unwind_stats *stats;  /* --stats counters (borrowed), or NULL */
	const struct ksyms *ksyms;   /* kernel symbols (borrowed), or NULL */
	struct runtimes *runtimes;   /* the runtimes' hooks (borrowed), or NULL */
};

struct sample_handler;

/* pt and agg are borrowed and must outlive the handler. Returns NULL and sets errno. */
struct sample_handler *sample_handler__new(struct proc_table *pt, struct aggregate *agg,
					   const struct sample_handler_opts *opts);
void sample_handler__free(struct sample_handler *sh);

/* Counts later samples into agg (borrowed; the agent's next interval). The old aggregate stays
 * the caller's; waker stacks kept for it are dropped. */
void sample_handler__set_aggregate(struct sample_handler *sh, struct aggregate *agg);

/*
 * Unwinds s and adds its stack to the aggregate: "comm;user root..user leaf;
 * kernel root..kernel leaf", with a runtime's frames spliced in place of the native frames
 * that run them (an interpreter's loop: runtimes__splice()). A sample that cannot be unwound
 * still counts, with what could be named. Returns 0 or -ENOMEM.
 */
int sample_handler__handle(struct sample_handler *sh, const struct sample_record *s);

/* The unwinding counters of every process handled, live or gone, summed (--stats, the summary,
 * /metrics); valid while sh is. */
const struct proc_stats *sample_handler__unwound(const struct sample_handler *sh);

/* The off-CPU module (signal/off_cpu.h) whose RECORD_OFF_CPUs and RECORD_WAKERs (--off-cpu,
 * --wakers) the samples take, owned by the handler. */
struct off_cpu *sample_handler__off_cpu(struct sample_handler *sh);

/* Process tgid exec'd (exec) or exited: at its exit, the waker stacks kept for its threads
 * go. */
void sample_handler__forget(struct sample_handler *sh, uint32_t tgid, bool exec);

#endif /* BPFPROF_SAMPLE_H */

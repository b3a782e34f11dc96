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

struct unwind_stats;
struct python;
struct ksyms;

struct sample_handler_opts {
	uint32_t stack_cap;	     /* copy size of samples without SAMPLE_F_STACK_CAPPED (older
				 * captures): a copy this long was cut, bytes */
	struct stack_size_opts copy; /* per-process copy sizes; zeroed: not learnt */
	uint32_t max_frames;	     /* user frames kept per sample */
	struct unwind_stats *stats;  /* --stats counters (borrowed), or NULL */
	struct python *python;	     /* Python frames (borrowed), or NULL */
	int go_procs_fd;	     /* BPF map go_procs (bpf/maps.bpf.h): Go processes are
				      * armed there; -1 when there is none (a replay) */
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
 * kernel root..kernel leaf", with the Python frames of a CPython thread in place of the
 * _PyEval_EvalFrameDefault activations that run them (python/python.h). A sample that cannot be unwound still counts, with what could be
 * named. Returns 0 or -ENOMEM.
 */
int sample_handler__handle(struct sample_handler *sh, const struct sample_record *s);

/*
 * A RECORD_GO_STACK (bpf/go.bpf.h): copied and kept for the sample of the same cpu, tid and
 * time that follows it, whose unwind reads it as stack memory (unwinder__set_stack2()).
 */
void sample_handler__go_stack(struct sample_handler *sh, const struct go_stack_record *r);

/*
 * A RECORD_FP_CHAIN (bpf/go.bpf.h): kept the same way, for the sample's unwind to read the
 * frame pointers and return addresses past its copy as stack memory (unwinder__set_fp_chain()).
 */
void sample_handler__fp_chain(struct sample_handler *sh, const struct fp_chain_record *r);

/*
 * A RECORD_OFF_CPU (bpf/off_cpu.bpf.c): kept for the sample of the same cpu, tid and time that
 * follows it (SAMPLE_F_OFF_CPU), which is counted as its blocked periods and time off CPU
 * (aggregate__add_off_cpu()). An off-CPU sample without it is dropped.
 */
void sample_handler__off_cpu(struct sample_handler *sh, const struct off_cpu_record *r);

/*
 * A RECORD_WAKER (--wakers): kept for the waker's sample that follows it (SAMPLE_F_WAKER),
 * whose stack is then kept (profile/wakers.h) for the off-CPU sample of the thread it woke.
 */
void sample_handler__waker(struct sample_handler *sh, const struct waker_record *r);

/* The --stats lines of Go stack switches (RECORD_GO_STACK) and of Go stacks deeper than the
 * copy (RECORD_FP_CHAIN): records read by their sample's unwind, those without a sample; with
 * bpf (NULL for a replay), those BPF made and lost. Nothing for a kind no record was made of. */
void sample_handler__print_go(const struct sample_handler *sh, const struct bpf_stats *bpf,
			      FILE *fp);

/*
 * Process tgid exec'd (exec) or exited: its Go arming (go_procs) is deleted, unless it was
 * armed for the image this exec brings (sample_handler__go_arm() with next_exec).
 */
void sample_handler__forget(struct sample_handler *sh, uint32_t tgid, bool exec);

/*
 * Arms process tgid for RECORD_GO_STACKs before its first sample is handled (by then the Go
 * runtime's start-up has run its first collections): a process known to run a Go binary
 * (bpfprof -p), or one about to exec one (next_exec: bpfprof -- CMD). Samples arm the others.
 * 0 or a negative errno.
 */
int sample_handler__go_arm(struct sample_handler *sh, uint32_t tgid, bool next_exec);

#endif /* BPFPROF_SAMPLE_H */

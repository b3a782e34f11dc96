/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * off_cpu.h: --off-cpu and --wakers in user space. BPF (bpf/off_cpu.bpf.c) sends a blocked
 * period as a RECORD_OFF_CPU and then its sample (SAMPLE_F_OFF_CPU), and a waker as a
 * RECORD_WAKER and then its sample (SAMPLE_F_WAKER). This module joins each record to its sample
 * (util/pending.h), tells the pipeline what the sample is (its origin and weight: a blocked
 * period is SAMPLE_OFF_CPU, weighing its switches and its time off CPU), keeps the wakers' stacks
 * (signal/wakers.h) and puts them after the stack of the thread they woke.
 *
 * The per-sample calls, in order: off_cpu__take() before the unwind, off_cpu__waker_stack()
 * after the user frames, off_cpu__stack() for the stack to add.
 */
#ifndef BPFPROF_OFF_CPU_H
#define BPFPROF_OFF_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "bpf/record.h"
#include "profile/aggregate.h"

struct ksyms;
struct off_cpu;

/* ksyms (borrowed, may be NULL) tells BPF's own frames and interrupts apart in waker stacks.
 * NULL and errno set on failure. */
struct off_cpu *off_cpu__new(const struct ksyms *ksyms);
void off_cpu__free(struct off_cpu *oc);

/* A RECORD_OFF_CPU: kept for the sample of the same cpu, tid and time that follows it. */
void off_cpu__record(struct off_cpu *oc, const struct off_cpu_record *r);
/* A RECORD_WAKER (--wakers): kept for the waker's sample that follows it. */
void off_cpu__waker_record(struct off_cpu *oc, const struct waker_record *r);

/*
 * Before sample s is unwound: takes the record that came for it, and sets its origin and weight
 * (SAMPLE_OFF_CPU: its RECORD_OFF_CPU's switches and time off CPU; else SAMPLE_CPU, 1). Returns
 * 0 to go on with s; 1 when s is done with: an off-CPU or waker sample whose record was lost
 * (nothing to count, no thread to give it to) is dropped, and the stack of a waker that is not a
 * target (its kernel frames and comm, in agg) is kept at once; or a negative errno.
 */
int off_cpu__take(struct off_cpu *oc, struct aggregate *agg, const struct sample_record *s,
		  enum sample_origin *origin, struct sample_weight *w);

/*
 * After the user frames of s (locs[0..n), root first, locations of agg; comm a string id): when
 * s is a waker's (off_cpu__take()), it is no sample of its own, its stack is kept for the thread
 * it woke: returns 1. 0 for any other sample, or a negative errno.
 */
int off_cpu__waker_stack(struct off_cpu *oc, struct aggregate *agg, const struct sample_record *s,
			 const uint32_t *locs, size_t n, uint32_t comm);

/*
 * The stack to add for s (locs[0..*n), root first): locs itself, or for an off-CPU sample whose
 * waker's stack was kept, a copy with the waker's after it ("--", then the waker's frames) and
 * its length in *n, valid until the next call. NULL when memory runs out.
 */
const uint32_t *off_cpu__stack(struct off_cpu *oc, const struct sample_record *s,
			       const uint32_t *locs, size_t *n);

/* Forgets every waker stack kept: their locations are of an aggregate being replaced (the
 * agent's next interval). */
void off_cpu__clear(struct off_cpu *oc);

/* Process tgid exited: the waker stacks kept for its threads are forgotten. */
void off_cpu__forget(struct off_cpu *oc, uint32_t tgid);

/* What the off-CPU summary lines tell. */
struct off_cpu_summary {
	uint64_t duration_ns;	     /* wall time profiled */
	const struct bpf_stats *bpf; /* counters of the BPF programs; NULL: a capture replayed */
	const struct aggregate *agg; /* its SAMPLE_OFF_CPU weight: what was kept */
	uint64_t min_ns;	     /* --off-cpu-min-us, ns */
	bool on_cpu;	      /* CPU samples too (--on-cpu): their line has the bad records */
	uint64_t bad_records; /* records the consumer could not decode */
	/* The joins of RECORD_OFF_CPU with their samples (what they dropped), or NULL. */
	const struct off_cpu *joins;
};

/* --off-cpu: prints the "bpfprof: ..." lines of what BPF saw of the targets' blocked periods
 * and what it kept (a replay: what the capture holds) to fp. */
void off_cpu__print_summary(FILE *fp, const struct off_cpu_summary *in);

#endif /* BPFPROF_OFF_CPU_H */

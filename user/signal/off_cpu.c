// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* off_cpu.c: RECORD_OFF_CPU and RECORD_WAKER joined to their samples, waker stacks joined to the
 * blocked stacks they woke. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "signal/off_cpu.h"
#include "signal/wakers.h"
#include "util/pending.h"
#include "util/util.h"

struct off_cpu {
	struct pending off_cpu;		  /* RECORD_OFF_CPUs */
	struct pending waker_recs;	  /* RECORD_WAKERs */
	struct wakers *wakers;		  /* waker stacks by the thread they woke */
	const struct off_cpu_record *off; /* the sample's, from off_cpu__take(), or NULL */
	const struct waker_record *waker; /* the sample's, from off_cpu__take(), or NULL */
	uint32_t *joined;		  /* an off-CPU stack with its waker's: joined_cap */
	size_t joined_cap;
	uint64_t unjoined; /* off-CPU samples dropped: no RECORD_OFF_CPU of theirs was pending */
};

struct off_cpu *off_cpu__new(const struct ksyms *ksyms)
{
	struct off_cpu *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return NULL;
	oc->wakers = wakers__new(ksyms);
	if (!oc->wakers || pending__init(&oc->off_cpu, sizeof(struct off_cpu_record)) ||
	    pending__init(&oc->waker_recs, sizeof(struct waker_record))) {
		off_cpu__free(oc);
		errno = ENOMEM;
		return NULL;
	}
	return oc;
}

void off_cpu__free(struct off_cpu *oc)
{
	if (!oc)
		return;
	pending__free(&oc->off_cpu);
	pending__free(&oc->waker_recs);
	wakers__free(oc->wakers);
	free(oc->joined);
	free(oc);
}

void off_cpu__record(struct off_cpu *oc, const struct off_cpu_record *r)
{
	pending__put(&oc->off_cpu, r->cpu, r->tid, r->time_ns, r, sizeof(*r));
}

void off_cpu__waker_record(struct off_cpu *oc, const struct waker_record *r)
{
	pending__put(&oc->waker_recs, r->cpu, r->tid, r->time_ns, r, sizeof(*r));
}

/* The stack of a waker that is not a target: its kernel frames and its comm. */
static int waker_only_kernel(struct off_cpu *oc, struct aggregate *agg,
			     const struct waker_record *waker, const struct sample_record *s)
{
	char comm[BPFPROF_COMM_LEN + 1];
	int64_t comm_id;

	memcpy(comm, s->comm, BPFPROF_COMM_LEN);
	comm[BPFPROF_COMM_LEN] = '\0';
	comm_id = aggregate__string(agg, comm);
	if (comm_id < 0)
		return comm_id;
	return wakers__put(oc->wakers, agg, waker, s, NULL, 0, comm_id);
}

int off_cpu__take(struct off_cpu *oc, struct aggregate *agg, const struct sample_record *s,
		  enum sample_origin *origin, struct sample_weight *w)
{
	int err;

	oc->off = NULL;
	oc->waker = NULL;
	*origin = SAMPLE_CPU;
	*w = (struct sample_weight){ .count = 1 };
	if (s->flags & SAMPLE_F_OFF_CPU) {
		oc->off = pending__take(&oc->off_cpu, s->cpu, s->tid, s->time_ns);
		if (!oc->off) { /* its RECORD_OFF_CPU was lost: no time to count */
			oc->unjoined++;
			return 1;
		}
		*origin = SAMPLE_OFF_CPU;
		w->count = oc->off->switches;
		w->ns = oc->off->off_ns;
	}
	if (s->flags & SAMPLE_F_WAKER) {
		oc->waker = pending__take(&oc->waker_recs, s->cpu, s->tid, s->time_ns);
		if (!oc->waker) /* no thread to give it to */
			return 1;
		/* Not a target: its kernel stack and comm only, nothing of its process. */
		if (!(s->flags & SAMPLE_F_USER_REGS)) {
			err = waker_only_kernel(oc, agg, oc->waker, s);
			return err < 0 ? err : 1;
		}
	}
	return 0;
}

int off_cpu__waker_stack(struct off_cpu *oc, struct aggregate *agg, const struct sample_record *s,
			 const uint32_t *locs, size_t n, uint32_t comm)
{
	int err;

	if (!oc->waker)
		return 0;
	/* Not a sample of its own: the stack goes with the off-CPU one it woke. */
	err = wakers__put(oc->wakers, agg, oc->waker, s, locs, n, comm);
	return err < 0 ? err : 1;
}

const uint32_t *off_cpu__stack(struct off_cpu *oc, const struct sample_record *s,
			       const uint32_t *locs, size_t *n)
{
	const uint32_t *extra = NULL;
	size_t m = 0;

	if (oc->off && oc->off->waker_ns)
		extra = wakers__take(oc->wakers, s->tid, oc->off->waker_tid, oc->off->waker_ns, &m);
	if (!extra)
		return locs;
	if (array_grow((void **)&oc->joined, &oc->joined_cap, *n + m, sizeof(*oc->joined), 256))
		return NULL;
	memcpy(oc->joined, locs, *n * sizeof(*oc->joined));
	memcpy(oc->joined + *n, extra, m * sizeof(*oc->joined));
	*n += m;
	return oc->joined;
}

void off_cpu__clear(struct off_cpu *oc)
{
	wakers__clear(oc->wakers);
}

void off_cpu__forget(struct off_cpu *oc, uint32_t tgid)
{
	wakers__forget(oc->wakers, tgid);
}

/* What the joins dropped, if anything: a blocked stack's time lives in its RECORD_OFF_CPU. */
static void print_joins(FILE *fp, const struct off_cpu *oc)
{
	if (oc && (oc->unjoined || oc->off_cpu.unmatched))
		fprintf(fp,
			"bpfprof: dropped in user space: %llu blocked stacks without their "
			"RECORD_OFF_CPU, %llu RECORD_OFF_CPU (their time) without their stack\n",
			(unsigned long long)oc->unjoined,
			(unsigned long long)oc->off_cpu.unmatched);
}

/* --off-cpu: what BPF saw of the targets' blocked periods and what it kept. */
void off_cpu__print_summary(FILE *fp, const struct off_cpu_summary *in)
{
	const struct bpf_stats *b = in->bpf;
	struct sample_weight off = aggregate__weight(in->agg, SAMPLE_OFF_CPU);

	if (!b) { /* a capture replayed: what it holds, not what BPF counted while it ran */
		fprintf(fp, "bpfprof: replayed %.2f s off CPU: %.3f s blocked in %llu periods",
			in->duration_ns / 1e9, off.ns / 1e9, (unsigned long long)off.count);
		if (!in->on_cpu) /* else the CPU samples' line has them */
			fprintf(fp, "; %llu bad records", (unsigned long long)in->bad_records);
		fprintf(fp, "\n");
		print_joins(fp, in->joins);
		return;
	}
	fprintf(fp,
		"bpfprof: profiled %.2f s off CPU: %llu blocked stacks received, %.3f s blocked "
		"in %llu periods of >= %.0f us\n",
		in->duration_ns / 1e9, (unsigned long long)b->off_cpu_records, off.ns / 1e9,
		(unsigned long long)off.count, in->min_ns / 1e3);
	fprintf(fp,
		"bpfprof: switch-outs blocked in a system call: %llu; periods shorter: %llu; "
		"blocked outside a system call (not counted): %llu\n",
		(unsigned long long)b->off_cpu_switches, (unsigned long long)b->off_cpu_short,
		(unsigned long long)b->off_cpu_no_syscall);
	fprintf(fp,
		"bpfprof: over --off-cpu-max-rate: %llu stacks not written (their %.3f s blocked "
		"are added to each thread's next stack written, if any); lost: %llu (ringbuf "
		"full); %llu stack copies failed, %llu bad records\n",
		(unsigned long long)b->off_cpu_limited, b->off_cpu_limited_ns / 1e9,
		(unsigned long long)b->off_cpu_lost, (unsigned long long)b->stack_copy_failed,
		(unsigned long long)in->bad_records);
	fprintf(fp,
		"bpfprof: switch-ins not seen: %llu periods ended at their system call's exit "
		"(%.3f s, counted), %llu found at a later switch-out (%.3f s, dropped)\n",
		(unsigned long long)b->off_cpu_unseen, b->off_cpu_unseen_ns / 1e9,
		(unsigned long long)b->off_cpu_unended, b->off_cpu_unended_ns / 1e9);
	print_joins(fp, in->joins);
	if (b->wakers || b->wakers_lost)
		fprintf(fp,
			"bpfprof: wakers: %llu stacks written, %llu not (ringbuf full or over "
			"--off-cpu-max-rate)\n",
			(unsigned long long)b->wakers, (unsigned long long)b->wakers_lost);
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* summary.h: the end-of-run summary on stderr. */
#ifndef BPFPROF_SUMMARY_H
#define BPFPROF_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include "profile/aggregate.h"
#include "bpf/record.h"
#include "pipeline/consumer.h"
#include "process/proc_table.h"

struct off_cpu;

struct runtimes;

struct summary_input {
	uint64_t duration_ns;	     /* wall time profiled */
	uint64_t freq_hz;	     /* requested rate */
	int64_t target_cpu_ns;	     /* CPU time of the targets, or -1 if unknown */
	const struct bpf_stats *bpf; /* counters of the BPF programs; NULL: a capture replayed */
	const struct consumer_stats *consumer;
	struct aggregate *agg; /* named by the symbolizer: the top functions */
	struct proc_table *pt;
	const struct proc_stats *unwound; /* every process's unwinding counters, summed */
	unsigned int top; /* functions listed by self and by total time */
	bool off_cpu;	  /* --off-cpu: blocked time */
	bool on_cpu;	  /* with off_cpu, CPU samples too (--on-cpu) */
	uint64_t off_cpu_min_ns; /* --off-cpu-min-us, ns */
	struct runtimes *runtimes; /* their lines after the stacks line (summary_stacks) */
	const struct off_cpu *off_cpu_joins; /* with off_cpu: what its joins dropped, or NULL */
};

/* Prints "bpfprof: ..." lines to fp: duration, samples received vs expected, lost samples,
 * share of stacks unwound to the root and why the others stopped, top functions. */
void summary__print(FILE *fp, const struct summary_input *in);

#endif /* BPFPROF_SUMMARY_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* stage_timer.h: time per item of each pipeline stage, for --stats (log2 histograms). */
#ifndef BPFPROF_STAGE_TIMER_H
#define BPFPROF_STAGE_TIMER_H

#include <stdint.h>
#include <stdio.h>

/* The data path's steps, in order. */
enum stage {
	STAGE_DRAIN,	 /* one ringbuf drain (ring_buffer__consume), per drain */
	STAGE_EVENT,	 /* process table: one fork/exec/exit/mmap/munmap record */
	STAGE_UNWIND,	 /* one sample's unwind (process table lookups included) */
	STAGE_AGGREGATE, /* one sample's frames turned into locations and counted */
	STAGE_SYMBOLIZE, /* one unique location named (at output time) */
	STAGE_OUTPUT,	 /* writing the output, once */
	STAGE_GO_TABLE,	 /* one Go file's .gopclntab read and its header parsed (within an
			  * unwind or symbolize item: the first pc in the file) */
	STAGE_CNT,
};

/* Count, total and a log2 histogram of durations (ns) of one stage. */
struct stage_timer {
	uint64_t cnt;
	uint64_t total_ns;
	uint64_t buckets[64]; /* bucket i: durations in [2^i, 2^(i+1)) ns */
};

/* Process-wide timers (one thread owns the pipeline). Off unless enabled (--stats). */
extern struct stage_timer stage_timers[STAGE_CNT];
extern int stage_timers_on;

void stage_timer__add(enum stage st, uint64_t ns);
/* Prints "bpfprof: stage NAME: N items, p50 X us, p99 Y us, total Z ms" per stage with items;
 * percentiles are bucket upper bounds (within 2x). */
void stage_timers__print(FILE *fp);

#endif /* BPFPROF_STAGE_TIMER_H */

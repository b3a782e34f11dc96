/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * proc_unwind.h: a process's unwinder and its unwinding counters, kept on its process table entry
 * (proc__attach(), process/proc_table.h): the sample handler (pipeline/sample.c) makes them at
 * the process's first sample; they go with the entry (an exec keeps them, as it keeps the
 * address space they follow).
 */
#ifndef BPFPROF_PROC_UNWIND_H
#define BPFPROF_PROC_UNWIND_H

#include <stdint.h>
#include "process/proc_table.h"
#include "unwind/unwind.h"

/* Unwinding counters of one process or, summed, of all (--stats, the summary). */
struct proc_stats {
	uint64_t samples; /* samples handled */
	uint64_t root;	  /* of which unwound to the outermost frame */
	uint64_t stops[UNWIND_STOP_CNT];
};

/* Counts one sample whose unwind ended at stop into *st. */
static inline void proc_stats__count(struct proc_stats *st, enum unwind_stop stop)
{
	st->samples++;
	st->stops[stop]++;
	if (stop == UNWIND_STOP_ROOT)
		st->root++;
}

/*
 * p's unwinder (on its address space, with proc__ref_elf()), created at the first call and kept
 * on p with its counters until p is freed. NULL + errno (ENOMEM, or ENOSPC when p has no free
 * attachment slot).
 */
struct unwinder *proc_unwind__unwinder(struct proc *p);
/* p's counters (zero at first), or NULL before proc_unwind__unwinder() made them. */
struct proc_stats *proc_unwind__stats(struct proc *p);

#endif /* BPFPROF_PROC_UNWIND_H */

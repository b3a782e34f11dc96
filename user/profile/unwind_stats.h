/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* unwind_stats.h: unwind quality per process and per module, for --stats. */
#ifndef BPFPROF_UNWIND_STATS_H
#define BPFPROF_UNWIND_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "unwind/unwind.h"

/*
 * Counts, per process (tgid, kept after the process is freed) and per module (ELF path, or
 * "[anon]", "[unknown]"): samples, samples unwound to the root, frames (per unwinding method:
 * enum unwind_method), and why unwinding stopped, attributed to the module of the last frame reached: that is where CFI was missing
 * or a read failed.
 */
struct unwind_stats;

struct unwind_stats *unwind_stats__new(void);
void unwind_stats__free(struct unwind_stats *us);

/* One sample of tgid (comm: the process name) unwound to frames[0..cnt) (innermost first; each
 * one's unwinding method counted) whose modules are modules[0..cnt) (NULL for no mapping),
 * ended for stop at frame stop_frame. 0 or -ENOMEM. */
int unwind_stats__add(struct unwind_stats *us, uint32_t tgid, const char *comm,
		      const struct unwind_frame *frames, const char *const *modules, size_t cnt,
		      enum unwind_stop stop, size_t stop_frame);

/* The stack copy of one sample of tgid: bytes copied, the copy size then in force, whether
 * its unwind ran out of copied stack. Counted in the process line of --stats. */
void unwind_stats__stack(struct unwind_stats *us, uint32_t tgid, uint32_t bytes, uint32_t copy_sz,
			 bool truncated);

/* Prints the lines of --stats: the max_procs processes with the most samples, each followed
 * by its modules, then how many processes were left out. */
void unwind_stats__print(const struct unwind_stats *us, FILE *fp, unsigned int max_procs);

#endif /* BPFPROF_UNWIND_STATS_H */

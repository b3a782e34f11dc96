/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* output_folded.h: folded stacks, as read by flamegraph.pl, inferno and speedscope. */
#ifndef BPFPROF_OUTPUT_FOLDED_H
#define BPFPROF_OUTPUT_FOLDED_H

#include <stdio.h>
#include "profile/aggregate.h"
#include "util/output_file.h"

/*
 * Writes agg (named by the symbolizer first) as one line per unique stack,
 * "comm;root;...;leaf COUNT", lines sorted and equal lines summed (the format of FlameGraph's
 * stackcollapse-perf.pl): suffixes "_[k]" kernel, "_[i]" inlined, "_[j]" JIT frames, "_[py]" Python frames; ';' in
 * names becomes ':', spaces in comm become '_', control characters become '?'.
 * counts (NULL: not wanted): the lines written and the samples they hold.
 * Returns 0 or a negative errno (-EIO when fp failed).
 */
int output_folded__write(struct aggregate *agg, FILE *fp, struct output_counts *counts);

#endif /* BPFPROF_OUTPUT_FOLDED_H */

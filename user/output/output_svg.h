/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* output_svg.h: the aggregate as an interactive SVG flame graph (flamegraph.c). */
#ifndef BPFPROF_OUTPUT_SVG_H
#define BPFPROF_OUTPUT_SVG_H

#include <stdio.h>
#include "profile/aggregate.h"
#include "output/flamegraph.h"
#include "util/output_file.h"

/*
 * Symbolizes agg and writes its stacks as a flame graph: the comm at the root, user frames,
 * inline frames and kernel frames coloured apart, as output_folded__write() orders them
 * (threads of one process merged). counts (NULL: not wanted): the samples the graph holds
 * (stacks: 0, a flame graph merges them). 0 or a negative errno.
 */
int output_svg__write(struct aggregate *agg, FILE *fp, const struct flamegraph_opts *o,
		      struct output_counts *counts);

#endif /* BPFPROF_OUTPUT_SVG_H */

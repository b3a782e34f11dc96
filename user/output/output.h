/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output.h: a profile in the format an output asks for: folded stacks, pprof or an SVG flame
 * graph (the writers: output_folded.h, output_pprof.h, output_svg.h), with the names of each
 * format. The aggregate is symbolized before (symbols/symbolizer.h).
 */
#ifndef BPFPROF_OUTPUT_H
#define BPFPROF_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include "util/output_file.h"

struct aggregate;

enum output_format {
	OUTPUT_FOLDED, /* folded stacks text */
	OUTPUT_PPROF,  /* gzipped profile.proto */
	OUTPUT_SVG,    /* interactive flame graph */
};

/* What a profile is of, for the formats that say it (pprof's header, the SVG's titles). */
struct output_info {
	const char *what;    /* "CMD", "all processes", a capture's name... (SVG subtitle) */
	const char *event;   /* the perf_event sampled, e.g. "cpu-clock" */
	uint64_t freq_hz;    /* -F */
	int64_t time_ns;     /* start, CLOCK_REALTIME ns since the epoch */
	int64_t duration_ns; /* length, ns */
	const char *comment; /* the command line (pprof comment); NULL: none */
	const char *title;   /* SVG title; NULL: the default */
};

/* Writes agg to fp in format; what was written in *counts. 0 or a negative errno. */
int output__write(struct aggregate *agg, FILE *fp, enum output_format format,
		  const struct output_info *info, struct output_counts *counts);

/* "folded stacks", "pprof profile", "flame graph": for messages. */
const char *output__format_name(enum output_format format);

/* The file of the current directory a -- CMD run writes format to without -o:
 * "bpfprof.folded", "bpfprof.pb.gz", "bpfprof.svg" (as perf record writes perf.data). */
const char *output__default_name(enum output_format format);

#endif /* BPFPROF_OUTPUT_H */

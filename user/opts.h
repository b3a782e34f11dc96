/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* opts.h: command line options, defaults and their checks. */
#ifndef BPFPROF_OPTS_H
#define BPFPROF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes (documented in --help). */
#define BPFPROF_EXIT_OK		0
#define BPFPROF_EXIT_ERROR	1
#define BPFPROF_EXIT_USAGE	64	/* EX_USAGE */

/* Output formats (--format, or from -o's file name). */
enum output_format {
	OUTPUT_FOLDED,		/* folded stacks text */
	OUTPUT_PPROF,		/* gzipped profile.proto */
	OUTPUT_SVG,		/* interactive flame graph */
};

struct bpfprof_opts {
	uint64_t freq_hz;		/* -F: samples per second per CPU (default 99) */
	const char *event;		/* -e: "cpu-clock" (default) or "cycles" */
	const char *output;		/* -o: output file; NULL: stdout */
	enum output_format format;	/* --format; default from -o (.pb.gz/.pprof, .svg), else folded */
	const char *title;		/* --title: the flame graph's title */
	bool no_demangle;		/* --no-demangle: raw C++/Rust symbol names */
	int unwinder;			/* --unwinder: enum unwind_mode */
	bool unwinder_set;
	bool all;			/* -a: every process (but bpfprof) */
	uint32_t *pids;			/* -p: target processes */
	size_t pids_cnt;
	uint64_t duration_ns;		/* -d: 0 = until the targets exit or Ctrl-C */
	char **cmd;			/* -- CMD ARGS: NULL-terminated; NULL with -p */
	uint32_t stack_sz;		/* --stack-size: first copy size per process (default 16 KiB) */
	uint32_t max_stack_sz;		/* --max-stack-size: largest copy size (default 128 KiB) */
	uint32_t max_frames;		/* --max-frames: user frames per stack (default 256) */
	uint32_t ringbuf_sz;		/* --ringbuf-size: bytes (default 16 MiB) */
	uint32_t drain_ms;		/* ringbuf drain period (default 10 ms) */
	unsigned int top;		/* functions in the summary (default 10, 0 = none) */
	int verbose;			/* -v */
	bool quiet;			/* -q: no progress or summary */
	bool stats;			/* --stats: unwind quality per process and module */
	const char *raw_capture;	/* --raw-capture: every record to this file */
	const char *report;		/* bpfprof report FILE: replay a raw capture */
	int realtime_prio;		/* --realtime: SCHED_FIFO priority of bpfprof, 0 = off */
};

/*
 * Parses argv into *o (defaults first). "bpfprof report FILE [OPTIONS]" replays a raw
 * capture (o->report) instead of profiling. On a usage error or --help/--version, argp prints and
 * exits (64 or 0). The pids array is malloc'd (opts__free()).
 */
void opts__parse(int argc, char **argv, struct bpfprof_opts *o);
void opts__free(struct bpfprof_opts *o);

#endif /* BPFPROF_OPTS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* opts.h: command line options, defaults and their checks. */
#ifndef BPFPROF_OPTS_H
#define BPFPROF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "agent/agent.h"
#include "output/output.h"

/* Exit codes (documented in --help). */
#define BPFPROF_EXIT_OK		0
#define BPFPROF_EXIT_ERROR	1
#define BPFPROF_EXIT_USAGE	64 /* EX_USAGE */
/* -- CMD could not run (execvp() failed), as sh(1) says: not found, or not executable. */
#define BPFPROF_EXIT_CANNOT_RUN 126
#define BPFPROF_EXIT_NOT_FOUND	127

/* -o given this many times at most: one file per format. */
#define BPFPROF_MAX_OUTPUTS 3

struct bpfprof_opts {
	uint64_t freq_hz;			  /* -F: samples per second per CPU (default 99) */
	const char *event;			  /* -e: "cpu-clock" (default) or "cycles" */
	bool off_cpu;		   /* --off-cpu: time blocked instead of CPU samples */
	uint64_t off_cpu_min_ns;   /* --off-cpu-min-us, ns (default 5 us) */
	uint32_t off_cpu_max_rate; /* --off-cpu-max-rate: records per second per CPU */
	bool wakers;		   /* --wakers (implies --off-cpu): the waking threads' stacks */
	bool on_cpu;		   /* --on-cpu: with --off-cpu, CPU samples too (-F, -e) */
	const char *outputs[BPFPROF_MAX_OUTPUTS]; /* -o, repeatable; none: stdout */
	enum output_format formats[BPFPROF_MAX_OUTPUTS]; /* --format, else from each name */
	size_t outputs_cnt;
	enum output_format format; /* --format, or folded: for stdout */
	const char *title;	   /* --title: the flame graph's title */
	bool no_demangle;	   /* --no-demangle: raw C++/Rust symbol names */
	bool full_names;	   /* --full-names: C++ names with parameter lists */
	bool no_python;		   /* --no-python: no Python frames */
	bool no_inline;		   /* --no-inline (the agent's default; --inline undoes it):
					 * symbol tables only, no DWARF inline frames or lines */
	int unwinder;		   /* --unwinder: enum unwind_mode */
	bool unwinder_set;
	bool all;	/* -a: every process (but bpfprof) */
	uint32_t *pids; /* -p: target processes */
	size_t pids_cnt;
	uint64_t duration_ns;	 /* -d: 0 = until the targets exit or Ctrl-C */
	char **cmd;		 /* -- CMD ARGS: NULL-terminated; NULL with -p */
	uint32_t copy_size;	 /* --stack-size: first copy size per process (default 16 KiB) */
	uint32_t max_copy_size;	 /* --max-stack-size: largest copy size (default 128 KiB) */
	uint32_t max_frames;	 /* --max-frames: user frames per stack (default
					 * 16384) */
	uint32_t ringbuf_sz;	 /* --ringbuf-size: bytes (default 16 MiB) */
	uint32_t drain_ms;	 /* ringbuf drain period (default 10 ms) */
	unsigned int top;	 /* functions in the summary (default 10, 0 = none) */
	int verbose;		 /* -v */
	bool quiet;		 /* -q: no progress or summary */
	bool stats;		 /* --stats: unwind quality per process and module */
	const char *raw_capture; /* --raw-capture: every record to this file */
	const char *report;	 /* bpfprof report FILE: replay a raw capture */
	bool check;		 /* bpfprof check: what this kernel allows (check.h) */
	int realtime_prio;	 /* --realtime: SCHED_FIFO priority of bpfprof, 0 = off */
	bool agent;		 /* bpfprof agent */
	bool exec;		 /* --exec: CMD keeps bpfprof's PID, a detached process profiles */
	bool strict;		 /* --strict: with --exec, no profiling means no CMD (exit 1) */
	struct agent_opts ag;	 /* agent and --exec: freq_hz and whole_machine are not set here */
	char **argv_built;	 /* a subcommand's argv; agent: config file + environment
					 * + command line */
};

/*
 * Parses argv into *o (defaults first). "bpfprof [record] [OPTIONS] -- CMD | -p PID | -a"
 * profiles; "bpfprof report FILE [OPTIONS]" replays a raw capture (o->report); "bpfprof check"
 * reports what the kernel allows; "bpfprof agent [OPTIONS]" runs the fleet agent, whose
 * options also come from BPFPROF_<OPTION> environment variables and a --config file of
 * "option = value" lines (the command line wins over the environment, which wins over the
 * file). A subcommand is argv[1] only. Numbers are decimal, range-checked (no nan, sign,
 * octal or hex). Nothing exits: returns OPTS_RUN to run with *o, else the exit status to end
 * with, what happened printed: 0 after -h, --help, --usage or --version (stdout),
 * BPFPROF_EXIT_USAGE after a usage error or a --config file that cannot be opened (stderr),
 * BPFPROF_EXIT_ERROR out of memory or a --config file that cannot be read. The pids array and
 * argv_built (a subcommand's arguments: o->cmd and o->report point in) are malloc'd:
 * opts__free() in every case.
 */
int opts__parse(int argc, char **argv, struct bpfprof_opts *o);

/* opts__parse()'s "go on": not an exit status. */
#define OPTS_RUN (-1)

void opts__free(struct bpfprof_opts *o);

#endif /* BPFPROF_OPTS_H */

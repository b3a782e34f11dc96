/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * opts.h: what the command line asks for (struct bpfprof_opts, the agent's struct agent_opts in
 * it) and the exit codes. cmd/opts.c fills it; the pipeline, the agent and the modes read it.
 * Here, below agent/ and cmd/, so both can include it.
 */
#ifndef BPFPROF_PIPELINE_OPTS_H
#define BPFPROF_PIPELINE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/output.h"

#define AGENT_MAX_HEADERS 16

/* bpfprof agent (and --exec with an exporter): what the agent does; the options of the same name
 * unless said otherwise. */
struct agent_opts {
	uint64_t interval_ns;	       /* --interval: profile length (default 60 s) */
	bool group_by_pid;	       /* --group-by pid; default: executable per container */
	const char *service_name_from; /* --service-name-from: "container,unit,comm" */
	const char *output_dir;	       /* --output-dir: gzipped pprof files */
	uint64_t output_dir_max;       /* --output-dir-max-bytes (default 1 GiB) */
	const char *pyroscope_url;     /* --pyroscope-url */
	bool pyroscope_push;	       /* --pyroscope-api push; default ingest */
	const char *basic_auth_file;
	const char *bearer_token_file;
	const char *tenant_id;
	const char *headers[AGENT_MAX_HEADERS]; /* --header 'K: V' */
	size_t headers_cnt;
	uint32_t queue_size;	    /* --queue-size (default 64) */
	bool kubernetes;	    /* --kubernetes: pod labels from the API server */
	const char *kubernetes_api; /* --kubernetes-api URL: instead of the in-cluster one */
	const char *metrics_addr;   /* --metrics-addr HOST:PORT (default 127.0.0.1:9464) */
	bool log_json;		    /* --log-format json */
	const char *config;	    /* --config FILE */
	/* Not options: set by the caller of agent__new(). */
	uint64_t freq_hz;   /* -F: samples per second per CPU, for pprof's period */
	bool off_cpu;	    /* --off-cpu: an off-CPU profile per service too ("off_cpu") */
	bool whole_machine; /* every process is profiled (bpfprof agent, -a): samples must keep
			     * coming for /healthz */
};

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
	uint64_t freq_hz;	   /* -F: samples per second per CPU (default 99) */
	const char *event;	   /* -e: "cpu-clock" (default) or "cycles" */
	bool off_cpu;		   /* --off-cpu: time blocked instead of CPU samples */
	uint64_t off_cpu_min_ns;   /* --off-cpu-min-us, ns (default 5 us) */
	uint32_t off_cpu_max_rate; /* --off-cpu-max-rate: records per second per CPU */
	bool wakers;		   /* --wakers (implies --off-cpu): the waking threads' stacks */
	bool on_cpu;		   /* --on-cpu: with --off-cpu, CPU samples too (-F, -e) */
	const char *outputs[BPFPROF_MAX_OUTPUTS];	 /* -o, repeatable; none: stdout */
	enum output_format formats[BPFPROF_MAX_OUTPUTS]; /* --format, else from each name */
	size_t outputs_cnt;
	enum output_format format; /* --format, or folded: for stdout */
	const char *title;	   /* --title: the flame graph's title */
	bool no_demangle;	   /* --no-demangle: raw C++/Rust symbol names */
	bool full_names;	   /* --full-names: C++ names with parameter lists */
	uint64_t runtimes_off;	   /* --no-<name>: bit i turns runtime_table[i] off
				    * (runtime/runtime.h: runtimes__new()'s disabled) */
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

/* opts__parse()'s "go on": not an exit status. */
#define OPTS_RUN (-1)

/*
 * The command line's parser (cmd/opts.h: opts__parse() and opts__free()), handed down to what
 * parses it again below cmd/: the agent, on SIGHUP.
 */
struct opts_parser {
	/* Parses argv into *o: OPTS_RUN, or the exit status to end with (what happened printed). */
	int (*parse)(int argc, char **argv, struct bpfprof_opts *o);
	/* Frees what parse allocated in *o, in every case. */
	void (*free)(struct bpfprof_opts *o);
};

#endif /* BPFPROF_PIPELINE_OPTS_H */

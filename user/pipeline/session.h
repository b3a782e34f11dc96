/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * session.h: the one pipeline every mode runs (record, report, agent, --exec): BPF programs and
 * perf_events, ringbuf consumer, sample handler, process table and aggregate; the run loop with
 * a tick hook; the final drain; the outputs (-o) and the end-of-run summary.
 */
#ifndef BPFPROF_SESSION_H
#define BPFPROF_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "pipeline/opts.h"
#include "util/output_file.h"
#include "process/proc_table.h"
#include "runtime/runtime.h"
#include "sampling/perf_event.h"

struct aggregate;
struct capture_writer;
struct consumer;
struct ksyms;
struct loader;
struct sample_handler;
struct targets;
struct unwind_stats;

/*
 * One run of bpfprof. Zeroed and started by session__init(), torn down by session__teardown().
 * The modes (cmd/modes.h, agent/agent_loop.h) read its fields; session.c frees them, except
 * the aggregate session__swap_aggregate() hands back (its caller frees that one).
 */
struct session {
	struct bpfprof_opts *opts; /* borrowed */
	char *cmdline;		   /* "bpfprof ARGS...", for pprof's comment; may be NULL */
	sigset_t old_mask;	   /* the signal mask before session__init(): a child's */
	int sigfd;		   /* SIGINT, SIGTERM, SIGHUP, SIGCHLD; -1 when closed */

	/* The pipeline: session__setup() (live) or session__setup_pipeline() (a replay). */
	struct loader *loader; /* NULL in a replay */
	struct perf_events events;
	struct ksyms *ksyms;
	struct proc_table *pt;
	struct aggregate *agg; /* what the sample handler fills now */
	struct sample_handler *sh;
	struct symbolizer *symbolizer;
	struct consumer *consumer;
	struct runtimes *runtimes;	/* the runtimes' state (runtime/runtime.h) */
	struct runtime_env runtime_env; /* what they were given */
	struct unwind_stats *ustats;	/* --stats */
	struct targets *targets;	/* -p, -- CMD, --exec: the target processes; NULL with -a */
	struct capture_writer *capture; /* --raw-capture (it keeps its first write error) */

	/* The outputs: session__open_outputs(). */
	struct output_file outs[BPFPROF_MAX_OUTPUTS];
	enum output_format out_formats[BPFPROF_MAX_OUTPUTS];
	size_t outs_cnt;

	/* The run. */
	pid_t child;   /* -- CMD: its exit ends the run; 0 when none */
	int cmd_errno; /* -- CMD could not run: execvp()'s errno (the child exits); 0 if it ran */
	int child_status;
	bool child_done;
	int64_t busy_start_ns;	   /* -a: busy CPU time of the machine, less bpfprof's */
	uint64_t start_ns;	   /* CLOCK_MONOTONIC */
	uint64_t end_ns;	   /* a replay: start_ns + the capture's duration */
	int64_t start_realtime_ns; /* CLOCK_REALTIME at the start, for pprof; a replay: the
				    * capture's (0 in version 1 captures) */
	int stop_signal;	   /* the signal that stopped profiling, or 0 */
	bool sighup;		   /* SIGHUP without a child: for the tick hook, which clears it */
	bool events_lost;	   /* mapping or task events were lost */
};

/*
 * Zeroes *s and starts it for o (borrowed): SIGPIPE ignored, SIGINT, SIGTERM, SIGHUP and SIGCHLD
 * blocked and read from s->sigfd, the command line kept for pprof. 0, or BPFPROF_EXIT_ERROR
 * (reported). session__teardown() is due either way.
 */
int session__init(struct session *s, struct bpfprof_opts *o, int argc, char **argv);

/*
 * Live set-up: loads and attaches the BPF programs, opens the perf_events, the raw capture
 * (--raw-capture, with /proc/kallsyms as its first record) and the pipeline on the ringbuf;
 * without -a, the target table. 0 or BPFPROF_EXIT_ERROR (reported).
 */
int session__setup(struct session *s);

/*
 * The user-space pipeline, fed by the ringbuf (ringbuf_fd) or a replay (-1): kernel symbols
 * (unless s->ksyms is set already), process table, aggregate, --stats, sample handler and
 * consumer. stack_cap: the largest stack copy of a record (bytes); lazy_maps: mappings read on
 * a process's first sample (-a). maps_text (NULL: /proc/PID/maps) serves the text of a
 * process's mappings. 0 or BPFPROF_EXIT_ERROR (reported).
 */
int session__setup_pipeline(struct session *s, int ringbuf_fd, uint32_t stack_cap, bool lazy_maps,
			    proc_maps_text_fn maps_text, void *maps_ctx);

/*
 * The run loop's tick hook: called once a pass, after the ringbuf drain, the signals and the
 * sweep of vanished processes. now: CLOCK_MONOTONIC ns; periodic: true once every 200 ms.
 * Returns true to end the loop.
 */
typedef bool (*session_tick_fn)(struct session *s, uint64_t now, bool periodic, void *ctx);

/*
 * Drains the ringbuf every --drain-ms until a stop signal, -d, the exit of the child, of every
 * target (-p), or the tick hook (NULL: none) says so. 0, or a negative errno when the ringbuf
 * cannot be read (reported).
 */
int session__run_loop(struct session *s, session_tick_fn tick, void *ctx);

/* Stops sampling, then handles every record still in the ringbuf. */
void session__final_drain(struct session *s);

/* Reaps the child of -- CMD if it exited (flags: waitpid()'s). */
void session__reap_child(struct session *s, int flags);

/*
 * Puts fresh (empty) in the aggregate's place: the sample handler fills it from now on. Returns
 * the aggregate filled so far, which the caller frees with aggregate__free().
 */
struct aggregate *session__swap_aggregate(struct session *s, struct aggregate *fresh);

/*
 * Opens every output before the run: each -o FILE; without -o, stdout, or with -- CMD
 * bpfprof.folded (.pb.gz, .svg). 0 or BPFPROF_EXIT_ERROR (reported).
 */
int session__open_outputs(struct session *s);

/* Writes the profile to every output opened; a failed one does not stop the others. 0 or a
 * negative errno (reported). */
int session__write_outputs(struct session *s);

/* --raw-capture at the end of a run. 0 or BPFPROF_EXIT_ERROR (reported: the real errno). */
int session__close_capture(struct session *s);

/* The summary on stderr (unless -q), and with --stats the unwind quality and bpfprof's own
 * footprint. */
void session__print_summary(struct session *s);

/* CPU time the machine spent busy (/proc/stat), less bpfprof's own, ns; -1 if unreadable. */
int64_t session__machine_busy_ns(void);

/* Frees in the reverse order of use; outputs not written have their temp files removed. */
void session__teardown(struct session *s);

#endif /* BPFPROF_SESSION_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* agent_loop.c: the agent in a session's run loop: interval cuts, /metrics counters, SIGHUP. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"
#include "agent/agent_loop.h"
#include "pipeline/opts.h"
#include "pipeline/sample.h"
#include "pipeline/session.h"
#include "unwind/proc_unwind.h"
#include "process/proc_table.h"
#include "profile/aggregate.h"
#include "pipeline/consumer.h"
#include "sampling/loader.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/util.h"
#include "pipeline/symbolizer.h"

/* Free heap bytes from which a cut returns them to the system: malloc_trim() costs madvise()
 * calls, TLB shootdowns and page faults when the pages are used again. */
#define AGENT_TRIM_FREE_BYTES (4u << 20)

/* How long the agent tries to deliver queued profiles at exit (SIGTERM: Kubernetes gives
 * 30 s by default before SIGKILL). */
#define AGENT_STOP_FLUSH_MS 8000

struct agent_loop {
	struct session *s;
	struct agent *agent;	       /* NULL after a SIGHUP it could not start again with */
	struct agent_opts ao;	       /* s->opts->ag with -F and the target: the agent's */
	uint64_t next_cut_ns;	       /* CLOCK_MONOTONIC of the interval's end */
	int64_t cut_start_realtime_ns; /* start of the interval under way */
	int argc;		       /* the command line, to parse again on SIGHUP */
	char **argv;
	const struct opts_parser *parser; /* how: opts__parse() */
};

/* The agent's options: the session's, with what the sampling side decided. */
static void agent_opts_from(struct agent_loop *l)
{
	const struct bpfprof_opts *o = l->s->opts;

	l->ao = o->ag;
	l->ao.freq_hz = o->freq_hz;
	l->ao.off_cpu = o->off_cpu;
	l->ao.whole_machine = o->agent || o->all;
}

struct agent_loop *agent_loop__new(struct session *s, int argc, char **argv,
				   const struct opts_parser *parser)
{
	struct agent_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->s = s;
	l->argc = argc;
	l->argv = argv;
	l->parser = parser;
	agent_opts_from(l);
	l->agent = agent__new(&l->ao);
	if (!l->agent) {
		free(l);
		return NULL;
	}
	return l;
}

void agent_loop__start(struct agent_loop *l)
{
	l->cut_start_realtime_ns = l->s->start_realtime_ns;
	l->next_cut_ns = l->s->start_ns + l->ao.interval_ns;
}

/* The counters /metrics shows, from the BPF side, the consumer and the process table. */
static void agent_counters(struct agent_loop *l)
{
	struct session *s = l->s;
	const struct consumer_stats *cs = consumer__stats(s->consumer);
	struct proc_stats st;
	struct proc_table_counts counts;
	struct agent_counters c = {};
	struct bpf_stats bpf = {};

	loader__read_stats(s->loader, &bpf);
	st = *sample_handler__unwound(s->sh);
	proc_table__counts(s->pt, &counts);
	c.samples = cs->samples;
	c.lost = bpf.lost;
	c.events_lost = bpf.events_lost + bpf.mmap_lost;
	c.user_stacks = st.samples - st.stops[UNWIND_STOP_NO_REGS];
	c.root_stacks = st.root;
	c.truncated_stacks = st.stops[UNWIND_STOP_TRUNCATED];
	c.processes = counts.procs;
	c.files = counts.files;
	agent__set_counters(l->agent, &c);
}

/* Ends the agent's interval: its profiles out, a new aggregate in. 0 or a negative errno. */
static int agent_cut(struct agent_loop *l)
{
	struct aggregate *fresh = aggregate__new(), *agg;
	int64_t end = realtime_ns();
	int err;

	if (!fresh)
		return -ENOMEM;
	err = agent__cut(l->agent, l->s->agg, l->cut_start_realtime_ns, end,
			 symbolizer__run(l->s->symbolizer, l->s->agg));
	agg = session__swap_aggregate(l->s, fresh);
	aggregate__free(agg);
	l->cut_start_realtime_ns = end;
	l->next_cut_ns = now_ns() + l->ao.interval_ns;
	/* Files no process maps any more can go now that no profile refers to them; the heap
	 * pages symbolization freed go back to the system (RSS stays flat between intervals). */
	proc_table__trim_files(l->s->pt);
	if (mallinfo2().fordblks >= AGENT_TRIM_FREE_BYTES)
		malloc_trim(0);
	return err < 0 ? err : 0;
}

/*
 * SIGHUP: the command line, environment and --config file again, parsed in this process; a
 * configuration with errors (reported by the parser) keeps the running one. The interval so far
 * goes out under the old one. Sampling options (-F, -e) keep their values until a restart.
 */
static void agent_reload(struct agent_loop *l)
{
	struct bpfprof_opts *o = l->s->opts, *n;
	char **old_argv;

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	fflush(NULL);
	if (l->parser->parse(l->argc, l->argv, n) != OPTS_RUN) {
		pr_warn("agent: SIGHUP: the configuration has errors (above); keeping the running one");
		goto out;
	}
	agent_cut(l);
	agent__free(l->agent, 2000);
	old_argv = o->argv_built;
	o->ag = n->ag;
	o->argv_built = n->argv_built;
	n->argv_built = old_argv;
	log__set_json(o->ag.log_json);
	l->next_cut_ns = now_ns() + o->ag.interval_ns;
	agent_opts_from(l);
	l->agent = agent__new(&l->ao);
	if (!l->agent) {
		pr_warn("agent: SIGHUP: cannot start with the new configuration; stopping");
		l->s->stop_signal = SIGHUP;
		goto out;
	}
	pr_info("agent: SIGHUP: configuration reread%s%s", o->ag.config ? " from " : "",
		o->ag.config ? o->ag.config : "");
out:
	l->parser->free(n);
	free(n);
}

bool agent_loop__tick(struct session *s, uint64_t now, bool periodic, void *ctx)
{
	struct agent_loop *l = ctx;

	if (l->agent && s->sighup)
		agent_reload(l);
	s->sighup = false;
	if (s->stop_signal == SIGHUP)
		return true;
	if (l->agent && now >= l->next_cut_ns)
		agent_cut(l);
	if (periodic && l->agent)
		agent_counters(l);
	return false;
}

bool agent_loop__flush(struct agent_loop *l)
{
	if (!l->agent)
		return false;
	agent_counters(l);
	agent_cut(l);
	return true;
}

void agent_loop__free(struct agent_loop *l, bool deliver)
{
	if (!l)
		return;
	agent__free(l->agent, deliver ? AGENT_STOP_FLUSH_MS : 0);
	free(l);
}

int agent_loop__run(struct session *s, int argc, char **argv, const struct opts_parser *parser)
{
	const struct bpfprof_opts *o = s->opts;
	struct agent_loop *l;
	int err;

	l = agent_loop__new(s, argc, argv, parser);
	if (!l)
		return BPFPROF_EXIT_ERROR;
	err = session__setup(s);
	if (err) {
		agent_loop__free(l, false);
		return err;
	}
	s->start_ns = now_ns();
	s->start_realtime_ns = realtime_ns();
	s->busy_start_ns = session__machine_busy_ns();
	agent_loop__start(l);
	pr_info("agent: profiling every process at %" PRIu64
		" Hz, a profile per %s every %.0f s%s%s%s%s",
		o->freq_hz, o->ag.group_by_pid ? "process" : "executable and container",
		o->ag.interval_ns / 1e9, o->ag.pyroscope_url ? " to " : "",
		o->ag.pyroscope_url ? o->ag.pyroscope_url : "", o->ag.output_dir ? " into " : "",
		o->ag.output_dir ? o->ag.output_dir : "");
	err = session__run_loop(s, agent_loop__tick, l);
	s->end_ns = now_ns();
	session__final_drain(s);
	agent_loop__flush(l);
	pr_info("agent: stopping%s%s", s->stop_signal ? " on " : "",
		s->stop_signal ? strsignal(s->stop_signal) : "");
	agent_loop__free(l, true);
	return err ? BPFPROF_EXIT_ERROR : BPFPROF_EXIT_OK;
}

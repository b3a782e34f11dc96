// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c: bpfprof's command line to a mode (record, report, check, agent, --exec) to an exit
 * status. */
#include <bpf/libbpf.h>
#include "agent/agent_loop.h"
#include "cmd/check.h"
#include "cmd/modes.h"
#include "cmd/opts.h"
#include "pipeline/session.h"
#include "util/stage_timer.h"
#include "symbols/debuginfod.h"
#include "symbols/demangle.h"
#include "unwind/unwind.h"
#include "util/log.h"

/* What every mode shares, set once from the options before the session starts. */
static void set_globals(const struct bpfprof_opts *o)
{
	stage_timers_on = o->stats;
	unwind__set_methods(o->stats);
	demangle__set(!o->no_demangle);
	demangle__set_full_names(o->full_names);
	if (o->unwinder_set)
		unwind__set_mode(o->unwinder);
	log__set_level(o->quiet ? LOG_WARN : o->verbose ? LOG_DEBUG : LOG_INFO);
	libbpf_set_print(o->verbose > 1 ? log__libbpf_print : NULL);
}

static int run_mode(struct session *s, int argc, char **argv)
{
	const struct bpfprof_opts *o = s->opts;
	int ret;

	if (o->check)
		return check__run(stdout, o->event, o->freq_hz) ? BPFPROF_EXIT_ERROR : 0;
	if (o->report) {
		ret = report__run(s);
		/* --unwinder=diff: the two unwinders must agree on every sample. */
		if (!ret && o->unwinder_set && o->unwinder == UNWIND_MODE_DIFF &&
		    unwind__diff_divergent())
			ret = BPFPROF_EXIT_ERROR;
		return ret;
	}
	if (o->agent) {
		log__set_json(o->ag.log_json);
		return agent_loop__run(s, argc, argv, &opts__parser);
	}
	if (o->exec)
		return exec__run(s, argc, argv);
	return record__run(s);
}

int main(int argc, char **argv)
{
	struct bpfprof_opts o;
	struct session s;
	int ret;

	ret = opts__parse(argc, argv, &o);
	if (ret != OPTS_RUN) {
		opts__free(&o);
		return ret;
	}
	set_globals(&o);
	ret = session__init(&s, &o, argc, argv);
	if (!ret)
		ret = run_mode(&s, argc, argv);
	session__teardown(&s);
	debuginfod__shutdown();
	opts__free(&o);
	return ret;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent_loop.h: the agent's side of a session's run loop (bpfprof agent, --exec with an
 * exporter): every --interval the aggregate is cut into profiles, the /metrics counters are
 * refreshed, and SIGHUP rereads the command line, environment and --config file.
 */
#ifndef BPFPROF_AGENT_LOOP_H
#define BPFPROF_AGENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct agent_loop;
struct opts_parser;
struct session;

/*
 * Starts the agent (agent__new()) with s->opts->ag, -F and whether the whole machine is
 * profiled; argc and argv (borrowed for the loop's life) are parsed again on SIGHUP by parser
 * (borrowed: cmd/opts.h's opts__parser). Before session__setup(). Returns NULL and sets errno
 * (the reason is logged, but for ENOMEM).
 */
struct agent_loop *agent_loop__new(struct session *s, int argc, char **argv,
				   const struct opts_parser *parser);

/* The first interval starts at s->start_realtime_ns (set by the caller) and ends one
 * --interval from now. */
void agent_loop__start(struct agent_loop *l);

/* The session's tick hook (session_tick_fn, ctx: the agent_loop): SIGHUP, the interval's end,
 * the counters. Ends the run when a reread configuration cannot start. */
bool agent_loop__tick(struct session *s, uint64_t now, bool periodic, void *ctx);

/*
 * After session__final_drain(): the interval under way goes out too (a stop loses no samples).
 * Returns false when there was no agent any more to flush it (after a SIGHUP with a
 * configuration it could not start with).
 */
bool agent_loop__flush(struct agent_loop *l);

/* Stops the agent, after delivering what is queued for a while if deliver (at exit; not after a
 * failed set-up), and frees l. NULL is fine. */
void agent_loop__free(struct agent_loop *l, bool deliver);

/* bpfprof agent: -a until SIGTERM or SIGINT, a profile per group per interval. Sets up and runs
 * s (started with session__init()); argc, argv and parser as agent_loop__new() takes them.
 * Returns the exit status. */
int agent_loop__run(struct session *s, int argc, char **argv, const struct opts_parser *parser);

#endif /* BPFPROF_AGENT_LOOP_H */

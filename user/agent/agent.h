/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent.h: bpfprof agent, the fleet profiler: every --interval the aggregate of the whole
 * machine is cut into one pprof profile per group (executable per container, or process),
 * labelled (service_name, host, node, executable, build-id, container, pod) and handed to the
 * exporters (Pyroscope ingest, a directory). Counters for /metrics.
 */
#ifndef BPFPROF_AGENT_H
#define BPFPROF_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pipeline/opts.h"
#include "profile/aggregate.h"

/* What the sampling loop knows, for /metrics (copied in under the agent's lock). */
struct agent_counters {
	uint64_t samples;	   /* sample records received */
	uint64_t lost;		   /* samples lost (ringbuf full) */
	uint64_t events_lost;	   /* task and mmap records lost */
	uint64_t user_stacks;	   /* samples with a user stack unwound */
	uint64_t root_stacks;	   /* of them, unwound to the root */
	uint64_t truncated_stacks; /* of them, cut by the stack copy size */
	uint64_t processes;	   /* processes tracked now */
	uint64_t files;		   /* ELF files open now */
};

struct agent;

/*
 * Starts the exporters (--pyroscope-url, --output-dir), the /metrics endpoint and, with
 * --kubernetes, the pod metadata watcher. ao is borrowed for the agent's life. Returns NULL and
 * sets errno (the reason is logged).
 */
struct agent *agent__new(const struct agent_opts *ao);

/*
 * Cuts agg (named by the symbolizer first) into one profile per group covering [start_ns, end_ns)
 * (CLOCK_REALTIME ns) and exports them. agg is left as it was: the caller replaces it.
 * named_err is the symbolizer's result: when negative, nothing is exported, the cut is still
 * counted and its processes' bookkeeping done, and the error is logged and returned.
 * Never blocks on the network (Pyroscope delivery runs in its own thread); writing to
 * --output-dir does block on the file system. Returns the number of profiles, or a negative
 * errno.
 */
int agent__cut(struct agent *a, struct aggregate *agg, int64_t start_ns, int64_t end_ns,
	       int named_err);

/*
 * Updates the counters /metrics shows. The sampling loop calls it after draining the ringbuf,
 * at least every AGENT_HEALTH_INTERVALS intervals: /healthz takes each call as a drain, and a
 * grown c->samples as samples handled.
 */
void agent__set_counters(struct agent *a, const struct agent_counters *c);

/*
 * /healthz fails after this many --interval lengths without a ringbuf drain (the sampling loop
 * is stuck), or, profiling the whole machine (bpfprof agent, -a), without a sample handled.
 */
#define AGENT_HEALTH_INTERVALS 3

/*
 * What /healthz answers at now (CLOCK_MONOTONIC ns): true when the sampling loop drained the
 * ringbuf and (whole machine only) handled samples within AGENT_HEALTH_INTERVALS intervals,
 * else false with the reason, NUL-terminated, in reason (sz bytes). The clock starts at
 * agent__new(). Thread-safe.
 */
bool agent__health(struct agent *a, uint64_t now, char *reason, size_t sz);

/* Delivers what is queued within timeout_ms, then stops everything and frees a. NULL is
 * fine. */
void agent__free(struct agent *a, uint64_t timeout_ms);

#endif /* BPFPROF_AGENT_H */

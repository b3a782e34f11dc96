// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jit.c: the JIT runtime. A frame's location holds a reference on its process's perf map and is
 * named from it at output time (frame_kind_jit's hooks, called by the symbolizer).
 */
#include "runtime/jit/jit.h"
#include "runtime/jit/perf_map.h"
#include "util/log.h"
#include "util/util.h"

static void *jit_get(void *ref)
{
	return perf_map__get(ref);
}

static void jit_put(void *ref)
{
	perf_map__put(ref);
}

/*
 * Before JIT locations are named: every perf map they need read again if this run has not
 * looked at it yet (run_ns: the run's start) and its process still runs (a map written after
 * the samples: code compiled late, addresses wanted since the last read; a map written at exit
 * is read by perf_map__close()), in the reader thread.
 */
static void jit_refresh(void *ref, uint64_t run_ns)
{
	struct perf_map *m = ref;

	if (!perf_map__closed(m) && perf_map__checked_ns(m) < run_ns)
		perf_map__refresh(m, run_ns);
}

/* Then a wait for the reads, as for debuginfod fetches (none in the agent's loop: its names
 * come from the reads done by then). */
static void jit_wait(uint64_t timeout_ns)
{
	bool interrupted;

	if (perf_map__wait(timeout_ns, &interrupted))
		pr_warn("perf maps: %s; JIT frames not read yet stay unnamed",
			interrupted ? "reads skipped (SIGINT/SIGTERM)" : "reads still running");
}

/* The name of addr in the map as its last read done has it (jit_refresh()). */
static const char *jit_find(void *ref, uint64_t addr)
{
	perf_map__sync(ref);
	return perf_map__find(ref, addr, NULL);
}

/* Green (R 50..110, G 190..240, B 50..110). */
const struct frame_kind frame_kind_jit = {
	.name = "jit",
	.suffix = "_[j]",
	.colour = { .base = { 50, 190, 50 },
		    .shade = { { 0, 0, 60 }, { 50, 0, 0 }, { 0, 60, 0 } } },
	.rank = 4,
	.get = jit_get,
	.put = jit_put,
	.refresh = jit_refresh,
	.wait = jit_wait,
	.find = jit_find,
};

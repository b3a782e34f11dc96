// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jit.c: the JIT runtime. A process's perf map is opened at the first frame of it in anonymous
 * memory (kept on the process: a proc attachment), closed (read a last time, in the reader
 * thread) at its exec and exit; the frame's location holds a reference on the map and is named
 * from it at output time (frame_kind_jit's hooks, called by the symbolizer).
 */
#include <errno.h>
#include <stdio.h>
#include "process/proc_table.h"
#include "profile/aggregate.h"
#include "runtime/jit/jit.h"
#include "runtime/jit/perf_map.h"
#include "runtime/runtime.h"
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

/* A process's perf map is read a last time and let go (the aggregate may keep it). */
static void proc_map_end(void *data, bool exec)
{
	(void)exec; /* a new image: its JIT, if any, writes a new perf map */
	perf_map__close(data, now_ns());
	perf_map__put(data);
}

static void proc_map_free(void *data)
{
	perf_map__put(data);
}

/* The process's perf map (perf_map__open_process(): nothing read then), opened at its first
 * JIT frame; the process entry holds a reference. */
static const struct proc_attach_type jit_proc_map = {
	.name = "jit perf map",
	.end = proc_map_end,
	.free = proc_map_free,
};

/* The perf map of p, opened at the first call. NULL + errno. */
static struct perf_map *proc_perf_map(struct proc *p)
{
	struct perf_map *m = proc__attachment(p, &jit_proc_map);
	int err;

	if (m)
		return m;
	m = perf_map__open_process((pid_t)proc__tgid(p), now_ns());
	if (!m)
		return NULL;
	err = proc__attach(p, &jit_proc_map, m);
	if (err) {
		perf_map__put(m);
		errno = -err;
		return NULL;
	}
	return m;
}

static int64_t jit_anon_location(void *rt, struct proc *p, struct aggregate *agg, uint64_t pc,
				 uint32_t fallback)
{
	struct perf_map *m = proc_perf_map(p);

	(void)rt;
	if (!m)
		return -ENOMEM;
	/* Named when the profile is written, from the map as it is then: its lines for this
	 * address are read meanwhile, in the perf map reader's thread. */
	perf_map__want(m, pc, now_ns());
	return aggregate__ref_location(agg, FRAME_JIT, m, pc, fallback);
}

/* Perf maps read only in part (too large) or for some addresses only: JIT frames there stay
 * "[anon]+0xOFF". Nothing when every map was read whole. */
static void jit_summary_stacks(void *rt, FILE *fp)
{
	struct perf_map_stats pm;

	(void)rt;
	perf_map__stats(&pm);
	if (pm.capped_reads)
		fprintf(fp,
			"bpfprof: perf maps: %llu of %llu reads stopped at the %llu MiB cap, up to "
			"%.1f MiB not read: JIT frames named there stay [anon]+0xOFF\n",
			(unsigned long long)pm.capped_reads, (unsigned long long)pm.reads,
			(unsigned long long)(BPFPROF_PERF_MAP_MAX_SZ >> 20),
			pm.max_not_read / 1048576.0);
	if (pm.addrs_dropped)
		fprintf(fp,
			"bpfprof: perf maps: %llu JIT addresses past %u per process not looked up\n",
			(unsigned long long)pm.addrs_dropped, BPFPROF_PERF_MAP_WANT_MAX);
}

/* Before the process table frees its processes (and their maps): reads still queued or
 * running are of no use now. */
static void jit_free(void *rt)
{
	(void)rt;
	perf_map__shutdown();
}

const struct runtime_ops runtime_jit_ops = {
	.name = "jit",
	.free = jit_free,
	.anon_location = jit_anon_location,
	.summary_stacks = jit_summary_stacks,
};

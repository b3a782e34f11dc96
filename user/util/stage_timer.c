// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stage_timer.c: per-stage timing for --stats. */
#include "util/stage_timer.h"

struct stage_timer stage_timers[STAGE_CNT];
int stage_timers_on;

static const char *const stage_names[STAGE_CNT] = {
	[STAGE_DRAIN] = "ringbuf drain",
	[STAGE_EVENT] = "process table (events)",
	[STAGE_UNWIND] = "unwind",
	[STAGE_AGGREGATE] = "aggregate (per sample)",
	[STAGE_SYMBOLIZE] = "symbolize (per unique location)",
	[STAGE_OUTPUT] = "output",
	[STAGE_GO_TABLE] = "Go table (per .gopclntab)",
};

void stage_timer__add(enum stage st, uint64_t ns)
{
	struct stage_timer *t = &stage_timers[st];
	int b = ns ? 63 - __builtin_clzll(ns) : 0;

	t->cnt++;
	t->total_ns += ns;
	t->buckets[b]++;
}

/* Upper bound (ns) of the bucket holding the q-quantile. */
static uint64_t quantile(const struct stage_timer *t, double q)
{
	uint64_t want = (uint64_t)(q * t->cnt), seen = 0;
	int i;

	for (i = 0; i < 64; i++) {
		seen += t->buckets[i];
		if (seen > want)
			return i == 63 ? UINT64_MAX : (2ull << i);
	}
	return 0;
}

void stage_timers__print(FILE *fp)
{
	const struct stage_timer *t;
	int i;

	for (i = 0; i < STAGE_CNT; i++) {
		t = &stage_timers[i];
		if (!t->cnt)
			continue;
		fprintf(fp,
			"bpfprof: stage %s: %llu items, p50 < %.1f us, p99 < %.1f us, "
			"total %.1f ms\n",
			stage_names[i], (unsigned long long)t->cnt, quantile(t, 0.5) / 1e3,
			quantile(t, 0.99) / 1e3, t->total_ns / 1e6);
	}
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_agent.c: what the agent's /healthz says of its sampling loop: healthy from the start,
 * failing with the reason once the loop has not drained the ringbuf for AGENT_HEALTH_INTERVALS
 * intervals, or, profiling the whole machine, has handled no sample for as long; healthy again
 * at the next drain with samples. The clock is given, so nothing waits on a busy machine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "agent/agent.h"
#include "util/log.h"
#include "cmd/opts.h"
#include "util/util.h"

#define INTERVAL_NS 1000000000ull	/* --interval 1 */
#define LIMIT_NS (AGENT_HEALTH_INTERVALS * INTERVAL_NS)

static struct agent *new_agent(struct bpfprof_opts *o, bool whole_machine)
{
	struct agent *a;

	memset(o, 0, sizeof(*o));
	o->ag.freq_hz = 99;
	o->ag.whole_machine = whole_machine;
	o->ag.interval_ns = INTERVAL_NS;
	a = agent__new(&o->ag);
	assert_non_null(a);
	return a;
}

static void test_health_drain_and_samples(void **state)
{
	struct agent_counters c = {};
	struct bpfprof_opts o;
	char reason[256] = "";
	struct agent *a;
	uint64_t t0;

	t0 = now_ns();
	a = new_agent(&o, true);
	/* The clock starts at agent__new(). */
	assert_true(agent__health(a, t0 + LIMIT_NS - 1000000, reason, sizeof(reason)));
	/* No drain for longer than the limit: the loop is stuck. */
	assert_false(agent__health(a, now_ns() + LIMIT_NS + 1000000, reason, sizeof(reason)));
	print_message("%s\n", reason);
	assert_non_null(strstr(reason, "sampling loop stalled: no ringbuf drain for 3."));
	assert_non_null(strstr(reason, " s (limit 3.0 s, 3 intervals)"));

	/* Drains, samples coming: healthy until the limit after the last one. */
	c.samples = 10;
	t0 = now_ns();
	agent__set_counters(a, &c);
	assert_true(agent__health(a, t0 + LIMIT_NS - 1000000, reason, sizeof(reason)));

	/* Drains go on, but the sample count stands still: sampling stopped. */
	t0 = now_ns();
	agent__set_counters(a, &c);
	assert_true(agent__health(a, t0, reason, sizeof(reason)));
	usleep(300000);
	t0 = now_ns();
	agent__set_counters(a, &c);
	/* The drain is fresh at t0 + 2.8 s; the last new sample 0.3 s older, past the limit. */
	assert_false(agent__health(a, t0 + LIMIT_NS - 200000000, reason, sizeof(reason)));
	print_message("%s\n", reason);
	assert_non_null(strstr(reason, "no sample handled for"));
	assert_non_null(strstr(reason, "(limit 3.0 s, 3 intervals)"));

	/* A sample again: healthy. */
	c.samples++;
	t0 = now_ns();
	agent__set_counters(a, &c);
	assert_true(agent__health(a, t0, reason, sizeof(reason)));
	agent__free(a, 0);
}

/* -p or -- CMD (an exporter without bpfprof agent): a target may sleep; only drains count. */
static void test_health_targets_may_sleep(void **state)
{
	struct agent_counters c = {};
	struct bpfprof_opts o;
	char reason[256];
	struct agent *a;
	uint64_t t0;

	a = new_agent(&o, false);
	usleep(300000);
	t0 = now_ns();
	agent__set_counters(a, &c);
	assert_true(agent__health(a, t0 + LIMIT_NS - 200000000, reason, sizeof(reason)));
	assert_false(agent__health(a, t0 + LIMIT_NS + 1000000, reason, sizeof(reason)));
	assert_non_null(strstr(reason, "no ringbuf drain"));
	agent__free(a, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_drain_and_samples),
		cmocka_unit_test(test_health_targets_may_sleep),
	};

	log__set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

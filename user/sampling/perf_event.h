/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* perf_event.h: one sampling perf_event per online CPU (perf_event_open(2)). */
#ifndef BPFPROF_PERF_EVENT_H
#define BPFPROF_PERF_EVENT_H

#include <stdint.h>

struct perf_event_opts {
	const char *event; /* "cpu-clock" (software timer) or "cycles" (hardware PMU) */
	uint64_t freq_hz;  /* samples per second per CPU */
};

struct perf_events {
	int *fds;  /* one per online CPU, -1 where not opened */
	int *cpus; /* the CPU of each fd */
	int cnt;
};

/* True when name is an event perf_events__open() knows. */
int perf_event__known(const char *name);

/*
 * Opens the event on every online CPU (/sys/devices/system/cpu/online), all tasks, disabled
 * until the BPF program is attached. cpu-clock samples every 1e9 / freq_hz ns of CPU time;
 * cycles uses the kernel's frequency mode. Returns 0, or a negative errno from
 * perf_event_open(2) with *failed_cpu set: -ENOENT/-EOPNOTSUPP when the machine has no such
 * event (no hardware PMU), -EACCES/-EPERM without CAP_PERFMON, -EINVAL for a rate above
 * kernel.perf_event_max_sample_rate.
 */
int perf_events__open(struct perf_events *pe, const struct perf_event_opts *opts, int *failed_cpu);
void perf_events__close(struct perf_events *pe);

#endif /* BPFPROF_PERF_EVENT_H */

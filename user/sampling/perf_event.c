// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_event.c: sampling events for the BPF program. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sampling/perf_event.h"

int perf_event__known(const char *name)
{
	return !strcmp(name, "cpu-clock") || !strcmp(name, "cycles");
}

/* Online CPUs from a list such as "0-3,5,7-8". Returns the count or a negative errno. */
static int online_cpus(int **cpus)
{
	char buf[4096], *p, *end;
	int cnt = 0, cap = 0, *v = NULL, *nv;
	long a, b;
	FILE *f;

	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (p = buf; *p && *p != '\n';) {
		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			goto inval;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				goto inval;
		}
		for (; a <= b; a++) {
			if (cnt == cap) {
				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[cnt++] = a;
		}
		p = *end == ',' ? end + 1 : end;
	}
	*cpus = v;
	return cnt;
inval:
	free(v);
	return -EINVAL;
}

int perf_events__open(struct perf_events *pe, const struct perf_event_opts *opts, int *failed_cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 0,
		.exclude_hv = 1,
	};
	int i, n, err;

	memset(pe, 0, sizeof(*pe));
	if (!strcmp(opts->event, "cpu-clock")) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		/* A fixed period of CPU time in ns: exact rate, no frequency ramp-up. */
		attr.sample_period = 1000000000ull / opts->freq_hz;
	} else if (!strcmp(opts->event, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.freq = 1;
		attr.sample_freq = opts->freq_hz;
	} else {
		return -EINVAL;
	}
	n = online_cpus(&pe->cpus);
	if (n < 0)
		return n;
	pe->fds = malloc(n * sizeof(*pe->fds));
	if (!pe->fds) {
		err = -ENOMEM;
		goto fail;
	}
	pe->cnt = n;
	for (i = 0; i < n; i++)
		pe->fds[i] = -1;
	for (i = 0; i < n; i++) {
		pe->fds[i] = syscall(SYS_perf_event_open, &attr, -1, pe->cpus[i], -1,
				     PERF_FLAG_FD_CLOEXEC);
		if (pe->fds[i] < 0) {
			err = -errno;
			*failed_cpu = pe->cpus[i];
			goto fail;
		}
	}
	return 0;
fail:
	perf_events__close(pe);
	return err;
}

void perf_events__close(struct perf_events *pe)
{
	int i;

	for (i = 0; i < pe->cnt; i++)
		if (pe->fds[i] >= 0)
			close(pe->fds[i]);
	free(pe->fds);
	free(pe->cpus);
	memset(pe, 0, sizeof(*pe));
}

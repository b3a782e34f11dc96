/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* check.h: `bpfprof check`: what this kernel and these privileges allow, in one screen. */
#ifndef BPFPROF_CHECK_H
#define BPFPROF_CHECK_H

#include <stdio.h>

/*
 * Prints to out the kernel release, each BPF feature bpfprof uses (with the release that
 * introduced it: ok, fallback or missing), privileges, perf_event_paranoid, lockdown,
 * tracefs and bpf_stats; then loads the BPF programs, attaches them and opens event (a
 * perf_event name, "cpu-clock") at freq_hz on every CPU, as a run would. Returns 0 when
 * bpfprof can run here, 1 when it cannot (the lines say why).
 */
int check__run(FILE *out, const char *event, unsigned long long freq_hz);

#endif /* BPFPROF_CHECK_H */

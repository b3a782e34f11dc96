/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* consumer.h: drains the ringbuf on a timer and dispatches records by type. */
#ifndef BPFPROF_CONSUMER_H
#define BPFPROF_CONSUMER_H

#include <stdint.h>
#include "proc_table.h"
#include "sample.h"

struct consumer_stats {
	uint64_t samples;	/* RECORD_SAMPLE handled */
	uint64_t forks;
	uint64_t execs;
	uint64_t exits;
	uint64_t mmaps;		/* RECORD_MMAP */
	uint64_t munmaps;	/* RECORD_MUNMAP */
	uint64_t bad;		/* records that failed decoding (counted, skipped) */
	uint64_t errors;	/* records whose handling failed (out of memory) */
};

struct consumer;

/*
 * Reads the ringbuf map ringbuf_fd. Records are submitted without wakeups (a wakeup from the
 * perf_event program costs an interrupt per sample), so nothing polls: call consumer__drain()
 * on a short timer. sh and pt are borrowed. Returns NULL and sets errno.
 */
struct consumer *consumer__new(int ringbuf_fd, struct sample_handler *sh, struct proc_table *pt);
void consumer__free(struct consumer *c);

/*
 * Handles every record committed so far, in reservation order, then frees the processes whose
 * exit record was among them. Returns the number of records or a negative errno.
 */
int consumer__drain(struct consumer *c);

const struct consumer_stats *consumer__stats(const struct consumer *c);

#endif /* BPFPROF_CONSUMER_H */

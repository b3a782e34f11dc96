/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* consumer.h: drains the ringbuf on a timer and dispatches records by type. */
#ifndef BPFPROF_CONSUMER_H
#define BPFPROF_CONSUMER_H

#include <stdint.h>
#include "process/proc_table.h"
#include "pipeline/sample.h"

struct consumer_stats {
	uint64_t samples; /* RECORD_SAMPLE handled */
	uint64_t forks;
	uint64_t execs;
	uint64_t exits;
	uint64_t mmaps;	  /* RECORD_MMAP */
	uint64_t munmaps; /* RECORD_MUNMAP */
	uint64_t bad;	  /* records that failed decoding (counted, skipped) */
	uint64_t errors;  /* records whose handling failed (out of memory) */
};

struct consumer;
struct capture_writer;

/*
 * Reads the ringbuf map ringbuf_fd. Records are submitted without wakeups (a wakeup from the
 * perf_event program costs an interrupt per sample) until the ringbuf is a quarter full
 * (wakeup_bytes in bpf/maps.bpf.h): call consumer__drain() on a timer and when
 * consumer__wakeup_fd() polls readable. sh and pt are borrowed. ringbuf_fd < 0 makes a consumer fed by
 * consumer__handle() only (bpfprof report). Returns NULL and sets errno.
 */
struct consumer *consumer__new(int ringbuf_fd, struct sample_handler *sh, struct proc_table *pt);

/* --raw-capture: every record handled is appended to w after it is handled (so the maps
 * texts read while handling it come first), and every drain ends with a batch marker. */
void consumer__set_capture(struct consumer *c, struct capture_writer *w);

struct targets;
/* The run's targets (targets.h), told of each exit with the process's CPU time. Borrowed. */
void consumer__set_targets(struct consumer *c, struct targets *t);
/* The runtimes (borrowed): their records, and exec and exit of processes. */
struct runtimes;
void consumer__set_runtimes(struct consumer *c, struct runtimes *rts);

/* Handles one record of sz bytes, as a drain does (replay). Always 0: failures are counted. */
int consumer__handle(struct consumer *c, const void *data, size_t sz);
void consumer__free(struct consumer *c);

/*
 * Handles every record committed so far, in reservation order, then frees the processes whose
 * exit record was among them. Returns the number of records or a negative errno.
 */
int consumer__drain(struct consumer *c);
/* An fd that polls readable (POLLIN) when BPF woke the consumer: the ringbuf's epoll fd (owned
 * by c). -1 for a consumer without a ringbuf. */
int consumer__wakeup_fd(const struct consumer *c);

const struct consumer_stats *consumer__stats(const struct consumer *c);

#endif /* BPFPROF_CONSUMER_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pending.h: the one per-CPU join of the records BPF sends just before the sample they belong to
 * (bpf/record.h, struct pre_sample: RECORD_GO_STACK, RECORD_FP_CHAIN, RECORD_PY_STACK,
 * RECORD_OFF_CPU, RECORD_WAKER). BPF emits such a record and then its sample from the same
 * program run, on one CPU, so the ringbuf delivers them in order per CPU: a record is kept for
 * its CPU until the next sample of that CPU, which takes it when its (tid, time) match.
 */
#ifndef BPFPROF_PENDING_H
#define BPFPROF_PENDING_H

#include <stddef.h>
#include <stdint.h>

/* CPUs whose records are kept: a record of a higher cpu is dropped. */
#define PENDING_CPUS_MAX 4096

struct pending_slot;

/* The records of one type waiting for their sample, one per CPU. */
struct pending {
	struct pending_slot **slot; /* by cpu, PENDING_CPUS_MAX; a slot allocated at its first
				     * record */
	size_t rec_sz;		    /* bytes kept per record at most */
	uint64_t unmatched;	    /* replaced before their sample came (it was lost), or taken
				     * by a sample that was not theirs */
	uint64_t matched;	    /* taken by their sample */
};

/* Records of up to rec_sz bytes. 0 or -ENOMEM. */
int pending__init(struct pending *pd, size_t rec_sz);
/* Frees every kept record. A zeroed or freed pending is fine. */
void pending__free(struct pending *pd);
/*
 * Keeps the len bytes of rec (len <= rec_sz) for the sample of (cpu, tid, time_ns) that follows
 * it, replacing a record of that cpu no sample took (counted unmatched). Returns the kept copy
 * (the caller may extend it up to rec_sz bytes until the next put or take of that cpu), or NULL
 * when cpu or len is out of range or memory runs out (the record is dropped).
 */
void *pending__put(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns,
		   const void *rec, size_t len);
/* The record kept for (cpu, tid, time_ns), not consumed; NULL when there is none. */
void *pending__peek(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns);
/*
 * The record kept for the sample of (cpu, tid, time_ns), consumed: valid until the next put or
 * take of that cpu. NULL when its cpu keeps none, or one for another (tid, time) (counted
 * unmatched and dropped: its own sample was lost).
 */
const void *pending__take(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns);

#endif /* BPFPROF_PENDING_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * wakers.h: --wakers. The stacks of the threads that woke blocked target threads (RECORD_WAKER
 * samples, bpf/off_cpu.bpf.c), kept by the thread they woke until its off-CPU sample comes,
 * which then shows them as offwaketime (bcc) does: the blocked stack, a "--" frame, the waker's
 * stack from its leaf (where it woke the thread, in the kernel) to its root, then its comm.
 */
#ifndef BPFPROF_WAKERS_H
#define BPFPROF_WAKERS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"
#include "profile/aggregate.h"

struct ksyms;
struct wakers;

/* ksyms (borrowed, may be NULL) tells BPF's own frames and interrupts apart. NULL: ENOMEM. */
struct wakers *wakers__new(const struct ksyms *ksyms);
void wakers__free(struct wakers *w);

/*
 * Keeps the waker stack of sample s (SAMPLE_F_WAKER) whose RECORD_WAKER is r for the thread it
 * woke, replacing an older one: its kernel frames (leaf first, BPF's and the tracepoint's own
 * frames left out) as locations of agg, then user[0..n_user) (root first, the waker's user
 * frames when it is a target) reversed, then comm. A waker the kernel stack shows in an
 * interrupt (a timer, a network packet) ran on another task's time: its kernel frames end at
 * the interrupt's entry, and "[interrupt]" stands for the task and its user frames. 0 or a
 * negative errno.
 */
int wakers__put(struct wakers *w, struct aggregate *agg, const struct waker_record *r,
		const struct sample_record *s, const uint32_t *user, size_t n_user, uint32_t comm);

/*
 * The waker stack kept for thread tid by waker_tid at waker_ns (an off_cpu_record's), with the
 * "--" separator first, in *locs (n locations, valid until the next call); removed. NULL and 0
 * when there is none (it was lost, or over the rate limit).
 */
const uint32_t *wakers__take(struct wakers *w, uint32_t tid, uint32_t waker_tid, uint64_t waker_ns,
			     size_t *n);

/* Forgets every waker stack kept (their locations belong to an aggregate being replaced). */
void wakers__clear(struct wakers *w);

/* Forgets the waker stacks kept for the threads of process tgid (it exited). */
void wakers__forget(struct wakers *w, uint32_t tgid);

/*
 * How many of an off-CPU stack's frames (aggregate__for_each_frames()'s, comm first) are the
 * blocked thread's own: up to the "--" that starts the waker's stack wakers__take() put after
 * them, or all n when there is none.
 */
size_t wakers__blocked_frames(const struct aggregate *agg, const struct agg_frame *frames,
			      size_t n);

/* Waker stacks kept, paired with an off-CPU sample, replaced or forgotten unpaired. */
struct wakers_stats {
	uint64_t kept, paired, unpaired;
};
void wakers__stats(const struct wakers *w, struct wakers_stats *st);

#endif /* BPFPROF_WAKERS_H */

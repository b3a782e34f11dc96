// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* wakers.c: waker stacks by the thread they woke, until its off-CPU sample. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "signal/wakers.h"
#include "symbols/ksyms.h"

struct waker {
	UT_hash_handle hh;
	uint32_t wakee_tid; /* key */
	uint32_t wakee_tgid;
	uint32_t waker_tid;
	uint64_t time_ns;
	size_t n;
	uint32_t locs[]; /* "--", then the waker's frames leaf first, then its comm */
};

struct wakers {
	const struct ksyms *ksyms;
	struct waker *by_tid;
	uint32_t *out; /* wakers__take()'s result */
	size_t out_cap;
	struct wakers_stats st;
};

struct wakers *wakers__new(const struct ksyms *ksyms)
{
	struct wakers *w = calloc(1, sizeof(*w));

	if (w)
		w->ksyms = ksyms;
	return w;
}

void wakers__free(struct wakers *w)
{
	struct waker *k, *tmp;

	if (!w)
		return;
	HASH_ITER(hh, w->by_tid, k, tmp) {
		HASH_DEL(w->by_tid, k);
		free(k);
	}
	free(w->out);
	free(w);
}

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* A frame of the BPF program or of the tracepoint that ran it: above where the waker woke. */
static bool tracing_frame(const struct ksyms *ks, uint64_t addr)
{
	uint64_t off;
	const char *name = ks ? ksyms__find(ks, addr, &off) : NULL;

	/* A BPF program without kallsyms (net.core.bpf_jit_kallsyms=0) has no name. */
	return !name || starts(name, "bpf_prog_") || starts(name, "bpf_trace_run") ||
	       starts(name, "__bpf_trace_") || starts(name, "__traceiter_");
}

/* An interrupt's entry (x86-64 idtentry, softirqs run on irq exit). */
static bool interrupt_frame(const struct ksyms *ks, uint64_t addr)
{
	uint64_t off;
	const char *name = ks ? ksyms__find(ks, addr, &off) : NULL;

	return starts(name, "asm_sysvec_") || starts(name, "asm_common_interrupt") ||
	       starts(name, "handle_softirqs") || starts(name, "__do_softirq") ||
	       starts(name, "irq_exit_rcu");
}

int wakers__put(struct wakers *w, struct aggregate *agg, const struct waker_record *r,
		const struct sample_record *s, const uint32_t *user, size_t n_user, uint32_t comm)
{
	uint32_t cnt = s->kstack_cnt <= BPFPROF_KSTACK_MAX ? s->kstack_cnt : 0, i, first = 0;
	bool irq = false;
	struct waker *k, *old;
	int64_t id;
	size_t n = 0;

	/* Without kernel symbols, no telling the tracing frames from the rest: all kept. */
	while (w->ksyms && first < cnt && tracing_frame(w->ksyms, s->kstack[first]))
		first++;
	/* In an interrupt, the frames past its entry and the user stack are the interrupted
	 * task's, which has nothing to do with the wakeup: cut there. */
	for (i = first; i < cnt && !irq; i++)
		if ((irq = interrupt_frame(w->ksyms, s->kstack[i])))
			cnt = i + 1;
	k = malloc(sizeof(*k) + (cnt - first + n_user + 3) * sizeof(uint32_t));
	if (!k)
		return -ENOMEM;
	k->wakee_tid = r->wakee_tid;
	k->wakee_tgid = r->wakee_tgid;
	k->waker_tid = r->tid;
	k->time_ns = r->time_ns;
	id = aggregate__string(agg, "--");
	if (id >= 0)
		id = aggregate__location(agg, FRAME_USER, NULL, 0, id);
	if (id < 0)
		goto fail;
	k->locs[n++] = id;
	for (i = first; i < cnt; i++) {
		id = aggregate__location(agg, FRAME_KERNEL, NULL, s->kstack[i], AGG_NO_NAME);
		if (id < 0)
			goto fail;
		k->locs[n++] = id;
	}
	if (irq) {
		id = aggregate__string(agg, "[interrupt]");
		if (id >= 0)
			id = aggregate__location(agg, FRAME_COMM, NULL, 0, id);
	} else {
		for (i = n_user; i-- > 0;)
			k->locs[n++] = user[i];
		id = aggregate__location(agg, FRAME_COMM, NULL, 0, comm);
	}
	if (id < 0)
		goto fail;
	k->locs[n++] = id;
	k->n = n;
	HASH_REPLACE(hh, w->by_tid, wakee_tid, sizeof(k->wakee_tid), k, old);
	if (old)
		w->st.unpaired++;
	free(old);
	w->st.kept++;
	return 0;
fail:
	free(k);
	return id;
}

const uint32_t *wakers__take(struct wakers *w, uint32_t tid, uint32_t waker_tid, uint64_t waker_ns,
			     size_t *n)
{
	struct waker *k;
	size_t cap = w->out_cap;

	*n = 0;
	HASH_FIND(hh, w->by_tid, &tid, sizeof(tid), k);
	if (!k || k->waker_tid != waker_tid || k->time_ns != waker_ns)
		return NULL;
	HASH_DEL(w->by_tid, k);
	if (k->n > cap) {
		uint32_t *out = realloc(w->out, k->n * sizeof(*out));

		if (!out) {
			free(k);
			return NULL;
		}
		w->out = out;
		w->out_cap = k->n;
	}
	memcpy(w->out, k->locs, k->n * sizeof(*k->locs));
	*n = k->n;
	free(k);
	w->st.paired++;
	return w->out;
}

/* Forgets the kept stacks of process tgid, or all of them (all). */
static void drop(struct wakers *w, uint32_t tgid, bool all)
{
	struct waker *k, *tmp;

	HASH_ITER(hh, w->by_tid, k, tmp) {
		if (!all && k->wakee_tgid != tgid)
			continue;
		HASH_DEL(w->by_tid, k);
		free(k);
		w->st.unpaired++;
	}
}

void wakers__clear(struct wakers *w)
{
	drop(w, 0, true);
}

void wakers__forget(struct wakers *w, uint32_t tgid)
{
	drop(w, tgid, false);
}

void wakers__stats(const struct wakers *w, struct wakers_stats *st)
{
	*st = w->st;
}

size_t wakers__blocked_frames(const struct aggregate *agg, const struct agg_frame *frames, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (frames[i].kind == FRAME_USER && frames[i].name != AGG_NO_NAME &&
		    !strcmp(aggregate__str(agg, frames[i].name), "--"))
			return i;
	return n;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go.bpf.h: for a sample of a Go thread on its g0 stack (runtime.systemstack, morestack: the
 * garbage collector, stack growth), a copy of the goroutine stack it switched from
 * (RECORD_GO_STACK, bpf/record.h), so that user space unwinds across the switch as the Go
 * runtime's own traceback does (runtime/traceback.go) without reading the live process.
 */
#ifndef BPFPROF_GO_BPF_H
#define BPFPROF_GO_BPF_H

#include "maps.bpf.h"
#include "record.h"

/* Per-CPU scratch: the record being built (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct go_stack_record);
} go_scratches SEC(".maps");

/* Bytes from start to the end of the pages-th page from bp's (pages 0: BPFPROF_GO_STACK_SZ),
 * bounded for the verifier (8 to BPFPROF_GO_STACK_SZ). */
static __always_inline __u32 go_copy_len(__u64 start, __u64 bp, __u32 pages)
{
	__u64 n = pages ? (bp | 4095) + 1 + 4096ull * (pages - 1) - start : BPFPROF_GO_STACK_SZ;

	n &= BPFPROF_GO_STACK_SZ * 2 - 1;
	if (n > BPFPROF_GO_STACK_SZ)
		n = BPFPROF_GO_STACK_SZ;
	if (n < 8)
		n = 8;
	return n;
}

/*
 * The RECORD_GO_STACK of the current thread around bp, output. A global function, checked
 * once: inlined, the checker went through it again for each way the walk below can end (it
 * took 510,000 instructions of the sampler's 840,000). Returns 1 when a record was output.
 */
__noinline int go_stack_emit(__u64 pid_tgid, __u64 time_ns, __u64 bp)
{
	__u32 zero = 0, n = BPFPROF_GO_STACK_SZ;
	struct go_stack_record *r;
	struct bpf_stats *st;
	__u64 start, probe;
	int i;

	if (bp < BPFPROF_GO_STACK_BELOW)
		return 0;
	r = bpf_map_lookup_elem(&go_scratches, &zero);
	st = stats__get();
	if (!r || !st)
		return 0;
	/* Goroutine stacks live in the heap's spans, whose pages need not all be there (never
	 * touched, or given back): a copy that meets one fails whole. From BELOW bytes under bp,
	 * else from bp's page; up to 16 KiB, else the page after bp's, else bp's page's end. */
	start = bp - BPFPROF_GO_STACK_BELOW;
	if (bpf_probe_read_user(&probe, 1, (void *)start))
		start = bp & ~4095ull;
	for (i = 0; i < 3; i++) {
		n = go_copy_len(start, bp, i == 0 ? 0 : 3 - i);
		if (!bpf_probe_read_user(r->data, n, (void *)start))
			break;
	}
	if (i == 3)
		return 0;
	r->hdr.type = RECORD_GO_STACK;
	r->hdr.sz = offsetof(struct go_stack_record, data) + n;
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->time_ns = time_ns;
	r->cpu = bpf_get_smp_processor_id();
	r->len = n;
	r->addr = start;
	r->bp = bp;
	if (bpf_ringbuf_output(&ringbuf, r, offsetof(struct go_stack_record, data) + n,
			       BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&st->go_lost, 1);
		return 0;
	}
	__sync_fetch_and_add(&st->go_stacks, 1);
	return 1;
}

/*
 * For an armed Go process (go_procs): follows the frame pointers from bp (the sampled thread's
 * rbp) while they stay in [lo, lo + len), the sample's stack copy; the first one outside is the stack switched from (Go saves the goroutine's rbp
 * in the first g0 frame): go_stack_emit() copies the memory around it, output before the
 * sample's record. Nothing when the chain ends or stays in the copy. A global function,
 * checked once. Returns 1 when a record was output, else 0.
 */
__noinline int go_stack(__u64 pid_tgid, __u64 time_ns, __u64 bp, __u64 lo, __u64 len)
{
	__u32 tgid = pid_tgid >> 32;
	__u64 next;
	int i;

	if (!bpf_map_lookup_elem(&go_procs, &tgid))
		return 0;
	for (i = 0; i < BPFPROF_GO_FP_STEPS; i++) {
		if (!bp || (bp & 7))
			return 0;
		if (bp < lo || bp - lo >= len)
			return go_stack_emit(pid_tgid, time_ns, bp);
		/* No check that frames move toward the stack's end: the bounded steps end a
		 * cycle, and each test on next would double the states the checker goes
		 * through per step (160,000 instructions). */
		if (bpf_probe_read_user(&next, sizeof(next), (void *)bp))
			return 0;
		bp = next;
	}
	return 0;
}

/* Per-CPU scratch: the RECORD_FP_CHAIN being built. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_chain_record);
} fp_chain_scratches SEC(".maps");

/* RECORD_FP_CHAINs of a sample, at most: BPFPROF_FP_CHAIN_MAX frames each (the loader sets
 * enough for --max-frames, at most BPFPROF_FP_CHAIN_PIECES). */
const volatile __u32 fp_chain_pieces = BPFPROF_FP_CHAIN_PIECES;

/* Stack memory the walk reads at once: a probe read per frame cost ~150 ns here, one per
 * chunk of frames (a deep recursion's frames take 40-100 bytes) ~1 us. */
#define GO_CHUNK_SZ 4096

/*
 * Per-CPU scratch: go_chain()'s walk, its state and the chunk of stack it reads from. The state
 * lives here, not in bpf_loop()'s context on the stack: the verifier tracks stack values from
 * one callback call to the next, and with counters there it went through the callback once per
 * value ("the sequence of 8193 jumps is too complex"); map values it does not track.
 */
struct go_walk {
	__u64 bp;     /* the frame pointer to read next */
	__u64 base;   /* data[0..have) is the stack from base */
	__u64 have;
	__u32 cnt;    /* the record's frames[] filled */
	__u32 downs;  /* steps to a lower frame pointer: the switches between stacks */
	__u32 pieces; /* records left to fill, this one included */
	__u32 outside; /* a frame outside the copy was recorded */
	__u8 data[GO_CHUNK_SZ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct go_walk);
} go_walks SEC(".maps");

/* bpf_loop()'s callback context: what does not change during the walk. */
struct go_chain_walk {
	struct fp_chain_record *r;
	struct go_walk *g;
	struct bpf_stats *st;
	__u64 lo; /* the sample's copy: [lo, lo + len) */
	__u64 len;
};

/* Stack switches a chain may take (g0 to the goroutine's, in either order in memory). */
#define GO_CHAIN_DOWNS 2

/* The 16 bytes at g->bp, in g->data: from the chunk read last, else from a new chunk at bp,
 * else (the stack's end is nearer) a chunk of those 16 bytes alone. Their offset in data, or
 * -1 when unreadable. (Read into the map, not the callback's stack: Linux 6.18's verifier
 * fails a callback that has a helper write its stack, "callback leftover stack slots".) */
static __always_inline long go_chain_read(struct go_walk *g)
{
	__u64 bp = g->bp, off = bp - g->base;

	/* have is 0, 16 or GO_CHUNK_SZ; bp below base is outside too (off would wrap). */
	if (!g->have || bp < g->base || off > g->have - 16) {
		if (!bpf_probe_read_user(g->data, GO_CHUNK_SZ, (void *)bp))
			g->have = GO_CHUNK_SZ;
		else if (!bpf_probe_read_user(g->data, 16, (void *)bp))
			g->have = 16;
		else
			return -1;
		g->base = bp;
		off = 0;
	}
	if (off > GO_CHUNK_SZ - 16)
		return -1;
	return off;
}

/* w's record of n frames (1 to BPFPROF_FP_CHAIN_MAX), output; false when the ringbuf is full. */
static __always_inline bool go_chain_output(struct go_chain_walk *w, __u32 n)
{
	__u32 sz = offsetof(struct fp_chain_record, frames) + n * sizeof(struct fp_chain_frame);

	w->r->hdr.sz = sz;
	w->r->cnt = n;
	w->r->next = w->g->bp;
	if (bpf_ringbuf_output(&ringbuf, w->r, sz, BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&w->st->fp_chain_lost, 1);
		return false;
	}
	__sync_fetch_and_add(&w->st->fp_chains, 1);
	__sync_fetch_and_add(&w->st->fp_chain_frames, n);
	return true;
}

/* One frame pointer: 1 ends the walk (bpf_loop()'s callback, Linux 5.17+). */
static long go_chain_step(__u32 i, void *ctx)
{
	struct go_chain_walk *w = ctx;
	struct go_walk *g = w->g;
	__u64 bp = g->bp, saved, ret;
	__u32 k = g->cnt;
	long off;

	if (!bp || (bp & 7))
		return 1;
	off = go_chain_read(g);
	if (off < 0 || off > GO_CHUNK_SZ - 16)
		return 1;
	saved = *(__u64 *)&g->data[off];
	ret = *(__u64 *)&g->data[off + 8];
	if (bp - w->lo < w->len && w->len - (bp - w->lo) >= 16) {
		/* In the copy, return address included: user space has these words; back in it
		 * after frames outside, the chain went somewhere these records cannot describe. */
		if (g->outside)
			return 1;
	} else {
		if (k >= BPFPROF_FP_CHAIN_MAX) {
			/* A full record: the last allowed one is go_chain()'s to output; else out,
			 * and on with the next (the chain's root side). */
			if (g->pieces <= 1)
				return 1;
			if (!go_chain_output(w, BPFPROF_FP_CHAIN_MAX)) {
				g->cnt = 0;
				return 1;
			}
			g->pieces--;
			k = 0;
		}
		/* Checked again where it is used (Linux 6.1's verifier lost the bound when k went
		 * through the stack around the call above). */
		barrier_var(k);
		if (k >= BPFPROF_FP_CHAIN_MAX)
			return 1;
		w->r->frames[k].bp = bp;
		w->r->frames[k].ret = ret;
		g->cnt = k + 1;
		g->outside = 1;
	}
	/* g->bp is the word at the last frame recorded (the record's next) whatever ends here. */
	g->bp = saved;
	if (saved <= bp && ++g->downs > GO_CHAIN_DOWNS)
		return 1;
	return 0;
}

/*
 * For an armed Go process (go_procs) on a kernel with bpf_loop(): the frame-pointer chain
 * from bp (the sampled thread's rbp) past the sample's copy [lo, lo + len), output as
 * RECORD_FP_CHAINs when it has frames outside the copy. A global function, checked once.
 * Returns 1 when the walk recorded frames, else 0.
 */
__noinline int go_chain(__u64 pid_tgid, __u64 time_ns, __u64 bp, __u64 lo, __u64 len)
{
	struct go_chain_walk w = { .lo = lo, .len = len };
	__u32 tgid = pid_tgid >> 32, zero = 0, n;

	if (!bpf_map_lookup_elem(&go_procs, &tgid))
		return 0;
	w.r = bpf_map_lookup_elem(&fp_chain_scratches, &zero);
	w.g = bpf_map_lookup_elem(&go_walks, &zero);
	w.st = stats__get();
	if (!w.r || !w.g || !w.st)
		return 0;
	w.g->bp = bp;
	w.g->base = 0;
	w.g->have = 0;
	w.g->cnt = 0;
	w.g->downs = 0;
	w.g->pieces = fp_chain_pieces;
	w.g->outside = 0;
	w.r->hdr.type = RECORD_FP_CHAIN;
	w.r->tgid = tgid;
	w.r->tid = (__u32)pid_tgid;
	w.r->time_ns = time_ns;
	w.r->cpu = bpf_get_smp_processor_id();
	bpf_loop(BPFPROF_FP_CHAIN_STEPS * BPFPROF_FP_CHAIN_PIECES, go_chain_step, &w, 0);
	n = w.g->cnt;
	if (!n || n > BPFPROF_FP_CHAIN_MAX)
		return 0;
	go_chain_output(&w, n);
	return 1;
}

#endif /* BPFPROF_GO_BPF_H */

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

#endif /* BPFPROF_GO_BPF_H */

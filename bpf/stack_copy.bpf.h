/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stack_copy.bpf.h: a sample record of the current task: its stack mapping, the window of its
 * user stack to copy, the record reserved and filled (identity, user registers, stack bytes).
 * Shared by the perf_event sampler (sample.bpf.c) and the off-CPU programs (off_cpu.bpf.c).
 */
#ifndef BPFPROF_STACK_COPY_BPF_H
#define BPFPROF_STACK_COPY_BPF_H

#include "maps.bpf.h"
#include "compat.bpf.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */
#define PAGE_SZ	   4096

/* Stack bytes copied per sample, at most (--max-stack-size), and the copy size of a process
 * until user space sets another in copy_sizes (--stack-size); set by the loader. */
const volatile __u32 stack_max_sz __weak = BPFPROF_STACK_SZ_MAX;
const volatile __u32 stack_init_sz __weak = 16384;

/* tgid -> stack bytes to copy per sample: user space raises it when unwinds run out of stack
 * bytes, and lowers it when stacks stay shallow (user/process/stack_size.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} copy_sizes SEC(".maps") __weak;

/* The stack mapping holding sp, from the thread's cache or a VMA lookup; false if unknown (sp
 * in no mapping, or mmap_lock busy). limit is where copies end: the end of the mapping, or on
 * the main thread's stack the end of argc's page (struct stack_vma). */
static __always_inline bool stack_vma(struct task_struct *task, __u32 tid, __u64 sp,
				      struct stack_vma *out, struct bpf_stats *st,
				      const bool compat)
{
	struct stack_vma *cached = stack_vma_cache(task, tid, compat);
	__u64 mm = (__u64)TASK_FIELD(task, mm, compat);
	struct vma_info vi;

	if (cached && cached->mm == mm && cached->tid == (compat ? tid : 0) &&
	    sp >= cached->start && sp < cached->limit) { /* limit <= end */
		*out = *cached;
		return true;
	}
	__sync_fetch_and_add(&st->stack_vma_lookups, 1);
	if (!vma_find(task, sp, &vi, compat))
		return false;
	out->start = vi.start;
	out->end = vi.end;
	out->limit = vi.end;
	out->mm = mm;
	out->tid = compat ? tid : 0;
	out->pad = 0;
	/* The main thread's stack: end copies with the page holding argc (written by exec),
	 * unless sp is above it (a stack switched into the argument area). */
	if (vi.start_stack >= vi.start && vi.start_stack < vi.end)
		out->limit = (vi.start_stack | (PAGE_SZ - 1)) + 1;
	if (sp >= out->limit)
		out->limit = out->end;
	if (cached)
		*cached = *out;
	return true;
}

/*
 * The perf_event context's registers: x86-64's UAPI struct pt_regs
 * (arch/x86/include/uapi/asm/ptrace.h, bpf_user_pt_regs_t), the same on every kernel. Read
 * without CO-RE: the kernel's own struct pt_regs in vmlinux.h changed shape in 6.9 (FRED made
 * cs a union with csx), a field CO-RE cannot find on older kernels, and the verifier allows only
 * 8-byte loads of this context.
 */
struct uapi_pt_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/*
 * The user registers in perf_regs order (asm/perf_regs.h: enum perf_event_x86_regs). Two
 * copies of the same code: for the perf_event context, direct loads the verifier rewrites to
 * the sampled registers (a probe read would read struct bpf_perf_event_data_kern instead);
 * for the task's saved pt_regs, probe reads. One function for both would make one load
 * instruction serve two pointer types, which the verifier rejects.
 */
#define COPY_REGS(rec, GET)                                   \
	do {                                                  \
		(rec)->regs[PERF_REG_X86_AX] = GET(ax);       \
		(rec)->regs[PERF_REG_X86_BX] = GET(bx);       \
		(rec)->regs[PERF_REG_X86_CX] = GET(cx);       \
		(rec)->regs[PERF_REG_X86_DX] = GET(dx);       \
		(rec)->regs[PERF_REG_X86_SI] = GET(si);       \
		(rec)->regs[PERF_REG_X86_DI] = GET(di);       \
		(rec)->regs[PERF_REG_X86_BP] = GET(bp);       \
		(rec)->regs[PERF_REG_X86_SP] = GET(sp);       \
		(rec)->regs[PERF_REG_X86_IP] = GET(ip);       \
		(rec)->regs[PERF_REG_X86_FLAGS] = GET(flags); \
		(rec)->regs[PERF_REG_X86_R8] = GET(r8);       \
		(rec)->regs[PERF_REG_X86_R9] = GET(r9);       \
		(rec)->regs[PERF_REG_X86_R10] = GET(r10);     \
		(rec)->regs[PERF_REG_X86_R11] = GET(r11);     \
		(rec)->regs[PERF_REG_X86_R12] = GET(r12);     \
		(rec)->regs[PERF_REG_X86_R13] = GET(r13);     \
		(rec)->regs[PERF_REG_X86_R14] = GET(r14);     \
		(rec)->regs[PERF_REG_X86_R15] = GET(r15);     \
		(rec)->regs_arch = BPFPROF_ARCH_X86_64;       \
		(rec)->regs_cnt = PERF_REG_X86_64_MAX;        \
	} while (0)

/*
 * Reserves a sample with room for len stack bytes, in one of a few size classes (the verifier
 * needs a constant size per reservation): a shallow stack takes 4 KiB of ringbuf, not
 * --stack-size. *cap is the room reserved.
 */
static __always_inline struct sample_record *reserve_sample(__u64 len, __u32 *cap)
{
	if (len == 0) {
		*cap = 0;
		return bpf_ringbuf_reserve(&ringbuf, sizeof(struct sample_record), 0);
	}
	if (len <= 4096 && stack_max_sz >= 4096) {
		*cap = 4096;
		return bpf_ringbuf_reserve(&ringbuf, sizeof(struct sample_record) + 4096, 0);
	}
	if (len <= 16384 && stack_max_sz >= 16384) {
		*cap = 16384;
		return bpf_ringbuf_reserve(&ringbuf, sizeof(struct sample_record) + 16384, 0);
	}
	if (len <= 65536 && stack_max_sz >= 65536) {
		*cap = 65536;
		return bpf_ringbuf_reserve(&ringbuf, sizeof(struct sample_record) + 65536, 0);
	}
	*cap = stack_max_sz;
	return bpf_ringbuf_reserve(&ringbuf, sizeof(struct sample_record) + stack_max_sz, 0);
}

/* The part of the user stack a sample copies: from the red zone below sp to the copy limit of
 * its mapping (stack_vma()), at most the process's copy size. */
struct stack_window {
	struct stack_vma vma; /* sp's mapping, when vma_known */
	__u64 sp;
	__u64 bp;    /* the user rbp (Go stack switches: runtime/go.bpf.h) */
	__u64 start; /* first byte to copy */
	__u64 len;   /* bytes to copy (0: no user registers, no copy) */
	bool vma_known;
	bool capped; /* the copy size, not the mapping, ends the copy: SAMPLE_F_STACK_CAPPED */
};

/* Filter first: nothing of another process is read. */
static __always_inline bool target_active(__u32 tgid)
{
	return (target_state(tgid) & TARGET_STATE_MASK) == TARGET_ACTIVE;
}

/*
 * Whether the sample has user registers: the perf_event context's in user mode; in kernel mode
 * the task's saved user registers (*uregs), never the interrupted kernel's. Kernel threads have
 * none.
 */
static __always_inline bool user_regs_find(struct task_struct *task, bool kernel_mode,
					   struct pt_regs **uregs, const bool compat)
{
	bool user_regs = !kernel_mode || !(TASK_FIELD(task, flags, compat) & PF_KTHREAD);

	if (user_regs && kernel_mode) {
		*uregs = task_user_regs(task, compat);
		/* Found by arithmetic with compat: trusted only when they are user mode's (a
		 * kernel with another THREAD_SIZE, an io_uring worker's zeroed ones). */
		if (compat && (BPF_CORE_READ(*uregs, cs) & 3) != 3)
			user_regs = false;
	}
	return user_regs;
}

/* Sets w (sp set by the caller): the live stack, from the red zone below sp to the end of its
 * mapping, at most the process's copy size (copy_sizes, else stack_init_sz). */
static __always_inline void stack_window_find(struct task_struct *task, __u64 pid_tgid,
					      struct stack_window *w, struct bpf_stats *st,
					      const bool compat)
{
	__u32 tgid = pid_tgid >> 32;
	__u32 *copy_sz;
	__u64 want;

	copy_sz = bpf_map_lookup_elem(&copy_sizes, &tgid);
	want = copy_sz ? *copy_sz : stack_init_sz;
	if (want > stack_max_sz)
		want = stack_max_sz;
	w->start = w->sp - BPFPROF_RED_ZONE_SZ;
	w->len = want;
	if (stack_vma(task, (__u32)pid_tgid, w->sp, &w->vma, st, compat)) {
		w->vma_known = true;
		/* The red zone can reach below the mapping when the stack just grew. */
		if (w->start < w->vma.start)
			w->start = w->vma.start;
		if (w->vma.limit - w->start < w->len) {
			w->len = w->vma.limit - w->start;
			__sync_fetch_and_add(&st->stack_truncated, 1);
		} else {
			w->capped = w->vma.limit - w->start > w->len;
		}
	} else {
		w->capped = true;
		__sync_fetch_and_add(&st->stack_vma_unknown, 1);
	}
}

/* The record's header and identity; no registers, stacks or errors yet. cap: the stack room
 * reserved after it. */
static __always_inline void record_init(struct sample_record *rec, __u64 pid_tgid, __u32 cap,
					__u64 time_ns, __u32 cpu)
{
	rec->hdr.type = RECORD_SAMPLE;
	rec->hdr.sz = sizeof(*rec) + cap;
	rec->tgid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	rec->time_ns = time_ns;
	rec->cpu = cpu;
	rec->flags = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->regs_arch = 0;
	rec->regs_cnt = 0;
	rec->stack_addr = 0;
	rec->stack_len = 0;
	rec->stack_err = 0;
	rec->kstack_cnt = 0;
	rec->kstack_err = 0;
}

/* The user registers: the task's saved ones (uregs) in kernel mode, else the context's. */
static __always_inline void user_regs_copy(struct sample_record *rec,
					   const struct uapi_pt_regs *regs, struct pt_regs *uregs,
					   bool kernel_mode)
{
	if (kernel_mode) {
#define TASK_REG(r) BPF_CORE_READ(uregs, r)
		COPY_REGS(rec, TASK_REG);
	} else {
#define CTX_REG(r) regs->r
		COPY_REGS(rec, CTX_REG);
	}
	rec->flags |= SAMPLE_F_USER_REGS;
}

/*
 * The end of the readable part of the user memory [start, end), probed a byte per page from
 * the page after start's (start's own was read by the caller): the first page that cannot be
 * read, or a page at or past end when all can. At most BPFPROF_STACK_SZ_MAX / PAGE_SZ + 1
 * pages. A global function: the verifier checks its loop once, with unknown scalars, not
 * once per caller's state (7.2's verifier gave up at 1M instructions on the loop inlined
 * into the off-CPU waker program). Weak: sample.bpf.c and off_cpu.bpf.c both define it, and
 * bpftool's link keeps one.
 */
__weak __noinline __u64 stack_readable_end(__u64 start, __u64 end)
{
	__u64 page = (start + PAGE_SZ) & ~(PAGE_SZ - 1);
	__u8 probe;
	int i;

	for (i = 0; i < BPFPROF_STACK_SZ_MAX / PAGE_SZ + 1; i++) {
		if (page >= end || bpf_probe_read_user(&probe, 1, (void *)page))
			break;
		page += PAGE_SZ;
	}
	return page;
}

/* Copies w's part of the user stack into rec->stack (at most cap bytes), or its readable
 * beginning; sets stack_addr and stack_len, or stack_err. */
static __always_inline void user_stack_copy(struct sample_record *rec, struct stack_window *w,
					    __u32 cap, struct bpf_stats *st)
{
	__u64 start = w->start, len = w->len, page;
	bool capped = w->capped;
	__u8 probe;
	long n;

	if (len > cap)
		len = cap;
	len &= (BPFPROF_STACK_SZ_MAX * 2 - 1); /* bound for the verifier */
	if (len > cap)
		len = cap;
	n = bpf_probe_read_user(rec->stack, len, (void *)start);
	if (n) {
		/* A read fails whole when any page in it is unreadable: the end of the mapping
		 * when it is unknown, or a page of the stack never touched (the kernel leaves a
		 * random gap below the argument strings at the top of the main stack). Probe
		 * page by page for the first unreadable one and copy up to it. The red zone below
		 * sp can lie in a page never touched (exec maps 128 KiB of main stack ahead, and
		 * a leaf spinning just above a page boundary never touches the page below): then
		 * the copy starts at sp's page. */
		if (bpf_probe_read_user(&probe, 1, (void *)start)) {
			/* The same copy size from sp's page (user space raises the size only
			 * on copies of the full size), up to the mapping's limit. */
			page = w->sp & ~(__u64)(PAGE_SZ - 1);
			if (page > start && page - start < len) {
				start = page;
				if (w->vma_known && w->vma.limit - start <= len) {
					len = w->vma.limit - start;
					capped = false;
				}
			}
		}
		page = stack_readable_end(start, start + len);
		if (page < start + len) {
			len = page - start;
			capped = false;
			__sync_fetch_and_add(&st->stack_truncated, 1);
		}
		len &= (BPFPROF_STACK_SZ_MAX * 2 - 1);
		if (len > cap)
			len = cap;
		n = bpf_probe_read_user(rec->stack, len, (void *)start);
	}
	if (n) {
		rec->stack_err = n;
		__sync_fetch_and_add(&st->stack_copy_failed, 1);
	} else {
		rec->stack_addr = start;
		rec->stack_len = len;
		__sync_fetch_and_add(&st->stack_bytes, len);
		if (capped) {
			rec->flags |= SAMPLE_F_STACK_CAPPED;
			__sync_fetch_and_add(&st->stack_capped, 1);
		}
	}
}

#endif /* BPFPROF_STACK_COPY_BPF_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sample.bpf.c: perf_event sampler: user registers, user stack slice, kernel IPs -> ringbuf. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "maps.bpf.h"
#include "compat.bpf.h"
#include "runtime/python.bpf.h"
#include "runtime/go.bpf.h"
#include "stack_copy.bpf.h"

/* Python frames (runtime/python.bpf.h); false with --no-python: the verifier drops the walk.
 * off_cpu.bpf.c's walks too (it defines it as well: __weak, one after the link). */
const volatile bool python_frames __weak = true;

/* The interrupted kernel's return addresses (a sample in kernel mode). */
static __always_inline void kernel_stack_copy(struct bpf_perf_event_data *ctx,
					      struct sample_record *rec, struct bpf_stats *st)
{
	long n;

	rec->flags |= SAMPLE_F_KERNEL;
	n = bpf_get_stack(ctx, rec->kstack, sizeof(rec->kstack), 0);
	if (n > 0) {
		rec->kstack_cnt = n / sizeof(__u64);
	} else {
		rec->kstack_err = n;
		__sync_fetch_and_add(&st->kstack_failed, 1);
	}
}

/* One sample of the current task (compat: compat.bpf.h): filter, user registers, stack window,
 * reserve, kernel stack, user registers and stack copied, submit. */
static __always_inline int sample(struct bpf_perf_event_data *ctx, const bool compat)
{
	const struct uapi_pt_regs *regs = (const void *)ctx;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct stack_window w;
	struct pt_regs *uregs = NULL;
	struct sample_record *rec;
	struct task_struct *task;
	struct bpf_stats *st;
	bool kernel_mode, user_regs;
	__u64 time_ns;
	__u32 cap, cpu;

	if (!target_active(pid_tgid >> 32))
		return 0;
	st = stats__get();
	if (!st)
		return 0;

	kernel_mode = (regs->cs & 3) != 3; /* CPL of the interrupted code */
	task = current_task(compat);
	user_regs = user_regs_find(task, kernel_mode, &uregs, compat);
	w.sp = 0;
	w.bp = 0;
	w.start = 0;
	w.len = 0;
	w.vma_known = false;
	w.capped = false;
	if (user_regs) {
		w.sp = kernel_mode ? BPF_CORE_READ(uregs, sp) : regs->sp;
		w.bp = kernel_mode ? BPF_CORE_READ(uregs, bp) : regs->bp;
		stack_window_find(task, pid_tgid, &w, st, compat);
	}

	time_ns = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	/* Python frames first: their record precedes the sample's in the ringbuf. */
	/* A CPython process (py_stack() looks it up): with the fs base, pthread_self() of the
	 * thread, which names its PyThreadState; a probe read with compat, so only for one. */
	if (python_frames && user_regs && !compat)
		py_stack(pid_tgid, time_ns, cpu, TASK_FIELD(task, thread.fsbase, compat));
	else if (python_frames && user_regs && py_armed(pid_tgid >> 32))
		py_stack_compat(pid_tgid, time_ns, cpu, TASK_FIELD(task, thread.fsbase, compat));
	/* A Go thread's stack switched from: its record precedes the sample's too. */
	if (w.len)
		go_stack(pid_tgid, time_ns, w.bp, w.start, w.len);
	/* Its frames past the copy (a recursion deeper than the copy size): also before. */
	if (w.len && !compat)
		go_chain(pid_tgid, time_ns, w.bp, w.start, w.len);
	rec = reserve_sample(w.len, &cap);
	if (!rec) {
		__sync_fetch_and_add(&st->lost, 1);
		return 0;
	}
	record_init(rec, pid_tgid, cap, time_ns, cpu);
	if (kernel_mode)
		kernel_stack_copy(ctx, rec, st);
	if (user_regs) {
		user_regs_copy(rec, regs, uregs, kernel_mode);
		user_stack_copy(rec, &w, cap, st);
	} else {
		__sync_fetch_and_add(&st->no_user_regs, 1);
	}
	__sync_fetch_and_add(&st->samples, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
	return 0;
}

SEC("perf_event")
int handle_perf_event(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

SEC("perf_event")
int handle_perf_event_compat(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

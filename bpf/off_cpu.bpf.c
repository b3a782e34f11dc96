// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * off_cpu.bpf.c: time target threads spend blocked (--off-cpu), from tp_btf/sched_switch, and
 * where they blocked, written as their system call returns (tp_btf/sys_exit).
 *
 * A target thread switched out in a system call and not runnable (sleeping, waiting for a
 * futex, a pipe, I/O) gets its switch-out time in its task storage (created at the return of
 * its first system call since bpfprof started: that one is not counted). At its switch-in the period
 * counts when it lasted at least --off-cpu-min-us; the first counted one takes the thread's
 * kernel stack (bpf_get_task_stack(): it is still switched out, so the stack ends in the
 * function that called schedule()). When the system call returns, the thread is current again
 * and its user stack is as it was when it blocked: RECORD_OFF_CPU and a sample record (user
 * registers, stack copy, that kernel stack) go to the ringbuf, at most --off-cpu-max-rate a
 * second per CPU. Preemption leaves a thread runnable: on-CPU wait, not counted. A period
 * whose switch-in this program did not see (rare, under load: out_ns still set as the system
 * call returns) ends at the system call's exit, counted there and in --stats.
 *
 * A CPython thread's Python frames (RECORD_PY_STACK, runtime/python.bpf.h's py_stack()) are
 * walked where its user stack is copied, and only there (within --off-cpu-max-rate): the
 * blocked thread's at its system call's exit, the waker's at sched_waking. Their record carries
 * the key of the sample it precedes, (cpu, tid, time_ns) as record_init() sets them, so that
 * user space joins them as it joins a CPU sample's. A CPU sample (--on-cpu) that interrupts
 * such a walk on its CPU walks in the same per-CPU scratch: the record then carries that
 * sample's key, and user space drops it (that blocked stack has native frames only), never
 * joining frames to a stack they are not of.
 *
 * Linux 5.17+ (the non-compat programs: task storage, bpf_task_pt_regs(), bpf_get_task_stack()):
 * the loader refuses --off-cpu on older kernels, so these programs call py_stack(), the
 * bpf_loop() walk, never py_stack_compat().
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "maps.bpf.h"
#include "stack_copy.bpf.h"

/* Set by the loader (--off-cpu-min-us, --off-cpu-max-rate, --wakers). */
const volatile __u64 off_cpu_min_ns = 5000;
/* 1 s / --off-cpu-max-rate: what one record costs of its CPU's token bucket, ns (the loader
 * divides once; default 1000 a second). */
const volatile __u64 off_cpu_cost_ns = 1000000;
const volatile bool off_cpu_wakers = false;
/* Python frames; false with --no-python (the runtime's bpf_switch): the verifier drops the
 * walks. The one switch of sample.bpf.c, which defines it too (__weak: merged at the link). */
const volatile bool python_frames __weak = true;

/* runtime/python.bpf.h's walker, defined in sample.bpf.c (the link resolves it; its maps and
 * globals are that object's): RECORD_PY_STACK of the current thread keyed (cpu, its tid,
 * time_ns), when its process is an armed CPython one. 1 when a record was submitted. */
extern int py_stack(__u64 pid_tgid, __u64 time_ns, __u32 cpu, __u64 fsbase);

/* A target thread's blocked time not written yet: the periods of one system call. */
struct off_cpu_state {
	__u64 out_ns;	/* switch-out of the period under way; 0 on CPU */
	__u64 first_ns; /* switch-out of the first counted period */
	__u64 off_ns;	/* counted periods' total, ns */
	__u32 switches; /* counted periods */
	__u32 kstack_cnt;
	__u64 kstack[BPFPROF_KSTACK_MAX]; /* leaf first, at the first counted switch-in */
	__u64 waker_ns;	 /* --wakers: the last waker sample written for it (RECORD_WAKER), or 0 */
	__u32 waker_tid;
	/* Periods of earlier system calls not written (over --off-cpu-max-rate): they ride with
	 * the thread's next record, so that a storm's time is not lost, only its stacks. */
	__u32 carry_switches;
	__u64 carry_ns;
	/* The bucket was empty at the first counted switch-in: no kernel stack was taken, and
	 * this system call's periods are carried, not written (one decision, not two). */
	__u32 no_kstack;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_cpu_state);
} off_cpu_states SEC(".maps");

/*
 * --off-cpu-max-rate per CPU, a token bucket kept in time: a record costs 1 s / rate of credit,
 * credit grows with time up to OFF_CPU_BURST_NS. Records are spread over the second rather
 * than the first ones of each second taken, so the time carried to a thread's next record
 * (off_cpu_state.carry_ns) spans 1 / rate, not up to a second, and little of it is left
 * unwritten when profiling stops.
 */
#define OFF_CPU_BURST_NS 100000000ull /* 100 ms worth of records */
struct off_cpu_rate {
	__u64 last_ns;	 /* when credit_ns was brought up to date */
	__u64 credit_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_cpu_rate);
} off_cpu_rates SEC(".maps");

/* The record heads written before a sample, off the BPF stack: the Python walk (py_stack(), a
 * global function) called after them needs the room, and Linux 6.1 refuses a call chain whose
 * stacks add up to over 512 bytes ("combined stack size of 5 calls is 544"). Slot 0: a
 * RECORD_OFF_CPU (sys_exit), slot 1: a RECORD_WAKER (sched_waking, which an interrupt may run
 * in the middle of a sys_exit program on this CPU: a slot of its own). */
union off_cpu_head {
	struct off_cpu_record off;
	struct waker_record waker;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, union off_cpu_head);
} off_cpu_heads SEC(".maps");

/* The state a task is in as it is switched out (task_struct.__state since 5.14; the programs
 * load on 5.17+ only). 0: TASK_RUNNING. */
static __always_inline unsigned int task_state(struct task_struct *t)
{
	return BPF_CORE_READ(t, __state);
}

/* x86-64 entry code: pt_regs->ax holds -ENOSYS while a system call runs, its return value from
 * when it returns (arch/x86/entry/common.c), before the sys_exit tracepoint. */
#define ENOSYS_RET (-38L)

/* A period found open (out_ns set) at its thread's next switch-out: its switch-in was not
 * seen, and the thread ran for a time unknown since. Counted and dropped, never added to a
 * later period (nor to a later switch-in's, which would count the thread's time on CPU as
 * blocked, under another stack). */
static __always_inline void unended(struct off_cpu_state *s, __u64 now, struct bpf_stats *st)
{
	__sync_fetch_and_add(&st->off_cpu_unended, 1);
	__sync_fetch_and_add(&st->off_cpu_unended_ns, now - s->out_ns);
	s->out_ns = 0;
}

/* prev leaves the CPU: a target thread blocked in a system call starts a period. Its state
 * was created at a system call's return (handle_off_cpu_sys_exit): never here, under the
 * runqueue lock, where an allocation could wake kswapd. */
static __always_inline void switch_out(struct task_struct *prev, __u64 now, struct bpf_stats *st)
{
	struct off_cpu_state *s;
	struct pt_regs *regs;

	if (prev->flags & PF_KTHREAD || !target_active(prev->tgid))
		return;
	/* In a system call whose sys_exit has not run: orig_ax its number (-1 in an exception,
	 * a page fault), ax -ENOSYS (not on the way back to user mode after sys_exit: signal
	 * stops, ptrace's exit stops; nor in an io_uring worker, whose copied ax is 0). */
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	if ((long)BPF_CORE_READ(regs, orig_ax) < 0 || (long)BPF_CORE_READ(regs, ax) != ENOSYS_RET) {
		__sync_fetch_and_add(&st->off_cpu_no_syscall, 1);
		return;
	}
	s = bpf_task_storage_get(&off_cpu_states, prev, 0, 0);
	if (!s)
		return;
	if (s->out_ns) /* the last period's switch-in was not seen: not counted */
		unended(s, now, st);
	if (!s->switches) { /* a new system call's periods: no waker yet */
		s->waker_ns = 0;
		s->waker_tid = 0;
	}
	s->out_ns = now;
	__sync_fetch_and_add(&st->off_cpu_switches, 1);
}

static __always_inline bool rate_full(void);

/* next takes the CPU: its period ends, and counts if long enough. */
static __always_inline void switch_in(struct task_struct *next, __u64 now, struct bpf_stats *st)
{
	struct off_cpu_state *s = bpf_task_storage_get(&off_cpu_states, next, 0, 0);
	__u64 d;
	long n;

	if (!s || !s->out_ns)
		return;
	d = now - s->out_ns;
	if (d < off_cpu_min_ns) {
		s->out_ns = 0;
		__sync_fetch_and_add(&st->off_cpu_short, 1);
		return;
	}
	if (!s->switches) {
		s->first_ns = s->out_ns;
		/* Not for a record this CPU's second has no room for (the usual case in a storm:
		 * the stack walk is most of this program's cost). */
		s->no_kstack = rate_full();
		n = s->no_kstack ? 0 : bpf_get_task_stack(next, s->kstack, sizeof(s->kstack), 0);
		s->kstack_cnt = n > 0 ? n / sizeof(__u64) : 0;
	}
	s->out_ns = 0;
	s->off_ns += d;
	s->switches++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct bpf_stats *st = stats__get();
	__u64 now = bpf_ktime_get_ns();

	if (!st)
		return 0;
	if (!preempt && task_state(prev) != 0)
		switch_out(prev, now, st);
	switch_in(next, now, st);
	return 0;
}

/* The credit of this CPU's bucket at now, ns: at most the burst, or one record's cost when
 * that is more (a rate under 10 a second). A now before last_ns (an interrupt's program ran
 * in between with a later time) adds nothing. */
static __always_inline __u64 rate_credit(struct off_cpu_rate *r, __u64 now)
{
	__u64 cap = OFF_CPU_BURST_NS, c = r->credit_ns;

	if ((__s64)(now - r->last_ns) > 0)
		c += now - r->last_ns;
	if (off_cpu_cost_ns > cap)
		cap = off_cpu_cost_ns;
	return c < cap ? c : cap;
}

/* Whether this CPU's bucket is empty, at a glance (rate_ok() decides). */
static __always_inline bool rate_full(void)
{
	__u32 zero = 0;
	struct off_cpu_rate *r = bpf_map_lookup_elem(&off_cpu_rates, &zero);

	return r && rate_credit(r, bpf_ktime_get_ns()) < off_cpu_cost_ns;
}

/* Whether one more record fits this CPU's rate: takes its cost from the bucket. */
static __always_inline bool rate_ok(__u64 now)
{
	__u32 zero = 0;
	struct off_cpu_rate *r = bpf_map_lookup_elem(&off_cpu_rates, &zero);
	__u64 c;

	if (!r)
		return false;
	c = rate_credit(r, now);
	if ((__s64)(now - r->last_ns) > 0)
		r->last_ns = now;
	if (c < off_cpu_cost_ns) {
		r->credit_ns = c;
		return false;
	}
	r->credit_ns = c - off_cpu_cost_ns;
	return true;
}

/* RECORD_OFF_CPU, then the sample of where the thread blocked, the carried time with it.
 * Whether both were written (else the consumer drops the record, and the time is carried). */
static __always_inline bool off_cpu_write(struct task_struct *task, struct off_cpu_state *s,
					  __u64 now, struct bpf_stats *st)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 slot = 0;
	union off_cpu_head *u = bpf_map_lookup_elem(&off_cpu_heads, &slot);
	struct off_cpu_record *head;
	struct sample_record *rec;
	struct stack_window w = {};
	struct pt_regs *uregs;
	__u32 cap, cpu = bpf_get_smp_processor_id();

	uregs = (struct pt_regs *)bpf_task_pt_regs(task);
	w.sp = BPF_CORE_READ(uregs, sp);
	w.bp = BPF_CORE_READ(uregs, bp);
	stack_window_find(task, pid_tgid, &w, st, false);

	if (!u)
		return false;
	head = &u->off;
	head->hdr.type = RECORD_OFF_CPU;
	head->hdr.sz = sizeof(*head);
	head->tgid = pid_tgid >> 32;
	head->tid = (__u32)pid_tgid;
	head->time_ns = now;
	head->cpu = cpu;
	head->switches = s->switches + s->carry_switches;
	head->off_ns = s->off_ns + s->carry_ns;
	head->first_ns = s->first_ns;
	head->waker_ns = s->waker_ns;
	head->waker_tid = s->waker_tid;
	head->pad = 0;
	if (bpf_ringbuf_output(&ringbuf, head, sizeof(*head), BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&st->off_cpu_lost, 1);
		return false;
	}
	/* Its Python frames as it blocked (task is current: it has not returned to user mode),
	 * before the sample, with the sample's key. */
	if (python_frames)
		py_stack(pid_tgid, now, cpu, task->thread.fsbase);
	rec = reserve_sample(w.len, &cap);
	if (!rec) {
		__sync_fetch_and_add(&st->off_cpu_lost, 1);
		return false;
	}
	record_init(rec, pid_tgid, cap, now, cpu);
	rec->flags |= SAMPLE_F_OFF_CPU | SAMPLE_F_KERNEL;
	if (s->kstack_cnt && s->kstack_cnt <= BPFPROF_KSTACK_MAX) {
		bpf_probe_read_kernel(rec->kstack, sizeof(rec->kstack), s->kstack);
		rec->kstack_cnt = s->kstack_cnt;
	} else {
		rec->kstack_err = -2; /* -ENOENT: bpf_get_task_stack() found none */
	}
	user_regs_copy(rec, NULL, uregs, true);
	user_stack_copy(rec, &w, cap, st);
	__sync_fetch_and_add(&st->off_cpu_records, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
	return true;
}

/* A target thread's system call returns: what it blocked there is written. */
SEC("tp_btf/sys_exit")
int BPF_PROG(handle_off_cpu_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct off_cpu_state *s = bpf_task_storage_get(&off_cpu_states, task, 0, 0);
	struct bpf_stats *st;
	bool written = false;
	__u64 now;

	/* A target thread's first system call since the start: its state, for the next ones. */
	if (!s) {
		if (!(task->flags & PF_KTHREAD) && target_active(task->tgid))
			bpf_task_storage_get(&off_cpu_states, task, 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
		return 0;
	}
	/* Most system calls never blocked: nothing to do. */
	if (!s->switches && !s->out_ns)
		return 0;
	st = stats__get();
	now = bpf_ktime_get_ns();
	if (!st)
		return 0;
	/* A period still open as its system call returns: its switch-in was not seen (the thread
	 * runs: it was switched in). It ended at the latest now: counted to now, with this
	 * system call's other periods, without a kernel stack if it is the first. Left open, it
	 * would be counted at the thread's next switch-in, its time on CPU with it, under the
	 * stack of a later system call. */
	if (s->out_ns) {
		__u64 d = now - s->out_ns;

		__sync_fetch_and_add(&st->off_cpu_unseen, 1);
		__sync_fetch_and_add(&st->off_cpu_unseen_ns, d);
		if (d >= off_cpu_min_ns) {
			if (!s->switches) {
				s->first_ns = s->out_ns;
				s->kstack_cnt = 0;
			}
			s->off_ns += d;
			s->switches++;
		}
		s->out_ns = 0;
	}
	if (!s->switches)
		return 0;
	if (!s->no_kstack && rate_ok(now)) {
		written = off_cpu_write(task, s, now, st);
	} else {
		__sync_fetch_and_add(&st->off_cpu_limited, 1);
		__sync_fetch_and_add(&st->off_cpu_limited_ns, s->off_ns);
	}
	/* Written: the carry went with it. Not: this system call's time joins the carry. */
	s->carry_switches = written ? 0 : s->carry_switches + s->switches;
	s->carry_ns = written ? 0 : s->carry_ns + s->off_ns;
	s->no_kstack = 0;
	s->switches = 0;
	s->off_ns = 0;
	s->kstack_cnt = 0;
	s->waker_ns = 0;
	s->waker_tid = 0;
	return 0;
}

/* The waking thread's sample: its kernel stack where it wakes a thread, its user stack if it is
 * a target (user). A subprogram of its own, after the Python walk: its stack window is then
 * not on the BPF stack while py_stack() runs (Linux 6.1 refuses a call chain whose stacks add
 * up to over 512 bytes). Whether it was written. */
static __noinline int waker_sample(void *ctx, __u64 now, struct bpf_stats *st, int user)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 cap, cpu = bpf_get_smp_processor_id();
	struct stack_window w = {};
	struct sample_record *rec;
	struct pt_regs *uregs = NULL;
	long n;

	if (!st)
		return 0;
	if (user) {
		uregs = (struct pt_regs *)bpf_task_pt_regs(task);
		w.sp = BPF_CORE_READ(uregs, sp);
		w.bp = BPF_CORE_READ(uregs, bp);
		stack_window_find(task, pid_tgid, &w, st, false);
	}
	rec = reserve_sample(w.len, &cap);
	if (!rec)
		return 0;
	record_init(rec, pid_tgid, cap, now, cpu);
	rec->flags |= SAMPLE_F_WAKER | SAMPLE_F_KERNEL;
	n = bpf_get_stack(ctx, rec->kstack, sizeof(rec->kstack), 0);
	if (n > 0)
		rec->kstack_cnt = n / sizeof(__u64);
	else
		rec->kstack_err = n;
	if (user) {
		user_regs_copy(rec, NULL, uregs, true);
		user_stack_copy(rec, &w, cap, st);
	}
	bpf_ringbuf_submit(rec, ringbuf_flags());
	return 1;
}

/* RECORD_WAKER, then the waking thread's Python frames if it is a CPython target, then its
 * sample (waker_sample()). Whether the record and the sample were written. */
static __always_inline bool waker_write(void *ctx, struct task_struct *wakee, __u64 now,
					struct bpf_stats *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 slot = 1;
	union off_cpu_head *u = bpf_map_lookup_elem(&off_cpu_heads, &slot);
	struct waker_record *head;
	bool user;

	/* Filter first: the memory of a process that is not a target is never read. */
	user = pid_tgid >> 32 && !(task->flags & PF_KTHREAD) && target_active(pid_tgid >> 32);
	if (!u)
		return false;
	head = &u->waker;
	head->hdr.type = RECORD_WAKER;
	head->hdr.sz = sizeof(*head);
	head->tgid = pid_tgid >> 32;
	head->tid = (__u32)pid_tgid;
	head->time_ns = now;
	head->cpu = cpu;
	head->wakee_tid = wakee->pid;
	head->wakee_tgid = wakee->tgid;
	head->pad = 0;
	if (bpf_ringbuf_output(&ringbuf, head, sizeof(*head), BPF_RB_NO_WAKEUP))
		return false;
	/* A target waker's Python frames where it wakes wakee, before its sample, keyed alike. */
	if (python_frames && user)
		py_stack(pid_tgid, now, cpu, task->thread.fsbase);
	return waker_sample(ctx, now, st, user);
}

/* p is woken (--wakers): if it is a target thread blocked long enough already, the waker's
 * stack is written, and named in p's state for its RECORD_OFF_CPU. */
SEC("tp_btf/sched_waking")
int BPF_PROG(handle_sched_waking, struct task_struct *p)
{
	struct off_cpu_state *s;
	struct bpf_stats *st;
	__u64 now;

	if (!off_cpu_wakers)
		return 0;
	s = bpf_task_storage_get(&off_cpu_states, p, 0, 0);
	if (!s || !s->out_ns)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - s->out_ns < off_cpu_min_ns)
		return 0;
	st = stats__get();
	if (!st)
		return 0;
	if (rate_ok(now) && waker_write(ctx, p, now, st)) {
		s->waker_ns = now;
		s->waker_tid = (__u32)bpf_get_current_pid_tgid();
		__sync_fetch_and_add(&st->wakers, 1);
	} else {
		__sync_fetch_and_add(&st->wakers_lost, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

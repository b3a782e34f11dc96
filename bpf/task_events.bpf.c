// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* task_events.bpf.c: fork/exec/exit of target processes -> target_tgids and the ringbuf. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "maps.bpf.h"

static __always_inline void emit_task(__u32 type, __u32 tgid, __u32 parent_tgid)
{
	struct sample_stats *st = stats__get();
	struct task_record *rec;

	if (!st)
		return;
	rec = bpf_ringbuf_reserve(&ringbuf, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&st->events_lost, 1);
		return;
	}
	rec->hdr.type = type;
	rec->hdr.sz = sizeof(*rec);
	rec->tgid = tgid;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	rec->parent_tgid = parent_tgid;
	rec->pad = 0;
	rec->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	__sync_fetch_and_add(&st->events, 1);
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* A target's new process becomes a target before it runs: `bpfprof -- make` follows every
 * compiler make starts. Threads share the tgid and need nothing. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, state;
	struct sample_stats *st;

	if (ptgid == ctgid)
		return 0;
	state = target_state(ptgid);
	if ((state & TARGET_STATE_MASK) != TARGET_ACTIVE)
		return 0;
	if (target_all) {
		emit_task(RECORD_FORK, ctgid, ptgid);
		return 0;
	}
	if (!(state & TARGET_F_FOLLOW_FORK))
		return 0;
	if (bpf_map_update_elem(&target_tgids, &ctgid, &state, BPF_ANY)) {
		st = stats__get();
		if (st)
			__sync_fetch_and_add(&st->targets_full, 1);
		return 0;
	}
	emit_task(RECORD_FORK, ctgid, ptgid);
	return 0;
}

/* `bpfprof -- CMD` arms its child here: the child's code before exec is bpfprof's. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, *state;

	if (target_all) {
		if (tgid != self_tgid)
			emit_task(RECORD_EXEC, tgid, 0);
		return 0;
	}
	state = bpf_map_lookup_elem(&target_tgids, &tgid);
	if (!state)
		return 0;
	if ((*state & TARGET_STATE_MASK) == TARGET_PENDING_EXEC)
		*state = (*state & ~TARGET_STATE_MASK) | TARGET_ACTIVE;
	emit_task(RECORD_EXEC, tgid, 0);
	return 0;
}

/* Group exit: the tracepoint runs after do_exit() decremented signal->live. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!target_state(tgid))
		return 0;
	emit_task(RECORD_EXIT, tgid, 0);
	bpf_map_delete_elem(&target_tgids, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

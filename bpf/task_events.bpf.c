// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* task_events.bpf.c: fork/exec/exit of targets and their executable mappings (mmap, mprotect,
 * munmap, mremap, exec) -> target_tgids and task/mmap records in the ringbuf, in order with
 * the samples. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "maps.bpf.h"
#include "compat.bpf.h"

/* x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) */
#define NR_mmap		 9
#define NR_mprotect	 10
#define NR_munmap	 11
#define NR_mremap	 25
#define NR_pkey_mprotect 329

#define PROT_EXEC	 0x4
#define VM_READ		 0x1
#define VM_WRITE	 0x2
#define VM_EXEC		 0x4
#define VM_SHARED	 0x8
#define AT_BASE		 7
#define AT_NULL		 0
#define EXEC_VMAS_MAX	 8   /* VMAs walked per image at exec */
#define EXIT_THREADS_MAX 256 /* threads walked at a process's exit (group_cpu_ns()) */

/* Per-CPU room for a path being built (file_path_walk() cannot write the ringbuf record). */
struct path_buf {
	char path[2 * BPFPROF_PATH_SZ];
	/* Bytes written. Kept here, not in a register: read back from the map each step, it
	 * is an unknown bounded value to the verifier, and the steps' states prune. */
	__u32 off;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_buf);
} path_bufs SEC(".maps");

/*
 * The path of the file at file_addr (a struct file *) in this CPU's path_bufs entry, as
 * components, leaf first: the dentry chain up to the root of its mount, then across mount
 * points (struct mount: mnt_mountpoint, mnt_parent) to the root of the mount namespace.
 * bpf_d_path() is not allowed in raw tracepoints. Returns the bytes written, | the MMAP_F_*
 * flags << 16.
 *
 * A global function: the verifier checks it once, on its own. A static one is checked again at
 * each call site and path through the caller: at exec, where it runs for up to ten VMAs, 5.10's
 * verifier ran out of its million instructions. So the argument is a scalar: 5.10's global
 * functions take no pointer but the context. A bounded loop, not bpf_loop() (5.17).
 */
__noinline int file_path_walk(__u64 file_addr)
{
	struct file *file = (void *)file_addr;
	struct dentry *dentry, *parent, *mnt_root;
	struct mount *mnt, *mnt_parent;
	struct vfsmount *vfsmnt;
	struct path_buf *buf;
	__u32 zero = 0, off;
	long n;
	int i;

	buf = bpf_map_lookup_elem(&path_bufs, &zero);
	if (!buf)
		return MMAP_F_PATH_TRUNC << 16;
	buf->off = 0;
	dentry = BPF_CORE_READ(file, f_path.dentry);
	vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
	for (i = 0; i < BPFPROF_PATH_DEPTH; i++) {
		parent = BPF_CORE_READ(dentry, d_parent);
		mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
		if (dentry == mnt_root || dentry == parent) {
			mnt_parent = BPF_CORE_READ(mnt, mnt_parent);
			if (dentry != mnt_root || mnt == mnt_parent)
				return buf->off; /* the root of the namespace */
			dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = mnt_parent;
			vfsmnt = (void *)mnt_parent + bpf_core_field_offset(struct mount, mnt);
			continue;
		}
		off = buf->off;
		if (off >= BPFPROF_PATH_SZ)
			break;
		n = bpf_probe_read_kernel_str(&buf->path[off & (BPFPROF_PATH_SZ - 1)],
					      BPFPROF_PATH_SZ, BPF_CORE_READ(dentry, d_name.name));
		if (n <= 0)
			break;
		buf->off = off + n;
		dentry = parent;
	}
	return buf->off | MMAP_F_PATH_TRUNC << 16; /* deeper than BPFPROF_PATH_DEPTH, or too long */
}

/* The file's path into rec (file_path_walk()). */
static __always_inline void file_path(struct mmap_record *rec, struct file *file)
{
	int walked = file_path_walk((__u64)file);
	__u32 zero = 0, off = walked & 0xffff;
	struct path_buf *buf;

	buf = bpf_map_lookup_elem(&path_bufs, &zero);
	if (!buf)
		return;
	rec->prot |= walked >> 16;
	rec->path_sz = off < sizeof(rec->path) ? off : sizeof(rec->path);
	bpf_probe_read_kernel(rec->path, sizeof(rec->path), buf->path);
}

/* The prefix the task, mmap and munmap records share (bpf/record.h). */
struct record_prefix {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
};

/* Reserves a record of sz bytes (a constant) and fills its prefix; a full ringbuf is counted
 * in *lost and gives NULL. */
static __always_inline void *reserve_record(__u32 type, __u32 sz, __u32 tgid, __u64 *lost)
{
	struct record_prefix *rec = bpf_ringbuf_reserve(&ringbuf, sz, 0);

	if (!rec) {
		__sync_fetch_and_add(lost, 1);
		return NULL;
	}
	rec->hdr.type = type;
	rec->hdr.sz = sz;
	rec->tgid = tgid;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	return rec;
}

static __always_inline struct mmap_record *reserve(__u32 type, __u32 tgid, __u64 start, __u64 len,
						   struct bpf_stats *st)
{
	struct mmap_record *rec;

	rec = reserve_record(type, sizeof(*rec), tgid, &st->mmap_lost);
	if (!rec)
		return NULL;
	rec->time_ns = bpf_ktime_get_ns();
	rec->start = start;
	rec->len = len;
	rec->pgoff = 0;
	rec->dev = 0;
	rec->ino = 0;
	rec->prot = 0;
	rec->path_sz = 0;
	return rec;
}

static __always_inline void submit(struct mmap_record *rec, struct bpf_stats *st)
{
	__sync_fetch_and_add(&st->mmap_events, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
}

static __always_inline void emit_munmap(__u32 tgid, __u64 start, __u64 len, struct bpf_stats *st)
{
	struct munmap_record *rec;

	rec = reserve_record(RECORD_MUNMAP, sizeof(*rec), tgid, &st->mmap_lost);
	if (!rec)
		return;
	rec->time_ns = bpf_ktime_get_ns();
	rec->start = start;
	rec->len = len;
	__sync_fetch_and_add(&st->mmap_events, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
}

/* A process maps the code of a CPython file user space knows (py_binaries): its samples get
 * Python frames from now on, without waiting for user space (a short-lived process). */
static __always_inline void py_proc_arm(__u32 tgid, __u64 dev, __u64 ino, __u64 start,
					__u64 pgoff)
{
	struct py_binary_key key = { .dev = dev, .ino = ino };
	struct py_binary *bin;
	struct py_proc proc;

	bin = bpf_map_lookup_elem(&py_binaries, &key);
	if (!bin)
		return;
	proc.runtime = start - pgoff + bin->runtime_off;
	proc.off = bin->off;
	proc.gen = (__u32)bpf_ktime_get_ns();
	proc.codes = 0;
	proc.codes_window_ns = 0;
	bpf_map_update_elem(&py_procs, &tgid, &proc, BPF_ANY);
}

/* A forked CPython process (multiprocessing) has its parent's memory layout. */
static __always_inline void py_proc_fork(__u32 ptgid, __u32 ctgid)
{
	struct py_proc *pp = bpf_map_lookup_elem(&py_procs, &ptgid);
	struct py_proc proc;

	if (!pp)
		return;
	proc = *pp;
	proc.gen = (__u32)bpf_ktime_get_ns();
	proc.codes = 0;
	proc.codes_window_ns = 0;
	bpf_map_update_elem(&py_procs, &ctgid, &proc, BPF_ANY);
}

/* RECORD_MMAP for the VMA holding addr, when it is executable; returns the VMA's end, or 0. */
static __always_inline __u64 emit_vma(struct task_struct *task, __u32 tgid, __u64 addr,
				      __u32 extra_flags, struct bpf_stats *st, const bool compat)
{
	struct mmap_record *rec;
	struct vma_info vi;
	struct inode *inode;
	struct file *file;

	if (!vma_find(task, addr, &vi, compat))
		return 0;
	if (!(vi.flags & VM_EXEC))
		return vi.end;
	rec = reserve(RECORD_MMAP, tgid, vi.start, vi.end - vi.start, st);
	if (!rec)
		return vi.end;
	rec->pgoff = vi.pgoff;
	rec->prot = MMAP_PROT_EXEC | extra_flags;
	if (vi.flags & VM_READ)
		rec->prot |= MMAP_PROT_READ;
	if (vi.flags & VM_WRITE)
		rec->prot |= MMAP_PROT_WRITE;
	if (vi.flags & VM_SHARED)
		rec->prot |= MMAP_F_SHARED;
	/* A plain local: CO-RE must not relocate accesses to struct vma_info. */
	file = vi.file;
	if (file) {
		inode = BPF_CORE_READ(file, f_inode);
		rec->ino = BPF_CORE_READ(inode, i_ino);
		rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		file_path(rec, file);
		py_proc_arm(tgid, rec->dev, rec->ino, vi.start, vi.pgoff);
	}
	submit(rec, st);
	return vi.end;
}

/* Mapping changes, at the return of the syscalls that make them: sys_exit sees the result
 * (the address mmap chose) and the VMA as it is now. It runs at every system call of every
 * task: tp_btf, so that regs is read with direct loads instead of probe-read helper calls. */
static __always_inline int sys_exit(struct pt_regs *regs, long ret, const bool compat)
{
	__u64 nr = regs->orig_ax, addr, len, vma_addr = 0;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct bpf_stats *st;
	struct task_struct *task;
	bool unmap = false;

	if (nr != NR_mmap && nr != NR_mprotect && nr != NR_munmap && nr != NR_mremap &&
	    nr != NR_pkey_mprotect)
		return 0;
	if (ret < 0 && ret >= -4095)
		return 0; /* failed: nothing changed */
	if ((target_state(tgid) & TARGET_STATE_MASK) != TARGET_ACTIVE)
		return 0;
	st = stats__get();
	if (!st)
		return 0;
	task = current_task(compat);
	addr = regs->di;
	len = regs->si;
	/* One emit_vma() call site: each one inlines the path walk. */
	switch (nr) {
	case NR_mmap:
		if (!(regs->dx & PROT_EXEC))
			return 0;
		vma_addr = ret;
		break;
	case NR_mprotect:
	case NR_pkey_mprotect:
		if (regs->dx & PROT_EXEC)
			vma_addr = addr;
		else
			unmap = true;
		break;
	case NR_munmap:
		unmap = true;
		break;
	case NR_mremap:
		unmap = true;
		vma_addr = ret;
		break;
	}
	if (unmap)
		emit_munmap(tgid, addr, len, st);
	if (vma_addr)
		emit_vma(task, tgid, vma_addr, 0, st, compat);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	return sys_exit(regs, ret, false);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit_compat, struct pt_regs *regs, long ret)
{
	return sys_exit(regs, ret, true);
}

static __always_inline void emit_task(__u32 type, __u32 tgid, __u32 parent_tgid, __u64 cpu_ns)
{
	struct bpf_stats *st = stats__get();
	struct task_record *rec;

	if (!st)
		return;
	rec = reserve_record(type, sizeof(*rec), tgid, &st->events_lost);
	if (!rec)
		return;
	rec->parent_tgid = parent_tgid;
	rec->pad = 0;
	rec->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->cpu_ns = cpu_ns;
	__sync_fetch_and_add(&st->events, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
}

/* A target's new process becomes a target before it runs: `bpfprof -- make` follows every
 * compiler make starts. Threads share the tgid and need nothing. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, state;
	struct bpf_stats *st;

	if (ptgid == ctgid)
		return 0;
	state = target_state(ptgid);
	if ((state & TARGET_STATE_MASK) != TARGET_ACTIVE)
		return 0;
	if (target_all) {
		py_proc_fork(ptgid, ctgid);
		emit_task(RECORD_FORK, ctgid, ptgid, 0);
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
	py_proc_fork(ptgid, ctgid);
	emit_task(RECORD_FORK, ctgid, ptgid, 0);
	return 0;
}

/*
 * `bpfprof -- CMD` arms its child here: the child's code before exec is bpfprof's. Then the
 * new image's code, mapped by the kernel without syscalls: the executable (mm->start_code)
 * and the program interpreter (AT_BASE in the saved auxv), after RECORD_EXEC, which makes
 * user space forget the old image.
 */
static __always_inline int exec_event(struct task_struct *p, pid_t old_pid, const bool compat)
{
	__u32 tgid = p->tgid, *state, flags = MMAP_F_EXEC_TIME;
	__u64 addr, next, base = 0, vdso;
	struct bpf_stats *st;
	struct mm_struct *mm;
	int i;

	if (target_all) {
		if (tgid == self_tgid)
			return 0;
	} else {
		state = bpf_map_lookup_elem(&target_tgids, &tgid);
		if (!state)
			return 0;
		if ((*state & TARGET_STATE_MASK) == TARGET_PENDING_EXEC)
			*state = (*state & ~TARGET_STATE_MASK) | TARGET_ACTIVE;
	}
	/* The old image's stack mapping: the new one may cover its addresses. */
	stack_vma_forget(p, p->pid, compat);
	if (compat)
		stack_vma_forget(p, old_pid, compat);
	emit_task(RECORD_EXEC, tgid, 0, 0);
	bpf_map_delete_elem(&py_procs, &tgid); /* the old image's */
	st = stats__get();
	mm = p->mm;
	if (!st || !mm)
		return 0;
	for (i = 0; i < 48; i += 2) {
		addr = BPF_CORE_READ(mm, saved_auxv[i]);
		if (addr == AT_NULL)
			break;
		if (addr == AT_BASE) {
			base = BPF_CORE_READ(mm, saved_auxv[i + 1]);
			break;
		}
	}
	/* The executable's code VMA, then the interpreter's segments: adjacent VMAs from its
	 * base, of which the code ones are emitted; last the vDSO (x86 mm->context.vdso). With
	 * these the process's code is known without reading /proc/PID/maps. One emit_vma() call
	 * site: each inlines the path walk. */
	addr = BPF_CORE_READ(mm, start_code);
	vdso = (__u64)BPF_CORE_READ(mm, context.vdso);
	for (i = 0; i < EXEC_VMAS_MAX + 2; i++) {
		if (!addr || i == EXEC_VMAS_MAX + 1) {
			if (!vdso)
				break;
			addr = vdso;
			vdso = 0;
			flags |= MMAP_F_VDSO;
		}
		next = emit_vma(p, tgid, addr, flags, st, compat);
		if (flags & MMAP_F_VDSO)
			break;
		addr = i == 0 ? base : next;
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return exec_event(p, old_pid, false);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec_compat, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return exec_event(p, old_pid, true);
}

/*
 * The CPU time of p's thread group at the exit of its last thread, ns: what thread_group_cputime()
 * adds up. Threads already released (a thread is, right after its exit, unless it leads the
 * group) left theirs in signal->sum_sched_runtime; the others are still on the group's thread
 * list: those exiting at the same time (exit_group() kills all), a leader that exited before
 * (a zombie until reaped), and p itself. At most EXIT_THREADS_MAX of them are walked.
 */
static __always_inline __u64 group_cpu_ns(struct task_struct *p)
{
	struct signal_struct *sig = BPF_CORE_READ(p, signal);
	void *head = (void *)sig + bpf_core_field_offset(struct signal_struct, thread_head);
	struct list_head *node = BPF_CORE_READ(sig, thread_head.next);
	__u64 ns = BPF_CORE_READ(sig, sum_sched_runtime);
	struct task_struct *t;
	int i;

	for (i = 0; i < EXIT_THREADS_MAX && node && (void *)node != head; i++) {
		t = (void *)node - bpf_core_field_offset(struct task_struct, thread_node);
		ns += BPF_CORE_READ(t, se.sum_exec_runtime);
		node = BPF_CORE_READ(node, next);
	}
	return ns;
}

/* Thread exit; the group's when the tracepoint runs after do_exit() decremented signal->live
 * to 0. Task storage goes with the task; the compat cache entry is deleted here. */
static __always_inline int exit_event(struct task_struct *p, const bool compat)
{
	__u32 tgid = p->tgid, pid = p->pid;

	if (compat)
		stack_vma_forget(p, p->pid, compat);
	bpf_map_delete_elem(&py_tstates, &pid); /* its PyThreadState goes too */

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!target_state(tgid))
		return 0;
	emit_task(RECORD_EXIT, tgid, 0, group_cpu_ns(p));
	bpf_map_delete_elem(&target_tgids, &tgid);
	bpf_map_delete_elem(&py_procs, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	return exit_event(p, false);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit_compat, struct task_struct *p)
{
	return exit_event(p, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

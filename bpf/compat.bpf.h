/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * compat.bpf.h: the kernel features bpfprof's programs use that Linux 5.10 lacks, each with
 * its fallback. Every program exists twice, built from one body with `compat` a constant:
 * NAME uses the features (Linux >= 5.17), NAME_compat the fallbacks; the loader probes the
 * kernel and loads one of the two (user/sampling/kernel_features.c). Clang drops the branch not taken,
 * so a program never references a helper or map its kernel lacks.
 *
 *   feature                       since  fallback
 *   bpf_get_current_task_btf()    5.11   bpf_get_current_task(), fields read with CO-RE
 *   bpf_task_pt_regs()            5.15   the pt_regs at the top of the task's kernel stack
 *   BPF_MAP_TYPE_TASK_STORAGE     5.11   an array, a slot per thread id (stack_vmas_compat)
 *   bpf_find_vma()                5.17   a walk of mm->mm_rb, the VMA red-black tree (< 6.1)
 * (The path walk of task_events.bpf.c is a global function with a bounded loop on every
 * kernel: no bpf_loop(), 5.17.)
 */
#ifndef BPFPROF_COMPAT_BPF_H
#define BPFPROF_COMPAT_BPF_H

#include "maps.bpf.h"

/* x86_64 THREAD_SIZE (arch/x86/include/asm/page_64_types.h) without KASAN, as every
 * distribution kernel is built: the user registers are the last struct pt_regs in it
 * (task_pt_regs(), TOP_OF_KERNEL_STACK_PADDING is 0 on x86_64). */
#define X86_64_THREAD_SIZE (16 * 1024)
/* Height bound of the VMA tree: a red-black tree of n nodes is at most 2 log2(n + 1) high,
 * 32 for vm.max_map_count's default 65530. */
#define VMA_RB_DEPTH	   40
#define PAGE_SHIFT	   12

/* A task_struct field: a direct load from a trusted task pointer, a probe read with compat. */
#define TASK_FIELD(task, field, compat) ((compat) ? BPF_CORE_READ(task, field) : (task)->field)

/* The current task: a trusted BTF pointer (direct loads), or with compat a plain one that
 * only BPF_CORE_READ may read. */
static __always_inline struct task_struct *current_task(const bool compat)
{
	if (compat)
		return (struct task_struct *)bpf_get_current_task();
	return bpf_get_current_task_btf();
}

/* The user registers a task saved on kernel entry. */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *task, const bool compat)
{
	if (compat)
		return (struct pt_regs *)((void *)BPF_CORE_READ(task, stack) + X86_64_THREAD_SIZE) -
		       1;
	return (struct pt_regs *)bpf_task_pt_regs(task);
}

/* A VMA's fields, copied out of the bpf_find_vma() callback or the tree walk. */
struct vma_info {
	__u64 start;
	__u64 end;
	__u64 pgoff;	   /* bytes */
	__u64 flags;	   /* vm_flags */
	__u64 start_stack; /* the mm's start_stack: argc's address on the main stack */
	struct file *file; /* read with probe reads afterwards */
};

static long vma_info_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct vma_info *vi = ctx;

	vi->start = vma->vm_start;
	vi->end = vma->vm_end;
	vi->pgoff = vma->vm_pgoff << PAGE_SHIFT;
	vi->flags = vma->vm_flags;
	/* A probe read: a plain address, as file_path_walk() takes it. */
	vi->file = BPF_CORE_READ(vma, vm_file);
	vi->start_stack = BPF_CORE_READ(vma, vm_mm, start_stack);
	return 0;
}

/* Kernels before 6.1 keep an mm's VMAs in a red-black tree as well as a list (mm/mmap.c
 * find_vma()); 6.1 replaced both with the maple tree, when bpf_find_vma() already existed.
 * These fields are absent from vmlinux.h (6.18): CO-RE finds them by name. */
struct mm_struct___rb {
	struct rb_root mm_rb;
	unsigned long start_stack;
} __attribute__((preserve_access_index));

struct vm_area_struct___rb {
	unsigned long vm_start;
	unsigned long vm_end;
	struct rb_node vm_rb;
	unsigned long vm_pgoff;
	unsigned long vm_flags;
	struct file *vm_file;
} __attribute__((preserve_access_index));

/* find_vma() of mm/mmap.c before 6.1, without mmap_lock: the lowest VMA ending above addr.
 * Probe reads cannot fault; a tree changing under the walk gives a miss or a stale VMA, as a
 * mapping event racing with a sample would. */
static __always_inline bool vma_find_rb(struct mm_struct___rb *mm, __u64 addr, struct vma_info *vi)
{
	struct vm_area_struct___rb *vma, *found = NULL;
	struct rb_node *node = BPF_CORE_READ(mm, mm_rb.rb_node);
	__u64 end;
	int i;

	for (i = 0; i < VMA_RB_DEPTH && node; i++) {
		vma = (void *)node - bpf_core_field_offset(struct vm_area_struct___rb, vm_rb);
		end = BPF_CORE_READ(vma, vm_end);
		if (end > addr) {
			found = vma;
			if (BPF_CORE_READ(vma, vm_start) <= addr)
				break;
			node = BPF_CORE_READ(node, rb_left);
		} else {
			node = BPF_CORE_READ(node, rb_right);
		}
	}
	if (!found)
		return false;
	vi->start = BPF_CORE_READ(found, vm_start);
	vi->end = BPF_CORE_READ(found, vm_end);
	vi->pgoff = BPF_CORE_READ(found, vm_pgoff) << PAGE_SHIFT;
	vi->flags = BPF_CORE_READ(found, vm_flags);
	vi->file = BPF_CORE_READ(found, vm_file);
	vi->start_stack = BPF_CORE_READ(mm, start_stack);
	return true;
}

/* The VMA of task holding addr; false when none holds it (or, without compat, when mmap_lock
 * is busy: bpf_find_vma() only try-locks in these contexts). */
static __always_inline bool vma_find(struct task_struct *task, __u64 addr, struct vma_info *vi,
				     const bool compat)
{
	__builtin_memset(vi, 0, sizeof(*vi));
	if (compat) {
		if (!vma_find_rb((void *)TASK_FIELD(task, mm, compat), addr, vi))
			return false;
	} else if (bpf_find_vma(task, addr, vma_info_cb, vi, 0)) {
		return false;
	}
	return addr >= vi->start && addr < vi->end;
}

/* The thread's slot of the stack-mapping cache (created empty when missing), or NULL. With
 * compat the slot may hold another thread's mapping: check its tid. */
static __always_inline struct stack_vma *stack_vma_cache(struct task_struct *task, __u32 tid,
							 const bool compat)
{
	__u32 slot = tid % STACK_VMAS_COMPAT_SZ;

	if (!compat)
		return bpf_task_storage_get(&stack_vmas, task, NULL,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	return bpf_map_lookup_elem(&stack_vmas_compat, &slot);
}

/* Forgets the thread's cached stack mapping (exec, thread exit). */
static __always_inline void stack_vma_forget(struct task_struct *task, __u32 tid, const bool compat)
{
	struct stack_vma *v;

	if (!compat) {
		bpf_task_storage_delete(&stack_vmas, task);
		return;
	}
	v = stack_vma_cache(task, tid, compat);
	if (v && v->tid == tid)
		v->tid = 0;
}

#endif /* BPFPROF_COMPAT_BPF_H */

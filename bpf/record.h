/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record.h: the one layout shared by the BPF programs and the user-space consumer. */
#ifndef BPFPROF_RECORD_H
#define BPFPROF_RECORD_H

/*
 * Every ringbuf record starts with struct record_header. Fields are __u8..__u64 and fixed
 * arrays only, with explicit padding, so both compilers (clang -target bpf, gcc) agree on the
 * layout; _Static_assert at the bottom pins the sizes. All times are CLOCK_MONOTONIC ns
 * (bpf_ktime_get_ns), all sizes are bytes.
 */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BPFPROF_COMM_LEN     16
/* Kernel IPs kept per sample: the kernel's default perf_event_max_stack. */
#define BPFPROF_KSTACK_MAX   127
/* User registers kept per sample, in perf_regs order (asm/perf_regs.h): x86_64 uses
 * PERF_REG_X86_AX..PERF_REG_X86_R15 (24), arm64 PERF_REG_ARM64_X0..PERF_REG_ARM64_PC (33). */
#define BPFPROF_REGS_MAX     33
/* Bytes below sp copied on x86_64: the System V ABI red zone, which leaf code and GCC
 * epilogues address without moving sp. */
#define BPFPROF_RED_ZONE_SZ  128
/* Largest --stack-size: the copy size of one sample. */
#define BPFPROF_STACK_SZ_MAX (128 * 1024)

/* record_header.type */
#define RECORD_SAMPLE 1 /* struct sample_record */
#define RECORD_FORK   2 /* struct task_record: a new process (tgid) */
#define RECORD_EXEC   3 /* struct task_record: tgid replaced its image */
#define RECORD_EXIT   4 /* struct task_record: the last thread of tgid exited */
#define RECORD_MMAP   5 /* struct mmap_record: a new executable mapping */
#define RECORD_MUNMAP 6 /* struct munmap_record: a range is no longer executable code */

/* sample_record.regs_arch */
#define BPFPROF_ARCH_X86_64 1
#define BPFPROF_ARCH_ARM64  2

/* sample_record.flags */
#define SAMPLE_F_KERNEL	      (1u << 0) /* the sample interrupted kernel mode */
#define SAMPLE_F_USER_REGS    (1u << 1) /* regs[] hold the task's user registers */
/* The live stack goes on past the copy: it was cut at the process's copy size, not at the end
 * of the stack mapping (an unwind that runs out of bytes should raise the copy size). */
#define SAMPLE_F_STACK_CAPPED (1u << 2)

/* target_tgids values (BPF hash map, key: tgid) */
#define TARGET_PENDING_EXEC  1u	       /* armed at the task's next exec (bpfprof -- CMD) */
#define TARGET_ACTIVE	     2u	       /* sampled */
#define TARGET_F_FOLLOW_FORK (1u << 8) /* new processes it forks become targets too */
#define TARGET_STATE_MASK    0xffu

struct record_header {
	__u32 type; /* RECORD_* */
	__u32 sz;   /* bytes of the whole record, this header included */
};

/*
 * One perf_event sample of a target thread. Variable size: sizeof(struct sample_record)
 * plus the stack capacity chosen at load time; stack_len bytes of stack[] are valid.
 */
struct sample_record {
	struct record_header hdr;
	__u32 tgid;			  /* process id (kernel tgid) */
	__u32 tid;			  /* thread id (kernel pid) */
	__u64 time_ns;			  /* bpf_ktime_get_ns() at the sample */
	__u32 cpu;			  /* CPU the sample was taken on */
	__u32 flags;			  /* SAMPLE_F_* */
	char comm[BPFPROF_COMM_LEN];	  /* thread name, NUL-terminated */
	__u32 regs_arch;		  /* BPFPROF_ARCH_*: how to read regs[] */
	__u32 regs_cnt;			  /* valid entries in regs[] */
	__u64 regs[BPFPROF_REGS_MAX];	  /* user registers, perf_regs order */
	__u64 stack_addr;		  /* user address of stack[0]: sp - BPFPROF_RED_ZONE_SZ */
	__u32 stack_len;		  /* valid bytes in stack[] (may be 0) */
	__s32 stack_err;		  /* 0, or the negative errno of a failed copy */
	__u32 kstack_cnt;		  /* valid entries in kstack[] */
	__s32 kstack_err;		  /* 0, or the negative errno of bpf_get_stack() */
	__u64 kstack[BPFPROF_KSTACK_MAX]; /* kernel IPs, leaf first (SAMPLE_F_KERNEL only) */
	__u8 stack[];			  /* copy of user memory from stack_addr */
};

/* Process life cycle events, reserved in the same ringbuf as the samples so that a
 * process's samples always precede its RECORD_EXIT (ringbuf reservation order). */
struct task_record {
	struct record_header hdr;
	__u32 tgid;	   /* the process the event is about */
	__u32 tid;	   /* the thread that caused it */
	__u32 parent_tgid; /* RECORD_FORK: the forking process, else 0 */
	__u32 pad;
	__u64 time_ns;		     /* bpf_ktime_get_ns() */
	char comm[BPFPROF_COMM_LEN]; /* comm after the event */
	/* RECORD_EXIT: CPU time the process used in its whole life, all its threads, children
	 * not included (the sum_exec_runtime that /proc/PID/stat's utime + stime add up to), ns;
	 * else 0. Task records of older captures end before it (48 bytes). */
	__u64 cpu_ns;
};

/* Path components kept per mapping: leaf first, each NUL-terminated (BPF walks the dentry
 * chain upwards; user space reverses it). BPFPROF_PATH_SZ bytes of room, twice that of
 * buffer so the verifier can bound each component's copy. */
#define BPFPROF_PATH_SZ	   256
#define BPFPROF_PATH_DEPTH 24 /* directories walked at most */

/* mmap_record.prot */
#define MMAP_PROT_READ	  1u
#define MMAP_PROT_WRITE	  2u
#define MMAP_PROT_EXEC	  4u
#define MMAP_F_SHARED	  (1u << 8)
#define MMAP_F_PATH_TRUNC (1u << 9)  /* deeper than BPFPROF_PATH_DEPTH, or too long */
#define MMAP_F_EXEC_TIME  (1u << 10) /* emitted at exec for the new image's code */
#define MMAP_F_VDSO	  (1u << 11) /* the vDSO (no file), emitted at exec */

/*
 * RECORD_MUNMAP: [start, start + len) of tgid holds no code any more (munmap, mremap's old
 * range, mprotect without PROT_EXEC). Small: most munmaps free heap memory, not code.
 */
struct munmap_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns; /* bpf_ktime_get_ns() */
	__u64 start;   /* virtual address */
	__u64 len;     /* bytes */
};

/*
 * RECORD_MMAP: [start, start + len) of tgid maps file (dev, ino) from file offset pgoff, with
 * PROT_EXEC. From raw_tp/sys_exit of mmap, mprotect and mremap, and sched_process_exec for
 * the new image.
 */
struct mmap_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns;			/* bpf_ktime_get_ns() */
	__u64 start;			/* virtual address */
	__u64 len;			/* bytes */
	__u64 pgoff;			/* file offset of start, bytes */
	__u64 dev;			/* st_dev as the kernel keeps it: major << 20 | minor */
	__u64 ino;			/* 0 for anonymous memory */
	__u32 prot;			/* MMAP_PROT_* | MMAP_F_* */
	__u32 path_sz;			/* bytes used in path[] */
	char path[2 * BPFPROF_PATH_SZ]; /* components, leaf first, NUL-terminated each */
};

/* Per-CPU counters (BPF percpu array "stats", one element). */
struct bpf_stats {
	__u64 samples;		 /* sample records submitted */
	__u64 lost;		 /* samples lost: ringbuf reservation failed (ringbuf full) */
	__u64 stack_copy_failed; /* samples whose user stack copy failed (stack_len 0) */
	__u64 stack_truncated;	 /* copies cut at the end of the stack mapping: normal */
	__u64 stack_vma_unknown; /* samples whose stack mapping could not be looked up */
	__u64 kstack_failed;	 /* kernel-mode samples without kernel IPs */
	__u64 no_user_regs;	 /* samples of a task with no user context */
	__u64 events;		 /* task records submitted */
	__u64 events_lost;	 /* task records lost: ringbuf full */
	__u64 targets_full;	 /* forked children not followed: target_tgids full */
	__u64 mmap_events;	 /* mmap records submitted */
	__u64 mmap_lost;	 /* mmap records lost: ringbuf full */
	__u64 stack_vma_lookups; /* bpf_find_vma() calls: the per-thread cache missed */
	__u64 stack_bytes;	 /* user stack bytes copied, all samples */
	__u64 stack_capped;	 /* copies cut at the process's copy size (SAMPLE_F_STACK_CAPPED) */
};

_Static_assert(sizeof(struct record_header) == 8, "record_header size");
_Static_assert(sizeof(struct sample_record) == 1360, "sample_record size");
_Static_assert(sizeof(struct sample_record) % 8 == 0, "sample_record alignment");
_Static_assert(sizeof(struct task_record) == 56, "task_record size");
_Static_assert(sizeof(struct munmap_record) == 40, "munmap_record size");
_Static_assert(sizeof(struct mmap_record) == 72 + 2 * BPFPROF_PATH_SZ, "mmap_record size");
_Static_assert(sizeof(struct bpf_stats) == 120, "bpf_stats size");

#endif /* BPFPROF_RECORD_H */

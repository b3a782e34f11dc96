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
#define RECORD_PY_STACK 7 /* struct py_stack_record: the Python frames of the next sample */
#define RECORD_PY_CODE  8 /* struct py_code_record: a code object, the first time BPF sees it */
#define RECORD_GO_STACK 9 /* struct go_stack_record: the stack a Go thread of the next sample
			   * switched from */
#define RECORD_FP_CHAIN 10 /* struct fp_chain_record: the frame-pointer chain of the next
			    * sample past its stack copy */
#define RECORD_OFF_CPU 11 /* struct off_cpu_record: the time off CPU of the next sample */
#define RECORD_WAKER   12 /* struct waker_record: the next sample is a waker's (--wakers) */

/* sample_record.regs_arch */
#define BPFPROF_ARCH_X86_64 1
#define BPFPROF_ARCH_ARM64  2

/* sample_record.flags */
#define SAMPLE_F_KERNEL	      (1u << 0) /* the sample interrupted kernel mode */
#define SAMPLE_F_USER_REGS    (1u << 1) /* regs[] hold the task's user registers */
/* The live stack goes on past the copy: it was cut at the process's copy size, not at the end
 * of the stack mapping (an unwind that runs out of bytes should raise the copy size). */
#define SAMPLE_F_STACK_CAPPED (1u << 2)
/* Not a perf_event sample: the stack a thread blocked in, taken as its system call returns
 * (off_cpu.bpf.c); its RECORD_OFF_CPU comes just before it. */
#define SAMPLE_F_OFF_CPU      (1u << 3)
/* Not a perf_event sample: the stack of a thread waking a blocked target thread (--wakers);
 * its RECORD_WAKER comes just before it. No user registers unless the waker is a target. */
#define SAMPLE_F_WAKER	      (1u << 4)

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

/*
 * CPython. User space finds a CPython process's layout and _PyRuntime (python/) and hands them
 * to BPF: by binary in py_binaries (BPF arms each process mapping it, task_events.bpf.c), by
 * process in py_procs. Offsets are bytes into CPython's own structures (Include/internal/
 * pycore_runtime.h, pycore_interp.h, cpython/pystate.h, pycore_frame.h, cpython/code.h of
 * the version); PY_OFF_NONE where the version has no such field.
 */
#define PY_OFF_NONE	     0xffff
#define BPFPROF_PY_FRAMES_MAX 128 /* Python frames kept per sample */
#define BPFPROF_PY_THREADS_MAX 256 /* PyThreadStates walked to find the sampled thread's */
#define BPFPROF_PY_CODES_PER_S 1024 /* RECORD_PY_CODEs of a process per second, at most */
/* Bytes of a frame the walk reads at once: every py_offsets.frame_* field ends within them. */
#define BPFPROF_PY_FRAME_READ_SZ 128
/* Bytes of a code object read at once for its identity (py_frame.key), from co_firstlineno:
 * code_filename, code_name, code_linetable and code_serial end within them. */
#define BPFPROF_PY_CODE_READ_SZ 128

/* py_offsets.frames: how a version chains its frames */
#define PY_FRAMES_OBJECTS 1 /* 3.10: PyFrameObject, f_back; one C eval call per frame */
#define PY_FRAMES_IS_ENTRY 2 /* 3.11: _PyInterpreterFrame; is_entry marks a C call's first */
#define PY_FRAMES_SHIM	      3 /* 3.12+: entry frames (frame_owner_entry) separate C calls */

struct py_offsets {
	__u16 runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;	   /* PyInterpreterState.next */
	__u16 interp_tstate_head;  /* PyInterpreterState.threads.head (3.10: tstate_head) */
	__u16 tstate_next;	   /* PyThreadState.next */
	__u16 tstate_native_tid;   /* PyThreadState.native_thread_id (3.11+; the tid in the
				    * process's PID namespace: not used, thread_id is) */
	__u16 tstate_frame;	   /* 3.10 frame, 3.11-3.12 cframe, 3.13+ current_frame */
	__u16 cframe_frame;	   /* _PyCFrame.current_frame (3.11-3.12), else PY_OFF_NONE */
	__u16 frame_back;	   /* PyFrameObject.f_back (3.10), _PyInterpreterFrame.previous */
	__u16 frame_code;	   /* f_code (3.10-3.12), f_executable (3.13+; a _PyStackRef
				    * from 3.14: frame_code_tag) */
	__u16 frame_instr;	   /* f_lasti (3.10: int, code units), prev_instr (3.11-3.12),
				    * instr_ptr (3.13): pointers into the code's bytecode */
	__u16 frame_owner;	   /* is_entry (3.11), owner (3.12+): one byte; else PY_OFF_NONE */
	__u16 code_bytecode;	   /* offsetof(PyCodeObject, co_code_adaptive) (3.11+) */
	__u16 code_firstlineno;	   /* PyCodeObject.co_firstlineno (int) */
	__u16 code_filename;	   /* PyCodeObject.co_filename (PyObject *) */
	__u16 code_name;	   /* co_qualname (3.11+), co_name (3.10) */
	__u16 code_linetable;	   /* PyCodeObject.co_linetable (PyBytesObject *) */
	__u16 unicode_state;	   /* PyASCIIObject.state (kind: bits 2-4, compact 5, ascii 6) */
	__u16 unicode_ascii_sz;	   /* sizeof(PyASCIIObject): a compact ASCII string's data */
	__u16 unicode_compact_sz;  /* sizeof(PyCompactUnicodeObject): other compact data */
	__u16 bytes_sval;	   /* PyBytesObject.ob_sval (ob_size at 16, PyVarObject) */
	__u8 frames;		   /* PY_FRAMES_* */
	__u8 version_minor;	   /* 3.X's X */
	/* PyThreadState.thread_id: pthread_self(), on x86-64 glibc the thread's fs base; matched
	 * where there is no native_thread_id (3.10) */
	__u16 tstate_thread_id;
	__u16 cframe_previous; /* _PyCFrame.previous (3.11-3.12), else PY_OFF_NONE */
	/* A serial number each new code object gets, 0 once they run out: co_version (3.12+,
	 * a __u32), else PY_OFF_NONE (py_frame.key then reads the code object's strings). */
	__u16 code_serial;
	/* PY_FRAMES_SHIM: _PyInterpreterFrame.owner of the entry frame _PyEval_EvalFrameDefault
	 * pushes on the C stack below the frames of each C call: 3, FRAME_OWNED_BY_CSTACK in
	 * 3.12-3.13, FRAME_OWNED_BY_INTERPRETER from 3.14 (enum _frameowner of
	 * Include/internal/pycore_frame.h, 3.14+: pycore_interpframe_structs.h; Python/ceval.c).
	 * A frame of a higher owner is no Python frame either (3.14's FRAME_OWNED_BY_CSTACK, 4:
	 * _PyFrame_IsIncomplete() takes every owner >= FRAME_OWNED_BY_INTERPRETER as one). */
	__u8 frame_owner_entry;
	/* Bits of frame_code to clear before following it: f_executable is a _PyStackRef from
	 * 3.14 (Include/internal/pycore_stackref.h: Py_TAG_BITS, 3 in a default build); 0 before */
	__u8 frame_code_tag;
	/* PyThreadState.base_frame (3.15+): the address of the sentinel frame at the bottom of
	 * each thread's chain (embedded in _PyThreadStateImpl, Include/cpython/pystate.h), which
	 * is no Python frame; else PY_OFF_NONE */
	__u16 tstate_base_frame;
};

/* py_procs value (key: tgid): a CPython process. */
struct py_proc {
	__u64 runtime; /* address of _PyRuntime in the process */
	struct py_offsets off;
	/* Told apart from an earlier process of the same tgid (or image, before exec): the
	 * code objects BPF remembers having copied are this process's only (py_codes_seen). */
	__u32 gen;
	/* Code objects copied since codes_window_ns: at most BPFPROF_PY_CODES_PER_S a second,
	 * whatever a process makes (one that makes new code objects without end). */
	__u32 codes;
	__u64 codes_window_ns;
};

/* py_binaries key: a file holding _PyRuntime (python3.X or libpython3.X.so). */
struct py_binary_key {
	__u64 dev; /* st_dev as the kernel keeps it (mmap_record.dev) */
	__u64 ino;
};

/* py_binaries value: _PyRuntime is at runtime_off past (mapping start - mapping pgoff) of the
 * file's executable mapping (its ELF vaddr minus the text segment's p_vaddr - p_offset). */
struct py_binary {
	__u64 runtime_off;
	struct py_offsets off;
};

/* py_frame.instr: the byte offset of the instruction in the code's bytecode; the top bit marks
 * the first frame a C call to the evaluator ran (the root of a group of Python frames). */
#define PY_INSTR_ENTRY (1u << 31)

/* One Python frame, as the BPF walk found it. */
struct py_frame {
	__u64 code;  /* PyCodeObject address */
	__u32 instr; /* byte offset into the bytecode | PY_INSTR_ENTRY */
	/* With code, names the code object: a freed code object's memory is often the next
	 * one's. A hash of what tells a code object from an earlier one at the same address
	 * (runtime/python.bpf.h, py_code_ident()): co_firstlineno, the addresses of its file name, name
	 * and line table, and its serial (code_serial) or, without one, its name's characters and
	 * its line table's bytes (the first 32 and the last 16 of each, and their lengths). */
	__u32 key;
	/* With PY_INSTR_ENTRY: an address in the C stack frame of the _PyEval_EvalFrameDefault
	 * activation that runs this frame's group (its entry frame, 3.12+; its _PyCFrame, 3.11),
	 * which user space finds among the native frames by their stack ranges; else 0. */
	__u64 anchor;
};

/* py_stack_record.stop: why the walk ended */
#define PY_STOP_ROOT	   0 /* the thread's first frame: complete */
#define PY_STOP_NO_THREAD  1 /* no PyThreadState with the sampled tid (not a Python thread) */
#define PY_STOP_READ	   2 /* a read of the process's memory failed */
#define PY_STOP_DEPTH	   3 /* BPFPROF_PY_FRAMES_MAX frames: more not kept */
#define PY_STOP_NO_FRAME   4 /* the thread runs no Python code now */

/*
 * RECORD_PY_STACK: the Python frames of a sampled thread, written (bpf_ringbuf_output, as long
 * as its frames) by the same program run just before its RECORD_SAMPLE (same cpu, tid and
 * time_ns): a reservation needs a constant size, and a record of its own keeps the samples of
 * other processes small.
 */
struct py_stack_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns; /* the sample's */
	__u32 cpu;     /* the sample's */
	__u16 cnt;     /* valid frames[] */
	__u16 stop;    /* PY_STOP_* */
	struct py_frame frames[BPFPROF_PY_FRAMES_MAX]; /* leaf first */
};

#define BPFPROF_PY_NAME_SZ	 256  /* bytes of co_qualname kept */
#define BPFPROF_PY_FILE_SZ	 512  /* bytes of co_filename kept */
#define BPFPROF_PY_LINETABLE_SZ 4096 /* bytes of co_linetable kept */

/* py_code_record.*_kind: PyUnicode kind (bytes per character: 1, 2, 4), | PY_STR_ASCII */
#define PY_STR_ASCII 0x80

/*
 * RECORD_PY_CODE: what names a code object, copied the first time a sample of the process
 * has it on its stack (py_codes_seen): a short-lived process is gone before user space could
 * read it. Strings are CPython's compact representation: len characters of kind bytes each.
 */
struct py_code_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 key;  /* py_frame.key */
	__u64 code; /* py_frame.code */
	__s32 firstlineno;
	__u32 name_len;	     /* characters of co_qualname (3.10: co_name) */
	__u32 file_len;	     /* characters of co_filename */
	__u32 linetable_len; /* bytes of co_linetable */
	__u8 name_kind, file_kind;
	__u8 version_minor;
	__u8 pad[5];
	__u8 name[BPFPROF_PY_NAME_SZ];
	__u8 file[BPFPROF_PY_FILE_SZ];
	__u8 linetable[BPFPROF_PY_LINETABLE_SZ];
};

/*
 * The fields the records written just before their sample begin with (RECORD_GO_STACK,
 * RECORD_FP_CHAIN): the sample's tgid, tid, time_ns and cpu tie them to it. Each record
 * spells them out (the BPF code fills them by name); the asserts below keep the layouts the
 * same, so user space reads any of them as this.
 */
struct pre_sample {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns;
	__u32 cpu;
};

/* go_stack_record sizes (bytes) */
#define BPFPROF_GO_STACK_SZ    16384 /* copied at most */
#define BPFPROF_GO_STACK_BELOW 4096  /* of which below the frame pointer found */
#define BPFPROF_GO_FP_STEPS    32    /* frame pointers followed in the sample's copy, at most */

/*
 * RECORD_GO_STACK: memory of another stack than the sampled one's, for a Go thread that switched
 * stacks (runtime.systemstack, morestack: from a goroutine's stack, in heap memory, to the
 * thread's g0 stack, where the sample was taken). BPF follows the frame-pointer chain from the
 * sampled rbp through the sample's stack copy (Go keeps frame pointers) to the first frame
 * pointer outside it, and copies the memory around it: BPFPROF_GO_STACK_BELOW bytes below (the
 * frame of the function that switched, and its return address), the rest above (its callers'
 * frames); where the page below is not there (heap pages never touched or given back), from
 * the frame pointer's page. Written just before the sample's RECORD_SAMPLE (same cpu, tid and time_ns), for
 * processes user space armed (go_procs); as long as the bytes copied. Only for unwinding, as
 * the stack copy is.
 */
struct go_stack_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns; /* the sample's */
	__u32 cpu;     /* the sample's */
	__u32 len;     /* valid bytes in data[] */
	__u64 addr;    /* user address of data[0] */
	__u64 bp;      /* the frame pointer found outside the sample's copy */
	__u8 data[BPFPROF_GO_STACK_SZ];
};

/* fp_chain_record sizes */
#define BPFPROF_FP_CHAIN_MAX	2040 /* frames in one record (a per-CPU scratch: <= 32 KiB) */
#define BPFPROF_FP_CHAIN_PIECES 8    /* records of one sample, at most */
/* frame pointers followed for a sample, at most: through the largest copy, then past it */
#define BPFPROF_FP_CHAIN_STEPS	(BPFPROF_STACK_SZ_MAX / 16 + BPFPROF_FP_CHAIN_MAX)

/*
 * RECORD_FP_CHAIN: the frames past the sample's stack copy of a Go thread whose stack is deeper
 * than the copy (a recursion: go/printer's over a long expression takes 14,000 frames, 800 KiB).
 * Go keeps frame pointers on amd64: every function with a frame saves its caller's rbp at [rbp]
 * and has its return address at [rbp + 8] (runtime/stack.go, cmd/compile's
 * framepointer_enabled). BPF follows the chain from the sampled rbp (Linux 5.17+, bpf_loop())
 * and records each frame pointer outside the copy with its return address, from the first one
 * outside until the chain ends, leaves the stack, comes back into the copy or reaches
 * --max-frames: to user space, the 16 bytes at each of them are memory of the stack
 * (frames[i + 1].bp is the word at frames[i].bp, next the one at the last). In pieces of at most
 * BPFPROF_FP_CHAIN_MAX frames, root side last, each as long as its frames, written just before
 * the sample's RECORD_SAMPLE (same cpu, tid and time_ns), for processes user space armed
 * (go_procs). Only for unwinding.
 */
struct fp_chain_frame {
	__u64 bp;  /* the frame pointer: where the caller's rbp was saved */
	__u64 ret; /* the word at bp + 8: the return address into the caller */
};

struct fp_chain_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns; /* the sample's */
	__u32 cpu;     /* the sample's */
	__u32 cnt;     /* frames[] filled, 1 to BPFPROF_FP_CHAIN_MAX */
	__u64 next;    /* the word at frames[cnt - 1].bp */
	struct fp_chain_frame frames[BPFPROF_FP_CHAIN_MAX];
};

/*
 * RECORD_OFF_CPU: how long a target thread was off CPU, blocked (switched out in a system call,
 * not runnable: sleeping, waiting for a lock, I/O), from tp_btf/sched_switch: each period from
 * its switch-out to its switch-in, the periods of at least --off-cpu-min-us counted. Preemption
 * is not blocking (the thread stays runnable) and is not counted. Written as the system call
 * returns, just before its sample (RECORD_SAMPLE with SAMPLE_F_OFF_CPU: same cpu, tid and
 * time_ns) whose stacks are where the thread blocked: the kernel stack at its first counted
 * switch-in, the user stack as the system call returns (unchanged while it blocked).
 */
struct off_cpu_record {
	struct record_header hdr;
	__u32 tgid;
	__u32 tid;
	__u64 time_ns;	/* the sample's: the system call's return */
	__u32 cpu;	/* the sample's */
	/* Periods counted, with those of the thread's earlier system calls that were not written
	 * (over --off-cpu-max-rate): a storm's time is kept, with a sample of its stacks. */
	__u32 switches;
	__u64 off_ns;	/* their total, ns */
	__u64 first_ns; /* this system call's first one's switch-out (bpf_ktime_get_ns()) */
	/* --wakers: the last counted period's waker sample (its tid and time_ns: a RECORD_WAKER
	 * written before), or 0 */
	__u64 waker_ns;
	__u32 waker_tid;
	__u32 pad;
};

/*
 * RECORD_WAKER (--wakers): written from tp_btf/sched_waking by the thread that wakes a blocked
 * target thread whose period has lasted --off-cpu-min-us, just before its own sample
 * (RECORD_SAMPLE with SAMPLE_F_WAKER: same cpu, tid and time_ns): the kernel stack where it
 * woke it, and its user stack when it is a target too (nothing of another process is read).
 * The wakee's RECORD_OFF_CPU names it by waker_tid and waker_ns.
 */
struct waker_record {
	struct record_header hdr;
	__u32 tgid; /* the waker's */
	__u32 tid;
	__u64 time_ns;
	__u32 cpu;
	__u32 wakee_tid; /* the blocked thread */
	__u32 wakee_tgid;
	__u32 pad;
};

/* Per-CPU counters (BPF percpu array "stats", one element): __u64 fields only (user space
 * sums them as an array). */
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
	__u64 py_stacks;	 /* RECORD_PY_STACKs submitted */
	__u64 py_frames;	 /* Python frames in them */
	__u64 py_codes;		 /* RECORD_PY_CODEs submitted */
	__u64 py_lost;		 /* Python records lost: ringbuf full */
	__u64 go_stacks;	 /* RECORD_GO_STACKs submitted */
	__u64 go_lost;		 /* of them lost: ringbuf full */
	__u64 fp_chains;	 /* RECORD_FP_CHAINs submitted */
	__u64 fp_chain_frames;	 /* frames in them */
	__u64 fp_chain_lost;	 /* of them lost: ringbuf full */
	__u64 off_cpu_switches;	 /* switch-outs of target threads blocked in a system call */
	__u64 off_cpu_short;	 /* of their periods, shorter than --off-cpu-min-us */
	__u64 off_cpu_no_syscall; /* switch-outs of target threads blocked outside a system
				   * call (a page fault's I/O): not counted */
	__u64 off_cpu_records;	 /* RECORD_OFF_CPU samples submitted */
	__u64 off_cpu_limited;	 /* of them not written: over --off-cpu-max-rate */
	__u64 off_cpu_limited_ns; /* their time off CPU, ns (in the thread's next record) */
	__u64 off_cpu_lost;	 /* of them lost: ringbuf full */
	/* Periods whose switch-in was not seen (off_cpu.bpf.c: out_ns still set while the thread
	 * runs). Found at their system call's exit: ended there, counted in its record. */
	__u64 off_cpu_unseen;
	__u64 off_cpu_unseen_ns; /* their time, switch-out to the system call's exit, ns */
	/* Found at a later switch-out of the same system call (never at its exit): dropped. */
	__u64 off_cpu_unended;
	__u64 off_cpu_unended_ns; /* from their switch-out to that switch-out, ns */
	__u64 wakers;		 /* RECORD_WAKER samples submitted (--wakers) */
	__u64 wakers_lost;	 /* of them lost (ringbuf full) or over --off-cpu-max-rate */
};

_Static_assert(sizeof(struct record_header) == 8, "record_header size");
_Static_assert(sizeof(struct sample_record) == 1360, "sample_record size");
_Static_assert(sizeof(struct sample_record) % 8 == 0, "sample_record alignment");
_Static_assert(sizeof(struct task_record) == 56, "task_record size");
_Static_assert(sizeof(struct munmap_record) == 40, "munmap_record size");
_Static_assert(sizeof(struct mmap_record) == 72 + 2 * BPFPROF_PATH_SZ, "mmap_record size");
_Static_assert(sizeof(struct bpf_stats) == 296, "bpf_stats size");
_Static_assert(sizeof(struct off_cpu_record) == 64, "off_cpu_record size");
_Static_assert(sizeof(struct waker_record) == 40, "waker_record size");
_Static_assert(sizeof(struct go_stack_record) == 48 + BPFPROF_GO_STACK_SZ, "go_stack_record size");
_Static_assert(sizeof(struct fp_chain_record) == 40 + 16 * BPFPROF_FP_CHAIN_MAX, "fp_chain_record size");
#define PRE_SAMPLE_OFF(rec, f) (__builtin_offsetof(struct rec, f) == __builtin_offsetof(struct pre_sample, f))
#define PRE_SAMPLE_SAME(rec)                                                                \
	(PRE_SAMPLE_OFF(rec, tgid) && PRE_SAMPLE_OFF(rec, tid) && PRE_SAMPLE_OFF(rec, time_ns) && \
	 PRE_SAMPLE_OFF(rec, cpu))
_Static_assert(PRE_SAMPLE_SAME(go_stack_record), "go_stack_record's pre_sample fields");
_Static_assert(PRE_SAMPLE_SAME(fp_chain_record), "fp_chain_record's pre_sample fields");
_Static_assert(PRE_SAMPLE_SAME(off_cpu_record), "off_cpu_record's pre_sample fields");
_Static_assert(PRE_SAMPLE_SAME(waker_record), "waker_record's pre_sample fields");
_Static_assert(sizeof(struct py_offsets) == 52, "py_offsets size");
_Static_assert(sizeof(struct py_proc) == 80, "py_proc size");
_Static_assert(sizeof(struct py_frame) == 24, "py_frame size");
_Static_assert(sizeof(struct py_stack_record) == 32 + 24 * BPFPROF_PY_FRAMES_MAX, "py_stack size");
_Static_assert(sizeof(struct py_code_record) % 8 == 0, "py_code_record alignment");

#endif /* BPFPROF_RECORD_H */

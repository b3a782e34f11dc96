/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record_decode.h: bounds-checked decoding of ringbuf records (layout: bpf/record.h). */
#ifndef BPFPROF_USER_RECORD_H
#define BPFPROF_USER_RECORD_H

#include <stddef.h>
#include "bpf/record.h"

/* A decoded record: pointers into the ringbuf memory given to record__decode(), valid until
 * the ringbuf callback returns (the consumer then releases the space). */
struct record_view {
	__u32 type; /* RECORD_* */
	union {
		const struct sample_record *sample; /* RECORD_SAMPLE */
		const struct task_record *task;	    /* RECORD_FORK, _EXEC, _EXIT */
		const struct mmap_record *mmap;	    /* RECORD_MMAP */
		const struct munmap_record *munmap; /* RECORD_MUNMAP */
		const struct off_cpu_record *off_cpu;	/* RECORD_OFF_CPU */
		const struct waker_record *waker;	/* RECORD_WAKER */
	};
	/* Every record: its header and hdr.sz bytes. A type not above (a runtime's section of
	 * bpf/record.h) is read through it, checked by its runtime (runtimes__check()). */
	const struct record_header *raw;
	/* Task records: task->cpu_ns, or -1 for a record without it (an older capture's): read
	 * this, not task->cpu_ns, which such a record does not hold. */
	__s64 task_cpu_ns;
};

/*
 * Checks the record of sz bytes at data (as delivered by libbpf's ring_buffer callback) and
 * fills *view. Every length inside is checked against sz: stack_len against the bytes that
 * follow the fixed part, regs_cnt and kstack_cnt against their arrays, hdr.sz against sz.
 * comm is not trusted to be NUL-terminated (use record__comm()). A type of none of the
 * generic records (sample, task, mmap, munmap, off-CPU, waker) gets its header checked alone
 * (view->raw): its runtime checks the rest (runtimes__check()).
 * Returns 0 or -EINVAL for a malformed record.
 */
int record__decode(const void *data, size_t sz, struct record_view *view);

/*
 * The path of an mmap record (components leaf first, as BPF walks the dentries) as an absolute
 * path in buf (sz bytes), or "[vdso]" for the vDSO (MMAP_F_VDSO). Returns buf, or NULL when
 * the record has no path, it was truncated
 * (MMAP_F_PATH_TRUNC, a component cut short) or it does not fit.
 */
char *record__mmap_path(const struct mmap_record *m, char *buf, size_t sz);

/* comm as a NUL-terminated string in buf (BPFPROF_COMM_LEN + 1 bytes). */
const char *record__comm(const char comm[BPFPROF_COMM_LEN], char buf[BPFPROF_COMM_LEN + 1]);

#endif /* BPFPROF_USER_RECORD_H */

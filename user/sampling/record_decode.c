// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record_decode.c: ringbuf record decoding; the BPF side is trusted for layout, not for lengths. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "sampling/record_decode.h"
#include "util/util.h"

static int decode_sample(const void *data, size_t sz, struct record_view *view)
{
	const struct sample_record *s = data;

	if (sz < sizeof(*s))
		return -EINVAL;
	if (s->stack_len > sz - sizeof(*s) || s->stack_len > BPFPROF_STACK_SZ_MAX)
		return -EINVAL;
	if (s->regs_cnt > BPFPROF_REGS_MAX || s->kstack_cnt > BPFPROF_KSTACK_MAX)
		return -EINVAL;
	/* A stack slice that wraps around the address space is garbage. */
	if (s->stack_addr + s->stack_len < s->stack_addr)
		return -EINVAL;
	view->sample = s;
	return 0;
}

int record__decode(const void *data, size_t sz, struct record_view *view)
{
	const struct record_header *hdr = data;

	if (!data || sz < sizeof(*hdr) || hdr->sz > sz || hdr->sz < sizeof(*hdr))
		return -EINVAL;
	/* The ringbuf rounds records up to 8 bytes: trust hdr.sz for the content. */
	sz = hdr->sz;
	view->type = hdr->type;
	view->raw = hdr;
	switch (hdr->type) {
	case RECORD_SAMPLE:
		return decode_sample(data, sz, view);
	case RECORD_MUNMAP:
		if (sz < sizeof(struct munmap_record))
			return -EINVAL;
		view->munmap = data;
		if (view->munmap->start + view->munmap->len < view->munmap->start)
			return -EINVAL;
		return 0;
	case RECORD_MMAP:
		if (sz < sizeof(struct mmap_record))
			return -EINVAL;
		view->mmap = data;
		if (view->mmap->path_sz > sizeof(view->mmap->path) ||
		    view->mmap->start + view->mmap->len < view->mmap->start)
			return -EINVAL;
		return 0;
	case RECORD_OFF_CPU:
		if (sz < sizeof(struct off_cpu_record))
			return -EINVAL;
		view->off_cpu = data;
		return 0;
	case RECORD_WAKER:
		if (sz < sizeof(struct waker_record))
			return -EINVAL;
		view->waker = data;
		return 0;
	case RECORD_FORK:
	case RECORD_EXEC:
	case RECORD_EXIT:
		/* Older captures' task records end right before cpu_ns. */
		if (sz < sizeof(struct task_record) && sz != offsetof(struct task_record, cpu_ns))
			return -EINVAL;
		view->task = data;
		view->task_cpu_ns = sz >= sizeof(struct task_record) ? (__s64)view->task->cpu_ns :
								       -1;
		return 0;
	default: /* a runtime's section of bpf/record.h: its runtime checks it */
		return 0;
	}
}

const char *record__comm(const char comm[BPFPROF_COMM_LEN], char buf[BPFPROF_COMM_LEN + 1])
{
	memcpy(buf, comm, BPFPROF_COMM_LEN);
	buf[BPFPROF_COMM_LEN] = '\0';
	return buf;
}

char *record__mmap_path(const struct mmap_record *m, char *buf, size_t sz)
{
	const char *comp[BPFPROF_PATH_DEPTH + 1];
	size_t n = 0, len = 0, i, l;
	uint32_t off = 0;

	if (m->prot & MMAP_F_VDSO) {
		snprintf(buf, sz, "[vdso]");
		return buf;
	}
	if (!m->path_sz || (m->prot & MMAP_F_PATH_TRUNC) || !sz)
		return NULL;
	/* Components are NUL-terminated, leaf first: one cut short (the root end) would give
	 * another file's path. */
	while (off < m->path_sz && n < ARRAY_SIZE(comp)) {
		l = strnlen(m->path + off, m->path_sz - off);
		if (off + l >= m->path_sz)
			return NULL;
		comp[n++] = m->path + off;
		off += l + 1;
	}
	if (!n || off < m->path_sz)
		return NULL;
	for (i = n; i-- > 0;) {
		l = strlen(comp[i]);
		if (len + 1 + l + 1 > sz)
			return NULL;
		buf[len++] = '/';
		memcpy(buf + len, comp[i], l);
		len += l;
	}
	buf[len] = '\0';
	return buf;
}

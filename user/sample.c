// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sample.c: the per-sample path; names are cached per (ELF file, address), never per process. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "sample.h"
#include "symbolize.h"
#include "stage_timer.h"
#include "unwind_stats.h"
#include "util.h"

/* (address -> interned name) caches: per ELF file for user frames, one for kernel IPs. */
struct name_cache {
	uint64_t addr;
	uint32_t id;
	UT_hash_handle hh;
};

struct sample_handler {
	struct proc_table *pt;
	const struct ksyms *ks;
	struct aggregate *agg;
	struct sample_handler_opts opts;
	struct name_cache *knames;
	struct unwind_frame *frames;	/* opts.max_frames */
	uint32_t *ids;			/* 1 + max_frames + BPFPROF_KSTACK_MAX */
	const char **modules;		/* module of each user frame, for --stats */
};

static void name_cache__free(void *head)
{
	struct name_cache *c, *tmp, *h = head;

	HASH_ITER(hh, h, c, tmp) {
		HASH_DEL(h, c);
		free(c);
	}
}

static int name_cache__add(struct name_cache **head, uint64_t addr, uint32_t id)
{
	struct name_cache *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->addr = addr;
	c->id = id;
	HASH_ADD(hh, *head, addr, sizeof(c->addr), c);
	return 0;
}

struct sample_handler *sample_handler__new(struct proc_table *pt, const struct ksyms *ks,
					   struct aggregate *agg,
					   const struct sample_handler_opts *opts)
{
	struct sample_handler *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->pt = pt;
	sh->ks = ks;
	sh->agg = agg;
	sh->opts = *opts;
	sh->frames = calloc(opts->max_frames, sizeof(*sh->frames));
	sh->ids = calloc(1 + opts->max_frames + BPFPROF_KSTACK_MAX, sizeof(*sh->ids));
	sh->modules = calloc(opts->max_frames, sizeof(*sh->modules));
	if (!sh->frames || !sh->ids || !sh->modules) {
		sample_handler__free(sh);
		errno = ENOMEM;
		return NULL;
	}
	return sh;
}

void sample_handler__free(struct sample_handler *sh)
{
	if (!sh)
		return;
	name_cache__free(sh->knames);
	free(sh->frames);
	free(sh->ids);
	free(sh->modules);
	free(sh);
}

static int64_t intern_fmt(struct sample_handler *sh, enum frame_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int64_t intern_fmt(struct sample_handler *sh, enum frame_kind kind, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return aggregate__intern(sh->agg, buf, kind);
}

/* A user frame's name: its function, else "module+0xADDR" (ELF virtual address), else the
 * kind of memory it is in. */
/* The module a frame is in, for --stats: its file, or the kind of memory. */
static const char *mapping_name(const struct proc_mapping_ref *m)
{
	if (!m)
		return NULL;
	if (m->entry)
		return m->entry->path;
	return m->path ? m->path : "[anon]";
}

static int64_t user_frame_name(struct sample_handler *sh, struct proc *p,
			       const struct unwind_frame *f, const char **module)
{
	/* A return address points after the call: look up the call itself. */
	uint64_t pc = f->is_activation ? f->pc : f->pc - 1, addr, off;
	struct proc_mapping_ref *m = proc__mapping(p, pc);
	struct name_cache *c, **head;
	struct elf_entry *e;
	const char *name;
	struct symtab *st;
	int64_t id;

	*module = mapping_name(m);
	if (!m)
		return aggregate__intern(sh->agg, "[unknown]", FRAME_USER);
	if (!m->entry) {
		if (!m->path)
			return intern_fmt(sh, FRAME_USER, "[anon]+0x%" PRIx64, pc - m->start);
		name = strrchr(m->path, '/');
		return intern_fmt(sh, FRAME_USER, "%s+0x%" PRIx64, name ? name + 1 : m->path,
				  pc - m->start + m->pgoff);
	}
	e = m->entry;
	addr = pc - m->bias;
	head = (struct name_cache **)&e->names;
	HASH_FIND(hh, *head, &addr, sizeof(addr), c);
	if (c)
		return c->id;
	st = elf_entry__symtab(e);
	name = st ? symtab__find(st, addr, &off) : NULL;
	if (name)
		id = aggregate__intern(sh->agg, name, FRAME_USER);
	else
		id = intern_fmt(sh, FRAME_USER, "%s+0x%" PRIx64, e->name, addr);
	if (id >= 0) {
		e->names_free = name_cache__free;
		if (name_cache__add(head, addr, id))
			return -ENOMEM;
	}
	return id;
}

static int64_t kernel_frame_name(struct sample_handler *sh, uint64_t ip)
{
	struct name_cache *c;
	const char *name;
	uint64_t off;
	int64_t id;

	HASH_FIND(hh, sh->knames, &ip, sizeof(ip), c);
	if (c)
		return c->id;
	name = sh->ks ? ksyms__find(sh->ks, ip, &off) : NULL;
	if (name)
		id = aggregate__intern(sh->agg, name, FRAME_KERNEL);
	else
		id = intern_fmt(sh, FRAME_KERNEL, "0x%" PRIx64, ip);
	if (id >= 0 && name_cache__add(&sh->knames, ip, id))
		return -ENOMEM;
	return id;
}

int sample_handler__handle(struct sample_handler *sh, const struct sample_record *s)
{
	char comm[BPFPROF_COMM_LEN + 1];
	enum unwind_stop stop;
	uint64_t t0 = 0, t1 = 0;
	size_t n = 0, i;
	struct proc *p;
	int64_t id;
	int cnt, err;

	p = proc_table__find(sh->pt, s->tgid, true);
	if (!p)
		return -ENOMEM;
	memcpy(comm, s->comm, BPFPROF_COMM_LEN);
	comm[BPFPROF_COMM_LEN] = '\0';
	if (!p->comm[0] && s->tid == s->tgid)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);

	p->sample_time_ns = s->time_ns;
	t0 = stage_timers_on ? now_ns() : 0;
	cnt = unwind__sample(p, s, sh->opts.stack_cap, sh->frames, sh->opts.max_frames, &stop);
	if (stage_timers_on) {
		t1 = now_ns();
		stage_timer__add(STAGE_UNWIND, t1 - t0);
	}
	p->stats.samples++;
	p->stats.stops[stop]++;
	if (stop == UNWIND_STOP_ROOT)
		p->stats.root++;

	id = aggregate__intern(sh->agg, comm, FRAME_COMM);
	if (id < 0)
		return id;
	sh->ids[n++] = id;
	for (i = cnt; i-- > 0;) {
		id = user_frame_name(sh, p, &sh->frames[i], &sh->modules[i]);
		if (id < 0)
			return id;
		sh->ids[n++] = id;
	}
	if (sh->opts.stats &&
	    unwind_stats__add(sh->opts.stats, s->tgid, p->comm[0] ? p->comm : comm, sh->modules,
			      cnt, stop, p->ctx.stop_frame))
		return -ENOMEM;
	for (i = s->kstack_cnt; i-- > 0;) {
		id = kernel_frame_name(sh, s->kstack[i]);
		if (id < 0)
			return id;
		sh->ids[n++] = id;
	}
	err = aggregate__add(sh->agg, sh->ids, n, 1);
	if (stage_timers_on)
		stage_timer__add(STAGE_SYMBOLIZE, now_ns() - t1);
	return err;
}

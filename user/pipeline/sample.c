// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sample.c: the per-sample path: unwind, then locations into the aggregate (named later, once
 * each, by the symbolizer). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipeline/sample.h"
#include "util/log.h"
#include "symbols/module_symbols.h"
#include "util/stage_timer.h"
#include "profile/unwind_stats.h"
#include "util/util.h"
#include "runtime/runtime.h"
#include "unwind/proc_unwind.h"
#include "signal/off_cpu.h"

struct sample_handler {
	struct proc_table *pt;
	struct aggregate *agg;
	struct sample_handler_opts opts;
	struct unwind_frame *frames; /* opts.max_frames */
	uint32_t *locs;		     /* location ids: locs_cap */
	size_t locs_cap;	     /* max_frames + splice_max + BPFPROF_KSTACK_MAX */
	size_t splice_max;	     /* runtimes__splice_max() */
	int *replaced;		     /* per user frame: the runtime's group replacing it, or -1 */
	uint32_t *root_groups;	     /* a runtime's groups that go at the root: splice_max */
	const char **modules;	     /* module of each user frame, for --stats */
	struct off_cpu *off_cpu;     /* RECORD_OFF_CPUs, RECORD_WAKERs and waker stacks */
	struct proc_stats unwound;   /* every process's unwinding counters, summed */
};

struct off_cpu *sample_handler__off_cpu(struct sample_handler *sh)
{
	return sh->off_cpu;
}

void sample_handler__forget(struct sample_handler *sh, uint32_t tgid, bool exec)
{
	if (!exec)
		off_cpu__forget(sh->off_cpu, tgid);
}

struct sample_handler *sample_handler__new(struct proc_table *pt, struct aggregate *agg,
					   const struct sample_handler_opts *opts)
{
	struct sample_handler *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->pt = pt;
	sh->agg = agg;
	sh->opts = *opts;
	sh->frames = calloc(opts->max_frames, sizeof(*sh->frames));
	sh->splice_max = runtimes__splice_max(opts->runtimes);
	sh->locs_cap = opts->max_frames + sh->splice_max + BPFPROF_KSTACK_MAX;
	sh->locs = calloc(sh->locs_cap, sizeof(*sh->locs));
	sh->modules = calloc(opts->max_frames, sizeof(*sh->modules));
	sh->replaced = calloc(opts->max_frames, sizeof(*sh->replaced));
	sh->root_groups = calloc(sh->splice_max ?: 1, sizeof(*sh->root_groups));
	sh->off_cpu = off_cpu__new(opts->ksyms);
	if (!sh->frames || !sh->locs || !sh->modules || !sh->replaced || !sh->root_groups ||
	    !sh->off_cpu) {
		sample_handler__free(sh);
		errno = ENOMEM;
		return NULL;
	}
	return sh;
}

void sample_handler__set_aggregate(struct sample_handler *sh, struct aggregate *agg)
{
	sh->agg = agg;
	/* Their locations are the old aggregate's. */
	off_cpu__clear(sh->off_cpu);
}

const struct proc_stats *sample_handler__unwound(const struct sample_handler *sh)
{
	return &sh->unwound;
}

void sample_handler__free(struct sample_handler *sh)
{
	if (!sh)
		return;
	free(sh->frames);
	free(sh->locs);
	free(sh->modules);
	free(sh->replaced);
	free(sh->root_groups);
	off_cpu__free(sh->off_cpu);
	free(sh);
}

/* The module a frame is in, for --stats: its file, or the kind of memory. */
static const char *mapping_name(const struct mapping *m)
{
	if (!m)
		return NULL;
	if (m->entry)
		return m->entry->path;
	return m->path ? m->path : "[anon]";
}

/*
 * The location of a user frame: (ELF file, ELF virtual address) when the mapping's file is
 * open, named later by the symbolizer; in anonymous memory (JIT code) its address, when a
 * runtime names such frames (runtimes__anon_location(): later, at output), else "[anon]+0xOFF";
 * else a name now: "file+0xOFF" (file offset) for a file that could not be opened,
 * "[unknown]" outside mappings.
 */
static int64_t user_location(struct sample_handler *sh, struct proc *p,
			     const struct unwind_frame *f, const char **module)
{
	/* A return address points after the call: the call itself (the unwinder looked up the
	 * frame's mapping there). */
	uint64_t pc = f->is_activation ? f->pc : f->pc - 1;
	const struct mapping *m = f->mapping;
	const char *base;
	int64_t name, id;

	*module = mapping_name(m);
	if (m && m->entry) {
		/* Once per file: a debuginfod download starts now, in its own thread. */
		module_symbols__request_debuginfo(m->entry);
		return aggregate__location(sh->agg, FRAME_USER, m->entry, f->elf_addr, AGG_NO_NAME);
	}
	if (!m) {
		name = aggregate__string(sh->agg, "[unknown]");
	} else if (!m->path) {
		name = aggregate__string_fmt(sh->agg, "[anon]+0x%" PRIx64, pc - m->start);
		if (name < 0)
			return name;
		/* JIT code: a runtime names it (when the profile is written), else the name. */
		id = runtimes__anon_location(sh->opts.runtimes, p, sh->agg, pc, name);
		if (id != -ENOENT)
			return id;
	} else {
		base = strrchr(m->path, '/');
		name = aggregate__string_fmt(sh->agg, "%s+0x%" PRIx64, base ? base + 1 : m->path,
					     pc - m->start + m->pgoff);
	}
	if (name < 0)
		return name;
	return aggregate__location(sh->agg, FRAME_USER, NULL, 0, name);
}

/* Room left in sh->locs for user frames after n of them: the kernel's come after. */
static size_t locs_room(const struct sample_handler *sh, size_t n)
{
	return n < sh->locs_cap - BPFPROF_KSTACK_MAX ? sh->locs_cap - BPFPROF_KSTACK_MAX - n : 0;
}

/*
 * The user frames' locations, root first, into sh->locs from *n, with a runtime's groups of
 * frames in place of the native frames that run them and those without one at the root
 * (runtimes__splice()). Each native frame's module goes to sh->modules for --stats. 0 or a
 * negative errno.
 */
static int user_locations(struct sample_handler *sh, const struct runtime_sample *rs, size_t *n)
{
	struct runtime_splice sp = {
		.frame_group = sh->replaced,
		.root = sh->root_groups,
		.root_cap = sh->splice_max,
	};
	int64_t id;
	size_t g;
	int i, k;

	for (i = 0; i < rs->cnt; i++)
		sh->replaced[i] = -1;
	k = runtimes__splice(sh->opts.runtimes, rs, &sp);
	if (k < 0)
		return k;
	for (g = 0; g < sp.root_cnt; g++) {
		k = runtimes__splice_group(&sp, sh->agg, sp.root[g], sh->locs + *n,
					   locs_room(sh, *n));
		if (k < 0)
			return k;
		*n += k;
	}
	for (i = rs->cnt; i-- > 0;) {
		sh->modules[i] = NULL;
		if (sh->replaced[i] >= 0) {
			k = runtimes__splice_group(&sp, sh->agg, sh->replaced[i], sh->locs + *n,
						   locs_room(sh, *n));
			if (k < 0)
				return k;
			*n += k;
			if (k)
				continue;
		}
		if (!locs_room(sh, *n))
			break;
		id = user_location(sh, rs->p, &sh->frames[i], &sh->modules[i]);
		if (id < 0)
			return id;
		sh->locs[(*n)++] = id;
	}
	return 0;
}

/* Stack bytes the unwind needed: up to the last frame's sp, plus what its CFA rule reads. */
static void learn_copy_size(struct sample_handler *sh, struct proc *p, struct unwinder *uw,
			    const struct sample_record *s, enum unwind_stop stop)
{
	uint64_t sp = unwinder__last_sp(uw), used = s->stack_len;
	int64_t ret;

	if (sp > s->stack_addr && sp - s->stack_addr < s->stack_len)
		used = sp - s->stack_addr + 512;
	/* A walk through a frame without CFI that ran out of copy is blamed on that frame,
	 * but a larger copy may still go on. */
	if (stop != UNWIND_STOP_ROOT && unwinder__copy_short(uw))
		stop = UNWIND_STOP_TRUNCATED;
	ret = stack_size__observe(&sh->opts.copy, proc__stack_copy(p), s->tgid, s,
				  stop == UNWIND_STOP_TRUNCATED, used > UINT32_MAX ? UINT32_MAX : used);
	if (ret > 0)
		pr_debug("process %u (%s): stack copy size now %lld bytes", s->tgid, proc__comm(p),
			 (long long)ret);
	else if (ret < 0)
		pr_debug("process %u: set stack copy size: %s", s->tgid, strerror((int)-ret));
	if (sh->opts.stats)
		unwind_stats__stack(sh->opts.stats, s->tgid, s->stack_len,
				    stack_size__current(&sh->opts.copy, proc__stack_copy(p)),
				    stop == UNWIND_STOP_TRUNCATED);
}

int sample_handler__handle(struct sample_handler *sh, const struct sample_record *s)
{
	struct runtime_sample rs = {};
	char comm[BPFPROF_COMM_LEN + 1];
	struct unwinder *uw;
	enum unwind_stop stop;
	uint64_t t0 = 0, t1 = 0;
	size_t n = 0, i;
	struct proc *p;
	enum sample_origin origin;
	struct sample_weight w;
	const uint32_t *locs;
	int64_t id, comm_id;
	int cnt, err;
	uint32_t cap;

	err = off_cpu__take(sh->off_cpu, sh->agg, s, &origin, &w);
	if (err)
		return err < 0 ? err : 0;
	p = proc_table__find(sh->pt, s->tgid, true);
	uw = p ? proc_unwind__unwinder(p) : NULL;
	if (!uw)
		return -ENOMEM;
	memcpy(comm, s->comm, BPFPROF_COMM_LEN);
	comm[BPFPROF_COMM_LEN] = '\0';
	if (!proc__comm(p)[0] && s->tid == s->tgid)
		proc__set_comm(p, comm);

	t0 = stage_timers_on ? now_ns() : 0;
	cap = s->flags & SAMPLE_F_STACK_CAPPED ? s->stack_len : sh->opts.stack_cap;
	rs.s = s;
	rs.p = p;
	rs.uw = uw;
	rs.agg = sh->agg;
	runtimes__pre_unwind(sh->opts.runtimes, &rs);
	cnt = unwind__sample(uw, s, cap, sh->frames, sh->opts.max_frames, &stop);
	rs.frames = sh->frames;
	rs.cnt = cnt;
	runtimes__post_unwind(sh->opts.runtimes, &rs);
	if (stage_timers_on) {
		t1 = now_ns();
		stage_timer__add(STAGE_UNWIND, t1 - t0);
	}
	if (sh->opts.copy.init_sz && s->stack_len)
		learn_copy_size(sh, p, uw, s, stop);
	proc_stats__count(proc_unwind__stats(p), stop);
	proc_stats__count(&sh->unwound, stop);

	comm_id = aggregate__string(sh->agg, comm);
	if (comm_id < 0)
		return comm_id;
	err = user_locations(sh, &rs, &n);
	if (err)
		return err;
	err = off_cpu__waker_stack(sh->off_cpu, sh->agg, s, sh->locs, n, comm_id);
	if (err)
		return err < 0 ? err : 0;
	if (sh->opts.stats &&
	    unwind_stats__add(sh->opts.stats, s->tgid, proc__comm(p)[0] ? proc__comm(p) : comm,
			      sh->frames, sh->modules, cnt, stop, unwinder__stop_frame(uw)))
		return -ENOMEM;
	for (i = s->kstack_cnt; i-- > 0;) {
		id = aggregate__location(sh->agg, FRAME_KERNEL, NULL, s->kstack[i], AGG_NO_NAME);
		if (id < 0)
			return id;
		sh->locs[n++] = id;
	}
	locs = off_cpu__stack(sh->off_cpu, s, sh->locs, &n);
	err = locs ? aggregate__add(sh->agg, s->tgid, s->tid, comm_id, origin, &w, locs, n) :
		     -ENOMEM;
	if (stage_timers_on)
		stage_timer__add(STAGE_AGGREGATE, now_ns() - t1);
	return err;
}

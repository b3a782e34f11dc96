// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * go.c: the Go runtime's hooks (runtime_go_ops): the records that precede a Go sample (the
 * goroutine stack its thread switched from, the frame-pointer chain past the sample's copy)
 * given to its unwind, the arming of Go processes in go_procs (bpf/runtime/go.bpf.h), its
 * --stats lines, and the Go function table kept per file for the unwind step and the names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/record.h"
#include "process/proc_table.h"
#include "runtime/go/go.h"
#include "runtime/go/gopclntab.h"
#include "runtime/runtime.h"
#include "symbols/dwarf_lines.h"
#include "symbols/symtab.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/pending.h"
#include "util/stage_timer.h"
#include "util/util.h"

/* Whether a process is armed for Go stack records (go_procs, bpf/runtime/go.bpf.h). */
enum go_arm {
	GO_ARM_NONE,
	GO_ARM_ARMED,
	GO_ARM_NEXT_EXEC, /* armed for the Go image its coming exec brings (bpfprof -- CMD) */
};

struct go {
	struct proc_table *pt;
	const struct runtime_maps *maps; /* NULL in a replay */
	struct pending go_stacks;	 /* RECORD_GO_STACKs */
	struct pending fp_chains;	 /* RECORD_FP_CHAINs */
	struct stack_word *words;	 /* a sample's RECORD_FP_CHAINs' words: 2 per frame */
	uint64_t fp_chain_frames;	 /* frames in the RECORD_FP_CHAINs matched */
};

/* A file's table, kept on its module (go_module_table()). */
static void table_free(void *data);
static const struct module_attach_type table_type = {
	.name = "go",
	.free = table_free,
};

/* No .gopclntab in the file (looked for once). */
static char no_go_mark;
#define NO_GO ((void *)&no_go_mark)

static void table_free(void *data)
{
	if (data != NO_GO)
		gopclntab__free(data);
}

struct gopclntab *go_module_table(struct module *e)
{
	struct gopclntab *go = module__attachment(e, &table_type);
	uint64_t t0;

	if (!go) {
		t0 = stage_timers_on ? now_ns() : 0;
		go = e->elf ? gopclntab__new(e->elf) : NULL;
		if (go && stage_timers_on)
			stage_timer__add(STAGE_GO_TABLE, now_ns() - t0);
		if (module__attach(e, &table_type, go ? go : NO_GO)) {
			gopclntab__free(go); /* no slot: looked for again at the next call */
			return NULL;
		}
	}
	return go == NO_GO ? NULL : go;
}

/* The symbol source: Go's function names, for a file without .symtab. */
static int go_functions(Elf *elf, symtab_source_fn fn, void *ctx)
{
	return gopclntab__functions(elf, fn, ctx);
}

/* Source frames per address at most (the symbolizer asks for SYMBOLIZE_MAX_INLINE). */
#define GO_FRAMES_MAX 16

/* Go's inline frames, names, files and lines from .gopclntab, for a file without DWARF
 * (-ldflags='-s -w'); 0 when its table does not cover addr (a cgo binary's C code). */
static int go_frames(struct module *e, uint64_t addr, struct src_frame *out, size_t cap)
{
	struct go_src_frame src[GO_FRAMES_MAX];
	struct gopclntab *go = go_module_table(e);
	int n, i;

	if (!go)
		return 0;
	n = gopclntab__frames(go, addr, src, cap < GO_FRAMES_MAX ? cap : GO_FRAMES_MAX);
	for (i = 0; i < n; i++)
		out[i] = (struct src_frame){ .function = src[i].name,
					     .file = src[i].file,
					     .line = src[i].line };
	return n > 0 ? n : 0;
}

static const struct symtab_source go_source = {
	.functions = go_functions,
	.frames = go_frames,
};

int go__register(void)
{
	int err = go_unwind__register();

	return err ? err : symtab__add_source(&go_source);
}

/* A process's Go arming, kept on its entry across exec and exit (the entry's life). */
static const struct proc_attach_type arm_type = {
	.name = "go",
	.free = free,
};

/* p's arming; with create, made (GO_ARM_NONE) when p has none. NULL when it has none. */
static enum go_arm *proc_arm(struct proc *p, bool create)
{
	enum go_arm *arm = proc__attachment(p, &arm_type);

	if (arm || !create)
		return arm;
	arm = calloc(1, sizeof(*arm));
	if (arm && proc__attach(p, &arm_type, arm)) {
		free(arm);
		arm = NULL;
	}
	return arm;
}

/* Arms process tgid for RECORD_GO_STACKs (next_exec: for the Go image its exec brings). 0 or a
 * negative errno. */
static int go_arm(struct go *g, uint32_t tgid, bool next_exec)
{
	struct proc *p = proc_table__find(g->pt, tgid, true);
	enum go_arm *arm;
	uint8_t one = 1;

	if (!p)
		return -ENOMEM;
	if (!g->maps)
		return 0;
	arm = proc_arm(p, true);
	if (arm)
		*arm = next_exec ? GO_ARM_NEXT_EXEC : GO_ARM_ARMED;
	return g->maps->update(g->maps, "go_procs", &tgid, &one);
}

static void *go_new(const struct runtime_env *env)
{
	struct go *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return NULL;
	g->pt = env->pt;
	g->maps = env->maps;
	g->words = calloc(2 * BPFPROF_FP_CHAIN_PIECES * BPFPROF_FP_CHAIN_MAX, sizeof(*g->words));
	if (!g->words || pending__init(&g->go_stacks, sizeof(struct go_stack_record)) ||
	    pending__init(&g->fp_chains, offsetof(struct fp_chain_record, frames) +
						 BPFPROF_FP_CHAIN_PIECES * BPFPROF_FP_CHAIN_MAX *
							 sizeof(struct fp_chain_frame))) {
		err = ENOMEM;
		goto fail;
	}
	err = -go__register();
	if (err)
		goto fail;
	return g;
fail:
	pending__free(&g->go_stacks);
	pending__free(&g->fp_chains);
	free(g->words);
	free(g);
	errno = err;
	return NULL;
}

static void go_free(void *rt)
{
	struct go *g = rt;

	if (!g)
		return;
	pending__free(&g->go_stacks);
	pending__free(&g->fp_chains);
	free(g->words);
	free(g);
}

/*
 * A sample's RECORD_FP_CHAIN pieces (bpf/record.h) as one record (its cnt the pieces' frames,
 * its next the last piece's) in the cpu's pending buffer, BPFPROF_FP_CHAIN_PIECES records long.
 */
static void fp_chain_put(struct go *g, const struct fp_chain_record *r)
{
	struct pending *pd = &g->fp_chains;
	struct fp_chain_record *p = pending__peek(pd, r->cpu, r->tid, r->time_ns);
	size_t frames = r->cnt * sizeof(r->frames[0]);

	if (p) {
		/* A piece past the pieces BPF was given (a capture's): dropped, the others kept. */
		if (p->cnt > BPFPROF_FP_CHAIN_MAX * (BPFPROF_FP_CHAIN_PIECES - 1))
			return;
		memcpy(&p->frames[p->cnt], r->frames, frames);
		p->cnt += r->cnt;
		p->next = r->next;
		return;
	}
	pending__put(pd, r->cpu, r->tid, r->time_ns, r,
		     offsetof(struct fp_chain_record, frames) + frames);
}

int go__record_check(const struct record_header *hdr, size_t len)
{
	const struct go_stack_record *go_stack = (const struct go_stack_record *)hdr;
	const struct fp_chain_record *fp_chain = (const struct fp_chain_record *)hdr;
	size_t sz;

	if (len < sizeof(*hdr) || hdr->sz > len || hdr->sz < sizeof(*hdr))
		return -EINVAL;
	sz = hdr->sz;
	switch (hdr->type) {
	case RECORD_GO_STACK:
		if (sz < offsetof(struct go_stack_record, data))
			return -EINVAL;
		if (go_stack->len > BPFPROF_GO_STACK_SZ ||
		    go_stack->len > sz - offsetof(struct go_stack_record, data) ||
		    go_stack->addr + go_stack->len < go_stack->addr)
			return -EINVAL;
		return 0;
	case RECORD_FP_CHAIN:
		if (sz < offsetof(struct fp_chain_record, frames))
			return -EINVAL;
		if (!fp_chain->cnt || fp_chain->cnt > BPFPROF_FP_CHAIN_MAX ||
		    fp_chain->cnt > (sz - offsetof(struct fp_chain_record, frames)) /
					    sizeof(struct fp_chain_frame))
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* RECORD_GO_STACK: kept for the sample of the same cpu, tid and time that follows it, whose
 * unwind reads it as stack memory (unwinder__set_stack2()). RECORD_FP_CHAIN: kept the same
 * way, its frame pointers and return addresses read past the sample's copy
 * (unwinder__set_fp_chain()). Both checked by go__record_check() (runtimes__check()). */
static int go_record(void *rt, const struct record_header *hdr, size_t len)
{
	struct go *g = rt;
	const struct go_stack_record *go;

	(void)len;
	if (hdr->type == RECORD_FP_CHAIN) {
		fp_chain_put(g, (const struct fp_chain_record *)hdr);
		return 0;
	}
	go = (const struct go_stack_record *)hdr;
	pending__put(&g->go_stacks, go->cpu, go->tid, go->time_ns, go,
		     offsetof(struct go_stack_record, data) + go->len);
	return 0;
}

static int stack_word_cmp(const void *a, const void *b)
{
	const struct stack_word *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The words of a RECORD_FP_CHAIN (bpf/record.h) as memory for the unwind of its sample: at
 * each frame pointer, the next one (the caller's rbp), and the return address above it;
 * sorted by address (a chain that switched stacks goes down somewhere). Returns the count. */
static size_t fp_chain_words(struct go *g, const struct fp_chain_record *r)
{
	struct stack_word *w = g->words;
	bool sorted = true;
	uint32_t i;

	for (i = 0; i < r->cnt; i++) {
		w[2 * i].addr = r->frames[i].bp;
		w[2 * i].val = i + 1 < r->cnt ? r->frames[i + 1].bp : r->next;
		w[2 * i + 1].addr = r->frames[i].bp + 8;
		w[2 * i + 1].val = r->frames[i].ret;
		if (i && r->frames[i].bp <= r->frames[i - 1].bp)
			sorted = false;
	}
	if (!sorted)
		qsort(w, 2 * (size_t)r->cnt, sizeof(*w), stack_word_cmp);
	g->fp_chain_frames += r->cnt;
	return 2 * (size_t)r->cnt;
}

/* The sample's records, as memory its unwind reads besides its own copy. */
static void go_pre_unwind(void *rt, const struct runtime_sample *rs)
{
	struct go *g = rt;
	const struct sample_record *s = rs->s;
	const struct go_stack_record *go;
	const struct fp_chain_record *chain;

	go = pending__take(&g->go_stacks, s->cpu, s->tid, s->time_ns);
	if (go)
		unwinder__set_stack2(rs->uw, go->addr, go->data, go->len, go->bp);
	chain = pending__take(&g->fp_chains, s->cpu, s->tid, s->time_ns);
	if (chain)
		unwinder__set_fp_chain(rs->uw, g->words, fp_chain_words(g, chain));
}

/* A Go process (its unwind used .gopclntab): armed once for RECORD_GO_STACKs. */
static void go_post_unwind(void *rt, const struct runtime_sample *rs)
{
	struct go *g = rt;
	enum go_arm *arm;
	int err;

	if (!go_unwind__used(rs->uw) || !g->maps)
		return;
	arm = proc_arm(rs->p, false);
	if (arm && *arm != GO_ARM_NONE)
		return;
	err = go_arm(g, rs->s->tgid, false);
	if (err)
		pr_debug("go_procs: %s", strerror(-err));
}

/* A Go program (bpfprof -p) or a Go command about to run (-- CMD): armed before its first
 * sample is handled (by then the Go runtime's start-up has run its first collections). */
static int go_attach(void *rt, uint32_t tgid, const char *exe, bool next_exec)
{
	if (!gopclntab__file_has(exe))
		return 0;
	return go_arm(rt, tgid, next_exec);
}

/* Its arming (go_procs) goes, unless it was armed for the image this exec brings. */
static void go_forget(void *rt, uint32_t tgid, bool exec)
{
	struct go *g = rt;
	struct proc *p = proc_table__find(g->pt, tgid, false);
	enum go_arm *arm = p ? proc_arm(p, false) : NULL;

	if (arm && exec && *arm == GO_ARM_NEXT_EXEC) {
		*arm = GO_ARM_ARMED;
		return;
	}
	if (arm)
		*arm = GO_ARM_NONE;
	if (g->maps)
		g->maps->remove(g->maps, "go_procs", &tgid);
}

/* The --stats lines of Go stack switches (RECORD_GO_STACK) and of Go stacks deeper than the
 * copy (RECORD_FP_CHAIN): records read by their sample's unwind, those without a sample; with
 * bpf (NULL for a replay), those BPF made and lost. Nothing for a kind no record was made of. */
static void go_stats(void *rt, const struct bpf_stats *bpf, FILE *fp)
{
	struct go *g = rt;
	const struct pending *go = &g->go_stacks, *fc = &g->fp_chains;

	if (go->matched || go->unmatched || (bpf && bpf->go_stacks)) {
		fprintf(fp,
			"bpfprof: Go stack switches: %llu samples unwound with the goroutine stack "
			"they switched from, %llu copies without their sample",
			(unsigned long long)go->matched, (unsigned long long)go->unmatched);
		if (bpf)
			fprintf(fp, "; %llu copied by BPF, %llu lost (ringbuf full)",
				(unsigned long long)bpf->go_stacks,
				(unsigned long long)bpf->go_lost);
		fprintf(fp, "\n");
	}
	if (fc->matched || fc->unmatched || (bpf && bpf->fp_chains)) {
		fprintf(fp,
			"bpfprof: Go stacks deeper than the copy: %llu samples unwound with the "
			"frame-pointer chain past it (%llu frames), %llu chains without their sample",
			(unsigned long long)fc->matched, (unsigned long long)g->fp_chain_frames,
			(unsigned long long)fc->unmatched);
		if (bpf)
			fprintf(fp, "; %llu recorded by BPF, %llu lost (ringbuf full)",
				(unsigned long long)bpf->fp_chains,
				(unsigned long long)bpf->fp_chain_lost);
		fprintf(fp, "\n");
	}
}

static const uint32_t go_record_types[] = { RECORD_GO_STACK, RECORD_FP_CHAIN, 0 };

const struct runtime_ops runtime_go_ops = {
	.name = "go",
	.option_help = NULL, /* always on */
	.new = go_new,
	.free = go_free,
	.record_types = go_record_types,
	.record = go_record,
	.check = go__record_check,
	.attach = go_attach,
	.forget = go_forget,
	.pre_unwind = go_pre_unwind,
	.post_unwind = go_post_unwind,
	.stats = go_stats,
};

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unwind_stats.c: --stats counters, kept per process and per module. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "profile/unwind_stats.h"

struct module_stats {
	uint64_t frames;
	uint64_t methods[UNWIND_BY_CNT]; /* frames per unwinding method */
	uint64_t stops[UNWIND_STOP_CNT];
	UT_hash_handle hh;
	char name[];
};

struct proc_stats_entry {
	uint32_t tgid;
	char comm[17];
	uint64_t samples;
	uint64_t root;
	uint64_t stops[UNWIND_STOP_CNT];
	struct module_stats *modules;
	uint64_t stack_samples;	  /* samples with a stack copy */
	uint64_t stack_bytes;	  /* bytes copied */
	uint64_t stack_truncated; /* of them, unwinds that ran out of copied stack */
	uint32_t copy_sz_last, copy_sz_max;
	UT_hash_handle hh;
};

struct unwind_stats {
	struct proc_stats_entry *procs;
};

struct unwind_stats *unwind_stats__new(void)
{
	return calloc(1, sizeof(struct unwind_stats));
}

void unwind_stats__free(struct unwind_stats *us)
{
	struct proc_stats_entry *p, *pt;
	struct module_stats *m, *mt;

	if (!us)
		return;
	HASH_ITER(hh, us->procs, p, pt) {
		HASH_ITER(hh, p->modules, m, mt) {
			HASH_DEL(p->modules, m);
			free(m);
		}
		HASH_DEL(us->procs, p);
		free(p);
	}
	free(us);
}

static struct module_stats *module_stats__get(struct proc_stats_entry *p, const char *name)
{
	size_t len = strlen(name);
	struct module_stats *m;

	HASH_FIND(hh, p->modules, name, len, m);
	if (m)
		return m;
	m = calloc(1, sizeof(*m) + len + 1);
	if (!m)
		return NULL;
	memcpy(m->name, name, len + 1);
	HASH_ADD_KEYPTR(hh, p->modules, m->name, len, m);
	return m;
}

static struct proc_stats_entry *proc__get(struct unwind_stats *us, uint32_t tgid)
{
	struct proc_stats_entry *p;

	HASH_FIND(hh, us->procs, &tgid, sizeof(tgid), p);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->tgid = tgid;
		HASH_ADD(hh, us->procs, tgid, sizeof(p->tgid), p);
	}
	return p;
}

void unwind_stats__stack(struct unwind_stats *us, uint32_t tgid, uint32_t bytes, uint32_t copy_sz,
			 bool truncated)
{
	struct proc_stats_entry *p = proc__get(us, tgid);

	if (!p)
		return;
	p->stack_samples++;
	p->stack_bytes += bytes;
	p->stack_truncated += truncated;
	p->copy_sz_last = copy_sz;
	if (copy_sz > p->copy_sz_max)
		p->copy_sz_max = copy_sz;
}

int unwind_stats__add(struct unwind_stats *us, uint32_t tgid, const char *comm,
		      const struct unwind_frame *frames, const char *const *modules, size_t cnt,
		      enum unwind_stop stop, size_t stop_frame)
{
	struct proc_stats_entry *p = proc__get(us, tgid);
	struct module_stats *m;
	size_t i;

	if (!p)
		return -ENOMEM;
	/* The name at the last sample: after an exec, the new image's. */
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->samples++;
	p->stops[stop]++;
	p->root += stop == UNWIND_STOP_ROOT;
	for (i = 0; i < cnt; i++) {
		m = module_stats__get(p, modules[i] ? modules[i] : "[unknown]");
		if (!m)
			return -ENOMEM;
		m->frames++;
		if (frames[i].method < UNWIND_BY_CNT)
			m->methods[frames[i].method]++;
		if (i == stop_frame)
			m->stops[stop]++;
	}
	return 0;
}

static int by_samples(const void *a, const void *b)
{
	const struct proc_stats_entry *x = *(void *const *)a, *y = *(void *const *)b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

static void print_stops(FILE *fp, const uint64_t *stops, bool with_root)
{
	const char *sep = "";
	int i;

	for (i = 0; i < UNWIND_STOP_CNT; i++) {
		if ((i == UNWIND_STOP_ROOT && !with_root) || !stops[i])
			continue;
		fprintf(fp, "%s%s %llu", sep, unwind_stop_names[i], (unsigned long long)stops[i]);
		sep = ", ";
	}
}

/* "CFI 120, Go pcsp 3": the frames of each unwinding method used. */
static void print_methods(FILE *fp, const uint64_t *methods)
{
	const char *sep = "";
	int i;

	for (i = 0; i < UNWIND_BY_CNT; i++) {
		if (!methods[i])
			continue;
		fprintf(fp, "%s%s %llu", sep, unwind_method_names[i], (unsigned long long)methods[i]);
		sep = ", ";
	}
}

void unwind_stats__print(const struct unwind_stats *us, FILE *fp, unsigned int max_procs)
{
	struct proc_stats_entry **v, *p;
	struct module_stats *m;
	size_t n = HASH_COUNT(us->procs), i;
	uint64_t stops;
	int j;

	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return;
	i = 0;
	for (p = us->procs; p; p = p->hh.next)
		v[i++] = p;
	qsort(v, n, sizeof(*v), by_samples);
	for (i = 0; i < n && i < max_procs; i++) {
		p = v[i];
		fprintf(fp,
			"bpfprof: process %u (%s): %llu samples, %.1f%% to root; stops: ", p->tgid,
			p->comm, (unsigned long long)p->samples,
			p->samples ? 100.0 * p->root / p->samples : 0.0);
		print_stops(fp, p->stops, false);
		fprintf(fp, "\n");
		if (p->stack_samples)
			fprintf(fp,
				"bpfprof:   stack copies: %.1f KiB on average, copy size %u KiB "
				"at the end (largest %u KiB), %.1f%% of unwinds truncated\n",
				p->stack_bytes / 1024.0 / p->stack_samples, p->copy_sz_last / 1024,
				p->copy_sz_max / 1024,
				100.0 * p->stack_truncated / p->stack_samples);
		for (m = p->modules; m; m = m->hh.next) {
			stops = 0;
			for (j = 0; j < UNWIND_STOP_CNT; j++)
				if (j != UNWIND_STOP_ROOT)
					stops += m->stops[j];
			fprintf(fp, "bpfprof:   module %s: %llu frames (", m->name,
				(unsigned long long)m->frames);
			print_methods(fp, m->methods);
			fprintf(fp, "), %llu stops", (unsigned long long)stops);
			if (stops) {
				fprintf(fp, " (");
				print_stops(fp, m->stops, false);
				fprintf(fp, ")");
			}
			fprintf(fp, "\n");
		}
	}
	if (n > max_procs)
		fprintf(fp, "bpfprof: %zu more processes with fewer samples\n", n - max_procs);
	free(v);
}

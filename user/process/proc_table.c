// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_table.c: tgid -> process: its address space, comm and attachments. */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "process/proc_maps.h"
#include "process/proc_table.h"
#include "process/stack_size.h"
#include "util/file.h"
#include "util/util.h"

struct proc {
	uint32_t tgid;
	char comm[17];	       /* the process's comm at its last exec or sample */
	bool exited;	       /* its exit record was handled: freed at end of batch */
	uint64_t last_seen_ns; /* CLOCK_MONOTONIC of its last record */
	struct addr_space *as; /* its mappings and Dwfl */
	struct proc_table *table;
	struct stack_size_state copy; /* its stack copy size (stack_size.c) */
	struct {
		const struct proc_attach_type *type; /* NULL: a free slot */
		void *data;
	} attach[PROC_ATTACH_MAX]; /* proc__attach() */
	UT_hash_handle hh;
};

struct proc_table {
	struct proc *procs;		 /* uthash by tgid */
	struct addr_space_shared shared; /* module cache, maps source, counters */
	Elf *ref_elf;			 /* /proc/self/exe: picks libdwfl's x86_64 backend */
	int ref_fd;
	struct proc_table_opts opts;
	uint64_t batches;
	uint64_t swept;
};

static int read_maps(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	return proc_table__read_maps(tgid, text, len);
}

struct proc_table *proc_table__new(const struct proc_table_opts *opts)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));
	int err;

	if (!pt)
		return NULL;
	pt->ref_fd = -1;
	pt->opts = *opts;
	pt->shared.maps_text = opts->maps_text ? opts->maps_text : read_maps;
	pt->shared.maps_ctx = opts->maps_ctx;
	pt->shared.rescan_interval_ns = opts->rescan_interval_ns;
	pt->shared.modules = module_cache__new();
	if (!pt->shared.modules) {
		err = -errno;
		goto fail;
	}
	pt->ref_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (pt->ref_fd < 0) {
		err = -errno;
		goto fail;
	}
	pt->ref_elf = elf_begin(pt->ref_fd, ELF_C_READ, NULL);
	if (!pt->ref_elf) {
		err = -ENOEXEC;
		goto fail;
	}
	return pt;
fail:
	proc_table__free(pt);
	errno = -err;
	return NULL;
}

void *proc__attachment(const struct proc *p, const struct proc_attach_type *t)
{
	size_t i;

	for (i = 0; i < PROC_ATTACH_MAX; i++)
		if (p->attach[i].type == t)
			return p->attach[i].data;
	return NULL;
}

int proc__attach(struct proc *p, const struct proc_attach_type *t, void *data)
{
	size_t i;

	if (proc__attachment(p, t))
		return -EEXIST;
	for (i = 0; i < PROC_ATTACH_MAX; i++) {
		if (!p->attach[i].type) {
			p->attach[i].type = t;
			p->attach[i].data = data;
			return 0;
		}
	}
	return -ENOSPC;
}

/* The process exec'd (exec) or exited: the attachments with an end hook go. */
static void proc__end_attachments(struct proc *p, bool exec)
{
	size_t i;

	for (i = 0; i < PROC_ATTACH_MAX; i++) {
		if (!p->attach[i].type || !p->attach[i].type->end)
			continue;
		p->attach[i].type->end(p->attach[i].data, exec);
		p->attach[i].type = NULL;
		p->attach[i].data = NULL;
	}
}

static void proc__free(struct proc_table *pt, struct proc *p)
{
	size_t i;

	HASH_DEL(pt->procs, p);
	/* The Dwfl first: it points to the unwinder's context (an attachment). */
	addr_space__free(p->as);
	for (i = PROC_ATTACH_MAX; i-- > 0;)
		if (p->attach[i].type && p->attach[i].type->free)
			p->attach[i].type->free(p->attach[i].data);
	free(p);
}

void proc_table__free(struct proc_table *pt)
{
	struct proc *p, *tmp;

	if (!pt)
		return;
	HASH_ITER(hh, pt->procs, p, tmp)
		proc__free(pt, p);
	/* After every Dwfl: their modules hold references on the cached Elf handles. */
	module_cache__free(pt->shared.modules);
	if (pt->ref_elf)
		elf_end(pt->ref_elf);
	if (pt->ref_fd >= 0)
		close(pt->ref_fd);
	free(pt);
}

struct proc *proc_table__find(struct proc_table *pt, uint32_t tgid, bool create)
{
	struct proc *p;

	HASH_FIND(hh, pt->procs, &tgid, sizeof(tgid), p);
	if (p) {
		p->last_seen_ns = now_ns();
		return p;
	}
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->as = addr_space__new(tgid, &pt->shared);
	if (!p->as) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->tgid = tgid;
	p->table = pt;
	p->last_seen_ns = now_ns();
	HASH_ADD(hh, pt->procs, tgid, sizeof(p->tgid), p);
	return p;
}

int proc_table__read_maps(uint32_t tgid, char **text, size_t *len)
{
	char path[64], *root = NULL, *tmp;
	size_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	err = file__read_all(path, text, len);
	/* A root of its own: a line that says where, for its files once it is gone. */
	if (err || proc_maps__host_root(tgid, &root) || !root)
		return err;
	n = strlen(PROC_MAPS_ROOT_LINE) + strlen(root) + 1;
	tmp = realloc(*text, *len + n + 1);
	if (tmp) {
		snprintf(tmp + *len, n + 1, "%s%s\n", PROC_MAPS_ROOT_LINE, root);
		*text = tmp;
		*len += n;
	}
	free(root);
	return 0;
}

int proc_table__fork(struct proc_table *pt, uint32_t parent, uint32_t child)
{
	struct proc *pp = proc_table__find(pt, parent, false), *cp;
	int err;

	cp = proc_table__find(pt, child, true);
	if (!cp)
		return -ENOMEM;
	if (!pp || !addr_space__maps_read(pp->as) || addr_space__maps_read(cp->as))
		return 0;
	err = addr_space__copy(cp->as, pp->as);
	if (err)
		return err;
	memcpy(cp->comm, pp->comm, sizeof(cp->comm));
	return 0;
}

static void proc__set_exited(struct proc *p, bool exited)
{
	if (exited)
		proc__end_attachments(p, false);
	p->exited = exited;
	addr_space__set_exited(p->as, exited);
}

void proc_table__exec(struct proc_table *pt, uint32_t tgid, const char *comm)
{
	struct proc *p = proc_table__find(pt, tgid, true);

	if (!p)
		return;
	/* A new image: its runtimes' state (a JIT's perf map) goes. */
	proc__end_attachments(p, true);
	proc__set_exited(p, false);
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	addr_space__exec(p->as, !pt->opts.lazy_maps);
}

int proc_table__mmap(struct proc_table *pt, const struct mmap_record *rec, const char *path)
{
	struct proc *p = proc_table__find(pt, rec->tgid, !pt->opts.lazy_maps);

	if (pt->opts.lazy_maps && (!p || !addr_space__maps_read(p->as)))
		return 0; /* its first sample reads its maps */
	if (!p)
		return -ENOMEM;
	return addr_space__mmap(p->as, rec, path);
}

void proc_table__munmap(struct proc_table *pt, uint32_t tgid, uint64_t start, uint64_t len)
{
	struct proc *p = proc_table__find(pt, tgid, false);

	if (p)
		addr_space__munmap(p->as, start, len);
}

void proc_table__exit(struct proc_table *pt, uint32_t tgid)
{
	struct proc *p = proc_table__find(pt, tgid, false);

	if (p)
		proc__set_exited(p, true);
}

unsigned int proc_table__sweep(struct proc_table *pt, uint64_t idle_ns)
{
	uint64_t now = now_ns();
	unsigned int n = 0;
	char path[32];
	struct proc *p;

	for (p = pt->procs; p; p = p->hh.next) {
		if (p->exited || now - p->last_seen_ns < idle_ns)
			continue;
		snprintf(path, sizeof(path), "/proc/%u", p->tgid);
		if (access(path, F_OK) && errno == ENOENT) {
			proc__set_exited(p, true);
			n++;
		}
	}
	pt->swept += n;
	return n;
}

void proc_table__events_lost(struct proc_table *pt)
{
	pt->shared.rescan_on_miss = true;
}

/* ELF files kept open while no process maps them (a build runs the same compiler over and
 * over), and how long an unused one stays at least. */
#define MODULE_CACHE_UNUSED_MAX 256
#define MODULE_CACHE_MIN_AGE_NS (30 * 1000000000ull)

void proc_table__end_batch(struct proc_table *pt)
{
	struct proc *p, *tmp;

	HASH_ITER(hh, pt->procs, p, tmp)
		if (p->exited)
			proc__free(pt, p);
	if (++pt->batches % 100 == 0)
		proc_table__trim_files(pt);
}

unsigned int proc_table__trim_files(struct proc_table *pt)
{
	struct module_cache *mc = pt->shared.modules;

	if (pt->opts.unused_file_ttl_ns)
		return module_cache__trim(mc, 0, pt->opts.unused_file_ttl_ns);
	return module_cache__trim(mc, MODULE_CACHE_UNUSED_MAX, MODULE_CACHE_MIN_AGE_NS);
}

void proc_table__counts(struct proc_table *pt, struct proc_table_counts *c)
{
	struct proc *p;

	memset(c, 0, sizeof(*c));
	c->procs = HASH_COUNT(pt->procs);
	for (p = pt->procs; p; p = p->hh.next)
		c->dwfls += addr_space__has_dwfl(p->as);
	c->files = module_cache__cnt(pt->shared.modules);
	c->files_opened = module_cache__opened(pt->shared.modules);
	c->maps_reads = pt->shared.maps_reads;
	c->maps_rescans = pt->shared.maps_rescans;
	c->swept = pt->swept;
}

uint32_t proc__tgid(const struct proc *p)
{
	return p->tgid;
}

const char *proc__comm(const struct proc *p)
{
	return p->comm;
}

void proc__set_comm(struct proc *p, const char *comm)
{
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

struct addr_space *proc__addr_space(struct proc *p)
{
	return p->as;
}

struct Elf *proc__ref_elf(const struct proc *p)
{
	return p->table->ref_elf;
}

struct stack_size_state *proc__stack_copy(struct proc *p)
{
	return &p->copy;
}

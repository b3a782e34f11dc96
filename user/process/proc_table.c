// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_table.c: processes, their executable mappings and lazily reported Dwfl modules. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "util/file.h"
#include "util/log.h"
#include "process/proc_maps.h"
#include "symbols/perf_map.h"
#include "process/proc_table.h"
#include "util/util.h"

struct proc_table {
	struct proc *procs; /* uthash by tgid */
	struct module_cache *modules;
	Elf *ref_elf; /* /proc/self/exe: picks libdwfl's x86_64 backend */
	int ref_fd;
	struct proc_table_opts opts;
	struct proc_stats freed; /* stats of freed processes */
	bool rescan_on_miss;	 /* mapping events were lost */
	uint64_t batches;
	uint64_t maps_reads;
	uint64_t maps_rescans;
	uint64_t swept;
};

/* libdwfl find_elf: hand out the cached Elf; the module's userdata is its elf_entry. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct elf_entry *e = *userdata;

	*elfp = NULL;
	if (!e)
		return -1;
	/* Same descriptor, libelf reference count raised; libdwfl's elf_end() drops it. ELF_C_READ
	 * takes any Elf opened for reading (the vdso's elf_memory() image too). */
	*elfp = elf_begin(-1, ELF_C_READ, e->elf);
	if (e->path[0] == '/')
		*file_name = strdup(e->path);
	return -1;
}

/*
 * No separate debug files for unwinding: libdwfl would open and parse one per module per
 * process (an fd, an Elf and its DWARF each: 350 MB for 200 processes mapping libc with
 * libc6-dbg installed). Unwinding uses .eh_frame, and .debug_frame when the file itself
 * has it; symbols come from the shared symtab, which reads a debug file once per file.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct proc_table *proc_table__new(const struct proc_table_opts *opts)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));
	int err;

	if (!pt)
		return NULL;
	pt->ref_fd = -1;
	pt->opts = *opts;
	pt->modules = module_cache__new();
	if (!pt->modules) {
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

static void maps__free(struct proc_mapping_ref *maps, size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++) {
		free(maps[i].path);
		elf_entry__put(maps[i].entry);
	}
	free(maps);
}

static void stats__add(struct proc_stats *to, const struct proc_stats *from)
{
	int i;

	to->samples += from->samples;
	to->root += from->root;
	for (i = 0; i < UNWIND_STOP_CNT; i++)
		to->stops[i] += from->stops[i];
}

static void proc__drop_dwfl(struct proc *p)
{
	size_t i;

	if (p->in_unwind) {
		/* libdwfl is walking this Dwfl's frames: drop it afterwards. */
		p->dwfl_stale = true;
		return;
	}
	p->dwfl_stale = false;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	for (i = 0; i < p->maps_cnt; i++)
		p->maps[i].reported = false;
}

static void proc__free(struct proc_table *pt, struct proc *p)
{
	HASH_DEL(pt->procs, p);
	stats__add(&pt->freed, &p->stats);
	proc__drop_dwfl(p);
	maps__free(p->maps, p->maps_cnt);
	perf_map__free(p->perf_map);
	free(p->root);
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
	module_cache__free(pt->modules);
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

static bool mapping__same(const struct proc_mapping_ref *a, const struct proc_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && a->deleted == b->deleted && !a->path == !b->path &&
	       (!a->path || !strcmp(a->path, b->path));
}

static struct proc_mapping_ref *maps__find(struct proc_mapping_ref *maps, size_t cnt, uint64_t pc)
{
	size_t lo = 0, hi = cnt, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < maps[mid].start)
			hi = mid;
		else if (pc >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

/*
 * Makes the Dwfl's modules those of the reported mappings, less any whose bounds overlap
 * [start, end) (a new mapping: modules must never overlap). Survivors are reported again with
 * identical (name, lo, hi), which keeps them and their CFI; dwfl_report_end() removes the
 * rest. Does nothing unless a module has to go (removed, or an overlap).
 */
static void proc__sync_modules(struct proc *p, uint64_t start, uint64_t end, bool removed)
{
	struct proc_mapping_ref *m;
	size_t i;

	if (!p->dwfl)
		return;
	for (i = 0; i < p->maps_cnt; i++) {
		m = &p->maps[i];
		if (m->reported && m->mod_lo < end && start < m->mod_hi) {
			m->reported = false;
			removed = true;
		}
	}
	if (!removed)
		return;
	if (p->in_unwind) {
		p->dwfl_stale = true;
		return;
	}
	dwfl_report_begin(p->dwfl);
	for (i = 0; i < p->maps_cnt; i++) {
		m = &p->maps[i];
		if (m->reported &&
		    !dwfl_report_module(p->dwfl, m->entry->path, m->mod_lo, m->mod_hi))
			m->reported = false;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->modules_dropped++;
}

/*
 * Cuts [start, end) out of the mapping list: mappings inside go, mappings across an edge are
 * trimmed, one around it is split in two. *removed tells whether a mapping that backed a
 * module went. Returns 0 or -ENOMEM.
 */
static int maps__carve(struct proc *p, uint64_t start, uint64_t end, bool *removed)
	__attribute__((warn_unused_result));
static int maps__carve(struct proc *p, uint64_t start, uint64_t end, bool *removed)
{
	struct proc_mapping_ref *m, *maps;
	size_t i;

	*removed = false;
	for (i = 0; i < p->maps_cnt; i++) {
		m = &p->maps[i];
		if (m->end <= start || m->start >= end)
			continue;
		if (m->start >= start && m->end <= end) {
			*removed |= m->reported;
			free(m->path);
			elf_entry__put(m->entry);
			memmove(m, m + 1, (p->maps_cnt - i - 1) * sizeof(*m));
			p->maps_cnt--;
			i--;
		} else if (m->start < start && m->end > end) {
			/* Split: the upper part becomes a mapping of its own. */
			if (p->maps_cnt == p->maps_cap) {
				maps = realloc(p->maps, 2 * p->maps_cap * sizeof(*maps));
				if (!maps)
					return -ENOMEM;
				p->maps = maps;
				p->maps_cap *= 2;
				m = &p->maps[i];
			}
			memmove(m + 2, m + 1, (p->maps_cnt - i - 1) * sizeof(*m));
			m[1] = m[0];
			m[1].path = m->path ? strdup(m->path) : NULL;
			m[1].entry = elf_entry__get(m->entry);
			m[1].pgoff += end - m->start;
			m[1].start = end;
			m->end = start;
			p->maps_cnt++;
			i++;
		} else if (m->start < start) {
			m->end = start;
		} else {
			m->pgoff += end - m->start;
			m->start = end;
		}
	}
	return 0;
}

/* Inserts m (owned by the list from now on) at its place; nothing may overlap it. */
static int maps__insert(struct proc *p, const struct proc_mapping_ref *m)
{
	struct proc_mapping_ref *maps;
	size_t i;

	if (p->maps_cnt == p->maps_cap) {
		size_t cap = p->maps_cap ? 2 * p->maps_cap : 16;

		maps = realloc(p->maps, cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		p->maps = maps;
		p->maps_cap = cap;
	}
	for (i = 0; i < p->maps_cnt && p->maps[i].start < m->start; i++)
		;
	memmove(&p->maps[i + 1], &p->maps[i], (p->maps_cnt - i) * sizeof(*m));
	p->maps[i] = *m;
	p->maps_cnt++;
	return 0;
}

/*
 * (Re-)reads /proc/PID/maps. Mappings that did not change keep their ELF file and module; if
 * a reported one changed or went away (dlclose, exec), the Dwfl is dropped and rebuilt lazily:
 * libdwfl modules must never overlap.
 */
static int proc__scan(struct proc *p)
{
	const struct proc_table_opts *o = &p->table->opts;
	size_t cnt = 0, i, j = 0, kept = 0, reported = 0, len = 0;
	struct proc_mapping *maps = NULL;
	struct proc_mapping_ref *refs = NULL;
	char *text = NULL;
	int err;

	p->last_scan_ns = now_ns();
	p->maps_read = true;
	p->table->maps_reads++;
	err = o->maps_text ? o->maps_text(o->maps_ctx, p->tgid, &text, &len) :
			     proc_table__read_maps(p->tgid, &text, &len);
	if (!err) {
		free(p->root);
		err = proc_maps__text_root(text, len, &p->root);
	}
	if (!err)
		err = proc_maps__parse_text(text, len, true, &maps, &cnt);
	free(text);
	if (err)
		return err;
	refs = calloc(cnt ? cnt : 1, sizeof(*refs));
	if (!refs) {
		proc_maps__free(maps, cnt);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++) {
		struct proc_mapping_ref *r = &refs[i];

		/* Both lists are sorted by start: walk the old one alongside. */
		while (j < p->maps_cnt && p->maps[j].start < maps[i].start)
			j++;
		if (j < p->maps_cnt && mapping__same(&p->maps[j], &maps[i])) {
			*r = p->maps[j];
			memset(&p->maps[j], 0, sizeof(p->maps[j]));
			kept += r->reported;
			continue;
		}
		r->start = maps[i].start;
		r->end = maps[i].end;
		r->pgoff = maps[i].pgoff;
		r->dev = makedev(maps[i].dev_major, maps[i].dev_minor);
		r->inode = maps[i].inode;
		r->deleted = maps[i].deleted;
		r->path = maps[i].path;
		maps[i].path = NULL;
	}
	/* What is left of the old list is gone: its modules too. */
	for (i = 0; i < p->maps_cnt; i++)
		reported += p->maps[i].reported;
	maps__free(p->maps, p->maps_cnt);
	proc_maps__free(maps, cnt);
	p->maps = refs;
	p->maps_cnt = cnt;
	p->maps_cap = cnt ? cnt : 1;
	if (reported)
		proc__sync_modules(p, 0, 0, true);
	(void)kept;
	return 0;
}

int proc_table__fork(struct proc_table *pt, uint32_t parent, uint32_t child)
{
	struct proc *pp = proc_table__find(pt, parent, false), *cp;
	size_t i;

	cp = proc_table__find(pt, child, true);
	if (!cp)
		return -ENOMEM;
	if (!pp || !pp->maps_read || cp->maps_read)
		return 0;
	cp->maps = calloc(pp->maps_cnt ? pp->maps_cnt : 1, sizeof(*cp->maps));
	if (!cp->maps)
		return -ENOMEM;
	for (i = 0; i < pp->maps_cnt; i++) {
		cp->maps[i] = pp->maps[i];
		cp->maps[i].reported = false;
		cp->maps[i].path = pp->maps[i].path ? strdup(pp->maps[i].path) : NULL;
		cp->maps[i].entry = elf_entry__get(pp->maps[i].entry);
	}
	cp->maps_cnt = pp->maps_cnt;
	cp->maps_cap = pp->maps_cnt ? pp->maps_cnt : 1;
	cp->maps_read = true;
	cp->root = pp->root ? strdup(pp->root) : NULL;
	memcpy(cp->comm, pp->comm, sizeof(cp->comm));
	return 0;
}

void proc_table__exec(struct proc_table *pt, uint32_t tgid, const char *comm)
{
	struct proc *p = proc_table__find(pt, tgid, true);

	if (!p)
		return;
	proc__drop_dwfl(p);
	maps__free(p->maps, p->maps_cnt);
	p->maps = NULL;
	p->maps_cnt = 0;
	p->maps_cap = 0;
	/* A new image: its JIT, if any, writes a new perf map. */
	perf_map__free(p->perf_map);
	p->perf_map = NULL;
	p->exited = false;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	if (pt->opts.lazy_maps) {
		/* The exec-time records that follow are the whole of the new image's code. */
		p->maps_read = true;
		p->last_scan_ns = now_ns();
		return;
	}
	/* Read the new image's mappings now, before a short-lived process is gone. */
	proc__scan(p);
}

int proc_table__mmap(struct proc_table *pt, const struct mmap_record *rec, const char *path)
{
	struct proc *p = proc_table__find(pt, rec->tgid, !pt->opts.lazy_maps);
	struct proc_mapping_ref m = {
		.start = rec->start,
		.end = rec->start + rec->len,
		.pgoff = rec->pgoff,
		/* The kernel's dev_t is major << 20 | minor (include/linux/kdev_t.h). */
		.dev = makedev(rec->dev >> 20, rec->dev & 0xfffff),
		.inode = rec->ino,
	};
	struct proc_mapping_ref *old;
	bool removed;
	int err;

	if (pt->opts.lazy_maps && (!p || !p->maps_read))
		return 0; /* its first sample reads its maps */
	if (!p)
		return -ENOMEM;
	/* A process seen for the first time: what it mapped before bpfprof started. */
	if (!p->maps_read)
		proc__scan(p);
	old = maps__find(p->maps, p->maps_cnt, m.start);
	if (old && old->start == m.start && old->end == m.end && old->pgoff == m.pgoff &&
	    old->inode == m.inode && old->dev == m.dev)
		return 0; /* already known (the maps read at exec saw it) */
	/* Without a path (anonymous memory, or a path BPF could not walk), the file is still
	 * reached by inode. */
	if (path) {
		m.path = strdup(path);
		if (!m.path)
			return -ENOMEM;
	}
	err = maps__carve(p, m.start, m.end, &removed);
	if (!err)
		err = maps__insert(p, &m);
	if (err) {
		free(m.path);
		return err;
	}
	proc__sync_modules(p, m.start, m.end, removed);
	return 0;
}

void proc_table__munmap(struct proc_table *pt, uint32_t tgid, uint64_t start, uint64_t len)
{
	struct proc *p = proc_table__find(pt, tgid, false);
	bool removed;

	if (!p || !p->maps_read || maps__carve(p, start, start + len, &removed))
		return;
	proc__sync_modules(p, 0, 0, removed);
}

void proc_table__exit(struct proc_table *pt, uint32_t tgid)
{
	struct proc *p = proc_table__find(pt, tgid, false);

	if (p)
		p->exited = true;
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
			p->exited = true;
			n++;
		}
	}
	pt->swept += n;
	return n;
}

void proc_table__events_lost(struct proc_table *pt)
{
	pt->rescan_on_miss = true;
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
	if (pt->opts.unused_file_ttl_ns)
		return module_cache__trim(pt->modules, 0, pt->opts.unused_file_ttl_ns);
	return module_cache__trim(pt->modules, MODULE_CACHE_UNUSED_MAX, MODULE_CACHE_MIN_AGE_NS);
}

struct proc *proc_table__first(struct proc_table *pt)
{
	return pt->procs;
}

struct proc *proc_table__next(struct proc *p)
{
	return p->hh.next;
}

void proc_table__counts(struct proc_table *pt, struct proc_table_counts *c)
{
	struct proc *p;

	memset(c, 0, sizeof(*c));
	c->procs = HASH_COUNT(pt->procs);
	for (p = pt->procs; p; p = p->hh.next)
		c->dwfls += p->dwfl != NULL;
	c->files = module_cache__cnt(pt->modules);
	c->files_opened = module_cache__opened(pt->modules);
	c->maps_reads = pt->maps_reads;
	c->maps_rescans = pt->maps_rescans;
	c->swept = pt->swept;
}

const struct proc_stats *proc_table__freed_stats(struct proc_table *pt)
{
	return &pt->freed;
}

Dwfl *proc__dwfl(struct proc *p)
{
	int err;

	if (p->dwfl)
		return p->dwfl;
	p->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!p->dwfl) {
		errno = ENOMEM;
		return NULL;
	}
	err = unwind__attach(p->dwfl, p->table->ref_elf, p->tgid, &p->ctx);
	if (err) {
		pr_debug("attach unwinder to %u: %s", p->tgid, dwfl_errmsg(-1));
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		errno = -err;
		return NULL;
	}
	p->ctx.proc = p;
	return p->dwfl;
}

void proc__unwind_end(struct proc *p)
{
	p->in_unwind = false;
	if (p->dwfl_stale)
		proc__drop_dwfl(p);
}

/* Opens the mapped file through the process's view of it: map_files reaches deleted files
 * and other mount namespaces; root/PATH is the fallback without CAP_SYS_ADMIN. */
static void mapping__open(struct proc *p, struct proc_mapping_ref *m)
{
	struct module_cache *mc = p->table->modules;
	char path[PATH_MAX + 64];
	uint64_t lo, hi;

	m->open_failed = true;
	if (m->path && !strcmp(m->path, "[vdso]")) {
		m->entry = module_cache__vdso(mc);
	} else if (m->inode) {
		/* The process's own view first: map_files reaches deleted files and other mount
		 * namespaces, root/PATH works without CAP_SYS_ADMIN. */
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->tgid,
			 m->start, m->end);
		m->entry = module_cache__get(mc, path, m->path ? m->path : "[unknown]");
		if (!m->entry && m->path && !m->deleted) {
			snprintf(path, sizeof(path), "/proc/%u/root%s", p->tgid, m->path);
			m->entry = module_cache__get_checked(mc, path, m->path, m->dev, m->inode);
		}
		/* The process is gone (a short-lived one, a capture's replay): a file another
		 * process mapped, or the path from the mmap record under the root the process
		 * had (its maps read said where, proc_maps__host_root()) or under bpfprof's,
		 * if it is still the same inode. */
		if (!m->entry)
			m->entry = module_cache__find_inode(mc, m->dev, m->inode);
		if (!m->entry && m->path && !m->deleted && p->root) {
			snprintf(path, sizeof(path), "%s%s", p->root, m->path);
			m->entry = module_cache__get_checked(mc, path, m->path, m->dev, m->inode);
		}
		if (!m->entry && m->path)
			m->entry =
				module_cache__get_checked(mc, m->path, m->path, m->dev, m->inode);
	}
	if (!m->entry) {
		if (m->path)
			pr_debug("open %s of process %u: %s", m->path, p->tgid, strerror(errno));
		return;
	}
	if (elf_entry__bias(m->entry, m->start, m->pgoff, &m->bias, &lo, &hi)) {
		pr_debug("%s: no PT_LOAD holds offset 0x%" PRIx64, m->entry->path, m->pgoff);
		elf_entry__put(m->entry);
		m->entry = NULL;
		return;
	}
	m->open_failed = false;
}

static void mapping__report(struct proc *p, struct proc_mapping_ref *m, uint64_t pc)
{
	uint64_t bias, lo, hi;
	Dwfl_Module *mod;
	void **userdata;

	m->reported = true;
	mod = dwfl_addrmodule(p->dwfl, pc);
	if (mod) {
		/* Another mapping of the file reported it: share its bounds. */
		dwfl_module_info(mod, NULL, &m->mod_lo, &m->mod_hi, NULL, NULL, NULL, NULL);
		return;
	}
	elf_entry__bias(m->entry, m->start, m->pgoff, &bias, &lo, &hi);
	dwfl_report_begin_add(p->dwfl);
	mod = dwfl_report_module(p->dwfl, m->entry->path, lo, hi);
	if (mod) {
		dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		*userdata = m->entry;
		m->mod_lo = lo;
		m->mod_hi = hi;
	} else {
		pr_debug("report %s [0x%" PRIx64 ", 0x%" PRIx64 ") in %u: %s", m->entry->path, lo,
			 hi, p->tgid, dwfl_errmsg(-1));
		m->mod_lo = m->mod_hi = 0;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
}

struct proc_mapping_ref *proc__mapping(struct proc *p, uint64_t pc)
{
	struct proc_mapping_ref *m;

	if (!p->maps_read)
		proc__scan(p);
	m = maps__find(p->maps, p->maps_cnt, pc);
	if (!m && p->table->rescan_on_miss && !p->exited && p->sample_time_ns > p->last_scan_ns &&
	    now_ns() - p->last_scan_ns >= p->table->opts.rescan_interval_ns) {
		/* Events were lost, so code may have been mapped (dlopen) between the last read
		 * and the sample: read again. A read newer than the sample already saw
		 * everything the sample could have run. */
		p->table->maps_rescans++;
		proc__scan(p);
		m = maps__find(p->maps, p->maps_cnt, pc);
	}
	if (!m)
		return NULL;
	if (!m->entry && !m->open_failed)
		mapping__open(p, m);
	if (m->entry && !m->reported && p->dwfl)
		mapping__report(p, m, pc);
	return m;
}

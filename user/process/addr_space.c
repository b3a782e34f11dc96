// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* addr_space.c: one process's executable mappings (an interval list) and its lazily reported
 * Dwfl modules. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "process/addr_space.h"
#include "process/proc_maps.h"
#include "util/log.h"
#include "util/util.h"

/* A mapping and what the address space keeps about it. */
struct as_mapping {
	struct mapping m;
	bool open_failed; /* do not retry opening */
	bool reported;	  /* a Dwfl module covers it: */
	uint64_t mod_lo;  /* the module's bounds, as reported */
	uint64_t mod_hi;
};

struct addr_space {
	uint32_t tgid;
	struct addr_space_shared *shared;
	struct as_mapping *maps; /* sorted by start, non-overlapping */
	size_t maps_cnt;
	size_t maps_cap;
	uint64_t generation;	 /* bumped when maps may move or free a mapping */
	bool maps_read;		 /* /proc/PID/maps was read at least once */
	bool exited;		 /* no re-read on a miss */
	uint64_t last_scan_ns;	 /* CLOCK_MONOTONIC of the last maps read */
	uint64_t sample_time_ns; /* time of the sample being handled (record time_ns) */
	Dwfl *dwfl;		 /* created at the first unwind that needs it */
	bool in_unwind;		 /* between addr_space__dwfl_begin() and _end(): the Dwfl stays */
	bool dwfl_stale;	 /* drop the Dwfl when the unwind ends */
	char *root; /* its root when not bpfprof's (proc_maps__host_root()), from its last maps
		     * read; NULL otherwise */
};

/* libdwfl find_elf: hand out the cached Elf; the module's userdata is its module. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct module *e = *userdata;

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

struct addr_space *addr_space__new(uint32_t tgid, struct addr_space_shared *shared)
{
	struct addr_space *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	as->tgid = tgid;
	as->shared = shared;
	return as;
}

static void maps__free(struct as_mapping *maps, size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++) {
		free(maps[i].m.path);
		module__put(maps[i].m.entry);
	}
	free(maps);
}

static void drop_dwfl(struct addr_space *as)
{
	size_t i;

	if (as->in_unwind) {
		/* libdwfl is walking this Dwfl's frames: drop it afterwards. */
		as->dwfl_stale = true;
		return;
	}
	as->dwfl_stale = false;
	if (as->dwfl)
		dwfl_end(as->dwfl);
	as->dwfl = NULL;
	for (i = 0; i < as->maps_cnt; i++)
		as->maps[i].reported = false;
}

/* Replaces the mapping list by maps[0..cnt) (NULL, 0: none), cap entries allocated. */
static void maps__replace(struct addr_space *as, struct as_mapping *maps, size_t cnt, size_t cap)
{
	maps__free(as->maps, as->maps_cnt);
	as->maps = maps;
	as->maps_cnt = cnt;
	as->maps_cap = cap;
	as->generation++;
}

void addr_space__free(struct addr_space *as)
{
	if (!as)
		return;
	as->in_unwind = false;
	drop_dwfl(as);
	maps__free(as->maps, as->maps_cnt);
	free(as->root);
	free(as);
}

uint32_t addr_space__tgid(const struct addr_space *as)
{
	return as->tgid;
}

bool addr_space__maps_read(const struct addr_space *as)
{
	return as->maps_read;
}

void addr_space__set_exited(struct addr_space *as, bool exited)
{
	as->exited = exited;
}

void addr_space__set_sample_time(struct addr_space *as, uint64_t time_ns)
{
	as->sample_time_ns = time_ns;
}

uint64_t addr_space__generation(const struct addr_space *as)
{
	return as->generation;
}

size_t addr_space__mapping_cnt(const struct addr_space *as)
{
	return as->maps_cnt;
}

const struct mapping *addr_space__mapping_at(const struct addr_space *as, size_t i)
{
	return i < as->maps_cnt ? &as->maps[i].m : NULL;
}

bool addr_space__has_dwfl(const struct addr_space *as)
{
	return as->dwfl != NULL;
}

static bool mapping__same(const struct mapping *a, const struct proc_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && a->deleted == b->deleted && !a->path == !b->path &&
	       (!a->path || !strcmp(a->path, b->path));
}

static struct as_mapping *maps__find(struct as_mapping *maps, size_t cnt, uint64_t pc)
{
	size_t lo = 0, hi = cnt, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < maps[mid].m.start)
			hi = mid;
		else if (pc >= maps[mid].m.end)
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
static void sync_modules(struct addr_space *as, uint64_t start, uint64_t end, bool removed)
{
	struct as_mapping *m;
	size_t i;

	if (!as->dwfl)
		return;
	for (i = 0; i < as->maps_cnt; i++) {
		m = &as->maps[i];
		if (m->reported && m->mod_lo < end && start < m->mod_hi) {
			m->reported = false;
			removed = true;
		}
	}
	if (!removed)
		return;
	if (as->in_unwind) {
		as->dwfl_stale = true;
		return;
	}
	dwfl_report_begin(as->dwfl);
	for (i = 0; i < as->maps_cnt; i++) {
		m = &as->maps[i];
		if (m->reported &&
		    !dwfl_report_module(as->dwfl, m->m.entry->path, m->mod_lo, m->mod_hi))
			m->reported = false;
	}
	dwfl_report_end(as->dwfl, NULL, NULL);
}

/* Makes room for one more mapping. 0 or -ENOMEM. */
static int maps__grow(struct addr_space *as)
{
	size_t cap = as->maps_cap ? 2 * as->maps_cap : 16;
	struct as_mapping *maps;

	if (as->maps_cnt < as->maps_cap)
		return 0;
	maps = realloc(as->maps, cap * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	as->maps = maps;
	as->maps_cap = cap;
	as->generation++;
	return 0;
}

/* Splits mapping i around [start, end): the upper part becomes a mapping of its own. */
static int maps__split(struct addr_space *as, size_t i, uint64_t start, uint64_t end)
{
	struct as_mapping *m;

	if (maps__grow(as))
		return -ENOMEM;
	m = &as->maps[i];
	memmove(m + 2, m + 1, (as->maps_cnt - i - 1) * sizeof(*m));
	m[1] = m[0];
	m[1].m.path = m->m.path ? strdup(m->m.path) : NULL;
	m[1].m.entry = module__get(m->m.entry);
	m[1].m.pgoff += end - m->m.start;
	m[1].m.start = end;
	m->m.end = start;
	as->maps_cnt++;
	return 0;
}

/*
 * Cuts [start, end) out of the mapping list: mappings inside go, mappings across an edge are
 * trimmed, one around it is split in two. *removed tells whether a mapping that backed a
 * module went. Returns 0 or -ENOMEM.
 */
static int maps__carve(struct addr_space *as, uint64_t start, uint64_t end, bool *removed)
	__attribute__((warn_unused_result));
static int maps__carve(struct addr_space *as, uint64_t start, uint64_t end, bool *removed)
{
	struct as_mapping *m;
	size_t i;

	*removed = false;
	as->generation++;
	for (i = 0; i < as->maps_cnt; i++) {
		m = &as->maps[i];
		if (m->m.end <= start || m->m.start >= end)
			continue;
		if (m->m.start >= start && m->m.end <= end) {
			*removed |= m->reported;
			free(m->m.path);
			module__put(m->m.entry);
			memmove(m, m + 1, (as->maps_cnt - i - 1) * sizeof(*m));
			as->maps_cnt--;
			i--;
		} else if (m->m.start < start && m->m.end > end) {
			if (maps__split(as, i, start, end))
				return -ENOMEM;
			i++;
		} else if (m->m.start < start) {
			m->m.end = start;
		} else {
			m->m.pgoff += end - m->m.start;
			m->m.start = end;
		}
	}
	return 0;
}

/* Inserts m (owned by the list from now on) at its place; nothing may overlap it. */
static int maps__insert(struct addr_space *as, const struct mapping *m)
{
	size_t i;

	if (maps__grow(as))
		return -ENOMEM;
	for (i = 0; i < as->maps_cnt && as->maps[i].m.start < m->start; i++)
		;
	memmove(&as->maps[i + 1], &as->maps[i], (as->maps_cnt - i) * sizeof(*as->maps));
	as->maps[i] = (struct as_mapping){ .m = *m };
	as->maps_cnt++;
	return 0;
}

/* The executable mappings of the process's maps text, and its root. */
static int read_maps(struct addr_space *as, struct proc_mapping **maps, size_t *cnt)
{
	struct addr_space_shared *sh = as->shared;
	char *text = NULL;
	size_t len = 0;
	int err;

	as->last_scan_ns = now_ns();
	as->maps_read = true;
	sh->maps_reads++;
	err = sh->maps_text(sh->maps_ctx, as->tgid, &text, &len);
	if (!err) {
		free(as->root);
		err = proc_maps__text_root(text, len, &as->root);
	}
	if (!err)
		err = proc_maps__parse_text(text, len, true, maps, cnt);
	free(text);
	return err;
}

/*
 * (Re-)reads /proc/PID/maps. Mappings that did not change keep their ELF file and module; if
 * a reported one changed or went away (dlclose, exec), the Dwfl is dropped and rebuilt lazily:
 * libdwfl modules must never overlap.
 */
static int scan(struct addr_space *as)
{
	size_t cnt = 0, i, j = 0, reported = 0;
	struct proc_mapping *maps = NULL;
	struct as_mapping *refs;
	int err;

	err = read_maps(as, &maps, &cnt);
	if (err)
		return err;
	refs = calloc(cnt ? cnt : 1, sizeof(*refs));
	if (!refs) {
		proc_maps__free(maps, cnt);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++) {
		struct mapping *r = &refs[i].m;

		/* Both lists are sorted by start: walk the old one alongside. */
		while (j < as->maps_cnt && as->maps[j].m.start < maps[i].start)
			j++;
		if (j < as->maps_cnt && mapping__same(&as->maps[j].m, &maps[i])) {
			refs[i] = as->maps[j];
			memset(&as->maps[j], 0, sizeof(as->maps[j]));
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
	for (i = 0; i < as->maps_cnt; i++)
		reported += as->maps[i].reported;
	proc_maps__free(maps, cnt);
	maps__replace(as, refs, cnt, cnt ? cnt : 1);
	if (reported)
		sync_modules(as, 0, 0, true);
	return 0;
}

int addr_space__copy(struct addr_space *child, const struct addr_space *parent)
{
	struct as_mapping *maps;
	size_t i;

	maps = calloc(parent->maps_cnt ? parent->maps_cnt : 1, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (i = 0; i < parent->maps_cnt; i++) {
		maps[i] = parent->maps[i];
		maps[i].reported = false;
		maps[i].m.path = parent->maps[i].m.path ? strdup(parent->maps[i].m.path) : NULL;
		maps[i].m.entry = module__get(parent->maps[i].m.entry);
	}
	maps__replace(child, maps, parent->maps_cnt, parent->maps_cnt ? parent->maps_cnt : 1);
	child->maps_read = true;
	free(child->root);
	child->root = parent->root ? strdup(parent->root) : NULL;
	return 0;
}

void addr_space__exec(struct addr_space *as, bool read)
{
	drop_dwfl(as);
	maps__replace(as, NULL, 0, 0);
	as->exited = false;
	if (!read) {
		/* The exec-time records that follow are the whole of the new image's code. */
		as->maps_read = true;
		as->last_scan_ns = now_ns();
		return;
	}
	/* Read the new image's mappings now, before a short-lived process is gone. */
	scan(as);
}

int addr_space__mmap(struct addr_space *as, const struct mmap_record *rec, const char *path)
{
	struct mapping m = {
		.start = rec->start,
		.end = rec->start + rec->len,
		.pgoff = rec->pgoff,
		/* The kernel's dev_t is major << 20 | minor (include/linux/kdev_t.h). */
		.dev = makedev(rec->dev >> 20, rec->dev & 0xfffff),
		.inode = rec->ino,
	};
	struct as_mapping *old;
	bool removed;
	int err;

	/* A process seen for the first time: what it mapped before bpfprof started. */
	if (!as->maps_read)
		scan(as);
	old = maps__find(as->maps, as->maps_cnt, m.start);
	if (old && old->m.start == m.start && old->m.end == m.end && old->m.pgoff == m.pgoff &&
	    old->m.inode == m.inode && old->m.dev == m.dev)
		return 0; /* already known (the maps read at exec saw it) */
	/* Without a path (anonymous memory, or a path BPF could not walk), the file is still
	 * reached by inode. */
	if (path) {
		m.path = strdup(path);
		if (!m.path)
			return -ENOMEM;
	}
	err = maps__carve(as, m.start, m.end, &removed);
	if (!err)
		err = maps__insert(as, &m);
	if (err) {
		free(m.path);
		return err;
	}
	sync_modules(as, m.start, m.end, removed);
	return 0;
}

void addr_space__munmap(struct addr_space *as, uint64_t start, uint64_t len)
{
	bool removed;

	if (!as->maps_read || maps__carve(as, start, start + len, &removed))
		return;
	sync_modules(as, 0, 0, removed);
}

/* Opens the mapped file: the vdso is bpfprof's own copy. */
static struct module *mapping__open_file(struct addr_space *as, const struct mapping *m)
{
	struct module_cache *mc = as->shared->modules;
	char path[PATH_MAX + 64];
	struct module *e;

	if (m->path && !strcmp(m->path, "[vdso]"))
		return module_cache__vdso(mc);
	if (!m->inode)
		return NULL;
	/* The process's own view first: map_files reaches deleted files and other mount
	 * namespaces, root/PATH works without CAP_SYS_ADMIN. */
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, as->tgid, m->start,
		 m->end);
	e = module_cache__get(mc, path, m->path ? m->path : "[unknown]");
	if (!e && m->path && !m->deleted) {
		snprintf(path, sizeof(path), "/proc/%u/root%s", as->tgid, m->path);
		e = module_cache__get_checked(mc, path, m->path, m->dev, m->inode);
	}
	/* The process is gone (a short-lived one, a capture's replay): a file another process
	 * mapped, or the path from the mmap record under the root the process had (its maps
	 * read said where, proc_maps__host_root()) or under bpfprof's, if it is still the same
	 * inode. */
	if (!e)
		e = module_cache__find_inode(mc, m->dev, m->inode);
	if (!e && m->path && !m->deleted && as->root) {
		snprintf(path, sizeof(path), "%s%s", as->root, m->path);
		e = module_cache__get_checked(mc, path, m->path, m->dev, m->inode);
	}
	if (!e && m->path)
		e = module_cache__get_checked(mc, m->path, m->path, m->dev, m->inode);
	return e;
}

/* Opens the mapping's ELF file and computes its bias; marks it failed if it cannot. */
static void mapping__open(struct addr_space *as, struct as_mapping *am)
{
	struct mapping *m = &am->m;
	uint64_t lo, hi;

	am->open_failed = true;
	m->entry = mapping__open_file(as, m);
	if (!m->entry) {
		if (m->path)
			pr_debug("open %s of process %u: %s", m->path, as->tgid, strerror(errno));
		return;
	}
	if (module__bias(m->entry, m->start, m->pgoff, &m->bias, &lo, &hi)) {
		pr_debug("%s: no PT_LOAD holds offset 0x%" PRIx64, m->entry->path, m->pgoff);
		module__put(m->entry);
		m->entry = NULL;
		return;
	}
	am->open_failed = false;
}

static void mapping__report(struct addr_space *as, struct as_mapping *am, uint64_t pc)
{
	struct mapping *m = &am->m;
	uint64_t bias, lo, hi;
	Dwfl_Module *mod;
	void **userdata;

	am->reported = true;
	mod = dwfl_addrmodule(as->dwfl, pc);
	if (mod) {
		/* Another mapping of the file reported it: share its bounds. */
		dwfl_module_info(mod, NULL, &am->mod_lo, &am->mod_hi, NULL, NULL, NULL, NULL);
		return;
	}
	module__bias(m->entry, m->start, m->pgoff, &bias, &lo, &hi);
	dwfl_report_begin_add(as->dwfl);
	mod = dwfl_report_module(as->dwfl, m->entry->path, lo, hi);
	if (mod) {
		dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		*userdata = m->entry;
		am->mod_lo = lo;
		am->mod_hi = hi;
	} else {
		pr_debug("report %s [0x%" PRIx64 ", 0x%" PRIx64 ") in %u: %s", m->entry->path, lo,
			 hi, as->tgid, dwfl_errmsg(-1));
		am->mod_lo = am->mod_hi = 0;
	}
	dwfl_report_end(as->dwfl, NULL, NULL);
}

const struct mapping *addr_space__mapping(struct addr_space *as, uint64_t pc)
{
	struct as_mapping *m;

	if (!as->maps_read)
		scan(as);
	m = maps__find(as->maps, as->maps_cnt, pc);
	if (!m && as->shared->rescan_on_miss && !as->exited &&
	    as->sample_time_ns > as->last_scan_ns &&
	    now_ns() - as->last_scan_ns >= as->shared->rescan_interval_ns) {
		/* Events were lost, so code may have been mapped (dlopen) between the last read
		 * and the sample: read again. A read newer than the sample already saw
		 * everything the sample could have run. */
		as->shared->maps_rescans++;
		scan(as);
		m = maps__find(as->maps, as->maps_cnt, pc);
	}
	if (!m)
		return NULL;
	if (!m->m.entry && !m->open_failed)
		mapping__open(as, m);
	if (m->m.entry && !m->reported && as->dwfl)
		mapping__report(as, m, pc);
	return &m->m;
}

struct Dwfl *addr_space__dwfl_begin(struct addr_space *as, bool *created)
{
	*created = false;
	if (!as->dwfl) {
		as->dwfl = dwfl_begin(&dwfl_callbacks);
		if (!as->dwfl) {
			errno = ENOMEM;
			return NULL;
		}
		*created = true;
	}
	as->in_unwind = true;
	return as->dwfl;
}

void addr_space__dwfl_end(struct addr_space *as, bool drop)
{
	as->in_unwind = false;
	if (as->dwfl_stale || drop)
		drop_dwfl(as);
}

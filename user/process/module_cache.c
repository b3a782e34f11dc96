// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* module_cache.c: one Elf per file identity, read through pread (ELF_C_READ), shared by reference. */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "util/log.h"
#include "process/module_cache.h"
#include "process/proc_maps.h"
#include "util/util.h"

/* Another identity of a cached file with the same build-id. */
struct id_alias {
	struct file_id id;
	struct module *e;
	UT_hash_handle hh;
};

struct module_cache {
	struct module *entries;	    /* uthash by id */
	struct module *by_build_id; /* the same entries, by build-id */
	struct id_alias *aliases;   /* uthash by id */
	struct module *vdso;
	void *vdso_image; /* malloc'd copy of our vdso: libelf may write PRIVATE data */
	uint64_t opened;  /* files parsed */
};

struct module_cache *module_cache__new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	return calloc(1, sizeof(struct module_cache));
}

void *module__attachment(const struct module *e, const struct module_attach_type *t)
{
	size_t i;

	for (i = 0; i < MODULE_ATTACH_MAX; i++)
		if (e->attach[i].type == t)
			return e->attach[i].data;
	return NULL;
}

int module__attach(struct module *e, const struct module_attach_type *t, void *data)
{
	size_t i;

	if (module__attachment(e, t))
		return -EEXIST;
	for (i = 0; i < MODULE_ATTACH_MAX; i++) {
		if (!e->attach[i].type) {
			e->attach[i].type = t;
			e->attach[i].data = data;
			return 0;
		}
	}
	return -ENOSPC;
}

static void module_free(struct module *e)
{
	size_t i;

	if (!e)
		return;
	for (i = MODULE_ATTACH_MAX; i-- > 0;)
		if (e->attach[i].type && e->attach[i].type->free)
			e->attach[i].type->free(e->attach[i].data);
	if (e->cfi_free)
		e->cfi_free(e->cfi);
	if (e->symbols_free)
		e->symbols_free(e->symbols);
	if (e->fd >= 0) {
		/* libdwfl modules still using the Elf hold their own libelf references to it: make
		 * their reads fail cleanly instead of reading whatever gets this fd number next. */
		if (e->elf)
			elf_cntl(e->elf, ELF_C_FDDONE);
		close(e->fd);
	}
	elf_end(e->elf);
	free(e->loads);
	free(e->path);
	free(e);
}

static void aliases__drop(struct module_cache *mc, const struct module *e)
{
	struct id_alias *a, *tmp;

	HASH_ITER(hh, mc->aliases, a, tmp) {
		if (e && a->e != e)
			continue;
		HASH_DEL(mc->aliases, a);
		free(a);
	}
}

static void cache__remove(struct module_cache *mc, struct module *e)
{
	HASH_DEL(mc->entries, e);
	if (e->build_id_sz)
		HASH_DELETE(hh_build_id, mc->by_build_id, e);
	aliases__drop(mc, e);
}

void module_cache__free(struct module_cache *mc)
{
	struct module *e, *tmp;

	if (!mc)
		return;
	aliases__drop(mc, NULL);
	HASH_CLEAR(hh_build_id, mc->by_build_id);
	HASH_ITER(hh, mc->entries, e, tmp) {
		HASH_DEL(mc->entries, e);
		module_free(e);
	}
	module_free(mc->vdso);
	free(mc->vdso_image);
	free(mc);
}

uint64_t module_cache__opened(const struct module_cache *mc)
{
	return mc->opened;
}

unsigned int module_cache__cnt(const struct module_cache *mc)
{
	return HASH_COUNT(mc->entries) + (mc->vdso ? 1 : 0);
}

/* Reads the ELF header and PT_LOAD segments; -ENOEXEC for anything that is not a usable ELF. */
static int module_parse(struct module *e)
{
	const void *build_id;
	GElf_Ehdr ehdr;
	GElf_Phdr phdr;
	size_t phnum, i;
	ssize_t n;

	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &ehdr))
		return -ENOEXEC;
	if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
		return -ENOEXEC;
	if (elf_getphdrnum(e->elf, &phnum) || phnum == 0 || phnum > 65536)
		return -ENOEXEC;
	e->loads = calloc(phnum, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(e->elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		e->loads[e->loads_cnt++] = (struct elf_load){
			.vaddr = phdr.p_vaddr,
			.offset = phdr.p_offset,
			.filesz = phdr.p_filesz,
			.memsz = phdr.p_memsz,
			.align = phdr.p_align ? phdr.p_align : 1,
		};
	}
	if (!e->loads_cnt)
		return -ENOEXEC;
	e->is_dyn = ehdr.e_type == ET_DYN;
	e->entry = ehdr.e_entry;
	n = dwelf_elf_gnu_build_id(e->elf, &build_id);
	if (n > 0) {
		e->build_id_sz = n < (ssize_t)sizeof(e->build_id) ? (size_t)n : sizeof(e->build_id);
		memcpy(e->build_id, build_id, e->build_id_sz);
	}
	return 0;
}

static struct module *module_new(const char *map_path)
{
	struct module *e = calloc(1, sizeof(*e));
	const char *slash;

	if (!e)
		return NULL;
	e->path = strdup(map_path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	slash = strrchr(e->path, '/');
	e->name = slash ? slash + 1 : e->path;
	e->fd = -1;
	e->refcnt = 1; /* the cache's own */
	return e;
}

static void file_id__set(struct file_id *id, const struct stat *st)
{
	*id = (struct file_id){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = st->st_size,
		.mtime_ns = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec,
		.ctime_ns = st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec,
	};
}

static struct module *cache__get(struct module_cache *mc, const char *open_path,
				 const char *map_path, bool check, uint64_t dev, uint64_t ino)
{
	struct module *e = NULL, *same = NULL;
	struct id_alias *alias = NULL;
	struct file_id id;
	struct stat st;
	int fd = -1, err;

	fd = file__open_regular(open_path, check ? O_NOFOLLOW : 0, &st);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (check && (st.st_dev != dev || st.st_ino != ino)) {
		err = -ESTALE;
		goto fail;
	}
	file_id__set(&id, &st);
	HASH_FIND(hh, mc->entries, &id, sizeof(id), e);
	if (!e) {
		HASH_FIND(hh, mc->aliases, &id, sizeof(id), alias);
		e = alias ? alias->e : NULL;
	}
	if (e) {
		close(fd);
		return module__get(e);
	}
	e = module_new(map_path);
	if (!e) {
		err = -ENOMEM;
		goto fail;
	}
	e->id = id;
	/* libelf reads sections through it as they are asked for, as long as the entry lives. */
	e->fd = file__move_high(fd);
	fd = -1;
	/* Read with pread, never mmap: a file truncated under a mapping would raise SIGBUS. */
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!e->elf) {
		err = -ENOEXEC;
		goto fail;
	}
	err = module_parse(e);
	if (err)
		goto fail;
	mc->opened++;
	if (e->build_id_sz) {
		HASH_FIND(hh_build_id, mc->by_build_id, e->build_id, e->build_id_sz, same);
		alias = same ? calloc(1, sizeof(*alias)) : NULL;
		if (alias) {
			/* The same content under another identity: share the parsed file. */
			alias->id = id;
			alias->e = same;
			HASH_ADD(hh, mc->aliases, id, sizeof(alias->id), alias);
			module_free(e);
			return module__get(same);
		}
		if (!same)
			HASH_ADD(hh_build_id, mc->by_build_id, build_id, e->build_id_sz, e);
	}
	HASH_ADD(hh, mc->entries, id, sizeof(e->id), e);
	return module__get(e);
fail:
	module_free(e);
	if (fd >= 0)
		close(fd);
	errno = -err;
	return NULL;
}

struct module *module_cache__get(struct module_cache *mc, const char *open_path,
				 const char *map_path)
{
	return cache__get(mc, open_path, map_path, false, 0, 0);
}

struct module *module_cache__get_checked(struct module_cache *mc, const char *open_path,
					 const char *map_path, uint64_t dev, uint64_t ino)
{
	return cache__get(mc, open_path, map_path, true, dev, ino);
}

struct module *module_cache__find_inode(struct module_cache *mc, uint64_t dev, uint64_t ino)
{
	struct module *e, *tmp, *found = NULL;

	/* A scan: only for processes gone before their mappings were opened. The newest
	 * entry wins when an inode was reused. */
	HASH_ITER(hh, mc->entries, e, tmp)
		if (e->id.dev == dev && e->id.ino == ino &&
		    (!found || e->id.ctime_ns > found->id.ctime_ns))
			found = e;
	return module__get(found);
}

struct module *module_cache__vdso(struct module_cache *mc)
{
	struct proc_mapping *maps = NULL;
	size_t cnt = 0, i, sz = 0;
	struct module *e = NULL;
	uintptr_t base;
	int err;

	if (mc->vdso)
		return module__get(mc->vdso);
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base) {
		errno = ENOENT;
		return NULL;
	}
	err = proc_maps__read("/proc/self/maps", false, &maps, &cnt);
	if (err) {
		errno = -err;
		return NULL;
	}
	for (i = 0; i < cnt; i++)
		if (maps[i].start == base)
			sz = maps[i].end - maps[i].start;
	proc_maps__free(maps, cnt);
	if (!sz) {
		errno = ENOENT;
		return NULL;
	}
	mc->vdso_image = malloc(sz);
	e = module_new("[vdso]");
	if (!mc->vdso_image || !e) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(mc->vdso_image, (void *)base, sz);
	e->elf = elf_memory(mc->vdso_image, sz);
	if (!e->elf) {
		err = -ENOEXEC;
		goto fail;
	}
	err = module_parse(e);
	if (err)
		goto fail;
	mc->vdso = e;
	return module__get(e);
fail:
	module_free(e);
	free(mc->vdso_image);
	mc->vdso_image = NULL;
	errno = -err;
	return NULL;
}

struct module *module__get(struct module *e)
{
	if (e) {
		e->refcnt++;
		e->last_use_ns = now_ns();
	}
	return e;
}

static int by_last_use(const void *a, const void *b)
{
	const struct module *x = *(void *const *)a, *y = *(void *const *)b;

	return x->last_use_ns < y->last_use_ns ? -1 : x->last_use_ns > y->last_use_ns;
}

unsigned int module_cache__trim(struct module_cache *mc, unsigned int max_unused,
				uint64_t min_age_ns)
{
	struct module *e, *tmp, **unused;
	unsigned int n = 0, i, evicted = 0;
	uint64_t now = now_ns();

	HASH_ITER(hh, mc->entries, e, tmp)
		n += e->refcnt == 1;
	if (n <= max_unused)
		return 0;
	unused = calloc(n, sizeof(*unused));
	if (!unused)
		return 0;
	n = 0;
	HASH_ITER(hh, mc->entries, e, tmp)
		if (e->refcnt == 1)
			unused[n++] = e;
	qsort(unused, n, sizeof(*unused), by_last_use);
	for (i = 0; i + max_unused < n; i++) {
		if (now - unused[i]->last_use_ns < min_age_ns)
			break;
		cache__remove(mc, unused[i]);
		module_free(unused[i]);
		evicted++;
	}
	free(unused);
	return evicted;
}

void module__put(struct module *e)
{
	if (e && e->refcnt > 1)
		e->refcnt--;
}

int module__bias(const struct module *e, uint64_t start, uint64_t pgoff, uint64_t *bias,
		 uint64_t *lo, uint64_t *hi)
{
	const struct elf_load *l, *found = NULL;
	uint64_t max_end = 0, page = 4096;
	size_t i;

	for (i = 0; i < e->loads_cnt; i++) {
		l = &e->loads[i];
		/* Compare page-aligned offsets: the mapping starts at the page holding p_offset.
		 * Two segments can share a page (lld, rustc: R ends at 0x13818, R+X starts at
		 * 0x13820): the one starting latest is the one mapped from there. */
		if (pgoff >= (l->offset & ~(page - 1)) && pgoff < l->offset + l->filesz &&
		    (!found || l->offset > found->offset))
			found = l;
		if (l->vaddr + l->memsz > max_end)
			max_end = l->vaddr + l->memsz;
	}
	if (!found)
		return -ENOENT;
	/* p_vaddr and p_offset are congruent modulo the page size (ELF gABI), so this holds
	 * for whichever page of the segment the mapping starts at. */
	*bias = start - pgoff - (found->vaddr - found->offset);
	*lo = *bias + (e->loads[0].vaddr & ~(e->loads[0].align - 1));
	*hi = *bias + max_end;
	return 0;
}

bool module__changed(const struct module *e)
{
	struct file_id now;
	struct stat st;

	if (e->fd < 0)
		return false;
	if (fstat(e->fd, &st))
		return true;
	file_id__set(&now, &st);
	/* Size and mtime: what a rewrite in place (truncate, cp over it) changes. Not ctime: an
	 * unlink or chmod changes it too, and a deleted file's content is still what was mapped. */
	return now.size != e->id.size || now.mtime_ns != e->id.mtime_ns;
}

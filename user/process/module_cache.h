/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* module_cache.h: ELF files opened once and shared by every process that maps them. */
#ifndef BPFPROF_MODULE_CACHE_H
#define BPFPROF_MODULE_CACHE_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

/* File identity: a recycled inode or an in-place rewrite gives a new identity (ctime cannot
 * be set from user space). */
struct file_id {
	uint64_t dev;
	uint64_t ino;
	uint64_t size; /* bytes */
	int64_t mtime_ns;
	int64_t ctime_ns;
};

/* One PT_LOAD segment of the file (ELF program header). */
struct elf_load {
	uint64_t vaddr;	 /* p_vaddr */
	uint64_t offset; /* p_offset */
	uint64_t filesz; /* p_filesz, bytes */
	uint64_t memsz;	 /* p_memsz, bytes */
	uint64_t align;	 /* p_align */
};

/* Per-file state of the steps above, opaque here: each is made by its owner at its first use
 * and freed with the entry by the function the owner stored beside it. */
struct cfi_table;      /* unwind/cfi_table.h */
struct module_symbols; /* symbols/module_symbols.h */

/*
 * A kind of per-file state a step above process/ keeps on a module (a runtime's tables, for
 * one): made by its owner at its first use (module__attach()), freed with the module by free.
 */
struct module_attach_type {
	const char *name;	    /* for debugging */
	void (*free)(void *data); /* NULL: nothing to free */
};

/* Attachments per module at most. */
#define MODULE_ATTACH_MAX 8

/*
 * One ELF file. The cache owns it; users hold references (module_cache__get(),
 * module__get()) and drop them with module__put(). elf is opened ELF_C_READ on fd,
 * which the entry keeps open: libelf reads what is asked for with pread and keeps it, nothing
 * is mmap'd, so a file truncated or rewritten meanwhile gives read errors (frames degrade to
 * module+0xOFF), never SIGBUS. libdwfl modules share it through elf_begin(-1, ELF_C_READ, elf)
 * (docs/design.md, "Sharing ELF files").
 */
struct module {
	struct file_id id; /* hash key */
	char *path;	   /* the path as the process mapped it ("[vdso]" for the vdso) */
	const char *name;  /* basename of path, for "module+0xOFF" frames */
	Elf *elf;
	int fd;		      /* elf's file; -1 for the vdso (an in-memory image) */
	bool is_dyn;	      /* ET_DYN (shared object, PIE) */
	uint64_t entry;	      /* e_entry */
	uint8_t build_id[20]; /* NT_GNU_BUILD_ID (first 20 bytes), when the file has one */
	uint8_t build_id_sz;
	struct elf_load *loads; /* PT_LOAD segments, in file order */
	size_t loads_cnt;
	struct cfi_table *cfi; /* fast-path unwind rows (cfi_table__get()) */
	void (*cfi_free)(struct cfi_table *cfi);
	struct module_symbols *symbols; /* symbol table, DWARF (module_symbols.h) */
	void (*symbols_free)(struct module_symbols *symbols);
	struct {
		const struct module_attach_type *type; /* NULL: a free slot */
		void *data;
	} attach[MODULE_ATTACH_MAX]; /* module__attach() */
	int refcnt;
	uint64_t last_use_ns; /* CLOCK_MONOTONIC of the last reference taken */
	UT_hash_handle hh;
	UT_hash_handle hh_build_id; /* by build_id, when it has one */
};

struct module_cache;

struct module_cache *module_cache__new(void);
/* Frees every entry, whatever its references. NULL is fine. */
void module_cache__free(struct module_cache *mc);

/*
 * The entry of the file at open_path (e.g. "/proc/PID/map_files/START-END", which also reaches
 * deleted files and other mount namespaces), as mapped under map_path. The file is opened with
 * file__open_regular() (never blocks; a FIFO, device or directory there is refused), stat'ed,
 * and parsed only when its identity is not cached yet; a file with the build-id of a cached
 * one (the same library in another container, a copy) shares that entry. Returns a new
 * reference, or NULL with errno set (ENOENT, EACCES, EINVAL for a file that is not a regular
 * file, ENOEXEC for one that is not a valid ELF).
 */
struct module *module_cache__get(struct module_cache *mc, const char *open_path,
				 const char *map_path);

/*
 * module_cache__get(), but only when the file opened is the inode the mapping refers to
 * (dev as st_dev, ino): a path seen from another mount namespace, or replaced since, may be
 * another file. The last component of the path must not be a symlink (the kernel reports mapped
 * paths resolved). NULL with errno ESTALE for another inode, ELOOP for a symlink.
 */
struct module *module_cache__get_checked(struct module_cache *mc, const char *open_path,
					 const char *map_path, uint64_t dev, uint64_t ino);

/*
 * A cached file with this device and inode (a process that is gone cannot be asked to open
 * its mappings). New reference, or NULL. Size and times are not compared: the caller has
 * nothing to compare them with.
 */
struct module *module_cache__find_inode(struct module_cache *mc, uint64_t dev, uint64_t ino);

/* The vdso: bpfprof's own copy (same kernel, same image). New reference or NULL/errno. */
struct module *module_cache__vdso(struct module_cache *mc);

/*
 * Evicts files no mapping refers to any more, least recently used first, until at most
 * max_unused such files are left; files used in the last min_age_ns stay. Returns how many
 * went. (libelf keeps an Elf alive until its last user calls elf_end().)
 */
unsigned int module_cache__trim(struct module_cache *mc, unsigned int max_unused,
				uint64_t min_age_ns);

/* Number of cached files; number of files opened and parsed since the cache was made. */
unsigned int module_cache__cnt(const struct module_cache *mc);
uint64_t module_cache__opened(const struct module_cache *mc);

struct module *module__get(struct module *e);
/* The state of type t kept on e, or NULL when none was attached. */
void *module__attachment(const struct module *e, const struct module_attach_type *t);
/* Keeps data as e's state of type t until e is freed (t->free(data) then). 0, -EEXIST when e has
 * one of that type already, -ENOSPC past MODULE_ATTACH_MAX. */
int module__attach(struct module *e, const struct module_attach_type *t, void *data);
/* Drops a reference; the entry stays cached (eviction comes with the LRU limit). */
void module__put(struct module *e);

/*
 * Load bias of the file when its page at file offset pgoff is mapped at start
 * (bias = start - pgoff - (p_vaddr - p_offset) of the PT_LOAD holding pgoff), and the module
 * bounds to report to libdwfl: [*lo, *hi) = bias + [first p_vaddr aligned down, max end).
 * Returns 0, or -ENOENT when no PT_LOAD holds pgoff.
 */
int module__bias(const struct module *e, uint64_t start, uint64_t pgoff, uint64_t *bias,
		 uint64_t *lo, uint64_t *hi);

/*
 * Whether e's file no longer has the size and mtime it was opened with: a file rewritten in
 * place (cp over a library) holds another build's bytes at the offsets its headers gave, a
 * truncated one none. Not its ctime, which an unlink changes (a deleted file keeps its bytes). Names are not read from a changed file (its frames stay
 * module+0xOFF); what was read before stays. False for the vdso.
 */
bool module__changed(const struct module *e);

#endif /* BPFPROF_MODULE_CACHE_H */

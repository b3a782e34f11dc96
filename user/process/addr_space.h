/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* addr_space.h: one process's executable mappings, its Dwfl and the modules reported to it
 * lazily, at the first pc inside them. */
#ifndef BPFPROF_ADDR_SPACE_H
#define BPFPROF_ADDR_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"
#include "process/module_cache.h"

/*
 * docs/design.md ("Process table"): mappings come from /proc/PID/maps (read at the first
 * sample or exec, re-read at most every rescan interval when a pc hits no mapping), from the
 * mmap and munmap records, and from the parent at fork. The Dwfl is created at the first
 * unwind that needs it, and its modules never overlap: a mapping change that removes or
 * overlaps a reported module drops that module (or, during an unwind, the whole Dwfl once the
 * unwind ends). ELF files are shared through the module cache.
 */

/* One executable mapping of a process. */
struct mapping {
	uint64_t start; /* [start, end): virtual addresses */
	uint64_t end;
	uint64_t pgoff; /* file offset of start, bytes */
	uint64_t dev;	/* st_dev of the file (makedev(major, minor)) */
	uint64_t inode; /* 0 for anonymous memory */
	char *path;	/* as in /proc/PID/maps or the mmap record; NULL for anonymous memory */
	bool deleted;
	struct module *entry; /* opened at the first pc inside; NULL until then or if it
				  * cannot be opened */
	uint64_t bias;	      /* load bias (ELF address = address - bias), valid with entry */
};

/*
 * Where the text of /proc/PID/maps comes from: sets a malloc'd *text of *len bytes, returns 0
 * or a negative errno (-ENOENT: no such process). proc_table__read_maps() reads /proc, and adds
 * a PROC_MAPS_ROOT_LINE for a process whose root is not bpfprof's; a capture also records the
 * text, a replay serves the recorded text.
 */
typedef int (*proc_maps_text_fn)(void *ctx, uint32_t tgid, char **text, size_t *len);

/* What the address spaces of one process table share: owned by the table, which outlives
 * them. The address spaces update the counters. */
struct addr_space_shared {
	struct module_cache *modules;
	proc_maps_text_fn maps_text;
	void *maps_ctx;
	uint64_t rescan_interval_ns; /* minimum time between two re-reads of one process's maps */
	bool rescan_on_miss;	     /* mapping events were lost: a pc in no mapping re-reads */
	uint64_t maps_reads;	     /* /proc/PID/maps reads */
	uint64_t maps_rescans;	     /* of which re-reads on a pc in no mapping */
};

struct addr_space;

/* The address space of process tgid, no mapping read yet. NULL + errno (ENOMEM). */
struct addr_space *addr_space__new(uint32_t tgid, struct addr_space_shared *shared);
/* Drops the Dwfl and the mappings' ELF references. NULL is fine. */
void addr_space__free(struct addr_space *as);

uint32_t addr_space__tgid(const struct addr_space *as);
/* Whether the mappings were read from /proc (or copied, or set by exec) at least once. */
bool addr_space__maps_read(const struct addr_space *as);
/* The process is gone (its exit record): a pc in no mapping never re-reads its maps. */
void addr_space__set_exited(struct addr_space *as, bool exited);
/* Time of the sample being unwound (record time_ns): maps read before it may miss code. */
void addr_space__set_sample_time(struct addr_space *as, uint64_t time_ns);

/* RECORD_FORK: child (never read) gets a copy of parent's mappings (fork copies the address
 * space), none of them reported. 0 or -ENOMEM. */
int addr_space__copy(struct addr_space *child, const struct addr_space *parent);
/* RECORD_EXEC: drops the mappings and the Dwfl; with read, reads the new image's maps now,
 * else takes the exec-time mmap records that follow as the whole of its code. */
void addr_space__exec(struct addr_space *as, bool read);
/*
 * RECORD_MMAP: a new executable mapping; path is the file's path from the record (NULL if
 * none). Reads the maps first if they never were. Older mappings under it are cut away, and
 * only the Dwfl modules they or the new range touch are dropped (re-reported lazily).
 * 0 or -ENOMEM.
 */
int addr_space__mmap(struct addr_space *as, const struct mmap_record *m, const char *path);
/* RECORD_MUNMAP: [start, start + len) holds no code any more. */
void addr_space__munmap(struct addr_space *as, uint64_t start, uint64_t len);

/*
 * The executable mapping holding pc (on a miss, re-reading the maps when events were lost, the
 * maps are older than the sample time and the rescan interval passed); its ELF file is opened
 * and, when the Dwfl exists, its module reported, if not done yet. NULL when no mapping holds
 * pc. The mapping stays valid until the next change of the address space
 * (addr_space__generation()).
 */
const struct mapping *addr_space__mapping(struct addr_space *as, uint64_t pc);
/* Bumped by every change of the mapping list that may move or free a mapping. */
uint64_t addr_space__generation(const struct addr_space *as);
/* The mappings in address order, for tests: i < addr_space__mapping_cnt(). */
size_t addr_space__mapping_cnt(const struct addr_space *as);
const struct mapping *addr_space__mapping_at(const struct addr_space *as, size_t i);

/*
 * The Dwfl for an unwind, created (*created set) at the first call after none or a dropped
 * one: the caller then attaches its thread callbacks. Until addr_space__dwfl_end() the Dwfl
 * stays, whatever the mappings do. NULL + errno.
 */
struct Dwfl *addr_space__dwfl_begin(struct addr_space *as, bool *created);
/* The unwind is done with the Dwfl: drops it if the mappings changed meanwhile, or if drop
 * (attaching failed). */
void addr_space__dwfl_end(struct addr_space *as, bool drop);
/* Whether a Dwfl is open now (--stats). */
bool addr_space__has_dwfl(const struct addr_space *as);

#endif /* BPFPROF_ADDR_SPACE_H */

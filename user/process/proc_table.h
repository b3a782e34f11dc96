/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* proc_table.h: tgid -> process state (mappings, one long-lived Dwfl) for unwinding. */
#ifndef BPFPROF_PROC_TABLE_H
#define BPFPROF_PROC_TABLE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>
#include "bpf/record.h"
#include "process/module_cache.h"
#include "sampling/stack_size.h"
#include "unwind/unwind.h"

/*
 * The process table follows docs/design.md ("Process table"): one Dwfl per process, attached
 * once, modules reported lazily at the first pc inside them, ELF files shared through the
 * module cache, a process freed only once its exit record has been handled (the ringbuf
 * delivers a process's samples before its exit record). Mappings come from /proc/PID/maps
 * (read at the first sample or exec, re-read at most every rescan interval when a pc hits no
 * mapping) and are copied from the parent at fork. One thread owns the table (libelf 0.188 has
 * no locking).
 */

/* One executable mapping of a process. */
struct proc_mapping_ref {
	uint64_t start; /* [start, end): virtual addresses */
	uint64_t end;
	uint64_t pgoff; /* file offset of start, bytes */
	uint64_t dev;	/* st_dev of the file (makedev(major, minor)) */
	uint64_t inode; /* 0 for anonymous memory */
	char *path;	/* as in /proc/PID/maps; NULL for anonymous memory */
	bool deleted;
	struct elf_entry *entry; /* opened at the first pc inside; NULL until then */
	bool open_failed;	 /* do not retry opening */
	uint64_t bias;		 /* load bias, valid with entry */
	bool reported;		 /* a Dwfl module covers it: */
	uint64_t mod_lo;	 /* the module's bounds, as reported */
	uint64_t mod_hi;
};

struct proc_stats {
	uint64_t samples; /* samples handled */
	uint64_t root;	  /* of which unwound to the outermost frame */
	uint64_t stops[UNWIND_STOP_CNT];
};

struct proc {
	uint32_t tgid;
	char comm[17];		       /* the process's comm at its last exec or sample */
	struct proc_mapping_ref *maps; /* sorted by start, non-overlapping */
	size_t maps_cnt;
	size_t maps_cap;
	bool maps_read;		 /* /proc/PID/maps was read at least once */
	uint64_t last_scan_ns;	 /* CLOCK_MONOTONIC of the last maps read */
	uint64_t sample_time_ns; /* time of the sample being handled (record time_ns) */
	bool exited;		 /* its exit record was handled: freed at end of batch */
	uint64_t last_seen_ns;	 /* CLOCK_MONOTONIC of its last record */
	Dwfl *dwfl;		 /* created at the first sample that needs it */
	bool in_unwind;		 /* inside unwind__sample(): the Dwfl must stay */
	bool dwfl_stale;	 /* drop the Dwfl when the unwind ends */
	struct unwind_ctx ctx;	 /* fixed address: libdwfl keeps a pointer to it */
	struct proc_table *table;
	struct proc_stats stats;
	struct stack_size_state copy; /* its stack copy size (stack_size.c) */
	struct perf_map *perf_map;    /* JIT names (perf_map__resolve()); NULL until needed */
	uint64_t modules_dropped;     /* module sets rebuilt after a mapping change */
	char *root;		      /* its root when not bpfprof's (proc_maps__host_root()),
					 * from its last maps read; NULL otherwise */
	UT_hash_handle hh;
};

/*
 * Where the text of /proc/PID/maps comes from: sets a malloc'd *text of *len bytes, returns 0
 * or a negative errno (-ENOENT: no such process). proc_table__read_maps() reads /proc, and adds
 * a PROC_MAPS_ROOT_LINE for a process whose root is not bpfprof's; a capture also records the
 * text, a replay serves the recorded text.
 */
typedef int (*proc_maps_text_fn)(void *ctx, uint32_t tgid, char **text, size_t *len);
int proc_table__read_maps(uint32_t tgid, char **text, size_t *len);

struct proc_table_opts {
	proc_maps_text_fn maps_text; /* NULL: proc_table__read_maps() */
	void *maps_ctx;
	/* Minimum time between two re-reads of one process's maps. A re-read happens only for a
	 * pc in no known mapping of a sample taken after the last read. */
	uint64_t rescan_interval_ns;
	/* bpfprof -a and the agent, where most processes are never sampled: no /proc read at
	 * exec (the exec-time records give the new image's code: executable, interpreter, vDSO),
	 * and mmap/munmap records of a process whose maps were never read are skipped (the read
	 * at its first sample sees their result). */
	bool lazy_maps;
	/* ELF files no process maps and no profile refers to stay cached (symbol tables, CFI
	 * rows, DWARF) for a process that maps them again: 0 keeps up to 256 of them, each for
	 * 30 s at least; else each goes once unused this long (the agent: an interval), since a
	 * node runs many programs whose symbol tables are tens of MB (libLLVM, cc1). */
	uint64_t unused_file_ttl_ns;
};

struct perf_map;
struct proc_table;

/* Returns NULL and sets errno. */
struct proc_table *proc_table__new(const struct proc_table_opts *opts);
/* Frees every process, then the module cache: after every aggregate holding references on its
 * ELF files (aggregate__free). NULL is fine. */
void proc_table__free(struct proc_table *pt);

/* The process tgid; with create, a new entry when there is none (NULL + errno ENOMEM). */
struct proc *proc_table__find(struct proc_table *pt, uint32_t tgid, bool create);
/* RECORD_FORK: child starts with a copy of parent's mappings (fork copies the address space). */
int proc_table__fork(struct proc_table *pt, uint32_t parent, uint32_t child);
/* RECORD_EXEC: drops the old image's mappings and Dwfl, reads the new maps. */
void proc_table__exec(struct proc_table *pt, uint32_t tgid, const char *comm);
/*
 * RECORD_MMAP: a new executable mapping of m->tgid; path is the file's path from the record
 * (NULL if none). Older mappings under it are cut away, and only the Dwfl modules they or the
 * new range touch are dropped (re-reported lazily). 0 or -ENOMEM.
 */
int proc_table__mmap(struct proc_table *pt, const struct mmap_record *m, const char *path);
/* RECORD_MUNMAP: [start, start + len) of tgid holds no code any more. */
void proc_table__munmap(struct proc_table *pt, uint32_t tgid, uint64_t start, uint64_t len);
/* RECORD_EXIT: marks the process; proc_table__end_batch() frees it. */
void proc_table__exit(struct proc_table *pt, uint32_t tgid);
/*
 * Mapping events were lost (ringbuf full): from now on a pc in no known mapping makes the
 * table re-read that process's maps (throttled). Without lost events it never does: the
 * events are the truth at each sample's time, and /proc shows a later one.
 */
void proc_table__events_lost(struct proc_table *pt);
/*
 * Marks the processes that vanished without an exit record (lost event, or one that exited
 * before bpfprof tracked it): no record for idle_ns and no /proc/PID any more. They are freed
 * at the end of the batch. Returns how many.
 */
unsigned int proc_table__sweep(struct proc_table *pt, uint64_t idle_ns);
/* After each ringbuf drain: frees exited processes. */
void proc_table__end_batch(struct proc_table *pt);
/* Evicts unused ELF files as proc_table_opts.unused_file_ttl_ns says, now (e.g. after a
 * profile's references were dropped). Returns how many. */
unsigned int proc_table__trim_files(struct proc_table *pt);

/* Iterates over the live processes (summary). */
struct proc *proc_table__first(struct proc_table *pt);
struct proc *proc_table__next(struct proc *p);
/* Counters of the table's work, for --stats. */
struct proc_table_counts {
	unsigned int procs;    /* processes tracked now */
	unsigned int dwfls;    /* Dwfls open now */
	unsigned int files;    /* ELF files cached now */
	uint64_t files_opened; /* ELF files opened and parsed in all */
	uint64_t maps_reads;   /* /proc/PID/maps reads: first record, exec */
	uint64_t maps_rescans; /* of which re-reads on a pc in no mapping */
	uint64_t swept;	       /* processes gone without an exit record */
};

void proc_table__counts(struct proc_table *pt, struct proc_table_counts *c);
/* Stats of processes already freed, summed. */
const struct proc_stats *proc_table__freed_stats(struct proc_table *pt);

/* The process's Dwfl, created and attached at the first call; NULL + errno. */
Dwfl *proc__dwfl(struct proc *p);
/* Called by unwind__sample() when it is done with the Dwfl: drops it if mappings changed. */
void proc__unwind_end(struct proc *p);
/*
 * The executable mapping holding pc (on a miss, re-reading the maps if they are older than
 * p->sample_time_ns, at most once per rescan interval); its ELF file is
 * opened and its module reported to the Dwfl if not done yet. NULL when no mapping holds pc.
 */
struct proc_mapping_ref *proc__mapping(struct proc *p, uint64_t pc);

#endif /* BPFPROF_PROC_TABLE_H */

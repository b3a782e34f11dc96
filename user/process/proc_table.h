/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* proc_table.h: tgid -> process (its address space, comm and attachments). */
#ifndef BPFPROF_PROC_TABLE_H
#define BPFPROF_PROC_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/record.h"
#include "process/addr_space.h"

/*
 * The process table follows docs/design.md ("Process table"): one entry per tgid, holding the
 * process's address space (addr_space.h: mappings, one Dwfl, modules reported lazily), its
 * comm, its stack copy size and what the steps above keep on it (proc__attach(): its unwinder
 * and counters, unwind/proc_unwind.h; a runtime's state). A process is freed only once its exit
 * record has been handled (the ringbuf delivers a process's samples before its exit record).
 * One thread owns the table (libelf 0.188 has no locking).
 */

/* The proc_maps_text_fn (addr_space.h) reading /proc/PID/maps, with a PROC_MAPS_ROOT_LINE
 * added for a process whose root is not bpfprof's. */
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

struct proc;
struct stack_size_state;
struct proc_table;

/* Returns NULL and sets errno. */
struct proc_table *proc_table__new(const struct proc_table_opts *opts);
/* Frees every process, then the module cache: after every aggregate holding references on its
 * ELF files (aggregate__free) and after the runtimes (runtimes__free: the JIT's stops its perf
 * map reader first). NULL is fine. */
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

/* The parts of one process; valid until proc_table__end_batch() frees it. */
uint32_t proc__tgid(const struct proc *p);
/* Its comm at its last exec or sample ("" until known). */
const char *proc__comm(const struct proc *p);
void proc__set_comm(struct proc *p, const char *comm);
struct addr_space *proc__addr_space(struct proc *p);
/* The table's Elf of bpfprof's own executable, which picks libdwfl's architecture backend for
 * an unwinder (unwinder__new()); borrowed, valid while the table is. */
struct Elf *proc__ref_elf(const struct proc *p);
/* Its stack copy size (stack_size.c). */
struct stack_size_state *proc__stack_copy(struct proc *p);
/*
 * A kind of per-process state a step above process/ keeps on the entry (a runtime's, the
 * unwinder): made by its owner at its first use (proc__attach()).
 */
struct proc_attach_type {
	const char *name; /* for debugging */
	/* At the process's exec (exec true: its old image's state) or exit: NULL keeps the state
	 * (until the entry is freed); else called, and the attachment is gone (free is not called
	 * for it). */
	void (*end)(void *data, bool exec);
	/* With the entry, after its address space and Dwfl. NULL: nothing to free. */
	void (*free)(void *data);
};

/* Attachments per process at most. */
#define PROC_ATTACH_MAX 8

/* The state of type t kept on p, or NULL when none is. */
void *proc__attachment(const struct proc *p, const struct proc_attach_type *t);
/* Keeps data as p's state of type t. 0, -EEXIST when p has one of that type, -ENOSPC past
 * PROC_ATTACH_MAX. */
int proc__attach(struct proc *p, const struct proc_attach_type *t, void *data);

#endif /* BPFPROF_PROC_TABLE_H */

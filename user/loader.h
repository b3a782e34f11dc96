/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* loader.h: BPF skeleton lifecycle: open -> size maps, set rodata -> load -> attach. */
#ifndef BPFPROF_LOADER_H
#define BPFPROF_LOADER_H

#include <stdint.h>
#include "bpf/record.h"
#include "perf_event.h"

struct loader_opts {
	uint32_t stack_sz;	/* first stack copy size of a process, bytes (--stack-size) */
	uint32_t max_stack_sz;	/* largest copy size, bytes (<= BPFPROF_STACK_SZ_MAX) */
	uint32_t ringbuf_sz;	/* ringbuf bytes, a power of 2 multiple of the page size */
	uint32_t max_targets;	/* entries of target_tgids */
	bool target_all;	/* every process but self_tgid is a target (-a) */
	uint32_t self_tgid;	/* never sampled */
};

struct loader;

/*
 * Opens and loads the BPF programs. Returns NULL and sets errno: EPERM without CAP_BPF and
 * CAP_PERFMON (or root), ENOENT when the kernel has no BTF (/sys/kernel/btf/vmlinux),
 * others from libbpf (libbpf's own messages with -v).
 */
struct loader *loader__load(const struct loader_opts *opts);
/* Detaches and unloads everything. NULL is fine. */
void loader__free(struct loader *l);

/* Attaches the fork/exec/exit and sys_exit (mapping changes) tracepoints. 0 or -errno. */
int loader__attach_tracepoints(struct loader *l);
/* Attaches the sampler to every opened event. 0 or a negative errno. */
int loader__attach_perf_events(struct loader *l, const struct perf_events *pe);

/* Detaches the sampler (the events stay open). */
void loader__detach_perf_events(struct loader *l);

/* Adds tgid to target_tgids with state TARGET_* (| TARGET_F_FOLLOW_FORK). 0 or -errno. */
int loader__add_target(struct loader *l, uint32_t tgid, uint32_t state);
/* Whether tgid is a target still (its exit removes it). */
int loader__is_target(struct loader *l, uint32_t tgid);

/* Sets the user stack bytes copied per sample of process tgid (copy_sizes map). 0 or -errno. */
int loader__set_copy_size(struct loader *l, uint32_t tgid, uint32_t bytes);

/* The ringbuf map fd, for ring_buffer__new(). */
int loader__ringbuf_fd(struct loader *l);

/* Run count and total run time (ns) of each BPF program, from bpf_prog_info; the kernel
 * counts them only while kernel.bpf_stats_enabled is 1. cb is called once per program. */
void loader__prog_stats(struct loader *l,
			void (*cb)(const char *name, uint64_t run_cnt, uint64_t run_time_ns,
				   void *arg),
			void *arg);

/* Sums the per-CPU counters into *total. 0 or a negative errno. */
int loader__read_stats(struct loader *l, struct sample_stats *total);

#endif /* BPFPROF_LOADER_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* loader.h: BPF skeleton lifecycle: open -> size maps, set rodata -> load -> attach. */
#ifndef BPFPROF_LOADER_H
#define BPFPROF_LOADER_H

#include <stdint.h>
#include "runtime/runtime.h"
#include "bpf/record.h"
#include "sampling/kernel_features.h"
#include "sampling/perf_event.h"

struct loader_opts {
	uint32_t copy_size;	/* first stack copy size of a process, bytes (--stack-size) */
	uint32_t max_copy_size; /* largest copy size, bytes (<= BPFPROF_STACK_SZ_MAX) */
	uint32_t ringbuf_sz;	/* ringbuf bytes, a power of 2 multiple of the page size */
	uint32_t max_targets;	/* entries of target_tgids */
	bool target_all;	/* every process but self_tgid is a target (-a) */
	uint32_t self_tgid;	/* never sampled */
	uint64_t runtimes_off;	/* --no-<name>: bit i turns runtime_table[i] off; its BPF walk
				 * (runtime_ops.bpf_switch) is not even loaded */
	uint32_t max_frames;	/* --max-frames: a Go stack's frame-pointer chain is read this
				 * far at most (0: as far as BPF goes) */
	bool off_cpu;		/* --off-cpu: load the off-CPU programs (bpf/off_cpu.bpf.c) */
	uint64_t off_cpu_min_ns; /* --off-cpu-min-us, in ns: shorter blocked periods not counted */
	uint32_t off_cpu_max_rate; /* --off-cpu-max-rate: off-CPU records per second per CPU */
	bool wakers;		   /* --wakers: with off_cpu, the waking threads' stacks too */
};

struct loader;

/* Why loader__load() failed: what loader__report_error() says. */
struct loader_error {
	int err;		   /* positive errno */
	struct kernel_features kf; /* the probes' results */
	bool privileged;	   /* CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN */
	bool verifier;		   /* the verifier refused a program (its log is in log) */
	bool core;		   /* a CO-RE relocation failed: a kernel field is missing */
	bool off_cpu_compat;	   /* --off-cpu on a kernel before 5.17 (EOPNOTSUPP) */
	char prog[64];		   /* the program libbpf failed to load, or "" */
	char log[4096];		   /* libbpf's last lines (the verifier's last lines) */
};

/*
 * Probes the kernel's features (kernel_features.h), opens the BPF object, loads the programs
 * built on the fallbacks when a feature is missing (bpf/compat.bpf.h), the others otherwise.
 * Returns NULL on failure with *e filled (e may be NULL) and errno set: EPERM without
 * CAP_BPF and CAP_PERFMON (or root), ENOENT without kernel BTF, EOPNOTSUPP when a required
 * feature is missing, others from libbpf or the verifier.
 */
struct loader *loader__load(const struct loader_opts *opts, struct loader_error *e);
/* Prints why the load failed in one line naming the cause; with -v, the verifier's or
 * libbpf's last lines too. */
void loader__report_error(const struct loader_error *e);
/* Whether the programs built on the fallbacks are loaded (kernels before 5.17). */
bool loader__compat(const struct loader *l);
/* The features probed at load. */
const struct kernel_features *loader__features(const struct loader *l);
/* Detaches and unloads everything. NULL is fine. */
void loader__free(struct loader *l);

/* Attaches the fork/exec/exit and sys_exit (mapping changes) tracepoints, and with
 * opts.off_cpu sched_switch and the off-CPU sys_exit program. 0 or -errno. */
int loader__attach_tracepoints(struct loader *l);
/* Attaches the sampler to every opened event. 0 or a negative errno. */
int loader__attach_perf_events(struct loader *l, const struct perf_events *pe);

/* Detaches the sampler (the events stay open). */
void loader__detach_perf_events(struct loader *l);

/* Adds tgid to target_tgids with state TARGET_* (| TARGET_F_FOLLOW_FORK). 0 or -errno. */
int loader__add_target(struct loader *l, uint32_t tgid, uint32_t state);
/* Whether tgid is a target still (its exit removes it). */
int loader__is_target(struct loader *l, uint32_t tgid);
/* Removes tgid from target_tgids. 0 or -errno (-ENOENT: it was not one). */
int loader__remove_target(struct loader *l, uint32_t tgid);
/* Iterates over target_tgids: the target after *prev (NULL: the first one) into *next. 0, or
 * -ENOENT past the last. A target removed meanwhile may restart the walk (bpf_map_get_next_key). */
int loader__next_target(struct loader *l, const uint32_t *prev, uint32_t *next);

/* Sets the user stack bytes copied per sample of process tgid (copy_sizes map). 0 or -errno. */
int loader__set_copy_size(struct loader *l, uint32_t tgid, uint32_t bytes);

/*
 * The handle through which the runtimes arm processes in their BPF maps (runtime/runtime.h):
 * the loader stays the only writer of BPF maps. Valid as long as l.
 */
const struct runtime_maps *loader__runtime_maps(struct loader *l);

/* The ringbuf map fd, for ring_buffer__new(). */
int loader__ringbuf_fd(struct loader *l);

/* Run count and total run time (ns) of each BPF program, from bpf_prog_info; the kernel
 * counts them only while kernel.bpf_stats_enabled is 1. misses: the runs the kernel skipped
 * (bpf_prog_info.recursion_misses: the program already running on that CPU), always counted.
 * cb is called once per program. */
void loader__prog_stats(struct loader *l,
			void (*cb)(const char *name, uint64_t run_cnt, uint64_t run_time_ns,
				   uint64_t misses, void *arg),
			void *arg);

/* Sums the per-CPU counters into *total. 0 or a negative errno. */
int loader__read_stats(struct loader *l, struct bpf_stats *total);

#endif /* BPFPROF_LOADER_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * runtime.h: the runtime wing. Each language runtime bpfprof names frames of (CPython, Go, JIT
 * code from perf maps; the JVM next) lives in one folder, user/runtime/<name>/, behind one table
 * of hooks, struct runtime_ops, registered once in runtime.c's table. Its BPF walker, if it has
 * one, is bpf/runtime/<name>.bpf.h, and its records are its own section of bpf/record.h.
 * Generic code (unwind/, symbols/, profile/, output/, pipeline/) names no runtime: it calls the
 * hooks of every runtime in the table, in table order.
 *
 * Models: elfutils' backends/ and libebl (one table of hooks per architecture), perf's
 * unwind_libunwind_ops, the OpenTelemetry eBPF profiler's interpreter/<runtime>/ folders behind
 * one loader interface. docs/design.md, "Adding a runtime", says what a new one touches.
 *
 * Every hook may be NULL (the runtime has nothing to do there). A hook's rt is the state its
 * runtime's new() returned. Hooks run in the consumer's thread.
 */
#ifndef BPFPROF_RUNTIME_H
#define BPFPROF_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/record.h"

struct aggregate;
struct proc;
struct proc_table;
struct unwinder;
struct unwind_frame;
struct ksyms;

/*
 * The loader's handle through which a runtime arms a process for its BPF walker: only the
 * loader writes BPF maps (sampling/loader.c implements it). Maps are named as in bpf/
 * ("go_procs", "py_procs", "py_binaries"). NULL in a replay (no BPF).
 */
struct runtime_maps {
	/* key -> value in map name (BPF_ANY). 0 or a negative errno (-ENOENT: no such map). */
	int (*update)(const struct runtime_maps *m, const char *name, const void *key,
		      const void *value);
	/* Deletes key from map name. 0 or a negative errno (-ENOENT: no such key). */
	int (*remove)(const struct runtime_maps *m, const char *name, const void *key);
	void *ctx; /* the loader */
	/* key -> value in map name unless key is there (BPF_NOEXIST: never over an entry BPF
	 * made). 0 or a negative errno (-EEXIST: key is there; -ENOENT: no such map). */
	int (*insert)(const struct runtime_maps *m, const char *name, const void *key,
		      const void *value);
};

/* What a session gives each runtime at its start (runtime_ops.new): borrowed, outliving it. */
struct runtime_env {
	struct proc_table *pt;
	const struct runtime_maps *maps; /* NULL in a replay */
	const struct ksyms *ksyms;	 /* NULL when kernel symbols are not read */
	bool live;			 /* profiling now (false: a replay of a raw capture) */
};

/*
 * One sample as the runtimes see it around its unwind (pipeline/sample.c). Before the unwind
 * (runtime_ops.pre_unwind) frames is empty; after it (runtime_ops.post_unwind, splice) it holds
 * the native frames, leaf first.
 */
struct runtime_sample {
	const struct sample_record *s;
	struct proc *p;
	struct unwinder *uw;
	const struct unwind_frame *frames; /* cnt native frames, leaf first */
	int cnt;
	struct aggregate *agg; /* where the sample goes */
};

/*
 * Where a runtime's frames go in a sample's stack (runtime_ops.splice): an interpreter's frames
 * come in groups, each group run by one native activation of its interpreter loop (CPython's
 * _PyEval_EvalFrameDefault, a JVM's template interpreter), which the group replaces; a group no
 * native frame was found for (a native unwind that stopped early) goes at the root. The
 * pipeline gives the arrays and names each group's locations later, root first, through
 * runtimes__splice_group().
 */
struct runtime_splice {
	/* Per native frame (rs->cnt, leaf first): the group replacing it, or -1; all -1 before
	 * splice(). */
	int *frame_group;
	uint32_t *root;	 /* the groups that go at the root, root-most first: root_cnt */
	size_t root_cap; /* room in root (runtimes__splice_max() entries) */
	size_t root_cnt;
	/* Set by runtimes__splice(): the runtime whose groups these are, its state. */
	const struct runtime_ops *ops;
	void *rt;
};

struct runtime_ops {
	const char *name; /* the folder's name: "python", "go", "jit" */
	/* Its --no-<name> option's --help text, or NULL when it cannot be turned off. cmd/opts.c
	 * makes the option (turning off bit i of runtimes__new()'s disabled: runtime_table[i]). */
	const char *option_help;
	/* Session state (env borrowed, outliving it): NULL + errno on failure, which fails the
	 * session. */
	void *(*new)(const struct runtime_env *env);
	/* Frees it and its references (on ELF files: before the process table). NULL is fine. */
	void (*free)(void *rt);
	/* The record types of its section of bpf/record.h, 0-terminated: record() gets them. */
	const uint32_t *record_types;
	/* One of its records (len bytes, its header checked by sampling/record_decode.c, the rest
	 * by check() when it has one): one that precedes a sample is kept for it
	 * (util/pending.h). 0, or a negative errno that ends the run (-ENOMEM). */
	int (*record)(void *rt, const struct record_header *hdr, size_t len);
	/*
	 * A target found before its first sample (bpfprof -p: tgid runs exe, "/proc/PID/exe";
	 * next_exec: bpfprof -- CMD, tgid is about to exec exe, the command's file): armed now for
	 * the runtime's BPF walker when it is one of its programs. 0 or a negative errno
	 * (reported, not fatal).
	 */
	int (*attach)(void *rt, uint32_t tgid, const char *exe, bool next_exec);
	/* Process tgid exec'd (exec) or exited: its state and arming go, unless kept for the image
	 * its exec brings (attach with next_exec). */
	void (*forget)(void *rt, uint32_t tgid, bool exec);
	/* Before a sample's unwind: what the unwind reads besides the sample's own copy (a record
	 * kept for it). */
	void (*pre_unwind)(void *rt, const struct runtime_sample *rs);
	/* After it: arming a process its unwind showed to be one of the runtime's. */
	void (*post_unwind)(void *rt, const struct runtime_sample *rs);
	/* Its lines of the run's summary on fp, after the generic ones (not with --quiet); bpf:
	 * the BPF counters, NULL in a replay. */
	void (*summary)(void *rt, const struct bpf_stats *bpf, FILE *fp);
	/* Its --stats lines on fp, after the unwind statistics. */
	void (*stats)(void *rt, const struct bpf_stats *bpf, FILE *fp);
	/*
	 * After a sample's unwind (rs->frames), which native frames its groups of frames replace
	 * and which go at the root (struct runtime_splice). Returns the number of groups (0: none
	 * in this sample) or a negative errno. Called for every sample no runtime before it in the
	 * table spliced (it may arm a process).
	 */
	int (*splice)(void *rt, const struct runtime_sample *rs, struct runtime_splice *sp);
	/*
	 * Appends to locs (room for cap) the locations of group g of the sample splice() last
	 * placed, root first, adding them to agg. How many were appended (0: none, the native
	 * frame stays), or a negative errno.
	 */
	int (*splice_group)(void *rt, struct aggregate *agg, size_t g, uint32_t *locs, size_t cap);
	/* Locations splice_group() adds to one sample at most, groups as many at most. */
	size_t splice_max;
	/*
	 * A frame of process p at pc (the call, not the return address) in anonymous memory
	 * (JIT code): the id of its location in agg when the runtime names such frames
	 * (fallback: the string id to show when it has no name there), -ENOENT when not (the
	 * next runtime's turn, else a native frame named fallback), or another negative errno.
	 */
	int64_t (*anon_location)(void *rt, struct proc *p, struct aggregate *agg, uint64_t pc,
				 uint32_t fallback);
	/* Its lines of the run's summary that follow the generic ones on stacks and files,
	 * before the top functions (not with --quiet). */
	void (*summary_stacks)(void *rt, FILE *fp);
	/*
	 * The switch of its BPF walker, or NULL: a `const volatile bool` in the .rodata of the
	 * BPF object (bpf/), true by default, that sampling/loader.c sets false before the load
	 * when the runtime is turned off (--no-<name>): the verifier then drops the walk as dead
	 * code.
	 */
	const char *bpf_switch;
	/*
	 * Checks one of its records (record_types; len bytes as delivered, hdr->sz of them its
	 * own) against its layout: every length and count inside against hdr->sz and BPF's caps.
	 * 0, or -EINVAL for a malformed record (skipped, never given to record()). Stateless: a
	 * disabled runtime's records are checked too. NULL: its records are taken as they come.
	 */
	int (*check)(const struct record_header *hdr, size_t len);
};

/* The runtimes, in the order their hooks are called (runtime.c: one line each). */
extern const struct runtime_ops *const runtime_table[];
extern const size_t runtime_cnt;

/* The runtimes of one session: each one's state, made by its new(). */
struct runtimes;

/*
 * Every runtime of the table but those whose bit is set in disabled (bit i: runtime_table[i],
 * its --no-<name>). NULL + errno when one's new() fails.
 */
struct runtimes *runtimes__new(const struct runtime_env *env, uint64_t disabled);
/* Frees each runtime's state, in reverse table order. NULL is fine. */
void runtimes__free(struct runtimes *rts);
/* A record: given to the runtime whose record_types has its type. 0 or a negative errno;
 * -ENOENT when no runtime takes that type. */
int runtimes__record(struct runtimes *rts, const struct record_header *hdr, size_t len);
/* The hooks of every enabled runtime, in table order (runtime_ops). attach: the first error. */
int runtimes__attach(struct runtimes *rts, uint32_t tgid, const char *exe, bool next_exec);
void runtimes__forget(struct runtimes *rts, uint32_t tgid, bool exec);
void runtimes__pre_unwind(struct runtimes *rts, const struct runtime_sample *rs);
void runtimes__post_unwind(struct runtimes *rts, const struct runtime_sample *rs);
void runtimes__summary(struct runtimes *rts, const struct bpf_stats *bpf, FILE *fp);
void runtimes__stats(struct runtimes *rts, const struct bpf_stats *bpf, FILE *fp);
/* Room the splice hooks need in a sample's locations and root groups: the largest splice_max
 * of the enabled runtimes (one runtime splices a sample). */
size_t runtimes__splice_max(const struct runtimes *rts);
/*
 * Asks the enabled runtimes with a splice hook, in table order, which native frames of the
 * sample their groups replace (sp: frame_group of rs->cnt entries and root of root_cap, given
 * by the caller): the first that has groups gets it, those after it are not asked. The number
 * of groups (0: none), or a negative errno.
 */
int runtimes__splice(struct runtimes *rts, const struct runtime_sample *rs,
		     struct runtime_splice *sp);
/* Group g's locations from the runtime runtimes__splice() chose (its splice_group). */
int runtimes__splice_group(const struct runtime_splice *sp, struct aggregate *agg, size_t g,
			   uint32_t *locs, size_t cap);
/* The first anon_location() of the enabled runtimes, in table order, that is not -ENOENT;
 * -ENOENT when none names the frame (or rts is NULL). */
int64_t runtimes__anon_location(struct runtimes *rts, struct proc *p, struct aggregate *agg,
				uint64_t pc, uint32_t fallback);
void runtimes__summary_stacks(struct runtimes *rts, FILE *fp);
/*
 * A record of a type none of sampling/record_decode.c's (its header checked there): checked by
 * the check hook of the runtime in the table whose record_types has its type, enabled or not.
 * 0, -EINVAL when malformed, -ENOENT when no runtime takes that type.
 */
int runtimes__check(const struct record_header *hdr, size_t len);

#endif /* BPFPROF_RUNTIME_H */

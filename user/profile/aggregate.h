/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * aggregate.h: samples weighed by (origin, process, thread, stack of locations): a CPU sample or
 * a blocked period, each with its weight (struct sample_weight). A location is where a frame is
 * (an address in an ELF file, a kernel address, a JIT symbol); its source-level names
 * (functions, inline frames, files, lines) are filled in once per unique location by the
 * symbolizer (symbols/symbolizer.h) before output, never per sample. The model is pprof's (profile.proto: Sample,
 * Location, Line, Function), which the folded, SVG and pprof writers all read.
 */
#ifndef BPFPROF_AGGREGATE_H
#define BPFPROF_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile/frame_kind.h"

struct aggregate;
struct module;

/* "No string": a location added without a name, to be symbolized. As a string id (a frame of
 * a location not symbolized), aggregate__str() shows it as "[unknown]". */
#define AGG_NO_NAME UINT32_MAX

/* One source-level frame of a location (pprof Line). */
struct agg_line {
	uint32_t function;    /* string id of the function's name, as every output shows it */
	uint32_t file;	      /* string id of its source file; 0 ("") when unknown */
	uint32_t line;	      /* source line, 0 when unknown */
	uint32_t system_name; /* string id of the name as the ELF file spells it (mangled:
				 * pprof's Function.system_name); 0 when it is function's */
};

/* Where one frame is (pprof Location). */
struct agg_location {
	const struct frame_kind *kind; /* FRAME_USER, FRAME_KERNEL or a runtime's kind */
	uint32_t name;		/* string id given when added, or AGG_NO_NAME */
	struct module *entry;	/* the ELF file (a reference the aggregate holds), or NULL */
	void *ref;		/* a runtime's reference (kind->get/put; the aggregate holds
				 * one), whose names kind->find gives at output; else NULL.
				 * FRAME_USER once ref has no name there (the symbolizer):
				 * the aggregate still puts it with the kind it came with. */
	uint64_t addr;		/* ELF virtual address in entry (the call, not the return
					 * address), kernel address, JIT code address, or 0 */
	struct agg_line *lines; /* innermost first (an inlined function before the one
					 * it was inlined into); NULL until symbolized */
	uint32_t lines_cnt;
};

/* Where a sample comes from: the aggregate keys on it (agg_stack.origin). */
enum sample_origin {
	SAMPLE_CPU,	/* a perf_event sample */
	SAMPLE_OFF_CPU, /* a blocked period (--off-cpu, bpf/off_cpu.bpf.c) */
};

/* What a sample weighs, by its origin; a stack's is the sum of its samples'. */
struct sample_weight {
	uint64_t count; /* SAMPLE_CPU: samples (1 each); SAMPLE_OFF_CPU: blocked periods (switches) */
	uint64_t ns;	/* SAMPLE_OFF_CPU: time off CPU, ns; SAMPLE_CPU: 0, its time is count times
			 * the aggregate's one period (aggregate__set_period()) */
};

/* One unique sample key and its weight (pprof Sample). */
struct agg_stack {
	uint64_t count; /* sample_weight.count */
	uint64_t ns;	/* sample_weight.ns */
	uint32_t pid, tid;
	uint32_t comm;	 /* string id of the thread's name */
	uint32_t origin; /* enum sample_origin */
	uint32_t n;	 /* locations */
	uint32_t locs[]; /* location ids, root first */
};

struct aggregate *aggregate__new(void);
/* Frees the aggregate and drops its references on ELF files: before the process table whose
 * module cache holds them (proc_table__free). NULL is fine. */
void aggregate__free(struct aggregate *agg);

/* The id of string s, added on first use. Id 0 is "". Ids are dense and stable for the
 * aggregate's life. The table holds UTF-8 only: bytes of s that are not (a corrupted file's
 * names, a comm) are each U+FFFD there (utf8__sanitize()); valid UTF-8 is kept as it is.
 * Returns a negative errno (-ENOMEM) on failure. */
int64_t aggregate__string(struct aggregate *agg, const char *s);
/* aggregate__string() of a printf-formatted text, cut at 511 bytes. */
int64_t aggregate__string_fmt(struct aggregate *agg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* String id's text: "[unknown]" for AGG_NO_NAME, "?" for an id never given. */
const char *aggregate__str(const struct aggregate *agg, uint32_t id);
size_t aggregate__strings(const struct aggregate *agg);

/*
 * The id of the location (kind, entry, addr, name), added on first use (taking a reference on
 * entry). Locations with a name (not AGG_NO_NAME) get one line with that function name at once;
 * the others wait for the symbolizer. Ids are dense from 0. Returns a negative errno.
 */
int64_t aggregate__location(struct aggregate *agg, const struct frame_kind *kind,
			    struct module *entry, uint64_t addr, uint32_t name);
/*
 * The id of the location of kind at addr (the call, not the return address) named by a
 * runtime's reference ref (not NULL), added on first use (taking a reference: kind->get):
 * named by the symbolizer from ref as it is at output time (kind->find), or by fallback (a
 * string id: what to show when ref has no name there). Returns a negative errno.
 */
int64_t aggregate__ref_location(struct aggregate *agg, const struct frame_kind *kind, void *ref,
				uint64_t addr, uint32_t fallback);
const struct agg_location *aggregate__loc(const struct aggregate *agg, uint32_t id);
size_t aggregate__locations(const struct aggregate *agg);

/* Sets the lines of location id (copied), innermost first. 0 or -ENOMEM/-EINVAL. */
int aggregate__set_lines(struct aggregate *agg, uint32_t id, const struct agg_line *lines,
			 uint32_t cnt);
/* Sets the kind of location id (a location its reference does not name is FRAME_USER). */
void aggregate__set_kind(struct aggregate *agg, uint32_t id, const struct frame_kind *kind);

/* Adds a sample of origin weighing *w to the stack of thread tid of process pid, named comm
 * (string id), with the locations locs[0..n), root first. 0 or -ENOMEM. */
int aggregate__add(struct aggregate *agg, uint32_t pid, uint32_t tid, uint32_t comm,
		   enum sample_origin origin, const struct sample_weight *w, const uint32_t *locs,
		   size_t n);
/*
 * What the folded and flame graph outputs count for st: samples, or for an off-CPU stack
 * microseconds off CPU (bcc offcputime -f's unit), rounded to nearest. When the aggregate holds
 * both origins (--off-cpu --on-cpu) both count microseconds: a sample its period
 * (aggregate__set_period()).
 */
uint64_t aggregate__value(const struct aggregate *agg, const struct agg_stack *st);
/* The CPU time a perf_event sample stands for (1e9 / -F), ns. */
void aggregate__set_period(struct aggregate *agg, uint64_t period_ns);
/* Whether the aggregate holds both perf_event samples and off-CPU periods. */
bool aggregate__mixed(const struct aggregate *agg);

/* Unique sample keys, total samples (perf_event samples and off-CPU periods). */
size_t aggregate__stacks(const struct aggregate *agg);
uint64_t aggregate__samples(const struct aggregate *agg);
/* The weight of all samples of origin (SAMPLE_OFF_CPU: blocked periods and time off CPU). */
struct sample_weight aggregate__weight(const struct aggregate *agg, enum sample_origin origin);
/* Whether any stack is SAMPLE_OFF_CPU. */
bool aggregate__has_off_cpu(const struct aggregate *agg);

/* Calls cb once per unique sample key (order unspecified); stops early when cb returns non-zero
 * and returns that value. */
typedef int (*aggregate_stack_fn)(const struct agg_stack *st, void *arg);
int aggregate__for_each(const struct aggregate *agg, aggregate_stack_fn cb, void *arg);

/* One frame of a stack as the folded and flame graph outputs show it. */
struct agg_frame {
	uint32_t name; /* string id */
	const struct frame_kind *kind;
};

/*
 * Calls cb once per unique sample key with its frames and aggregate__value(): the comm first (FRAME_COMM), then per
 * location from the root its lines outermost first, the inlined ones as FRAME_INLINE (run the
 * symbolizer first: a location without lines is one frame named AGG_NO_NAME); an off-CPU stack
 * of a mixed aggregate has a frame "[off-cpu]" after the comm. Stops early as
 * aggregate__for_each() does; -ENOMEM.
 */
typedef int (*aggregate_frames_fn)(const struct agg_frame *frames, size_t n, uint64_t count,
				   const struct agg_stack *st, void *arg);
int aggregate__for_each_frames(const struct aggregate *agg, aggregate_frames_fn cb, void *arg);

#endif /* BPFPROF_AGGREGATE_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * frame_kind.h: what kind of frame a location is, as a descriptor the outputs ask (its folded
 * suffix, its flame graph colours) instead of an enum each output switches on. The builtins
 * (user, kernel, comm, inline) are here; a runtime defines its own in its folder
 * (runtime/<name>/), with hooks for the reference its locations hold (agg_location.ref).
 */
#ifndef BPFPROF_FRAME_KIND_H
#define BPFPROF_FRAME_KIND_H

#include <stdint.h>

/*
 * A flame graph colour family: channel c (red, green, blue) of a frame is
 * base[c] + shade[c][0] * v1 + shade[c][1] * v2 + shade[c][2] * v3, truncated, where v1..v3
 * in [0, 1] come from a hash of the frame's name (output/flamegraph.c), so the same function
 * has the same colour in every graph.
 */
struct frame_colour {
	double base[3];
	double shade[3][3];
};

struct frame_kind {
	const char *name;   /* "user", "kernel", "comm", "inline", or its runtime's ("jit") */
	const char *suffix; /* appended to its names in folded stacks and the summary ("_[k]"),
			     * "" for none */
	struct frame_colour colour;
	/* Among flame graph siblings of the same name: the lower rank first (builtins 0..3, a
	 * runtime's kind the next free number). */
	uint32_t rank;

	/*
	 * Locations added with a runtime reference (aggregate__ref_location()): NULL hooks for
	 * a kind that has none. get takes one (returns ref), put drops one.
	 */
	void *(*get)(void *ref);
	void (*put)(void *ref);
	/*
	 * Output time (the symbolizer, before it names these locations): the source of ref's
	 * names re-read, if this run (started at run_ns) has not read it yet, in the background.
	 */
	void (*refresh)(void *ref, uint64_t run_ns);
	/* Then once per kind, when some location needed it: a wait for those reads, up to
	 * timeout_ns (it says when some are left). */
	void (*wait)(uint64_t timeout_ns);
	/* The name of address addr (a location's) in ref as last read, or NULL when it has
	 * none there (the location is then a native frame named by its fallback). */
	const char *(*find)(void *ref, uint64_t addr);
};

/* The builtin kinds. */
extern const struct frame_kind frame_kind_user;	  /* a native frame */
extern const struct frame_kind frame_kind_kernel; /* "_[k]" */
extern const struct frame_kind frame_kind_comm;	  /* the process name at a stack's root */
extern const struct frame_kind frame_kind_inline; /* inlined into its caller: "_[i]" */

#define FRAME_USER   (&frame_kind_user)
#define FRAME_KERNEL (&frame_kind_kernel)
#define FRAME_COMM   (&frame_kind_comm)
#define FRAME_INLINE (&frame_kind_inline)

#endif /* BPFPROF_FRAME_KIND_H */

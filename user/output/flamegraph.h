/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flamegraph.h: interactive SVG flame graphs written by bpfprof itself, in the layout of
 * Brendan Gregg's flamegraph.pl (https://github.com/brendangregg/FlameGraph, re-implemented:
 * flamegraph.pl is CDDL): the root at the bottom, each frame a box as wide as its samples,
 * its callees stacked on top, sorted by name; click to zoom, search, a details line.
 */
#ifndef BPFPROF_FLAMEGRAPH_H
#define BPFPROF_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/aggregate.h"

/* A tree of frames (a prefix tree of stacks, root first) and their sample counts. */
struct flamegraph;

/* An empty flame graph. Caller frees with flamegraph__free(). NULL and errno (ENOMEM). */
struct flamegraph *flamegraph__new(void);
/* Frees fg and every name it copied. NULL is fine. */
void flamegraph__free(struct flamegraph *fg);

/*
 * Adds count samples of one stack: names[0..n) and kinds[0..n), root first (names[0] is the
 * process name, FRAME_COMM). Frames are merged by (name, kind) under the same caller, so a
 * kernel and a user function of one name stay apart. Names are copied. n == 0 counts the
 * samples at the root ("all") only. 0, -EINVAL (a NULL name) or -ENOMEM (the samples are not
 * counted then).
 */
int flamegraph__add(struct flamegraph *fg, const char *const *names,
		    const struct frame_kind *const *kinds,
		    size_t n, uint64_t count);

/* Options of flamegraph__write_svg(); zero (or a NULL struct) gives the defaults. */
struct flamegraph_opts {
	const char *title;    /* default "bpfprof" */
	const char *subtitle; /* e.g. "cpu-clock 999 Hz, 10.0 s, 9989 samples"; NULL: none */
	const char *unit;     /* what a count counts, in titles "N samples"; default "samples" */
	unsigned int width;   /* px, default 1200 */
	double min_width;     /* px: frames narrower are left out with their callees; 0: 0.1 */
};

/*
 * Writes a self-contained SVG 1.1 document (inline style and script, no network) to fp.
 *
 * Layout: 16 px rows, the root frame "all" (every sample) at the bottom, then the names[0]
 * frames, and so on up; a frame's width is count * (width - 20) / total px, its callees sorted
 * by name (strcmp, then kind) from the left. Frames narrower than min_width px are left out.
 * Each frame is one element
 *   <g data-x="X" data-w="N"><title>NAME (N UNIT, P%)</title><rect/><text>NAME..</text></g>
 * in <g id="frames" data-total="TOTAL" data-xpad="10">: X is the samples left of the frame
 * in the whole graph, N its samples, P = 100 N / TOTAL with two decimals; the <text> is NAME
 * cut to fit the box ("..": truncated). NAME is XML-escaped; control characters and invalid
 * UTF-8 become '?'. Colours (fill="rgb(R,G,B)") by kind (its frame_colour family), the shade
 * from a hash of the name, so the same function has the same colour in every graph: FRAME_USER
 * red to yellow (R 205..255, G 0..230, B 0..55), FRAME_KERNEL brown (R 160..200, G 100..145,
 * B 55..80), FRAME_INLINE teal (R 0..40, G 165..220, B 165..220), FRAME_COMM and "all" grey
 * (R = G = B, 170..200); a runtime's kind its own (JIT green, Python blue).
 *
 * Script (works off the DOM's attributes, no per-frame objects): click a frame to zoom in
 * (it and its callees widen to the full width, its callers stay full width and greyed with
 * class "parent", every other frame gets class "hide"); "Reset Zoom"; "Search", Ctrl-F or F3
 * prompt for a JavaScript regex and give the matching frames class "match" (magenta,
 * rgb(230,0,230)), with "Matched: P%" the share of the zoomed frame's samples under at least
 * one match (Escape or "Reset Search" clears it); the details line at the bottom shows the
 * title of the frame under the mouse. Text is cut as above, 7.08 px (12 * 0.59) a character.
 * The script's functions zoom(g), search(regex) (returns P, or -1 for a bad regex) and
 * reset_search() are globals of the document, for test harnesses.
 *
 * Same input, same bytes. Returns 0, -EINVAL (width under 200 px, negative min_width),
 * -EIO (fp failed) or -ENOMEM.
 */
int flamegraph__write_svg(const struct flamegraph *fg, FILE *fp, const struct flamegraph_opts *o);

#endif /* BPFPROF_FLAMEGRAPH_H */

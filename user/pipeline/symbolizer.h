/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer.h: the symbolize step. Names every location of an aggregate that has no name yet,
 * once per unique location, never per sample: kernel addresses from kallsyms, addresses in ELF
 * files from DWARF (inline frames, files, lines), else the symbol table, else
 * "module+0xSTART". The session runs it before a profile is written or an agent interval is
 * exported; the outputs only read the names.
 */
#ifndef BPFPROF_SYMBOLIZER_H
#define BPFPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/aggregate.h"
#include "symbols/ksyms.h"

/* Inline frames kept per location, the real function included. */
#define SYMBOLIZE_MAX_INLINE 16

struct symbolizer_opts {
	uint64_t debuginfod_wait_ns; /* how long a run waits for debuginfod fetches, and then for
				      * runtimes' reads (perf maps), ns (0: no wait, the agent's
				      * sampling loop) */
	bool no_dwarf;		     /* name frames from symbol tables only: no DWARF inline frames
				      * or source lines (--no-inline) */
};

struct symbolizer;

/* ks (may be NULL: kernel frames then show as addresses) is borrowed and must outlive the
 * symbolizer. Returns NULL and sets errno (ENOMEM). */
struct symbolizer *symbolizer__new(const struct ksyms *ks, const struct symbolizer_opts *opts);
/* NULL is fine. */
void symbolizer__free(struct symbolizer *sym);

/*
 * Gives lines (aggregate__set_lines()) to every location of agg that has none: first waits for
 * pending debuginfod fetches (opts.debuginfod_wait_ns; a warning when some are still running),
 * then has the references of locations a runtime names at output time (a JIT's perf maps) read
 * again and waits for them the same way (frame_kind refresh, wait); then names those from their
 * references (find), kernel locations "symbol" or "0xADDR", ELF
 * locations by their source frames (innermost first, inlined ones included) or
 * "module+0xSTART" (START: the FDE's initial location, else the address), anything else
 * "[unknown]". Does nothing (no wait) when every
 * location has lines: a second run costs a scan. Timed as STAGE_SYMBOLIZE (--stats).
 * Returns 0 or a negative errno (-ENOMEM); locations named before a failure keep their lines.
 */
int symbolizer__run(struct symbolizer *sym, struct aggregate *agg);

#endif /* BPFPROF_SYMBOLIZER_H */

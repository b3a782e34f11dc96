// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symbolizer.c: the symbolize step: names for the locations of an aggregate, once each. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "process/module_cache.h"
#include "util/stage_timer.h"
#include "symbols/debuginfod.h"
#include "symbols/module_symbols.h"
#include "pipeline/symbolizer.h"
#include "symbols/symtab.h"
#include "unwind/cfi_table.h"
#include "util/log.h"
#include "util/util.h"

struct symbolizer {
	const struct ksyms *ks;
	struct symbolizer_opts opts;
};

struct symbolizer *symbolizer__new(const struct ksyms *ks, const struct symbolizer_opts *opts)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	sym->ks = ks;
	sym->opts = *opts;
	return sym;
}

void symbolizer__free(struct symbolizer *sym)
{
	free(sym);
}

/*
 * The name of a function no symbol names: "module+0xSTART", START the function's start, i.e.
 * the initial location of the FDE covering addr (the address addr2line and objdump take), so
 * that every address in the function gets one name as a symbol would give it; addr itself
 * where no FDE covers it. A string id or a negative errno.
 */
static int64_t unnamed_function(struct aggregate *agg, struct module *e, uint64_t addr)
{
	struct cfi_table *t = cfi_table__get(e);
	uint64_t start, end;

	if (!t || cfi_table__fde_find(t, addr, &start, &end))
		start = addr;
	return aggregate__string_fmt(agg, "%s+0x%" PRIx64, e->name, start);
}

/* Fills line's names: function (NULL: unnamed) and system_name (mangled, or NULL). */
static int line_names(struct aggregate *agg, const struct agg_location *l, struct agg_line *line,
		      const char *function, const char *system_name)
{
	int64_t id;

	id = function ? aggregate__string(agg, function) : unnamed_function(agg, l->entry, l->addr);
	if (id < 0)
		return id;
	line->function = id;
	if (system_name && function && strcmp(system_name, function)) {
		id = aggregate__string(agg, system_name);
		if (id < 0)
			return id;
		line->system_name = id;
	}
	return 0;
}

/* *line for a source frame: function (and its system_name) at file:lineno (file NULL, lineno 0
 * when unknown). 0 or a negative errno. */
static int source_line(struct aggregate *agg, const struct agg_location *l, struct agg_line *line,
		       const char *function, const char *system_name, const char *file,
		       uint32_t lineno)
{
	int64_t id;
	int err;

	*line = (struct agg_line){ .line = lineno };
	err = line_names(agg, l, line, function, system_name);
	if (err || !file)
		return err;
	id = aggregate__string(agg, file);
	if (id < 0)
		return id;
	line->file = id;
	return 0;
}

/* Source frames of a location in a file without DWARF from a registered symbol source (a
 * runtime's table: a Go binary linked -ldflags='-s -w' keeps its .gopclntab), innermost first:
 * inline frames, names, files and lines. 0 when no source covers the address (a cgo binary's C
 * code), the count, or a negative errno. */
static int source_lines(struct aggregate *agg, const struct agg_location *l, struct agg_line *lines,
			size_t cap)
{
	struct src_frame src[SYMBOLIZE_MAX_INLINE];
	int n, i, err;

	n = module_symbols__source_frames(l->entry, l->addr, src,
					  cap < SYMBOLIZE_MAX_INLINE ? cap : SYMBOLIZE_MAX_INLINE);
	for (i = 0; i < n; i++) {
		err = source_line(agg, l, &lines[i], src[i].function, NULL, src[i].file,
				  src[i].line);
		if (err)
			return err;
	}
	return n > 0 ? n : 0;
}

/* Source frames of a user location in an ELF file, innermost first: from DWARF (inline
 * frames, files, lines), else a symbol source's (the same: Go's .gopclntab), else the function
 * symbol, else "module+0xSTART" (unnamed_function()).
 * Returns the count or a negative errno. */
static int elf_location_lines(struct aggregate *agg, const struct agg_location *l,
			      struct agg_line *lines, size_t cap, bool dwarf)
{
	struct src_frame src[SYMBOLIZE_MAX_INLINE];
	struct module *e = l->entry;
	const char *name, *raw = NULL;
	struct symtab *st;
	uint64_t off;
	int n, i, err;

	n = !dwarf ?
		    0 :
		    module_symbols__frames(e, l->addr, src,
					   cap < SYMBOLIZE_MAX_INLINE ? cap : SYMBOLIZE_MAX_INLINE);
	for (i = 0; i < n; i++) {
		err = source_line(agg, l, &lines[i], src[i].function ? src[i].function : "[unknown]",
				  src[i].system_name, src[i].file, src[i].line);
		if (err)
			return err;
	}
	if (n > 0)
		return n;
	n = source_lines(agg, l, lines, cap);
	if (n)
		return n;
	if (module_symbols__symtab_stale(
		    e)) /* a debuginfod fetch brought a stripped file's .symtab */
		module_symbols__drop_symtab(e);
	st = module_symbols__symtab(e);
	name = st ? symtab__find_sym(st, l->addr, &off, &raw) : NULL;
	lines[0] = (struct agg_line){};
	err = line_names(agg, l, &lines[0], name, raw);
	return err ? err : 1;
}

/* Kinds of reference locations one run needs at most (a runtime's kind each). */
#define REF_KINDS_MAX 8

/*
 * Before the locations a runtime names at output time (aggregate__ref_location()) are named:
 * the source of each reference re-read, if this run (started at run_ns) has not (kind->refresh,
 * in the background), then a wait for those reads per kind, as for debuginfod fetches
 * (opts.debuginfod_wait_ns; none in the agent's loop: its names come from the reads done by
 * then).
 */
static void ref_read(struct symbolizer *sym, struct aggregate *agg, uint64_t run_ns)
{
	const struct frame_kind *kinds[REF_KINDS_MAX];
	size_t i, k, kinds_cnt = 0, n = aggregate__locations(agg);
	const struct agg_location *l;

	for (i = 0; i < n; i++) {
		l = aggregate__loc(agg, i);
		if (l->lines_cnt || !l->ref)
			continue;
		for (k = 0; k < kinds_cnt && kinds[k] != l->kind; k++)
			;
		if (k == kinds_cnt && kinds_cnt < REF_KINDS_MAX)
			kinds[kinds_cnt++] = l->kind;
		if (l->kind->refresh)
			l->kind->refresh(l->ref, run_ns);
	}
	if (!sym->opts.debuginfod_wait_ns)
		return;
	for (k = 0; k < kinds_cnt; k++)
		if (kinds[k]->wait)
			kinds[k]->wait(sym->opts.debuginfod_wait_ns);
}

/*
 * The name of reference location id from its reference, as its last read done has it
 * (ref_read()). None there: the fallback the location was added with, as a native frame.
 */
static int ref_lines(struct aggregate *agg, uint32_t id, struct agg_line *lines)
{
	const struct agg_location *l = aggregate__loc(agg, id);
	const char *name = l->kind->find ? l->kind->find(l->ref, l->addr) : NULL;
	int64_t s;

	if (!name) {
		aggregate__set_kind(agg, id, FRAME_USER);
		lines[0] = (struct agg_line){ .function = l->name };
		return 1;
	}
	s = aggregate__string(agg, name);
	if (s < 0)
		return s;
	lines[0] = (struct agg_line){ .function = s };
	return 1;
}

/* The lines of location l: 1..SYMBOLIZE_MAX_INLINE, 0 for a location the symbolizer does not
 * name, or a negative errno. */
static int location_lines(struct symbolizer *sym, struct aggregate *agg,
			  const struct agg_location *l, struct agg_line *lines)
{
	const char *name;
	uint64_t off;
	int64_t id;

	if (l->kind == FRAME_KERNEL) {
		name = sym->ks ? ksyms__find(sym->ks, l->addr, &off) : NULL;
		id = name ? aggregate__string(agg, name) :
			    aggregate__string_fmt(agg, "0x%" PRIx64, l->addr);
		if (id < 0)
			return id;
		lines[0] = (struct agg_line){ .function = id };
		return 1;
	}
	if (l->entry)
		return elf_location_lines(agg, l, lines, SYMBOLIZE_MAX_INLINE, !sym->opts.no_dwarf);
	return 0;
}

/* Whether some location still has no lines: else a run has nothing to do. */
static bool has_unnamed(const struct aggregate *agg)
{
	size_t i, n = aggregate__locations(agg);

	for (i = 0; i < n; i++)
		if (!aggregate__loc(agg, i)->lines_cnt)
			return true;
	return false;
}

/* Locations left without lines (nothing names them) are "[unknown]". */
static int name_unknown(struct aggregate *agg)
{
	size_t i, n = aggregate__locations(agg);
	struct agg_line unknown = {};
	int64_t id;
	int err;

	for (i = 0; i < n; i++) {
		if (aggregate__loc(agg, i)->lines_cnt)
			continue;
		id = aggregate__string(agg, "[unknown]");
		if (id < 0)
			return id;
		unknown.function = id;
		err = aggregate__set_lines(agg, i, &unknown, 1);
		if (err)
			return err;
	}
	return 0;
}

int symbolizer__run(struct symbolizer *sym, struct aggregate *agg)
{
	struct agg_line lines[SYMBOLIZE_MAX_INLINE];
	size_t i, to = aggregate__locations(agg);
	uint64_t t0, run_ns = now_ns();
	int n, err;

	if (!has_unnamed(agg))
		return 0;
	/* Debug files still downloading: wait for them (bpfprof on the command line), or not at
	 * all (the agent's sampling loop). */
	if (debuginfod__wait(sym->opts.debuginfod_wait_ns))
		pr_warn("debuginfod: downloads still running; their files stay unnamed");
	ref_read(sym, agg, run_ns);
	t0 = stage_timers_on ? now_ns() : 0;
	for (i = 0; i < to; i++) {
		if (aggregate__loc(agg, i)->lines_cnt)
			continue;
		if (aggregate__loc(agg, i)->ref)
			n = ref_lines(agg, i, lines);
		else
			n = location_lines(sym, agg, aggregate__loc(agg, i), lines);
		if (n < 0)
			return n;
		if (!n)
			continue;
		err = aggregate__set_lines(agg, i, lines, n);
		if (err)
			return err;
		if (stage_timers_on) {
			uint64_t t1 = now_ns();

			stage_timer__add(STAGE_SYMBOLIZE, t1 - t0);
			t0 = t1;
		}
	}
	return name_unknown(agg);
}

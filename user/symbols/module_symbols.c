// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* module_symbols.c: the symbols step's state of one ELF file (module->symbols). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/debug_file.h"
#include "symbols/debuginfod.h"
#include "symbols/module_symbols.h"
#include "symbols/symtab.h"
#include "util/elf_read.h"
#include "util/log.h"
#include "util/util.h"

struct module_symbols {
	struct symtab *symtab; /* function symbols, built at the first lookup */
	bool symtab_tried;
	struct dwarf_lines *dwarf; /* NULL: none (yet) */
	bool dwarf_opened;	   /* a DWARF source was looked for */
	unsigned int dwarf_gen;	   /* debuginfod__generation() when it was */
	bool requested;		   /* module_symbols__request_debuginfo() saw this file */
	bool symtab_fresh;	   /* the symtab is known to include the fetched debug file */
	unsigned int symtab_gen;   /* generation at the last module_symbols__symtab_stale() */
};

static void module_symbols__free(struct module_symbols *ms)
{
	if (!ms)
		return;
	dwarf_lines__free(ms->dwarf);
	symtab__free(ms->symtab);
	free(ms);
}

/* e's state, made at the first use. NULL on allocation failure. */
static struct module_symbols *module_symbols(struct module *e)
{
	struct module_symbols *ms = e->symbols;

	if (ms)
		return ms;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return NULL;
	e->symbols = ms;
	e->symbols_free = module_symbols__free;
	return ms;
}

/* The path to look for a .gnu_debuglink next to: not the vdso's "[vdso]". */
static const char *entry_path(const struct module *e)
{
	return e->path && e->path[0] == '/' ? e->path : NULL;
}

struct symtab *module_symbols__symtab(struct module *e)
{
	struct module_symbols *ms = module_symbols(e);

	if (!ms)
		return NULL;
	if (!ms->symtab_tried) {
		ms->symtab_tried = true;
		if (module__changed(e)) {
			pr_debug("read symbols of %s: the file changed since it was opened",
				 e->path);
			return NULL;
		}
		ms->symtab = symtab__new(e->elf, entry_path(e));
		if (!ms->symtab)
			pr_debug("read symbols of %s: %s", e->path, strerror(errno));
	}
	return ms->symtab;
}

void module_symbols__drop_symtab(struct module *e)
{
	struct module_symbols *ms = e->symbols;

	if (!ms)
		return;
	symtab__free(ms->symtab);
	ms->symtab = NULL;
	ms->symtab_tried = false;
}

/* Opens the DWARF of e once, and again when a debuginfod fetch finished since e had none. */
static void module_symbols__open_dwarf(struct module_symbols *ms, struct module *e)
{
	unsigned int gen = debuginfod__generation();

	if (ms->dwarf_opened && (ms->dwarf || ms->dwarf_gen == gen))
		return;
	ms->dwarf_opened = true;
	ms->dwarf_gen = gen;
	if (!e->elf)
		return;
	/* Rewritten in place since it was opened: its sections would be another build's. */
	if (module__changed(e)) {
		pr_debug("read DWARF of %s: the file changed since it was opened", e->path);
		return;
	}
	ms->dwarf = dwarf_lines__open(e->elf, e->fd, entry_path(e), e->path);
}

int module_symbols__frames(struct module *e, uint64_t addr, struct src_frame *out, size_t cap)
{
	struct module_symbols *ms;

	if (!e || !out || !cap)
		return -EINVAL;
	ms = module_symbols(e);
	if (!ms)
		return -ENOMEM;
	module_symbols__open_dwarf(ms, e);
	if (!ms->dwarf)
		return 0;
	return dwarf_lines__frames(ms->dwarf, module_symbols__symtab(e), addr, out, cap);
}

bool module_symbols__symtab_stale(struct module *e)
{
	struct module_symbols *ms = e ? e->symbols : NULL;
	unsigned int gen = debuginfod__generation();
	const uint8_t *id;
	size_t id_sz;

	if (!ms || !ms->requested || ms->symtab_fresh || ms->symtab_gen == gen)
		return false;
	ms->symtab_gen = gen;
	id_sz = elf_read__build_id(e->elf, &id);
	if (!id_sz || !debuginfod__fetched(id, id_sz))
		return false;
	/* A table not built yet will be built with the file: nothing to drop. */
	ms->symtab_fresh = true;
	return ms->symtab_tried;
}

void module_symbols__request_debuginfo(struct module *e)
{
	struct module_symbols *ms;
	const uint8_t *id;
	size_t id_sz;
	Elf *dbg;
	int dbg_fd = -1, err;

	if (!e || !e->elf)
		return;
	ms = module_symbols(e);
	if (!ms || ms->requested)
		return;
	ms->requested = true;
	if (!debuginfod__enabled())
		return;
	id_sz = elf_read__build_id(e->elf, &id);
	if (!id_sz)
		return;
	if (debug_file__has_dwarf(e->elf))
		return;
	dbg = debug_file__open(e->elf, entry_path(e), DEBUG_FILE_DWARF, &dbg_fd);
	if (dbg) {
		elf_end(dbg);
		close(dbg_fd);
		return;
	}
	err = debuginfod__queue(id, id_sz, e->path);
	if (err)
		pr_warn("queue a debuginfod fetch for %s: %s", e->path, strerror(-err));
}

int module_symbols__source_frames(struct module *e, uint64_t addr, struct src_frame *out,
				  size_t cap)
{
	const struct symtab_source *const *src;
	size_t i, cnt;
	int n;

	src = symtab__sources(&cnt);
	for (i = 0; i < cnt; i++) {
		if (!src[i]->frames)
			continue;
		n = src[i]->frames(e, addr, out, cap);
		if (n > 0)
			return n;
	}
	return 0;
}

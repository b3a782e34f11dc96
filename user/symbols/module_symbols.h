/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * module_symbols.h: what the symbols step keeps per ELF file (struct module): its symbol
 * table, its DWARF, whether its debug file was asked of debuginfod. Made at the first use, in
 * e->symbols, and freed with the entry.
 */
#ifndef BPFPROF_MODULE_SYMBOLS_H
#define BPFPROF_MODULE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "process/module_cache.h"
#include "symbols/dwarf_lines.h"

/* The function symbols of e (symtab.h), built at the first call; NULL when they cannot be read
 * or the file changed since it was opened. Owned by e. */
struct symtab *module_symbols__symtab(struct module *e);

/*
 * The source frames at addr (ELF virtual address) of e, as dwarf_lines__frames() gives them,
 * from the DWARF of e itself or of its separate debug file, opened at the first call (again
 * after a debuginfod fetch finished, while e has none). The strings live as long as e; a name
 * from the symbol table, as long as that table (see module_symbols__symtab_stale()): copy
 * them. Returns the count (1..cap), 0 when no DWARF covers addr, -EINVAL for cap 0, or
 * -ENOMEM. Only called at output time, never per sample.
 */
int module_symbols__frames(struct module *e, uint64_t addr, struct src_frame *out, size_t cap);

/*
 * Queues a debuginfod fetch for e's build-id (debuginfod__queue()) when DEBUGINFOD_URLS is set
 * and e has no debug info at hand (no .debug_info, no installed debug file). Never blocks: it
 * may be called from the sample path, once per file (it remembers).
 */
void module_symbols__request_debuginfo(struct module *e);

/*
 * True once, when a debuginfod fetch that module_symbols__request_debuginfo(e) queued has
 * brought e's debug file after e's symbol table was built: the caller drops the table
 * (module_symbols__drop_symtab()), and the next lookup builds it again with the debug file's
 * .symtab. False otherwise (cheap: an atomic load unless some fetch finished since the last
 * call).
 */
bool module_symbols__symtab_stale(struct module *e);

/* Frees e's symbol table: the next module_symbols__symtab() builds it again. */
void module_symbols__drop_symtab(struct module *e);

/*
 * The source frames at addr (ELF virtual address) of e from the registered symbol sources
 * (symtab.h, struct symtab_source: a runtime's table, for a file without DWARF), the first
 * that covers addr: the count, or 0 when none does. Only at output time.
 */
int module_symbols__source_frames(struct module *e, uint64_t addr, struct src_frame *out,
				  size_t cap);

#endif /* BPFPROF_MODULE_SYMBOLS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* symtab.h: the function symbols of one ELF file, sorted for lookups by address. */
#ifndef BPFPROF_SYMTAB_H
#define BPFPROF_SYMTAB_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/*
 * struct symtab: the function symbols (STT_FUNC, and STT_GNU_IFUNC) of one ELF file, sorted by
 * address for binary search: from .symtab, else .dynsym, merged with the .symtab of its
 * separate debug file (debug_file__open(): installed, or fetched by debuginfod). Addresses are
 * ELF virtual addresses (st_value space), i.e. the process address minus the module's load
 * bias.
 * Aliases at one address: a GLOBAL symbol wins over WEAK over LOCAL, then a name without a
 * leading '_'. Symbols with st_size 0 extend to the next symbol (or the end of their section).
 * When no symbol covers the ELF entry point (e_entry), "_start" is synthesized over the FDE that
 * covers it in .eh_frame (stripped executables: the ABI's entry point is _start).
 * The file may be another user's: names longer than BPFPROF_SYM_NAME_MAX (util/elf_read.h) are
 * left out, at most 4M symbols are kept, and names are copied once per string in the file
 * (symbols naming one string, or suffixes of it, share one copy), so that the table's memory
 * and the time to build it stay linear in the file's size.
 */
struct symtab;

/*
 * Builds the table from elf (borrowed: only used during the call). path is the file's path as
 * seen by bpfprof (used to find a .gnu_debuglink file; may be NULL). Returns NULL and sets errno
 * on allocation failure; an ELF without symbols gives an empty table, not an error.
 */
struct symtab *symtab__new(Elf *elf, const char *path);
void symtab__free(struct symtab *st);
size_t symtab__cnt(const struct symtab *st);

/*
 * The function covering addr (ELF virtual address), demangled unless demangling is off
 * (demangle__set(), in the form demangle__set_full_names() picks), and addr's offset
 * from its start. The name is owned by st and lives until symtab__free().
 * Returns NULL when no symbol covers addr.
 */
const char *symtab__find(struct symtab *st, uint64_t addr, uint64_t *offset);
/* As symtab__find(), and in *raw (non-NULL) the symbol's name as the ELF file spells it:
 * mangled for C++ and Rust (pprof's Function.system_name). */
const char *symtab__find_sym(struct symtab *st, uint64_t addr, uint64_t *offset, const char **raw);

/* Called once per function of a symbol source: [start, start + size) in ELF virtual addresses;
 * name valid as long as the ELF, at most BPFPROF_SYM_NAME_MAX bytes. A non-zero return stops
 * the walk and is returned. */
typedef int (*symtab_source_fn)(void *ctx, uint64_t start, uint64_t size, const char *name);

struct module;
struct src_frame;

/*
 * A source of names besides the ELF symbols, registered once (symtab__add_source()): a
 * runtime's own function table, which a stripped binary keeps (Go's .gopclntab).
 */
struct symtab_source {
	/* The functions of elf, a file without a .symtab (not even its debug file's), in
	 * symtab__new(): fn for each. The count, or a negative errno: -ENOMEM fails the table,
	 * any other says the file has none. May be NULL. */
	int (*functions)(Elf *elf, symtab_source_fn fn, void *ctx);
	/* The source frames at ELF vaddr addr of e, a file whose DWARF says nothing of it, as
	 * module_symbols__frames() gives them (system_name NULL; the strings live as long as e):
	 * the count, 0 when the source does not cover addr, or a negative errno (ignored). Only
	 * at output time. May be NULL. */
	int (*frames)(struct module *e, uint64_t addr, struct src_frame *out, size_t cap);
};

/* Registers src for every later symtab__new() and module_symbols__source_frames() (borrowed:
 * static). Again: a no-op. 0, or -ENOSPC past the sources kept (4). */
int symtab__add_source(const struct symtab_source *src);
/* The registered sources, in registration order: *cnt of them. */
const struct symtab_source *const *symtab__sources(size_t *cnt);

#endif /* BPFPROF_SYMTAB_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* symbolize.h: function names of one ELF file, separate debug files, and demangling. */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <elfutils/libdw.h>
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
 * (symbolize__set_demangle(), in the form symbolize__set_full_names() picks), and addr's offset
 * from its start. The name is owned by st and lives until symtab__free().
 * Returns NULL when no symbol covers addr.
 */
const char *symtab__find(struct symtab *st, uint64_t addr, uint64_t *offset);
/* As symtab__find(), and in *raw (non-NULL) the symbol's name as the ELF file spells it:
 * mangled for C++ and Rust (pprof's Function.system_name). */
const char *symtab__find_sym(struct symtab *st, uint64_t addr, uint64_t *offset, const char **raw);

/* What a separate debug file must hold for debug_file__open() to return it (bit mask). */
enum debug_file_need {
	DEBUG_FILE_SYMTAB = 1 << 0, /* a .symtab: function names */
	DEBUG_FILE_DWARF = 1 << 1,  /* a .debug_info: source lines and inline frames */
};

/*
 * The separate debug file of elf that holds what need asks for: the one finder of symtab__new()
 * and debuginfo.c. Candidates in GDB's order ("Debugging Information in Separate Files"):
 * <debug dir>/.build-id/xx/yyyy.debug, then the .gnu_debuglink name next to path, in its
 * .debug/ and under <debug dir>/<path's directory>/, then the file debuginfod fetched for
 * elf's build-id (debuginfo__request(), once the fetch finished). A candidate must have elf's
 * class and machine, and elf's build-id when both have one. path is the file's path as seen by
 * bpfprof (NULL: no .gnu_debuglink search). Candidates are opened with file__open_regular()
 * (regular files only, never blocking). Returns the debug file opened ELF_C_READ (pread: no
 * SIGBUS if it is truncated) with its descriptor in *fdp (the caller ends both: elf_end(),
 * close()), or NULL when none is found.
 */
Elf *debug_file__open(Elf *elf, const char *path, unsigned int need, int *fdp);

/*
 * The dwz alt file (.gnu_debugaltlink) of dw, made from the Elf dbg read through dbg_fd (-1:
 * unknown), opened as debug_file__open() opens files, for dwarf_setalt(): libdw would otherwise
 * open it itself with a plain open() and mmap. Candidates: <debug dir>/.build-id/ by the link's
 * build-id, then the link's name, absolute or relative to dbg_fd's directory; a candidate must
 * have the link's build-id. Returns 0 with *altp NULL when dw has no link, 0 with *altp and
 * *fdp (the caller ends both), or -ENOENT.
 */
int debug_file__open_alt(Elf *dbg, int dbg_fd, Dwarf *dw, Elf **altp, int *fdp);

/*
 * Root of the installed separate debug files that debug_file__open() searches (build-id and
 * <dir>/<debuglink> paths), default "/usr/lib/debug"; NULL restores the default. The string is
 * copied. Tests and non-standard layouts (a container's sysroot) need another root.
 * Returns 0 or -ENAMETOOLONG.
 */
int symbolize__set_debug_dir(const char *dir);

/* Global switch for symtab__find's and debuginfo__frames()' demangling (--no-demangle).
 * Default on. */
void symbolize__set_demangle(int on);
/* The switch's current state: 1 when names are demangled. */
int symbolize__demangle_on(void);

/*
 * Global switch for the form of demangled names (--full-names), default off: the short form
 * "ns::Class<T>::method", as perf shows it (libiberty without DMGL_PARAMS: template arguments
 * kept; no parameter list, cv-qualifiers or return type). On: the full signature
 * "ns::Class<T>::method(int) const". Set it before the first lookup: symbol tables and DWARF
 * caches keep the names of their first use.
 */
void symbolize__set_full_names(int on);

/*
 * Demangles a C++ (Itanium ABI, "_Z...") or Rust (legacy "_ZN...17h<hash>E", v0 "_R...") name
 * with libiberty's cplus_demangle, in the form symbolize__set_full_names() picks. Returns a
 * malloc'd string, or NULL when name is not a mangled name (the caller keeps the original).
 */
char *symbol__demangle(const char *name);

#endif /* BPFPROF_SYMBOLIZE_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* debug_file.h: separate debug files: by build-id, by .gnu_debuglink, fetched by debuginfod,
 * and dwz alt files. */
#ifndef BPFPROF_DEBUG_FILE_H
#define BPFPROF_DEBUG_FILE_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>

/* What a separate debug file must hold for debug_file__open() to return it (bit mask). */
enum debug_file_need {
	DEBUG_FILE_SYMTAB = 1 << 0, /* a .symtab: function names */
	DEBUG_FILE_DWARF = 1 << 1,  /* a .debug_info: source lines and inline frames */
};

/*
 * The separate debug file of elf that holds what need asks for: the one finder of symtab__new()
 * and dwarf_lines. Candidates in GDB's order ("Debugging Information in Separate Files"):
 * <debug dir>/.build-id/xx/yyyy.debug, then the .gnu_debuglink name next to path, in its
 * .debug/ and under <debug dir>/<path's directory>/, then the file debuginfod fetched for
 * elf's build-id (debuginfod__queue(), once the fetch finished). A candidate must have elf's
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

/* Whether elf itself has DWARF: a .debug_info (or .zdebug_info) with contents (a stripped
 * file's or a debug file's NOBITS copy has none). */
bool debug_file__has_dwarf(Elf *elf);

/*
 * Root of the installed separate debug files that debug_file__open() searches (build-id and
 * <dir>/<debuglink> paths), default "/usr/lib/debug"; NULL restores the default. The string is
 * copied. Tests and non-standard layouts (a container's sysroot) need another root.
 * Returns 0 or -ENAMETOOLONG.
 */
int debug_file__set_dir(const char *dir);

#endif /* BPFPROF_DEBUG_FILE_H */

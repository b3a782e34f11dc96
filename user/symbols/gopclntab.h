/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gopclntab.h: the functions of a Go executable or shared object from its .gopclntab, the Go
 * runtime's own function table (runtime/symtab.go: pcHeader, functab, _func), which even a
 * binary linked with -ldflags='-s -w' (no .symtab, no DWARF) keeps: Go 1.16 and later.
 */
#ifndef BPFPROF_GOPCLNTAB_H
#define BPFPROF_GOPCLNTAB_H

#include <libelf.h>
#include <stdint.h>

/* Called once per function: [start, start + size) in ELF virtual addresses; name is valid as
 * long as elf. A non-zero return stops the walk and is returned. */
typedef int (*gopclntab_fn)(void *ctx, uint64_t start, uint64_t size, const char *name);

/*
 * Calls fn for each function of elf's .gopclntab, in address order. Returns the number of
 * functions, -ENOENT when elf has no .gopclntab, -ENOTSUP for a table of a Go version before
 * 1.16 (or an unknown magic), -EINVAL when the table is malformed (a file another user may have
 * written: every offset is checked against the section), or fn's non-zero return.
 */
int gopclntab__functions(Elf *elf, gopclntab_fn fn, void *ctx);

#endif /* BPFPROF_GOPCLNTAB_H */

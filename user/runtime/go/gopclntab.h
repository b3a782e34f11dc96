/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gopclntab.h: the functions of a Go executable or shared object from its .gopclntab, the Go
 * runtime's own function table (runtime/symtab.go: pcHeader, functab, _func), which even a
 * binary linked with -ldflags='-s -w' (no .symtab, no DWARF) keeps: Go 1.16 and later.
 */
#ifndef BPFPROF_GOPCLNTAB_H
#define BPFPROF_GOPCLNTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

/* Called once per function: [start, start + size) in ELF virtual addresses; name is valid as
 * long as elf, at most BPFPROF_SYM_NAME_MAX bytes (util/elf_read.h: a function whose name is
 * longer, or unterminated, is left out). A non-zero return stops the walk and is returned. */
typedef int (*gopclntab_fn)(void *ctx, uint64_t start, uint64_t size, const char *name);

/*
 * Calls fn for each function of elf's .gopclntab, in address order: at most the bound's bytes
 * read per function's name, so the cost is linear in the table's size whatever it holds.
 * Returns the number of functions, -ENOENT when elf has no .gopclntab, -ENOTSUP for a table of
 * a Go version before 1.16 (or an unknown magic), -EINVAL when the table is malformed (a file
 * another user may have written: every offset is checked against the section), or fn's
 * non-zero return.
 */
int gopclntab__functions(Elf *elf, gopclntab_fn fn, void *ctx);

/*
 * Whether the file at path (opened as file__open_regular() does: a regular file, not followed
 * when it is a symlink only if path says so) is an ELF file with a .gopclntab: a Go binary
 * gopclntab__new() reads. Reads its section headers only.
 */
bool gopclntab__file_has(const char *path);

/* A file's table, parsed once for unwinding (its data stays elf's: elf must outlive it). */
struct gopclntab;

/* NULL with errno: ENOENT (no .gopclntab), ENOTSUP, EINVAL, ENOMEM. */
struct gopclntab *gopclntab__new(Elf *elf);
void gopclntab__free(struct gopclntab *t);

/* What a Go function's frame is at one pc (runtime/symtab.go: _func, its pcsp table). */
struct go_frame {
	uint64_t start;	  /* the function's entry, ELF vaddr */
	int32_t sp_delta; /* bytes between sp and the return address at pc (pcsp's value) */
	bool top;	  /* the first frame of a goroutine or thread (funcFlag_TOPFRAME:
			   * runtime.goexit, mstart, rt0_go): nothing to unwind above it */
	bool sp_write;	  /* it switches stacks (funcFlag_SPWRITE: systemstack, mcall,
			   * morestack...): its caller is not found from sp */
	const char *name; /* with sp_write, its name (valid as long as the ELF); else NULL */
};

/* The frame of the function covering ELF vaddr pc. 0, or -ENOENT when no function covers pc,
 * or its tables say nothing of it (or are malformed). */
int gopclntab__frame(const struct gopclntab *t, uint64_t pc, struct go_frame *f);

/*
 * The source position of ELF vaddr pc (a call: pass a return address - 1): *file, the path
 * the Go toolchain recorded (valid as long as the ELF), and *line, from the function's pcfile
 * and pcln tables and the compilation unit's file table (runtime/symtab.go: funcfile,
 * funcline1): in code inlined into the function, the inlined function's position, as in the
 * DWARF line table. 0, or -ENOENT when no function covers pc or its tables say nothing of it.
 */
int gopclntab__line(const struct gopclntab *g, uint64_t pc, const char **file, uint32_t *line);

/* A source frame at a pc: a function, and its position there (file NULL, line 0 if unknown).
 * Strings valid as long as the ELF. */
struct go_src_frame {
	const char *name;
	const char *file;
	uint32_t line;
};

/*
 * The source frames at ELF vaddr pc (a call: pass a return address - 1), innermost first, at
 * most cap: the functions inlined there from the function's inline tree (_FUNCDATA_InlTree in
 * go.func.*, Go 1.18+: found through the module's moduledata at the first call, then read from
 * the file a few bytes at a time), each at its position (the innermost at pc's, the others at
 * their call site's), then the function itself, as the Go runtime's tracebacks expand them.
 * Without the inline tree (Go 1.16, 1.17, moduledata not found), the function alone. Returns
 * the count, or -ENOENT when no function covers pc.
 */
int gopclntab__frames(struct gopclntab *g, uint64_t pc, struct go_src_frame *frames, size_t cap);

#endif /* BPFPROF_GOPCLNTAB_H */

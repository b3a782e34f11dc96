/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* dwarf_lines.h: inline frames and source lines of addresses, from DWARF (libdw), cached per
 * file and address. */
#ifndef BPFPROF_DWARF_LINES_H
#define BPFPROF_DWARF_LINES_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

/* One source-level frame at an address: innermost first. */
struct src_frame {
	const char *function;	 /* linkage name, demangled unless --no-demangle; owned by the
				 * file's cache */
	const char *system_name; /* the same name as the file spells it (mangled), or NULL */
	const char *file;	 /* source file, or NULL */
	uint32_t line;		 /* 0 when unknown */
};

/* The DWARF of one ELF file and the frames looked up in it. */
struct dwarf_lines;

/*
 * Opens the DWARF of elf (read through elf_fd, -1: unknown): its own, else its separate debug
 * file's (debug_file__open(): build-id path, .gnu_debuglink next to path when path is not NULL,
 * then debuginfod once a fetch finished), with its dwz alt file opened our way
 * (debug_file__open_alt(): libdw would use open() and mmap). name names the file in debug
 * messages. Returns NULL with errno ENOENT when no usable DWARF is found, ENOMEM. elf must
 * outlive the result; free it with dwarf_lines__free().
 */
struct dwarf_lines *dwarf_lines__open(Elf *elf, int elf_fd, const char *path, const char *name);
void dwarf_lines__free(struct dwarf_lines *dwl);

/*
 * The source frames at addr (ELF virtual address): out[0] is the innermost function (an
 * inlined one when addr is in inlined code) with addr's own file:line; out[i > 0] is the
 * function that inlined out[i-1], with the call site's file:line (DW_AT_call_file,
 * DW_AT_call_line); the last is the real (out-of-line) function.
 *
 * As eu-addr2line -i does it: the CU by dwarf_addrdie() (else by the CUs' own ranges: clang and
 * rustc emit no .debug_aranges), dwarf_getscopes(), dwarf_getscopes_die() and
 * dwarf_getsrc_die(). Names: DW_AT_linkage_name, else DW_AT_name, through DW_AT_abstract_origin
 * and DW_AT_specification. The real function takes the name of st (the file's symbol table, may
 * be NULL) when that symbol starts inside it, so aliases and .cold or .constprop parts keep the
 * names they have without DWARF. A line without a DW_TAG_subprogram (assembly) gives one frame
 * named by st. A chain deeper than cap loses its innermost frames.
 *
 * Cached per address. The strings live as long as dwl; a name from st, as long as st: copy
 * them. Returns the count (1..cap), 0 when no DWARF covers addr (the caller then uses the
 * symtab), -EINVAL for cap 0, or -ENOMEM.
 */
int dwarf_lines__frames(struct dwarf_lines *dwl, struct symtab *st, uint64_t addr,
			struct src_frame *out, size_t cap);

#endif /* BPFPROF_DWARF_LINES_H */

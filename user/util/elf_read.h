/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* elf_read.h: small readers of ELF files that the symbols and unwind steps share. */
#ifndef BPFPROF_ELF_READ_H
#define BPFPROF_ELF_READ_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* Longest name read from a file's string table (a symbol's, a Go function's or file's), bytes
 * without the NUL: longer ones are not real names, and the bound keeps a lookup's cost, and
 * what a table of such names can make bpfprof copy, independent of the table's size. */
#define BPFPROF_SYM_NAME_MAX 4096

/* Longest build-id kept, bytes (GNU ld's sha1 gives 20, md5 16, --build-id=0x... any). */
#define BPFPROF_BUILD_ID_MAX 64

/* The first section named name (any type; compressed or not), or NULL (also when elf has no
 * section name table). */
Elf_Scn *elf_read__section(Elf *elf, const char *name);

/* The first section of type (SHT_SYMTAB or SHT_DYNSYM) whose data and string table are usable
 * (not compressed, not empty), with that data in *syms and *strs; NULL when there is none. */
Elf_Scn *elf_read__symbols(Elf *elf, uint32_t type, Elf_Data **syms, Elf_Data **strs);

/*
 * The NT_GNU_BUILD_ID of elf, as libdw finds it (dwelf_elf_gnu_build_id(): the SHT_NOTE
 * sections, or the PT_NOTE segments of a file without section headers). Points *id at it
 * (valid as long as elf) and returns its length: 1..BPFPROF_BUILD_ID_MAX, else 0 (none, or
 * longer).
 */
size_t elf_read__build_id(Elf *elf, const uint8_t **id);

/*
 * The name at offset off of a string table of sz bytes (tab may be any file's: nothing is read
 * outside it): NULL when off is outside the table, or the name is empty or not terminated
 * within BPFPROF_SYM_NAME_MAX bytes. Its length in *len (unless len is NULL). Reads at most
 * BPFPROF_SYM_NAME_MAX + 1 bytes, whatever the table holds.
 */
const char *elf_read__name(const void *tab, size_t sz, uint64_t off, size_t *len);

#endif /* BPFPROF_ELF_READ_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* elf_read.h: small readers of ELF files that the symbols and unwind steps share. */
#ifndef BPFPROF_ELF_READ_H
#define BPFPROF_ELF_READ_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

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

#endif /* BPFPROF_ELF_READ_H */

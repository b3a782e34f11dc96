// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* elf_read.c: small readers of ELF files that the symbols and unwind steps share. */
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <string.h>
#include "util/elf_read.h"

Elf_Scn *elf_read__section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;
	const char *s;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

Elf_Scn *elf_read__symbols(Elf *elf, uint32_t type, Elf_Data **syms, Elf_Data **strs)
{
	Elf_Scn *scn = NULL, *str_scn;
	GElf_Shdr shdr, str_shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		if (shdr.sh_flags & SHF_COMPRESSED)
			continue;
		str_scn = elf_getscn(elf, shdr.sh_link);
		if (!str_scn || !gelf_getshdr(str_scn, &str_shdr) ||
		    str_shdr.sh_type != SHT_STRTAB || (str_shdr.sh_flags & SHF_COMPRESSED))
			continue;
		*syms = elf_getdata(scn, NULL);
		*strs = elf_getdata(str_scn, NULL);
		if (!*syms || !(*syms)->d_buf || !*strs || !(*strs)->d_buf || !(*strs)->d_size)
			continue;
		return scn;
	}
	return NULL;
}

size_t elf_read__build_id(Elf *elf, const uint8_t **id)
{
	const void *bits;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &bits);

	if (len <= 0 || len > BPFPROF_BUILD_ID_MAX)
		return 0;
	*id = bits;
	return len;
}

const char *elf_read__name(const void *tab, size_t sz, uint64_t off, size_t *len)
{
	const char *s, *nul;
	size_t n;

	if (!tab || off >= sz)
		return NULL;
	s = (const char *)tab + off;
	n = sz - off < BPFPROF_SYM_NAME_MAX + 1 ? sz - off : BPFPROF_SYM_NAME_MAX + 1;
	nul = memchr(s, '\0', n);
	if (!nul || nul == s)
		return NULL;
	if (len)
		*len = nul - s;
	return s;
}

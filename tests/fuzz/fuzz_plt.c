// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_plt.c: libFuzzer target of symbols/symtab.c, the symbol table of one ELF file as
 * symtab__new() builds it: .symtab or .dynsym, a .gopclntab without them, and the PLT's names
 * (.rela.plt's relocations as "name@plt" over .plt or .plt.sec, .plt, .plt.sec and .plt.got by
 * their section's name); then every PLT section's entries and a few of .text's addresses looked
 * up, names demangled (a PLT entry's keeps its "@plt").
 *
 * Input: a whole ELF file, read from memory (elf_memory()). Seeds: tests/fuzz/seeds/plt, small
 * builds of tests/fuzz/plt_seed.c in each PLT layout (tests/fuzz/gen_plt_seeds.sh).
 */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/demangle.h"
#include "symbols/symtab.h"

/* Addresses looked up per section, at most. */
#define LOOKUPS_MAX 64

static const char *const sections[] = { ".plt", ".plt.sec", ".plt.got", ".text" };

/* Looks up LOOKUPS_MAX addresses of section scn, 16 bytes apart (a PLT entry), and its last. */
static void lookup_section(struct symtab *st, const GElf_Shdr *sh)
{
	const char *name, *raw;
	uint64_t off, i;

	for (i = 0; i <= LOOKUPS_MAX; i++) {
		uint64_t addr = i < LOOKUPS_MAX ? sh->sh_addr + 16 * i : sh->sh_addr + sh->sh_size - 1;

		if (i < LOOKUPS_MAX && 16 * i >= sh->sh_size)
			continue;
		name = symtab__find_sym(st, addr, &off, &raw);
		/* Every name read whole: ASan sees one not terminated. */
		if (name && strlen(name) + strlen(raw) == SIZE_MAX)
			abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	elf_version(EV_CURRENT);
	demangle__set(1);
	/* A build-id must not send the fuzzer to a debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t sz)
{
	struct symtab *st = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, i;
	const char *name;
	GElf_Shdr sh;
	char *img;
	Elf *elf;

	/* libelf may convert the image in place: a copy, aligned as a file's mapping is. */
	img = malloc(sz ? sz : 1);
	if (!img)
		return 0;
	memcpy(img, in, sz);
	elf = elf_memory(img, sz);
	if (!elf)
		goto cleanup;
	st = symtab__new(elf, NULL);
	if (!st || elf_getshdrstrndx(elf, &shstrndx))
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
			if (!strcmp(name, sections[i]))
				lookup_section(st, &sh);
	}
cleanup:
	symtab__free(st);
	elf_end(elf);
	free(img);
	return 0;
}

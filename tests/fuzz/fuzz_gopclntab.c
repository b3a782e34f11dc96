// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_gopclntab.c: libFuzzer target of runtime/go/gopclntab.c, through its public API as
 * symtab.c and the unwinder use it: the functions of a .gopclntab (gopclntab__functions()),
 * then the table opened for unwinding (gopclntab__new()) and each function's entry, middle and
 * last byte looked up: its frame (pcsp decoding, gopclntab__frame()), its source position
 * (pcfile, pcln, cutab, filetab: gopclntab__line()) and its inline frames (pcdata, the
 * moduledata found in .noptrdata, go.func.*'s inline tree: gopclntab__frames()).
 *
 * Input: a little-endian u32 n, n bytes of .gopclntab (at FUZZ_PCLN_ADDR), then the rest,
 * .noptrdata (at FUZZ_DATA_ADDR: a moduledata and the inline trees), wrapped into a minimal
 * ELF (x86-64, with a .text) held in memory. Seeds: tests/fuzz/seeds/gopclntab, made by
 * tests/fuzz/gen_gopclntab_seed.py from a real Go binary.
 */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/go/gopclntab.h"

#define FUZZ_PCLN_ADDR 0x600000ull
#define FUZZ_DATA_ADDR 0x700000ull
#define FUZZ_TEXT_ADDR 0x401000ull
/* Functions whose pcs are looked up, at most (the cost of one input stays bounded). */
#define FUNCS_MAX 64

struct funcs {
	uint64_t start[FUNCS_MAX], size[FUNCS_MAX];
	size_t cnt;
	size_t name_bytes; /* every name read whole: ASan sees a read past the section */
};

static int collect(void *ctx, uint64_t start, uint64_t size, const char *name)
{
	struct funcs *fs = ctx;

	fs->name_bytes += strlen(name);
	if (fs->cnt < FUNCS_MAX) {
		fs->start[fs->cnt] = start;
		fs->size[fs->cnt++] = size;
	}
	return 0;
}

static const char shstrtab[] = "\0.text\0.gopclntab\0.noptrdata\0.shstrtab";

/* A section header of the image: name at its offset in shstrtab. */
static void shdr(Elf64_Shdr *sh, const char *name, uint32_t type, uint64_t flags, uint64_t addr,
		 uint64_t off, uint64_t size)
{
	const char *at = shstrtab;

	while (strcmp(at, name))
		at += strlen(at) + 1;
	*sh = (Elf64_Shdr){ .sh_name = at - shstrtab, .sh_type = type, .sh_flags = flags,
			    .sh_addr = addr, .sh_offset = off, .sh_size = size, .sh_addralign = 8 };
}

/* An ELF image of the two sections' bytes (malloc'ed, *len bytes). */
static char *elf_image(const uint8_t *pcln, size_t pcln_sz, const uint8_t *data, size_t data_sz,
		       size_t *len)
{
	size_t pcln_off = sizeof(Elf64_Ehdr), data_off = (pcln_off + pcln_sz + 7) & ~7ul;
	size_t str_off = (data_off + data_sz + 7) & ~7ul;
	size_t sh_off = (str_off + sizeof(shstrtab) + 7) & ~7ul;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	char *img;

	*len = sh_off + 5 * sizeof(Elf64_Shdr);
	img = calloc(1, *len);
	if (!img)
		return NULL;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	memcpy(img + pcln_off, pcln, pcln_sz);
	memcpy(img + data_off, data, data_sz);
	memcpy(img + str_off, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(img + sh_off);
	/* .text: NOBITS, its address only (a table whose textStart is 0 takes it). */
	shdr(&sh[1], ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, FUZZ_TEXT_ADDR, pcln_off,
	     0x100000);
	shdr(&sh[2], ".gopclntab", SHT_PROGBITS, SHF_ALLOC, FUZZ_PCLN_ADDR, pcln_off, pcln_sz);
	shdr(&sh[3], ".noptrdata", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, FUZZ_DATA_ADDR, data_off,
	     data_sz);
	shdr(&sh[4], ".shstrtab", SHT_STRTAB, 0, 0, str_off, sizeof(shstrtab));
	return img;
}

/* Looks pc up every way; every string returned is read whole. */
static size_t lookup(struct gopclntab *g, uint64_t pc)
{
	struct go_src_frame frames[8];
	struct go_frame f;
	const char *file;
	uint32_t line;
	size_t bytes = 0;
	int i, n;

	if (!gopclntab__frame(g, pc, &f) && f.name)
		bytes += strlen(f.name);
	if (!gopclntab__line(g, pc, &file, &line))
		bytes += strlen(file);
	n = gopclntab__frames(g, pc, frames, 8);
	if (n > 8)
		abort(); /* more frames than room */
	for (i = 0; i < n; i++)
		bytes += strlen(frames[i].name) + (frames[i].file ? strlen(frames[i].file) : 0);
	return bytes;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	elf_version(EV_CURRENT);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t sz)
{
	struct funcs fs = {};
	struct gopclntab *g;
	size_t len, i;
	uint32_t n;
	char *img;
	Elf *elf;

	if (sz < 4)
		return 0;
	memcpy(&n, in, 4);
	in += 4;
	sz -= 4;
	if (n > sz)
		n = sz;
	img = elf_image(in, n, in + n, sz - n, &len);
	if (!img)
		return 0;
	elf = elf_memory(img, len);
	if (!elf)
		goto cleanup;
	gopclntab__functions(elf, collect, &fs);
	g = gopclntab__new(elf);
	for (i = 0; g && i < fs.cnt; i++) {
		lookup(g, fs.start[i]);
		lookup(g, fs.start[i] + fs.size[i] / 2);
		lookup(g, fs.start[i] + fs.size[i] - 1);
	}
	gopclntab__free(g);
	elf_end(elf);
cleanup:
	free(img);
	return 0;
}

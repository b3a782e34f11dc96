// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gopclntab.c: Go's function table (.gopclntab) read for function names and ranges. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include "symbols/gopclntab.h"
#include "util/elf_read.h"

/* pcHeader.magic (runtime/symtab.go) of the layouts read here. */
#define GO_MAGIC_116 0xfffffffau /* Go 1.16, 1.17: functab entries of two uintptrs */
#define GO_MAGIC_118 0xfffffff0u /* Go 1.18, 1.19: textStart, entries of two uint32 offsets */
#define GO_MAGIC_120 0xfffffff1u /* Go 1.20 and later: the same header and functab */

/* The table, its header's fields, as one Go version lays them out. */
struct pcln {
	const uint8_t *p;
	size_t sz;
	uint32_t magic;
	uint64_t nfunc;
	uint64_t text_start; /* 1.18+: the base of functab's entry offsets */
	uint64_t funcname;   /* offset of funcnametab from the header */
	uint64_t functab;    /* offset of the function table (pclnOffset) */
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The header's fields (little-endian, 8-byte pointers: x86-64, arm64). */
static int header_read(struct pcln *t, Elf *elf)
{
	Elf_Scn *text;
	GElf_Shdr sh;

	if (t->sz < 16)
		return -EINVAL;
	t->magic = rd32(t->p);
	if (t->magic != GO_MAGIC_116 && t->magic != GO_MAGIC_118 && t->magic != GO_MAGIC_120)
		return -ENOTSUP;
	if (t->p[4] || t->p[5] || t->p[7] != 8)
		return -ENOTSUP; /* pad1, pad2; ptrSize */
	t->nfunc = rd64(t->p + 8);
	if (t->magic == GO_MAGIC_116) {
		if (t->sz < 64)
			return -EINVAL;
		t->funcname = rd64(t->p + 24);
		t->functab = rd64(t->p + 56);
	} else {
		if (t->sz < 72)
			return -EINVAL;
		t->text_start = rd64(t->p + 24);
		t->funcname = rd64(t->p + 32);
		t->functab = rd64(t->p + 64);
		/* A position-independent binary may leave it to a relocation: .text's address. */
		text = t->text_start ? NULL : elf_read__section(elf, ".text");
		if (text && gelf_getshdr(text, &sh))
			t->text_start = sh.sh_addr;
	}
	if (t->funcname >= t->sz || t->functab >= t->sz || t->nfunc > t->sz)
		return -EINVAL;
	return 0;
}

/* Function i: its range and name; false when its entry is malformed or empty. */
static bool function_read(const struct pcln *t, uint64_t i, uint64_t *start, uint64_t *end,
			  const char **name)
{
	uint64_t esz = t->magic == GO_MAGIC_116 ? 16 : 8, e = t->functab + i * esz, fo, f;
	int32_t nameoff;
	const char *s;

	if (e + 2 * esz > t->sz)
		return false;
	if (t->magic == GO_MAGIC_116) {
		*start = rd64(t->p + e);
		fo = rd64(t->p + e + 8);
		*end = rd64(t->p + e + 16);
		f = t->functab + fo + 8; /* _func: entry uintptr, then nameoff */
	} else {
		*start = t->text_start + rd32(t->p + e);
		fo = rd32(t->p + e + 4);
		*end = t->text_start + rd32(t->p + e + 8);
		f = t->functab + fo + 4; /* _func: entryOff uint32, then nameOff */
	}
	if (fo >= t->sz || f + 4 > t->sz || *end <= *start)
		return false;
	memcpy(&nameoff, t->p + f, sizeof(nameoff));
	if (nameoff < 0 || t->funcname + (uint64_t)nameoff >= t->sz)
		return false;
	s = (const char *)t->p + t->funcname + nameoff;
	if (!memchr(s, '\0', t->sz - (t->funcname + nameoff)) || !*s)
		return false;
	*name = s;
	return true;
}

int gopclntab__functions(Elf *elf, gopclntab_fn fn, void *ctx)
{
	Elf_Scn *scn = elf_read__section(elf, ".gopclntab");
	struct pcln t = {};
	uint64_t i, start, end;
	const char *name;
	Elf_Data *d;
	int err, n = 0;

	if (!scn)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return -EINVAL;
	t.p = d->d_buf;
	t.sz = d->d_size;
	err = header_read(&t, elf);
	if (err)
		return err;
	for (i = 0; i < t.nfunc; i++) {
		if (!function_read(&t, i, &start, &end, &name))
			continue;
		err = fn(ctx, start, end - start, name);
		if (err)
			return err;
		n++;
	}
	return n;
}

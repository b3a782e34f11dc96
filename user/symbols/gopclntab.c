// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gopclntab.c: Go's function table (.gopclntab) read for function names and ranges. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "symbols/gopclntab.h"
#include "util/elf_read.h"
#include "util/file.h"

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
	uint64_t pctab;	     /* offset of pctab (the pc-value tables) */
	uint64_t functab;    /* offset of the function table (pclnOffset) */
	uint64_t cutab;	     /* offset of cutab: per compilation unit, its files' offsets */
	uint64_t filetab;    /* offset of filetab: the file names */
	uint8_t min_lc;	     /* pc quantum: pc deltas are in these units */
};

struct gopclntab {
	struct pcln t;
};

/* _func.flag (Go 1.18+, runtime/symtab.go funcFlag) */
#define GO_FUNC_TOPFRAME 0x1
#define GO_FUNC_SPWRITE	 0x2

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
	t->min_lc = t->p[6] ? t->p[6] : 1;
	if (t->magic == GO_MAGIC_116) {
		if (t->sz < 64)
			return -EINVAL;
		t->funcname = rd64(t->p + 24);
		t->cutab = rd64(t->p + 32);
		t->filetab = rd64(t->p + 40);
		t->pctab = rd64(t->p + 48);
		t->functab = rd64(t->p + 56);
	} else {
		if (t->sz < 72)
			return -EINVAL;
		t->text_start = rd64(t->p + 24);
		t->funcname = rd64(t->p + 32);
		t->cutab = rd64(t->p + 40);
		t->filetab = rd64(t->p + 48);
		t->pctab = rd64(t->p + 56);
		t->functab = rd64(t->p + 64);
		/* A position-independent binary may leave it to a relocation: .text's address. */
		text = t->text_start ? NULL : elf_read__section(elf, ".text");
		if (text && gelf_getshdr(text, &sh))
			t->text_start = sh.sh_addr;
	}
	if (t->funcname >= t->sz || t->functab >= t->sz || t->pctab >= t->sz || t->nfunc > t->sz ||
	    t->cutab >= t->sz || t->filetab >= t->sz)
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

struct gopclntab *gopclntab__new(Elf *elf)
{
	Elf_Scn *scn = elf_read__section(elf, ".gopclntab");
	struct gopclntab *g;
	Elf_Data *d;
	int err;

	if (!scn) {
		errno = ENOENT;
		return NULL;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->t.p = d->d_buf;
	g->t.sz = d->d_size;
	err = header_read(&g->t, elf);
	if (err) {
		free(g);
		errno = -err;
		return NULL;
	}
	return g;
}

bool gopclntab__file_has(const char *path)
{
	bool has = false;
	Elf *elf;
	int fd;

	fd = file__open_regular(path, 0, NULL);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		has = elf_kind(elf) == ELF_K_ELF && elf_read__section(elf, ".gopclntab");
		elf_end(elf);
	}
	close(fd);
	return has;
}

void gopclntab__free(struct gopclntab *t)
{
	free(t);
}

/* Entry i's start, or UINT64_MAX past the table. */
static uint64_t entry_start(const struct pcln *t, uint64_t i)
{
	uint64_t esz = t->magic == GO_MAGIC_116 ? 16 : 8, e = t->functab + i * esz;

	if (e + esz > t->sz)
		return UINT64_MAX;
	return t->magic == GO_MAGIC_116 ? rd64(t->p + e) : t->text_start + rd32(t->p + e);
}

/* An unsigned LEB128 varint at *off (runtime/symtab.go readvarint); false past the end. */
static bool uvarint(const struct pcln *t, uint64_t *off, uint32_t *v)
{
	uint32_t shift = 0, b;

	*v = 0;
	while (*off < t->sz && shift < 35) {
		b = t->p[(*off)++];
		*v |= (b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/* The value of the pc-value table at off for pc in a function entered at entry: -1 start,
 * zig-zag deltas of the value, then pc deltas in pc quanta (runtime/symtab.go pcvalue, step). */
static int pcvalue(const struct pcln *t, uint64_t off, uint64_t entry, uint64_t pc, int32_t *val)
{
	uint64_t at = entry;
	uint32_t uv, pcd;
	int32_t v = -1;
	int i;

	for (i = 0; i < 100000; i++) {
		if (!uvarint(t, &off, &uv) || (uv == 0 && i > 0))
			return -ENOENT;
		v += (uv & 1) ? (int32_t)~(uv >> 1) : (int32_t)(uv >> 1);
		if (!uvarint(t, &off, &pcd))
			return -ENOENT;
		at += (uint64_t)pcd * t->min_lc;
		if (pc < at) {
			*val = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* The _func of the function covering pc: its offset in the table (*func, 48 bytes readable)
 * and index (*idx). 0 or -ENOENT. */
static int func_find(const struct pcln *t, uint64_t pc, uint64_t *func, uint64_t *idx)
{
	uint64_t lo = 0, hi = t->nfunc, mid, esz = t->magic == GO_MAGIC_116 ? 16 : 8, fo;

	if (!t->nfunc || pc < entry_start(t, 0) || pc >= entry_start(t, t->nfunc))
		return -ENOENT;
	while (hi - lo > 1) { /* the last entry whose start <= pc */
		mid = lo + (hi - lo) / 2;
		if (entry_start(t, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	fo = t->magic == GO_MAGIC_116 ? rd64(t->p + t->functab + lo * esz + 8) :
					rd32(t->p + t->functab + lo * esz + 4);
	if (fo >= t->sz || t->functab + fo + 48 > t->sz)
		return -ENOENT;
	*func = t->functab + fo;
	*idx = lo;
	return 0;
}

int gopclntab__frame(const struct gopclntab *g, uint64_t pc, struct go_frame *f)
{
	const struct pcln *t = &g->t;
	uint64_t lo, func;
	uint32_t pcsp;
	uint8_t flag = 0;

	if (func_find(t, pc, &func, &lo))
		return -ENOENT;
	/* _func: pcsp at 20 (1.16, 1.17: after entry uintptr, nameoff, args, deferreturn) or 16;
	 * flag (1.18+) at 37, or 41 from 1.20 (startLine before funcID). */
	pcsp = rd32(t->p + func + (t->magic == GO_MAGIC_116 ? 20 : 16));
	if (t->magic == GO_MAGIC_118)
		flag = t->p[func + 37];
	else if (t->magic == GO_MAGIC_120)
		flag = t->p[func + 41];
	f->start = entry_start(t, lo);
	f->top = flag & GO_FUNC_TOPFRAME;
	f->sp_write = flag & GO_FUNC_SPWRITE;
	f->name = NULL;
	if (f->sp_write) {
		uint64_t s, e;

		if (!function_read(t, lo, &s, &e, &f->name))
			f->name = NULL;
	}
	if (!pcsp || t->pctab + pcsp >= t->sz)
		return -ENOENT;
	return pcvalue(t, t->pctab + pcsp, f->start, pc, &f->sp_delta);
}

/* _PCDATA_InlTreeIndex (runtime/symtab.go): >= 0 where pc runs code inlined into the function. */
#define GO_PCDATA_INL_TREE_INDEX 2

/*
 * Whether pc of the function at func (its entry start) runs an inlined call: then pcfile and
 * pcln give the inlined function's position, not the function's. The pcdata offsets follow
 * _func's fixed part: 44 bytes (1.16, 1.17, 1.20+) or 40 (1.18, 1.19); npcdata at 32 (1.16)
 * or 28.
 */
static bool inlined(const struct pcln *t, uint64_t func, uint64_t start, uint64_t pc)
{
	uint64_t fixed = t->magic == GO_MAGIC_118 ? 40 : 44, at;
	uint32_t npcdata = rd32(t->p + func + (t->magic == GO_MAGIC_116 ? 32 : 28)), off;
	int32_t idx;

	if (npcdata <= GO_PCDATA_INL_TREE_INDEX)
		return false;
	at = func + fixed + 4 * GO_PCDATA_INL_TREE_INDEX;
	if (at + 4 > t->sz)
		return true; /* unsure: no position */
	off = rd32(t->p + at);
	if (!off)
		return false;
	if (t->pctab + off >= t->sz || pcvalue(t, t->pctab + off, start, pc, &idx))
		return true;
	return idx >= 0;
}

int gopclntab__line(const struct gopclntab *g, uint64_t pc, const char **file, uint32_t *line)
{
	const struct pcln *t = &g->t;
	uint64_t lo, func, start, cu, foff, name;
	uint32_t pcfile, pcln;
	int32_t fileno, ln;
	const char *s;

	if (func_find(t, pc, &func, &lo))
		return -ENOENT;
	/* _func: pcfile, pcln right after pcsp; cuOffset after npcdata (runtime/runtime2.go). */
	if (t->magic == GO_MAGIC_116) {
		pcfile = rd32(t->p + func + 24);
		pcln = rd32(t->p + func + 28);
		cu = rd32(t->p + func + 36);
	} else {
		pcfile = rd32(t->p + func + 20);
		pcln = rd32(t->p + func + 24);
		cu = rd32(t->p + func + 32);
	}
	start = entry_start(t, lo);
	if (inlined(t, func, start, pc))
		return -ENOENT;
	if (!pcfile || !pcln || t->pctab + pcfile >= t->sz || t->pctab + pcln >= t->sz ||
	    pcvalue(t, t->pctab + pcfile, start, pc, &fileno) ||
	    pcvalue(t, t->pctab + pcln, start, pc, &ln) || fileno < 0 || ln <= 0)
		return -ENOENT;
	/* The file: cutab[cuOffset + fileno], an offset into filetab (runtime.funcfile). */
	foff = t->cutab + (cu + (uint64_t)fileno) * 4;
	if (cu > t->sz || foff + 4 > t->sz)
		return -ENOENT;
	name = rd32(t->p + foff);
	if (name == UINT32_MAX || t->filetab + name >= t->sz)
		return -ENOENT;
	s = (const char *)t->p + t->filetab + name;
	if (!memchr(s, '\0', t->sz - (t->filetab + name)) || !*s)
		return -ENOENT;
	*file = s;
	*line = (uint32_t)ln;
	return 0;
}

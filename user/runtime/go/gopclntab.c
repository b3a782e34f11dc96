// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gopclntab.c: Go's function table (.gopclntab) read for function names and ranges. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "runtime/go/gopclntab.h"
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

/* moduledata.gofunc's offset (runtime/symtab.go moduledata: Go 1.18, 1.19; 1.20 added covctrs,
 * ecovctrs before it) and text's, in both. */
#define GO_MD_GOFUNC_118 304
#define GO_MD_GOFUNC_120 320
#define GO_MD_TEXT	 176

struct gopclntab {
	struct pcln t;
	Elf *elf;
	uint64_t pcln_addr; /* .gopclntab's address */
	/* go.func.* (moduledata.gofunc), the base of funcdata offsets (1.18+): the inline trees
	 * are there, read a few bytes at a time (elf_getdata_rawchunk(): .rodata stays on disk,
	 * it is 60% of the table's size) from the file offset gofunc_off, gofunc_sz bytes to its
	 * section's end. Looked for at the first inline lookup (gofunc_tried); gofunc_sz 0 when
	 * it was not found (no inline frames). */
	bool gofunc_tried;
	uint64_t gofunc_off;
	uint64_t gofunc_sz;
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

/*
 * A name in funcnametab at nameoff, or NULL when out of the table, empty, or not terminated
 * within BPFPROF_SYM_NAME_MAX bytes: a crafted table's functions may all name one region that
 * runs to the section's end, and each lookup costs at most the bound.
 */
static const char *funcname_at(const struct pcln *t, int32_t nameoff)
{
	if (nameoff < 0)
		return NULL;
	return elf_read__name(t->p + t->funcname, t->sz - t->funcname, (uint64_t)nameoff, NULL);
}

/* Function i: its range and name; false when its entry is malformed or empty. */
static bool function_read(const struct pcln *t, uint64_t i, uint64_t *start, uint64_t *end,
			  const char **name)
{
	uint64_t esz = t->magic == GO_MAGIC_116 ? 16 : 8, e = t->functab + i * esz, fo, f;
	int32_t nameoff;

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
	*name = funcname_at(t, nameoff);
	return *name != NULL;
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

/* The file offset of ELF vaddr addr in a section with file data: *off, *sz bytes to the
 * section's end; false if none. */
static bool vaddr_offset(Elf *elf, uint64_t addr, uint64_t *off, uint64_t *sz)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		*off = sh.sh_offset + (addr - sh.sh_addr);
		*sz = sh.sh_size - (addr - sh.sh_addr);
		return true;
	}
	return false;
}

/*
 * moduledata.gofunc (Go 1.18+), for the inline trees: the module's moduledata (the runtime's
 * firstmoduledata, in .noptrdata; it has no symbol in a stripped binary) is the one whose first
 * word is the .gopclntab's address (pcHeader), the next funcnametab's, and text the table's
 * textStart. Without it, no inline frames.
 */
static void gofunc_find(struct gopclntab *g)
{
	uint64_t off = g->t.magic == GO_MAGIC_118 ? GO_MD_GOFUNC_118 : GO_MD_GOFUNC_120, i;
	Elf_Scn *scn;
	const uint8_t *p;
	Elf_Data *d;

	g->gofunc_tried = true;
	scn = g->t.magic == GO_MAGIC_116 ? NULL : elf_read__section(g->elf, ".noptrdata");
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return;
	p = d->d_buf;
	for (i = 0; i + off + 8 <= d->d_size; i += 8) {
		if (rd64(p + i) != g->pcln_addr || rd64(p + i + 8) != g->pcln_addr + g->t.funcname ||
		    rd64(p + i + GO_MD_TEXT) != g->t.text_start)
			continue;
		if (!vaddr_offset(g->elf, rd64(p + i + off), &g->gofunc_off, &g->gofunc_sz))
			g->gofunc_sz = 0;
		return;
	}
}

struct gopclntab *gopclntab__new(Elf *elf)
{
	Elf_Scn *scn = elf_read__section(elf, ".gopclntab");
	struct gopclntab *g;
	Elf_Data *d;
	GElf_Shdr sh;
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
	g->elf = elf;
	if (gelf_getshdr(scn, &sh))
		g->pcln_addr = sh.sh_addr;
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
 * zig-zag deltas of the value, then pc deltas in pc quanta (runtime/symtab.go pcvalue, step).
 * Go's runtime adds the deltas in int32 and lets them wrap; no real table does: a value that
 * leaves int32 is a malformed table's (-ENOENT), not undefined behaviour here. */
static int pcvalue(const struct pcln *t, uint64_t off, uint64_t entry, uint64_t pc, int32_t *val)
{
	uint64_t at = entry;
	uint32_t uv, pcd;
	int64_t v = -1;
	int i;

	for (i = 0; i < 100000; i++) {
		if (!uvarint(t, &off, &uv) || (uv == 0 && i > 0))
			return -ENOENT;
		/* Zig-zag: uv / 2, or -(uv / 2) - 1 when uv is odd; both within int32. */
		v += (uv & 1) ? -(int64_t)(uv >> 1) - 1 : (int64_t)(uv >> 1);
		if (v < INT32_MIN || v > INT32_MAX)
			return -ENOENT;
		if (!uvarint(t, &off, &pcd))
			return -ENOENT;
		at += (uint64_t)pcd * t->min_lc;
		if (pc < at) {
			*val = (int32_t)v;
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

/* _PCDATA_InlTreeIndex, _FUNCDATA_InlTree (runtime/symtab.go) */
#define GO_PCDATA_INL_TREE_INDEX 2
#define GO_FUNCDATA_INL_TREE	 3
/* Inline levels followed at one pc, at most. */
#define GO_INLINE_DEPTH 64

/* A function's _func and what the position lookups need of it. */
struct func_ref {
	uint64_t func;	/* its _func's offset in the table */
	uint64_t start; /* its entry, ELF vaddr */
	uint64_t idx;	/* its functab index */
};

/*
 * The inline tree index at pc of function f: >= 0 where pc runs code inlined into it, -1
 * where it runs the function's own code (or its tables say nothing). The pcdata offsets follow
 * _func's fixed part: 44 bytes (1.16, 1.17, 1.20+) or 40 (1.18, 1.19); npcdata at 32 (1.16) or
 * 28. -2 when the table is malformed there.
 */
static int32_t inline_index(const struct pcln *t, const struct func_ref *f, uint64_t pc)
{
	uint64_t fixed = t->magic == GO_MAGIC_118 ? 40 : 44, at;
	uint32_t npcdata = rd32(t->p + f->func + (t->magic == GO_MAGIC_116 ? 32 : 28)), off;
	int32_t idx;

	if (npcdata <= GO_PCDATA_INL_TREE_INDEX)
		return -1;
	at = f->func + fixed + 4 * GO_PCDATA_INL_TREE_INDEX;
	if (at + 4 > t->sz)
		return -2;
	off = rd32(t->p + at);
	if (!off)
		return -1;
	if (t->pctab + off >= t->sz || pcvalue(t, t->pctab + off, f->start, pc, &idx))
		return -2;
	return idx < 0 ? -1 : idx;
}

/* The source position of pc in function f: the innermost inlined function's where pc runs
 * inlined code (runtime/symtab.go: funcfile, funcline1). 0 or -ENOENT. */
static int position(const struct pcln *t, const struct func_ref *f, uint64_t pc,
		    const char **file, uint32_t *line)
{
	uint64_t cu, foff, name;
	uint32_t pcfile, pcln;
	int32_t fileno, ln;
	const char *s;

	/* _func: pcfile, pcln right after pcsp; cuOffset after npcdata (runtime/runtime2.go). */
	if (t->magic == GO_MAGIC_116) {
		pcfile = rd32(t->p + f->func + 24);
		pcln = rd32(t->p + f->func + 28);
		cu = rd32(t->p + f->func + 36);
	} else {
		pcfile = rd32(t->p + f->func + 20);
		pcln = rd32(t->p + f->func + 24);
		cu = rd32(t->p + f->func + 32);
	}
	if (!pcfile || !pcln || t->pctab + pcfile >= t->sz || t->pctab + pcln >= t->sz ||
	    pcvalue(t, t->pctab + pcfile, f->start, pc, &fileno) ||
	    pcvalue(t, t->pctab + pcln, f->start, pc, &ln) || fileno < 0 || ln <= 0)
		return -ENOENT;
	/* The file: cutab[cuOffset + fileno], an offset into filetab (runtime.funcfile). */
	foff = t->cutab + (cu + (uint64_t)fileno) * 4;
	if (cu > t->sz || foff + 4 > t->sz)
		return -ENOENT;
	name = rd32(t->p + foff);
	s = name == UINT32_MAX ? NULL :
				 elf_read__name(t->p + t->filetab, t->sz - t->filetab, name, NULL);
	if (!s)
		return -ENOENT;
	*file = s;
	*line = (uint32_t)ln;
	return 0;
}

int gopclntab__line(const struct gopclntab *g, uint64_t pc, const char **file, uint32_t *line)
{
	const struct pcln *t = &g->t;
	struct func_ref f;

	if (func_find(t, pc, &f.func, &f.idx))
		return -ENOENT;
	f.start = entry_start(t, f.idx);
	return position(t, &f, pc, file, line);
}

/* Entry ix of f's inline tree (_FUNCDATA_InlTree, at gofunc + its funcdata offset): the
 * inlined function's name and the offset from f's entry of an instruction at its call site.
 * inlinedCall: Go 1.18, 1.19 {parent int16, funcID, _, file, line, func_ int32, parentPc
 * int32}, 20 bytes; 1.20+ {funcID, _ [3]byte, nameOff, parentPc, startLine int32}, 16. */
static int inline_call(struct gopclntab *g, const struct func_ref *f, int32_t ix,
		       const char **name, uint32_t *parent_pc)
{
	const struct pcln *t = &g->t;
	uint64_t fixed = t->magic == GO_MAGIC_118 ? 40 : 44, esz, e, at;
	uint32_t npcdata = rd32(t->p + f->func + 28), off;
	uint8_t nfuncdata = t->p[f->func + fixed - 1];
	const uint8_t *p;
	int32_t nameoff;
	Elf_Data *d;

	if (!g->gofunc_tried)
		gofunc_find(g);
	if (!g->gofunc_sz || nfuncdata <= GO_FUNCDATA_INL_TREE)
		return -ENOENT;
	at = f->func + fixed + 4 * (uint64_t)npcdata + 4 * GO_FUNCDATA_INL_TREE;
	if (at + 4 > t->sz)
		return -ENOENT;
	off = rd32(t->p + at);
	esz = t->magic == GO_MAGIC_118 ? 20 : 16;
	e = off + (uint64_t)ix * esz;
	if (off == UINT32_MAX || e + esz > g->gofunc_sz || g->gofunc_off + e > INT64_MAX)
		return -ENOENT;
	d = elf_getdata_rawchunk(g->elf, (int64_t)(g->gofunc_off + e), esz, ELF_T_BYTE);
	if (!d || !d->d_buf || d->d_size < esz)
		return -ENOENT;
	p = d->d_buf;
	if (t->magic == GO_MAGIC_118) {
		memcpy(&nameoff, p + 12, 4);
		*parent_pc = rd32(p + 16);
	} else {
		memcpy(&nameoff, p + 4, 4);
		*parent_pc = rd32(p + 8);
	}
	*name = funcname_at(t, nameoff);
	return *name ? 0 : -ENOENT;
}

/* Bytes of function f's code (to the next function's entry). */
static uint64_t func_size(const struct pcln *t, const struct func_ref *f)
{
	uint64_t end = entry_start(t, f->idx + 1);

	return end != UINT64_MAX && end > f->start ? end - f->start : 0;
}

int gopclntab__frames(struct gopclntab *g, uint64_t pc, struct go_src_frame *frames, size_t cap)
{
	const struct pcln *t = &g->t;
	struct func_ref f;
	uint32_t parent_pc;
	const char *name;
	uint64_t s, e;
	size_t n = 0;
	int32_t ix;

	if (!cap || func_find(t, pc, &f.func, &f.idx))
		return -ENOENT;
	f.start = entry_start(t, f.idx);
	/* As the runtime's traceback expands them (runtime/symtab.go, 1.19 CallersFrames; 1.21
	 * inlineUnwinder): the inlined function at pc, then from parentPc, an instruction of its
	 * call site, the function it was inlined into, until the real one. */
	while ((ix = inline_index(t, &f, pc)) >= 0 && n + 1 < cap && n < GO_INLINE_DEPTH) {
		if (inline_call(g, &f, ix, &name, &parent_pc) || parent_pc >= func_size(t, &f))
			break;
		frames[n].name = name;
		if (position(t, &f, pc, &frames[n].file, &frames[n].line)) {
			frames[n].file = NULL;
			frames[n].line = 0;
		}
		n++;
		pc = f.start + parent_pc;
	}
	if (!function_read(t, f.idx, &s, &e, &name))
		return n ? (int)n : -ENOENT;
	frames[n].name = name;
	/* At pc still in inlined code (no inline tree, a malformed one, cap reached), the
	 * position is an inlined function's: none rather than that. */
	if (ix != -1 || position(t, &f, pc, &frames[n].file, &frames[n].line)) {
		frames[n].file = NULL;
		frames[n].line = 0;
	}
	return (int)n + 1;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cfi_table.c: DWARF CFI rows of one ELF file, evaluated with libdw once per FDE, for the fast
 * path. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/cfi_table.h"
#include "unwind/eh_frame.h"
#include "util/elf_read.h"
#include "util/log.h"
#include "process/module_cache.h"
#include "util/util.h"

#define CFI_TABLE_DEFAULT_BUDGET (64u << 20)

const uint8_t cfi_reg_dwarf[CFI_REG_CNT] = { 3, 6, 12, 13, 14, 15, 16 };

/* DWARF numbers of x86_64 registers with rules of their own (psABI figure 3.36). */
#define DWARF_RAX     0
#define DWARF_RSP     7
#define DWARF_RA      16
#define DWARF_REG_CNT 17

/* An FDE's address range (or the part of a .debug_frame FDE that no .eh_frame FDE covers),
 * with its rows once built. */
struct cfi_fde {
	uint32_t start; /* ELF vaddr - base */
	uint32_t end;
	struct cfi_row *rows; /* in a chunk of the table's row pool; NULL until built */
	uint16_t rows_cnt;
	uint8_t debug_frame; /* from .debug_frame */
	uint8_t failed;	     /* its rows could not be built: no rows (libdwfl) */
};

/* Rows are allocated from chunks that never move: a row's address stays valid. */
struct row_chunk {
	struct row_chunk *next;
	size_t cap;
	size_t used;
	struct cfi_row rows[];
};

#define CACHE_BITS     8
#define CHUNK_MIN_ROWS 64
#define CHUNK_MAX_ROWS 4096

/*
 * The FDEs, sorted and without overlaps, and an index over them: block b of 2^block_shift
 * bytes (from the base) starts in FDE index[b] (or the one before it, in a gap). Each FDE's rows
 * are built at the first lookup inside it: a profile meets a small share of a library's FDEs.
 */
struct cfi_table {
	Dwarf_CFI *eh_cfi; /* dwarf_getcfi_elf(), NULL without .eh_frame */
	Dwarf *dw;	   /* for .debug_frame (dwarf_getcfi()), NULL without it */
	Dwarf_CFI *dbg_cfi;
	struct cfi_fde *fdes;
	uint32_t *index;
	size_t index_cnt;
	unsigned int block_shift;
	struct row_chunk *chunks; /* the newest first */
	/* The last rows found, by address (direct-mapped): profiles walk the same return
	 * addresses over and over. */
	struct {
		uint32_t rel; /* address - base; UINT32_MAX: empty */
		uint32_t end; /* the row's end - base */
		const struct cfi_row *row;
	} cache[1u << CACHE_BITS];
	struct cfi_table_info info;
};

static size_t budget_bytes = CFI_TABLE_DEFAULT_BUDGET;
static size_t used_bytes;

/* Stands for "no table" on a module: a failed build is not tried again. */
static struct cfi_table no_table;

void cfi_table__set_budget(size_t bytes)
{
	budget_bytes = bytes;
}

size_t cfi_table__bytes(void)
{
	return used_bytes;
}

/* Charges bytes against the budget; false (nothing charged) when they do not fit. */
static bool table__charge(struct cfi_table *t, size_t bytes)
{
	if (used_bytes + bytes > budget_bytes)
		return false;
	used_bytes += bytes;
	t->info.bytes += bytes;
	return true;
}

static void row__set_kind(struct cfi_row *r, enum cfi_row_kind kind, unsigned int cfa_reg)
{
	r->info = (r->info & (CFI_ROW_F_SIGNAL | CFI_ROW_F_RAX_SAME)) | kind << 4 | (cfa_reg & 0xf);
}

/* A register rule as dwarf_frame_register() delivers it (see libdw.h): the kinds libdwfl's
 * handle_cfi() tells apart, and the CFA-relative offset of the offset rules. */
enum rule_kind { RULE_UNDEFINED, RULE_SAME, RULE_OFFSET, RULE_VAL_OFFSET, RULE_OTHER };

static enum rule_kind frame_rule(Dwarf_Frame *frame, int regno, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops, i = 1;

	*off = 0;
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return RULE_OTHER;
	if (nops == 0)
		return ops == mem ? RULE_UNDEFINED : ops == NULL ? RULE_SAME : RULE_OTHER;
	/* offset(N): DW_OP_call_frame_cfa [DW_OP_plus_uconst N]; val_offset adds
	 * DW_OP_stack_value. */
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return RULE_OTHER;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		*off = (int64_t)ops[i++].number;
	if (i == nops)
		return RULE_OFFSET;
	if (i + 1 == nops && ops[i].atom == DW_OP_stack_value)
		return RULE_VAL_OFFSET;
	return RULE_OTHER;
}

/* The rules of one row of libdw's frame; false when the table cannot express them. */
static bool row__from_frame(struct cfi_row *r, Dwarf_Frame *frame, int ra)
{
	enum rule_kind kind;
	Dwarf_Op *ops;
	size_t nops;
	int64_t off;
	int regno, k;

	if (ra != DWARF_RA)
		return false;
	/* CFA = register + offset: libdw hands it over as one DW_OP_bregx. */
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number >= DWARF_RA)
		return false;
	off = (int64_t)ops[0].number2;
	if (off < INT32_MIN || off > INT32_MAX)
		return false;
	r->cfa_off = off;
	row__set_kind(r, CFI_ROW_OK, ops[0].number);
	for (k = 0; k < CFI_REG_CNT; k++)
		r->rules[k] = CFI_RULE_UNDEFINED;
	for (regno = 0, k = 0; regno < DWARF_REG_CNT; regno++) {
		kind = frame_rule(frame, regno, &off);
		if (regno == DWARF_RSP) {
			if (kind != RULE_VAL_OFFSET || off != 0)
				return false;
			continue;
		}
		if (regno == DWARF_RAX) {
			if (kind == RULE_SAME)
				r->info |= CFI_ROW_F_RAX_SAME;
			else if (kind != RULE_UNDEFINED)
				return false;
			continue;
		}
		if (k == CFI_REG_CNT || regno != cfi_reg_dwarf[k]) {
			/* Call-clobbered: undefined is all the table can say. */
			if (kind != RULE_UNDEFINED)
				return false;
			continue;
		}
		switch (kind) {
		case RULE_UNDEFINED:
			r->rules[k] = CFI_RULE_UNDEFINED;
			break;
		case RULE_SAME:
			r->rules[k] = CFI_RULE_SAME;
			break;
		case RULE_OFFSET:
			if (off % 8 || off / 8 <= CFI_RULE_SAME || off / 8 > INT8_MAX)
				return false;
			r->rules[k] = off / 8;
			break;
		default:
			return false;
		}
		k++;
	}
	return true;
}

/* The section named name, its data and its vaddr; NULL when absent, empty or NOBITS. */
static Elf_Data *find_section(Elf *elf, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = elf_read__section(elf, name);
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return NULL;
	if (shdr.sh_flags & SHF_COMPRESSED)
		return NULL; /* dwarf_begin_elf() decompresses .debug_frame first */
	data = elf_getdata(scn, NULL);
	*addr = shdr.sh_addr;
	return data && data->d_size ? data : NULL;
}

/* An FDE's range while the table is made: absolute addresses. */
struct range {
	uint64_t lo;
	uint64_t hi;
	bool debug_frame;
};

struct ranges {
	struct range *r;
	size_t cnt;
	size_t cap;
};

static int ranges__push(struct ranges *rs, uint64_t lo, uint64_t hi, bool debug_frame)
{
	if (array_grow((void **)&rs->r, &rs->cap, rs->cnt + 1, sizeof(*rs->r), 256))
		return -ENOMEM;
	rs->r[rs->cnt++] = (struct range){ lo, hi, debug_frame };
	return 0;
}

static int range__cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts the ranges and cuts overlaps away (the first range covering an address keeps it). */
static void ranges__normalize(struct ranges *rs)
{
	uint64_t covered = 0;
	size_t i, n = 0;

	/* A file without FDEs has no array at all: qsort's base must not be NULL. */
	if (rs->cnt > 1)
		qsort(rs->r, rs->cnt, sizeof(*rs->r), range__cmp);
	for (i = 0; i < rs->cnt; i++) {
		if (n && rs->r[i].lo < covered)
			rs->r[i].lo = covered;
		if (rs->r[i].lo >= rs->r[i].hi)
			continue;
		covered = rs->r[i].hi;
		rs->r[n++] = rs->r[i];
	}
	rs->cnt = n;
}

/*
 * .debug_frame only where no .eh_frame FDE is: libdwfl tries .eh_frame first and takes
 * whatever FDE covers the address. Both sorted, without overlaps; appends the parts of dbg's
 * ranges outside eh's to eh (indexes, not pointers: pushing moves eh->r).
 */
static int ranges__merge_debug(struct ranges *eh, const struct ranges *dbg)
{
	size_t n_eh = eh->cnt, i, j = 0, k;
	uint64_t cur, e;
	int err;

	for (i = 0; i < dbg->cnt; i++) {
		cur = dbg->r[i].lo;
		e = dbg->r[i].hi;
		while (j < n_eh && eh->r[j].hi <= cur)
			j++;
		for (k = j; k < n_eh && eh->r[k].lo < e; k++) {
			if (eh->r[k].lo > cur) {
				err = ranges__push(eh, cur, eh->r[k].lo, true);
				if (err)
					return err;
			}
			cur = max_t(uint64_t, cur, eh->r[k].hi);
		}
		if (cur < e) {
			err = ranges__push(eh, cur, e, true);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The FDE ranges of one section (.eh_frame with eh_frame_p, else .debug_frame), decoded from
 * dwarf_next_cfi()'s entries. */
static int add_section_fdes(struct ranges *rs, Elf *elf, Elf_Data *data, uint64_t sec_addr,
			    bool eh_frame_p)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct eh_frame_cie cie = { .off = (Dwarf_Off)-1 };
	Dwarf_CFI_Entry entry;
	Dwarf_Off off = 0, next;
	uint64_t lo, len;
	int err;

	while (dwarf_next_cfi(ident, data, eh_frame_p, off, &next, &entry) == 0) {
		off = next;
		if (dwarf_cfi_cie_p(&entry))
			continue;
		if (eh_frame__fde_range(ident, data, eh_frame_p, sec_addr, &entry.fde, &cie, &lo,
					&len) ||
		    !len || lo + len < lo)
			continue;
		err = ranges__push(rs, lo, lo + len, !eh_frame_p);
		if (err)
			return err;
	}
	return 0;
}

/* Builds t's lookup index over its FDEs (struct cfi_table). 0 or -ENOMEM. */
static int table__index(struct cfi_table *t)
{
	const struct cfi_fde *f = t->fdes;
	size_t n = t->info.fde_cnt, b, j = 0;
	uint64_t span = f[n - 1].end, addr;
	unsigned int shift = 4;

	while ((span >> shift) + 1 > max_t(size_t, n / 2, 1))
		shift++;
	t->block_shift = shift;
	t->index_cnt = (span >> shift) + 1;
	t->index = malloc(t->index_cnt * sizeof(*t->index));
	if (!t->index)
		return -ENOMEM;
	for (b = 0; b < t->index_cnt; b++) {
		addr = (uint64_t)b << shift;
		while (j + 1 < n && f[j + 1].start <= addr)
			j++;
		t->index[b] = j;
	}
	return 0;
}

struct cfi_table *cfi_table__build(Elf *elf)
{
	struct ranges eh = { 0 }, dbg = { 0 };
	uint64_t t0 = now_ns(), sec_addr, base;
	struct cfi_table *t;
	Elf_Data *data;
	GElf_Ehdr ehdr;
	size_t i;
	int err = 0;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB) {
		errno = ENOTSUP;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	memset(t->cache, 0xff, sizeof(t->cache));
	data = find_section(elf, ".eh_frame", &sec_addr);
	if (data)
		t->eh_cfi = dwarf_getcfi_elf(elf);
	if (t->eh_cfi) {
		err = add_section_fdes(&eh, elf, data, sec_addr, true);
		if (err)
			goto fail;
		ranges__normalize(&eh);
	}
	/* libdwfl reads .debug_frame through the module's Dwarf: this file's when it has one. */
	if (elf_read__section(elf, ".debug_frame")) {
		t->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		t->dbg_cfi = t->dw ? dwarf_getcfi(t->dw) : NULL;
		/* after dwarf_begin_elf(), which decompresses the section */
		data = t->dbg_cfi ? find_section(elf, ".debug_frame", &sec_addr) : NULL;
	} else {
		data = NULL;
	}
	if (data) {
		err = add_section_fdes(&dbg, elf, data, 0, false);
		if (err)
			goto fail;
		ranges__normalize(&dbg);
		err = ranges__merge_debug(&eh, &dbg);
		if (err)
			goto fail;
		ranges__normalize(&eh);
	}
	if (!eh.cnt) {
		err = -ENODATA;
		goto fail;
	}
	base = eh.r[0].lo;
	if (eh.r[eh.cnt - 1].hi - base > UINT32_MAX - 1) {
		err = -E2BIG;
		goto fail;
	}
	t->fdes = calloc(eh.cnt, sizeof(*t->fdes));
	if (!t->fdes) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < eh.cnt; i++) {
		t->fdes[i].start = eh.r[i].lo - base;
		t->fdes[i].end = eh.r[i].hi - base;
		t->fdes[i].debug_frame = eh.r[i].debug_frame;
		t->info.debug_frame |= eh.r[i].debug_frame;
	}
	t->info.base = base;
	t->info.fde_cnt = eh.cnt;
	err = table__index(t);
	if (err)
		goto fail;
	if (!table__charge(t, sizeof(*t) + eh.cnt * sizeof(*t->fdes) +
				      t->index_cnt * sizeof(*t->index))) {
		err = -E2BIG;
		goto fail;
	}
	t->info.build_ns = now_ns() - t0;
	free(eh.r);
	free(dbg.r);
	return t;
fail:
	free(eh.r);
	free(dbg.r);
	cfi_table__free(t);
	errno = -err;
	return NULL;
}

void cfi_table__free(struct cfi_table *t)
{
	struct row_chunk *c, *next;

	if (!t || t == &no_table)
		return;
	used_bytes -= t->info.bytes;
	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	if (t->eh_cfi)
		dwarf_cfi_end(t->eh_cfi);
	dwarf_end(t->dw);
	free(t->index);
	free(t->fdes);
	free(t);
}

/* Room for cnt rows that will not move; NULL when over the budget or out of memory. */
static struct cfi_row *rows__alloc(struct cfi_table *t, size_t cnt)
{
	struct row_chunk *c = t->chunks;
	size_t cap;

	if (!c || c->cap - c->used < cnt) {
		/* Chunks double from CHUNK_MIN_ROWS: small files stay small. */
		cap = c ? min_t(size_t, c->cap * 2, CHUNK_MAX_ROWS) : CHUNK_MIN_ROWS;
		cap = max_t(size_t, cap, cnt);
		if (!table__charge(t, sizeof(*c) + cap * sizeof(c->rows[0])))
			return NULL;
		c = malloc(sizeof(*c) + cap * sizeof(c->rows[0]));
		if (!c) {
			used_bytes -= sizeof(*c) + cap * sizeof(c->rows[0]);
			t->info.bytes -= sizeof(*c) + cap * sizeof(c->rows[0]);
			return NULL;
		}
		c->cap = cap;
		c->used = 0;
		c->next = t->chunks;
		t->chunks = c;
	}
	c->used += cnt;
	return &c->rows[c->used - cnt];
}

static bool row__same_rules(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->info == b->info && a->cfa_off == b->cfa_off &&
	       !memcmp(a->rules, b->rules, sizeof(a->rules));
}

/*
 * The rows of FDE f, as libdw evaluates them: dwarf_cfi_addrframe() at each row's start gives
 * the row's end (dwarf_frame_info()). Where libdw finds nothing, a CFI_ROW_NONE row to the FDE's
 * end. Equal consecutive rows are merged. 0, -E2BIG (budget) or -ENOMEM.
 */
static int fde__build(struct cfi_table *t, struct cfi_fde *f)
{
	Dwarf_CFI *cfi = f->debug_frame ? t->dbg_cfi : t->eh_cfi;
	uint64_t addr = t->info.base + f->start, hi = t->info.base + f->end, t0 = now_ns();
	struct cfi_row *rows = NULL, row, *tmp;
	size_t cnt = 0, cap = 0, i;
	Dwarf_Addr rs, re;
	Dwarf_Frame *frame;
	bool signal;
	int ra, err = 0;

	while (addr < hi) {
		memset(&row, 0, sizeof(row));
		re = hi;
		if (dwarf_cfi_addrframe(cfi, addr, &frame)) {
			row__set_kind(&row, CFI_ROW_NONE, 0);
		} else {
			ra = dwarf_frame_info(frame, &rs, &re, &signal);
			if (signal || !row__from_frame(&row, frame, ra)) {
				memset(row.rules, 0, sizeof(row.rules));
				row.cfa_off = 0;
				row.info = (signal ? CFI_ROW_F_SIGNAL : 0) | CFI_ROW_UNSUPPORTED
										     << 4;
			}
			free(frame);
			if (re <= addr || re > hi)
				re = hi; /* keep to this FDE's range */
		}
		if (!cnt || !row__same_rules(&rows[cnt - 1], &row)) {
			if (cnt == UINT16_MAX) {
				err = -E2BIG;
				goto out;
			}
			if (array_grow((void **)&rows, &cap, cnt + 1, sizeof(*rows), 16)) {
				err = -ENOMEM;
				goto out;
			}
			row.start = addr - t->info.base;
			rows[cnt++] = row;
		}
		addr = re;
	}
	tmp = rows__alloc(t, cnt);
	if (!tmp) {
		err = -E2BIG;
		goto out;
	}
	memcpy(tmp, rows, cnt * sizeof(*rows));
	f->rows = tmp;
	f->rows_cnt = cnt;
	t->info.fdes_built++;
	t->info.rows_cnt += cnt;
	for (i = 0; i < cnt; i++)
		t->info.unsupported_cnt += cfi_row__kind(&rows[i]) == CFI_ROW_UNSUPPORTED;
out:
	if (err)
		f->failed = true;
	t->info.rows_ns += now_ns() - t0;
	free(rows);
	return err;
}

struct cfi_table *cfi_table__get(struct module *e)
{
	struct cfi_table *t = e->cfi;
	struct cfi_table_info *i;

	if (t)
		return t == &no_table ? NULL : t;
	t = e->elf ? cfi_table__build(e->elf) : NULL;
	if (!t) {
		pr_debug("CFI table of %s: %s; libdwfl unwinds it", e->path,
			 errno == ENODATA ? "no CFI" : strerror(errno));
		e->cfi = &no_table;
		e->cfi_free = NULL;
		return NULL;
	}
	i = &t->info;
	pr_debug("CFI table of %s: %zu FDEs%s, %zu KiB, made in %.2f ms (rows at first use)",
		 e->path, i->fde_cnt, i->debug_frame ? " (.eh_frame and .debug_frame)" : "",
		 i->bytes >> 10, i->build_ns / 1e6);
	e->cfi = t;
	e->cfi_free = cfi_table__free;
	return t;
}

/* The FDE covering ELF vaddr addr, or NULL. */
static struct cfi_fde *fde_at(const struct cfi_table *t, uint64_t addr)
{
	uint64_t rel = addr - t->info.base, b;
	struct cfi_fde *f;
	size_t lo, hi, mid;

	if (addr < t->info.base || rel >= UINT32_MAX)
		return NULL;
	b = rel >> t->block_shift;
	if (b >= t->index_cnt)
		return NULL; /* past the last FDE */
	/* The last FDE whose start <= rel: between the FDEs holding this block's start and the
	 * next block's. */
	lo = t->index[b];
	hi = b + 1 < t->index_cnt ? t->index[b + 1] + 1 : t->info.fde_cnt;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (t->fdes[mid].start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	f = &t->fdes[lo];
	return rel >= f->start && rel < f->end ? f : NULL;
}

const struct cfi_row *cfi_table__lookup(struct cfi_table *t, uint64_t addr, uint64_t *start,
					uint64_t *end)
{
	uint64_t rel = addr - t->info.base;
	const struct cfi_row *row;
	struct cfi_fde *f;
	size_t lo, hi, mid, slot;
	uint32_t row_end;

	if (addr < t->info.base || rel >= UINT32_MAX)
		return NULL;
	slot = ((uint32_t)rel * 0x9e3779b1u) >> (32 - CACHE_BITS);
	if (t->cache[slot].rel == rel) {
		row = t->cache[slot].row;
		row_end = t->cache[slot].end;
		goto found;
	}
	f = fde_at(t, addr);
	if (!f || f->failed)
		return NULL;
	if (!f->rows && fde__build(t, f))
		return NULL;
	/* The FDE's row: the last whose start <= rel. */
	lo = 0;
	hi = f->rows_cnt;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (f->rows[mid].start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	row = &f->rows[lo];
	row_end = lo + 1 < f->rows_cnt ? f->rows[lo + 1].start : f->end;
	t->cache[slot].rel = rel;
	t->cache[slot].end = row_end;
	t->cache[slot].row = row;
found:
	if (cfi_row__kind(row) == CFI_ROW_NONE)
		return NULL;
	if (start)
		*start = t->info.base + row->start;
	if (end)
		*end = t->info.base + row_end;
	return row;
}

int cfi_table__fde(const struct cfi_table *t, size_t i, uint64_t *start, uint64_t *end)
{
	if (i >= t->info.fde_cnt)
		return -ENOENT;
	*start = t->info.base + t->fdes[i].start;
	*end = t->info.base + t->fdes[i].end;
	return 0;
}

int cfi_table__fde_find(const struct cfi_table *t, uint64_t addr, uint64_t *start, uint64_t *end)
{
	const struct cfi_fde *f = fde_at(t, addr);

	if (!f)
		return -ENOENT;
	*start = t->info.base + f->start;
	*end = t->info.base + f->end;
	return 0;
}

void cfi_table__info(const struct cfi_table *t, struct cfi_table_info *info)
{
	*info = t->info;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_cfi_table.c: CFI row tables of two fixture binaries (built from this file with
 * -DCFI_FIXTURE, .eh_frame and .debug_frame), row by row against readelf --debug-dump=
 * frames-interp; row boundaries, rows the table cannot express, the byte budget. */
#ifdef CFI_FIXTURE
/*
 * The fixture: functions whose CFI is written out by hand, besides the compiler's. The
 * comments give the rows the table must hold (offsets from the function's start).
 */
__asm__(".text\n"
	/* [0,1) rsp+8; [1,4) rsp+16, rbp c-16; [4,5) rbp+16; [5,7) rbx c-24 too; [7,8) rbx
	 * restored (undefined); [8,9) rsp+8; nothing at 9..15 (padding, no FDE). */
	".p2align 4\n"
	".globl cfi_fix_frame\n"
	".type cfi_fix_frame, @function\n"
	"cfi_fix_frame:\n"
	".cfi_startproc\n"
	"pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"pushq %rbx\n"
	".cfi_offset %rbx, -24\n"
	"nop\n"
	"popq %rbx\n"
	".cfi_restore %rbx\n"
	"popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_fix_frame, .-cfi_fix_frame\n"
	/* A signal frame ('S'): unsupported, flagged. */
	".p2align 4\n"
	".globl cfi_fix_signal\n"
	".type cfi_fix_signal, @function\n"
	"cfi_fix_signal:\n"
	".cfi_startproc\n"
	".cfi_signal_frame\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_fix_signal, .-cfi_fix_signal\n"
	/* [0,1) fine; [1,3) CFA = *(rsp + 8) (DW_CFA_def_cfa_expression: DW_OP_breg7 8,
	 * DW_OP_deref): unsupported. */
	".p2align 4\n"
	".globl cfi_fix_expr\n"
	".type cfi_fix_expr, @function\n"
	"cfi_fix_expr:\n"
	".cfi_startproc\n"
	"nop\n"
	".cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_fix_expr, .-cfi_fix_expr\n"
	/* [1,3) rbp kept in rax (register rule): unsupported. */
	".p2align 4\n"
	".globl cfi_fix_register\n"
	".type cfi_fix_register, @function\n"
	"cfi_fix_register:\n"
	".cfi_startproc\n"
	"movq %rbp, %rax\n"
	".cfi_register %rbp, %rax\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_fix_register, .-cfi_fix_register\n"
	/* The outermost frame: the return address undefined, as in _start. */
	".p2align 4\n"
	".globl cfi_fix_root\n"
	".type cfi_fix_root, @function\n"
	"cfi_fix_root:\n"
	".cfi_startproc\n"
	".cfi_undefined %rip\n"
	"nop\n"
	"hlt\n"
	".cfi_endproc\n"
	".size cfi_fix_root, .-cfi_fix_root\n"
	/* [7,11) CFA rsp+100008 (a 100000-byte frame): fine; [11,12) rbx at CFA-100008: beyond
	 * what a row can say, unsupported; [12,14) rcx saved (call-clobbered): unsupported. */
	".p2align 4\n"
	".globl cfi_fix_big\n"
	".type cfi_fix_big, @function\n"
	"cfi_fix_big:\n"
	".cfi_startproc\n"
	"subq $100000, %rsp\n"
	".cfi_adjust_cfa_offset 100000\n"
	"movq %rbx, (%rsp)\n"
	".cfi_offset %rbx, -100008\n"
	"nop\n"
	".cfi_restore %rbx\n"
	".cfi_offset %rcx, -16\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_fix_big, .-cfi_fix_big\n");

#include <stdlib.h>

/* Some compiled code too (prologues, epilogues, calls, a PLT entry). */
static volatile int sink;

static __attribute__((noinline)) int work(int n)
{
	volatile char buf[64];
	int i;

	for (i = 0; i < n; i++)
		buf[i % 64] = i;
	return buf[3];
}

int main(int argc, char **argv __attribute__((unused)))
{
	sink = work(argc * 10) + (getenv("CFI_FIXTURE") != 0);
	return 0;
}

#else /* !CFI_FIXTURE */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unwind/cfi_table.h"
#include "test_util.h"
#include "util/util.h"

#ifndef CFI_FIXTURE_EH
#define CFI_FIXTURE_EH "build/tests/fixtures/cfi_eh"
#endif
#ifndef CFI_FIXTURE_DBG
#define CFI_FIXTURE_DBG "build/tests/fixtures/cfi_dbg"
#endif
#ifndef CFI_FIXTURE_NOCFI
#define CFI_FIXTURE_NOCFI "build/tests/fixtures/cfi_nocfi"
#endif
#ifndef CFI_FIXTURE_NOENTRIES
#define CFI_FIXTURE_NOENTRIES "build/tests/fixtures/cfi_noentries"
#endif

struct fixture {
	int fd;
	Elf *elf;
	struct cfi_table *t;
};

static void fixture__open(struct fixture *f, const char *path)
{
	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(f->elf);
	f->t = cfi_table__build(f->elf);
	if (!f->t)
		fail_msg("cfi_table__build(%s): %s", path, strerror(errno));
}

static void fixture__close(struct fixture *f)
{
	cfi_table__free(f->t);
	elf_end(f->elf);
	close(f->fd);
}

/* The value of symbol name in elf's .symtab. */
static uint64_t symbol(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			gelf_getsym(data, i, &sym);
			if (!strcmp(elf_strptr(elf, shdr.sh_link, sym.st_name), name))
				return sym.st_value;
		}
	}
	fail_msg("no symbol %s", name);
	return 0;
}

/* --- readelf --debug-dump=frames-interp, parsed ------------------------------------------- */

/* DWARF numbers of readelf's x86_64 register names (binutils dwarf.c, dwarf_regnames_x86_64). */
static int regno_of(const char *name)
{
	static const char *const names[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp",
					     "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
					     "r14", "r15", "rip" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], name))
			return i;
	if (!strcmp(name, "ra"))
		return 16;
	return -1;
}

#define MAX_COLS 24

/* One row of readelf's table: LOC, CFA text, one text per column. */
struct re_row {
	uint64_t loc;
	char cfa[32];
	char vals[MAX_COLS][16];
};

struct re_block {		/* a CIE or FDE */
	bool is_cie;
	uint64_t off;		/* section offset */
	uint64_t cie;		/* FDE: its CIE's offset */
	uint64_t lo, hi;	/* FDE: [pc, pc_end) */
	bool signal;		/* CIE: augmentation has 'S' */
	int ncols;
	int cols[MAX_COLS];	/* DWARF register of each column */
	struct re_row *rows;
	size_t nrows;
	bool debug_frame;
};

struct re_dump {
	struct re_block *b;
	size_t n;
};

static void re_dump__read(struct re_dump *d, const char *path)
{
	char cmd[512], line[1024], aug[32], *tok, *save, *q;
	struct re_block *cur = NULL;
	bool debug_frame = false;
	unsigned long long off, len, id, lo, hi;
	FILE *p;
	int i;

	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "Contents of the .debug_frame section"))
			debug_frame = true;
		else if (strstr(line, "Contents of the .eh_frame section"))
			debug_frame = false;
		q = strstr(line, " CIE \"");
		if (q && sscanf(line, "%llx", &off) == 1) {
			snprintf(aug, sizeof(aug), "%.*s", (int)strcspn(q + 6, "\""), q + 6);
			d->b = realloc(d->b, (d->n + 1) * sizeof(*d->b));
			cur = &d->b[d->n++];
			memset(cur, 0, sizeof(*cur));
			cur->is_cie = true;
			cur->off = off;
			cur->signal = strchr(aug, 'S') != NULL;
			cur->debug_frame = debug_frame;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &id,
			   &lo, &hi) == 6) {
			d->b = realloc(d->b, (d->n + 1) * sizeof(*d->b));
			cur = &d->b[d->n++];
			memset(cur, 0, sizeof(*cur));
			cur->off = off;
			cur->cie = id;
			cur->lo = lo;
			cur->hi = hi;
			cur->debug_frame = debug_frame;
			continue;
		}
		if (!cur)
			continue;
		if (strstr(line, "   LOC ")) {
			cur->ncols = 0;
			strtok_r(line, " \n", &save);	/* LOC */
			strtok_r(NULL, " \n", &save);	/* CFA */
			while ((tok = strtok_r(NULL, " \n", &save)) && cur->ncols < MAX_COLS) {
				cur->cols[cur->ncols] = regno_of(tok);
				if (cur->cols[cur->ncols] < 0)
					fail_msg("readelf column %s", tok);
				cur->ncols++;
			}
			continue;
		}
		if (sscanf(line, "%llx", &lo) == 1 && strlen(line) > 17 && line[16] == ' ') {
			struct re_row *r;

			cur->rows = realloc(cur->rows, (cur->nrows + 1) * sizeof(*cur->rows));
			r = &cur->rows[cur->nrows++];
			memset(r, 0, sizeof(*r));
			r->loc = lo;
			strtok_r(line, " \n", &save);
			tok = strtok_r(NULL, " \n", &save);
			snprintf(r->cfa, sizeof(r->cfa), "%s", tok ? tok : "");
			for (i = 0; i < cur->ncols; i++) {
				tok = strtok_r(NULL, " \n", &save);
				snprintf(r->vals[i], sizeof(r->vals[i]), "%s", tok ? tok : "u");
			}
		}
	}
	assert_int_equal(pclose(p), 0);
}

static void re_dump__free(struct re_dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->b[i].rows);
	free(d->b);
}

static const struct re_block *re_dump__cie(const struct re_dump *d, const struct re_block *fde)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->b[i].is_cie && d->b[i].off == fde->cie &&
		    d->b[i].debug_frame == fde->debug_frame)
			return &d->b[i];
	fail_msg("FDE at %#llx: no CIE %#llx", (unsigned long long)fde->off,
		 (unsigned long long)fde->cie);
	return NULL;
}

/* The value readelf shows for DWARF register regno in row r of block b ("u" if no column). */
static const char *re_val(const struct re_block *b, const struct re_row *r, int regno)
{
	int i;

	for (i = 0; i < b->ncols; i++)
		if (b->cols[i] == regno)
			return r->vals[i];
	return "u";
}

/* What the table must say for readelf's row (of block b, whose CIE is cie): kind, CFA and the
 * rule of each enum cfi_reg; "u" can be libdw's x86_64 ABI default (same value for rbp and
 * r12-r15) as well as undefined: readelf shows both alike. */
static void check_row(struct cfi_table *t, uint64_t addr, const struct re_block *b,
		      const struct re_block *cie, const struct re_row *r)
{
	const struct cfi_row *row = cfi_table__lookup(t, addr, NULL, NULL);
	bool unsupported = cie->signal;
	char reg[16];
	long off;
	int regno, k, cfa_reg = -1;
	long cfa_off = 0;
	const char *v;

	if (!row)
		fail_msg("%#llx: no row; readelf: CFA %s", (unsigned long long)addr, r->cfa);
	if (sscanf(r->cfa, "%15[a-z0-9]%ld", reg, &cfa_off) == 2) {
		cfa_reg = regno_of(reg);
		if (cfa_reg < 0 || cfa_reg > 15)
			unsupported = true;
	} else {
		unsupported = true;	/* "exp" */
	}
	for (regno = 0; regno <= 16 && !unsupported; regno++) {
		v = re_val(b, r, regno);
		if (!strcmp(v, "u") || !strcmp(v, "s"))
			continue;
		if (v[0] != 'c') {
			unsupported = true;	/* exp, vexp, rN, v+N */
			continue;
		}
		off = strtol(v + 1, NULL, 10);
		for (k = 0; k < CFI_REG_CNT && cfi_reg_dwarf[k] != regno; k++)
			;
		if (k == CFI_REG_CNT || off % 8 || off / 8 <= CFI_RULE_SAME || off / 8 > 127)
			unsupported = true;
	}
	if (cie->signal)
		assert_true(row->info & CFI_ROW_F_SIGNAL);
	if (unsupported) {
		if (cfi_row__kind(row) != CFI_ROW_UNSUPPORTED)
			fail_msg("%#llx: want an unsupported row (readelf: CFA %s)",
				 (unsigned long long)addr, r->cfa);
		return;
	}
	if (cfi_row__kind(row) != CFI_ROW_OK || (int)cfi_row__cfa_reg(row) != cfa_reg ||
	    row->cfa_off != cfa_off)
		fail_msg("%#llx: kind %d CFA r%u%+d, readelf: CFA %s", (unsigned long long)addr,
			 cfi_row__kind(row), cfi_row__cfa_reg(row), row->cfa_off, r->cfa);
	for (k = 0; k < CFI_REG_CNT; k++) {
		v = re_val(b, r, cfi_reg_dwarf[k]);
		if (v[0] == 'c') {
			if (row->rules[k] * 8 != strtol(v + 1, NULL, 10))
				fail_msg("%#llx: reg %d at CFA%+d, readelf %s",
					 (unsigned long long)addr, cfi_reg_dwarf[k],
					 row->rules[k] * 8, v);
		} else if (!strcmp(v, "s")) {
			assert_int_equal(row->rules[k], CFI_RULE_SAME);
		} else if (row->rules[k] != CFI_RULE_UNDEFINED &&
			   !(row->rules[k] == CFI_RULE_SAME && k != CFI_REG_RBX &&
			     k != CFI_REG_RA)) {
			fail_msg("%#llx: reg %d rule %d, readelf u", (unsigned long long)addr,
				 cfi_reg_dwarf[k], row->rules[k]);
		}
	}
}

/* Every row readelf shows for every FDE, at its first and last address. Returns how many rows
 * were compared. .debug_frame rows only where no .eh_frame FDE is (libdwfl's order). */
static size_t check_against_readelf(struct cfi_table *t, const char *path)
{
	const struct re_block *b, *cie, *o;
	const struct re_row *r;
	struct re_dump d;
	uint64_t end;
	size_t i, j, o_i, n = 0;
	bool shadowed;

	re_dump__read(&d, path);
	for (i = 0; i < d.n; i++) {
		b = &d.b[i];
		if (b->is_cie || b->lo >= b->hi)
			continue;
		cie = re_dump__cie(&d, b);
		shadowed = false;
		for (o_i = 0; b->debug_frame && o_i < d.n; o_i++) {
			o = &d.b[o_i];
			if (!o->is_cie && !o->debug_frame && o->lo < b->hi && b->lo < o->hi)
				shadowed = true;
		}
		if (shadowed)
			continue;
		/* An FDE without instructions of its own: the CIE's row (readelf shows none). */
		if (!b->nrows) {
			assert_true(cie->nrows >= 1);
			check_row(t, b->lo, cie, cie, &cie->rows[cie->nrows - 1]);
			check_row(t, b->hi - 1, cie, cie, &cie->rows[cie->nrows - 1]);
			n++;
			continue;
		}
		for (j = 0; j < b->nrows; j++) {
			r = &b->rows[j];
			end = j + 1 < b->nrows ? b->rows[j + 1].loc : b->hi;
			if (end <= r->loc)
				continue;	/* a row of no address (DW_CFA_advance_loc 0) */
			check_row(t, r->loc, b, cie, r);
			check_row(t, end - 1, b, cie, r);
			n++;
		}
	}
	re_dump__free(&d);
	return n;
}

static void test_readelf_eh(void **state)
{
	struct cfi_table_info info;
	struct fixture f;
	size_t n;

	fixture__open(&f, CFI_FIXTURE_EH);
	n = check_against_readelf(f.t, CFI_FIXTURE_EH);
	cfi_table__info(f.t, &info);
	print_message("cfi_eh: %zu readelf rows matched; table %zu rows (%zu unsupported), "
		      "%zu FDEs, %zu bytes\n", n, info.rows_cnt, info.unsupported_cnt,
		      info.fde_cnt, info.bytes);
	assert_int_equal(info.fdes_built, info.fde_cnt);
	assert_true(n >= 20);
	assert_false(info.debug_frame);
	fixture__close(&f);
}

static void test_readelf_debug_frame(void **state)
{
	struct cfi_table_info info;
	struct fixture f;
	size_t n;

	fixture__open(&f, CFI_FIXTURE_DBG);
	n = check_against_readelf(f.t, CFI_FIXTURE_DBG);
	cfi_table__info(f.t, &info);
	print_message("cfi_dbg: %zu readelf rows matched; table %zu rows, %zu FDEs\n", n,
		      info.rows_cnt, info.fde_cnt);
	assert_true(n >= 20);
	/* The fixture's own code is described in .debug_frame only. */
	assert_true(info.debug_frame);
	assert_non_null(cfi_table__lookup(f.t, symbol(f.elf, "cfi_fix_frame"), NULL, NULL));
	assert_non_null(cfi_table__lookup(f.t, symbol(f.elf, "main"), NULL, NULL));
	fixture__close(&f);
}

/* lookup(addr) gives a row of [start, end) and kind (NONE: no row). */
static void assert_row(struct cfi_table *t, uint64_t addr, uint64_t start, uint64_t end,
		       enum cfi_row_kind kind)
{
	const struct cfi_row *r;
	uint64_t s = 0, e = 0;

	r = cfi_table__lookup(t, addr, &s, &e);
	if (kind == CFI_ROW_NONE) {
		if (r)
			fail_msg("%#llx: want no row, got [%#llx, %#llx)", (unsigned long long)addr,
				 (unsigned long long)s, (unsigned long long)e);
		return;
	}
	if (!r)
		fail_msg("%#llx: no row", (unsigned long long)addr);
	if (s != start || e != end || cfi_row__kind(r) != kind)
		fail_msg("%#llx: row [%#llx, %#llx) kind %d, want [%#llx, %#llx) kind %d",
			 (unsigned long long)addr, (unsigned long long)s, (unsigned long long)e,
			 cfi_row__kind(r), (unsigned long long)start, (unsigned long long)end,
			 kind);
}

static void test_boundaries(void **state)
{
	const struct cfi_row *r;
	struct fixture f;
	uint64_t fn;

	fixture__open(&f, CFI_FIXTURE_EH);
	fn = symbol(f.elf, "cfi_fix_frame");
	/* Each row from its first to its last byte, and nothing past the FDE. */
	assert_row(f.t, fn, fn, fn + 1, CFI_ROW_OK);
	assert_row(f.t, fn + 1, fn + 1, fn + 4, CFI_ROW_OK);
	assert_row(f.t, fn + 3, fn + 1, fn + 4, CFI_ROW_OK);
	assert_row(f.t, fn + 4, fn + 4, fn + 5, CFI_ROW_OK);
	assert_row(f.t, fn + 5, fn + 5, fn + 7, CFI_ROW_OK);
	assert_row(f.t, fn + 6, fn + 5, fn + 7, CFI_ROW_OK);
	assert_row(f.t, fn + 7, fn + 7, fn + 8, CFI_ROW_OK);
	assert_row(f.t, fn + 8, fn + 8, fn + 9, CFI_ROW_OK);
	assert_row(f.t, fn + 9, 0, 0, CFI_ROW_NONE);
	assert_row(f.t, fn + 15, 0, 0, CFI_ROW_NONE);
	assert_row(f.t, 0, 0, 0, CFI_ROW_NONE);
	assert_row(f.t, UINT64_MAX, 0, 0, CFI_ROW_NONE);

	r = cfi_table__lookup(f.t, fn + 1, NULL, NULL);
	assert_int_equal(cfi_row__cfa_reg(r), 7);
	assert_int_equal(r->cfa_off, 16);
	assert_int_equal(r->rules[CFI_REG_RBP], -2);
	assert_int_equal(r->rules[CFI_REG_RA], -1);
	r = cfi_table__lookup(f.t, fn + 5, NULL, NULL);
	assert_int_equal(cfi_row__cfa_reg(r), 6);
	assert_int_equal(r->cfa_off, 16);
	assert_int_equal(r->rules[CFI_REG_RBX], -3);
	/* DW_CFA_restore: the CIE's rule again, i.e. libdw's default for rbx (undefined). */
	r = cfi_table__lookup(f.t, fn + 7, NULL, NULL);
	assert_int_equal(r->rules[CFI_REG_RBX], CFI_RULE_UNDEFINED);
	assert_int_equal(r->rules[CFI_REG_R12], CFI_RULE_SAME);

	fn = symbol(f.elf, "cfi_fix_root");
	r = cfi_table__lookup(f.t, fn, NULL, NULL);
	assert_int_equal(cfi_row__kind(r), CFI_ROW_OK);
	assert_int_equal(r->rules[CFI_REG_RA], CFI_RULE_UNDEFINED);
	fixture__close(&f);
}

/* fde_find(addr): the FDE holding addr, from its first byte to its last, whatever its rows
 * say; nothing outside every FDE. What names a function without a symbol by its start. */
static void test_fde_find(void **state)
{
	uint64_t fn, s, e, start, end, a;
	struct fixture f;
	size_t i;

	fixture__open(&f, CFI_FIXTURE_EH);
	fn = symbol(f.elf, "cfi_fix_frame");
	for (a = fn; a < fn + 9; a++) {
		assert_int_equal(cfi_table__fde_find(f.t, a, &s, &e), 0);
		assert_int_equal(s, fn);
		assert_int_equal(e, fn + 9);
	}
	assert_int_equal(cfi_table__fde_find(f.t, fn + 9, &s, &e), -ENOENT);
	assert_int_equal(cfi_table__fde_find(f.t, 0, &s, &e), -ENOENT);
	assert_int_equal(cfi_table__fde_find(f.t, UINT64_MAX, &s, &e), -ENOENT);
	/* Every FDE, its rows built or not, supported or not (cfi_fix_expr's CFA expression). */
	for (i = 0; !cfi_table__fde(f.t, i, &start, &end); i++) {
		assert_int_equal(cfi_table__fde_find(f.t, start, &s, &e), 0);
		assert_int_equal(s, start);
		assert_int_equal(cfi_table__fde_find(f.t, end - 1, &s, &e), 0);
		assert_int_equal(s, start);
		assert_int_equal(e, end);
	}
	assert_true(i > 3);
	fixture__close(&f);
}

static void test_unsupported(void **state)
{
	const struct cfi_row *r;
	struct fixture f;
	uint64_t fn;

	fixture__open(&f, CFI_FIXTURE_EH);
	fn = symbol(f.elf, "cfi_fix_signal");
	r = cfi_table__lookup(f.t, fn, NULL, NULL);
	assert_int_equal(cfi_row__kind(r), CFI_ROW_UNSUPPORTED);
	assert_true(r->info & CFI_ROW_F_SIGNAL);

	fn = symbol(f.elf, "cfi_fix_expr");
	assert_row(f.t, fn, fn, fn + 1, CFI_ROW_OK);
	assert_row(f.t, fn + 1, fn + 1, fn + 3, CFI_ROW_UNSUPPORTED);
	assert_false(cfi_table__lookup(f.t, fn + 1, NULL, NULL)->info & CFI_ROW_F_SIGNAL);

	fn = symbol(f.elf, "cfi_fix_register");
	assert_row(f.t, fn, fn, fn + 3, CFI_ROW_OK);
	assert_row(f.t, fn + 3, fn + 3, fn + 5, CFI_ROW_UNSUPPORTED);

	fn = symbol(f.elf, "cfi_fix_big");
	r = cfi_table__lookup(f.t, fn + 7, NULL, NULL);
	assert_int_equal(cfi_row__kind(r), CFI_ROW_OK);
	assert_int_equal(r->cfa_off, 100008);
	/* rbx too far, then rcx saved: one row, as rows of the same rules are merged. */
	assert_row(f.t, fn + 11, fn + 11, fn + 14, CFI_ROW_UNSUPPORTED);
	assert_row(f.t, fn + 13, fn + 11, fn + 14, CFI_ROW_UNSUPPORTED);
	fixture__close(&f);
}

/* The fixture of the PLT: the linker's .plt FDE computes the CFA with an expression. */
static void test_plt_unsupported(void **state)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	struct fixture f;
	const struct cfi_row *r;
	bool seen = false;

	fixture__open(&f, CFI_FIXTURE_EH);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn))) {
		gelf_getshdr(scn, &shdr);
		if (strcmp(elf_strptr(f.elf, shstrndx, shdr.sh_name), ".plt"))
			continue;
		/* PLT0 (16 bytes) pushes twice; the entries after it: a CFA expression. */
		r = cfi_table__lookup(f.t, shdr.sh_addr + 16, NULL, NULL);
		assert_non_null(r);
		assert_int_equal(cfi_row__kind(r), CFI_ROW_UNSUPPORTED);
		seen = true;
	}
	/* The fixture calls getenv() through the PLT. */
	assert_true(seen);
	fixture__close(&f);
}

/* Looks up every FDE's first address: every FDE's rows built (or refused). Returns how many
 * FDEs gave no row. */
static size_t build_all(struct cfi_table *t)
{
	uint64_t start, end;
	size_t i, missing = 0;

	for (i = 0; !cfi_table__fde(t, i, &start, &end); i++)
		missing += !cfi_table__lookup(t, start, NULL, NULL);
	return missing;
}

/* Tables of a big library: rows built at the first lookup, bounded by the budget, the budget
 * given back. */
static void test_budget(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct cfi_table_info info, made;
	struct fixture f, g;
	size_t before = cfi_table__bytes(), missing;

	fixture__open(&f, libc);
	cfi_table__info(f.t, &made);
	assert_int_equal(made.rows_cnt, 0);
	assert_true(made.fde_cnt > 1000);
	missing = build_all(f.t);
	cfi_table__info(f.t, &info);
	print_message("libc: %zu FDEs in %.1f ms; all their rows: %zu (%zu unsupported) in %.1f ms,"
		      " %zu KiB in all\n", info.fde_cnt, info.build_ns / 1e6, info.rows_cnt,
		      info.unsupported_cnt, info.rows_ns / 1e6, info.bytes >> 10);
	assert_int_equal(info.fdes_built, info.fde_cnt);
	assert_true(missing < info.fde_cnt / 100);
	/* Rows the table cannot express are rare in compiled code. */
	assert_true(info.unsupported_cnt * 100 < info.rows_cnt);
	/* 16 bytes a row (chunks up to 2x), 24 an FDE and 2 of index, a fixed part (the cache). */
	assert_true(info.bytes <= 32 * info.rows_cnt + 26 * info.fde_cnt + 8192);
	assert_int_equal(cfi_table__bytes(), before + info.bytes);

	/* A second table of the same file, in a budget of one and a half: made, then its rows
	 * stop at the budget; the FDEs beyond it give no row (libdwfl unwinds them). */
	cfi_table__set_budget(before + info.bytes * 3 / 2);
	g.fd = -1;
	g.elf = f.elf;
	g.t = cfi_table__build(f.elf);
	assert_non_null(g.t);
	missing = build_all(g.t);
	assert_true(missing > info.fde_cnt / 4);
	assert_true(cfi_table__bytes() <= before + info.bytes * 3 / 2);
	cfi_table__free(g.t);
	assert_int_equal(cfi_table__bytes(), before + info.bytes);
	/* Not even the FDE ranges fit. */
	cfi_table__set_budget(before + info.bytes + 1024);
	errno = 0;
	assert_null(cfi_table__build(f.elf));
	assert_int_equal(errno, E2BIG);
	fixture__close(&f);
	assert_int_equal(cfi_table__bytes(), before);
	cfi_table__set_budget(64u << 20);
}

/* Not x86_64 or no CFI at all: refused with the reason. */
static void test_refused(void **state)
{
	const char *no_fde[] = { CFI_FIXTURE_NOCFI, CFI_FIXTURE_NOENTRIES };
	struct fixture f;
	char path[] = "/tmp/test_cfi_table.XXXXXX";
	Elf *elf;
	size_t i;
	int fd;

	elf_version(EV_CURRENT);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	/* A file that is no ELF. */
	assert_int_equal(write(fd, "not an ELF file at all", 22), 22);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	errno = 0;
	assert_null(cfi_table__build(elf));
	assert_int_equal(errno, ENOTSUP);
	elf_end(elf);
	close(fd);
	unlink(path);

	/* The fixture with .eh_frame, .eh_frame_hdr and .debug_frame removed; then with an
	 * .eh_frame of no entry (only its terminator: nothing to sort, under UBSan). */
	for (i = 0; i < ARRAY_SIZE(no_fde); i++) {
		f.fd = open(no_fde[i], O_RDONLY);
		assert_true(f.fd >= 0);
		f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, NULL);
		errno = 0;
		assert_null(cfi_table__build(f.elf));
		assert_int_equal(errno, ENODATA);
		elf_end(f.elf);
		close(f.fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readelf_eh),
		cmocka_unit_test(test_readelf_debug_frame),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_fde_find),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_plt_unsupported),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* CFI_FIXTURE */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_gopclntab.c: a Go binary's .gopclntab names the same functions, at the same addresses,
 * as its .symtab; the -ldflags='-s -w' build of the same program (no .symtab) is named through
 * symtab.c all the same; its file:line positions are the DWARF line table's, its inline frames
 * DWARF's inline scopes; a corrupted table never crashes the reader, and a crafted one
 * (tests/fixtures/gopclntab_craft.py), or a crafted .symtab, costs memory and time linear in
 * its size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "runtime/go/go.h"
#include "runtime/go/gopclntab.h"
#include "symbols/symtab.h"

struct func {
	uint64_t start, size;
	const char *name;
};

struct funcs {
	struct func *f;
	size_t cnt, cap;
};

static int collect(void *ctx, uint64_t start, uint64_t size, const char *name)
{
	struct funcs *fs = ctx;

	if (fs->cnt == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 1024;
		fs->f = realloc(fs->f, fs->cap * sizeof(*fs->f));
		assert_non_null(fs->f);
	}
	fs->f[fs->cnt++] = (struct func){ start, size, name };
	return 0;
}

static Elf *elf_open(const char *path, int *fd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(*fd >= 0);
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	return elf;
}

/*
 * The runtime's name of a function (what Go's tracebacks print) and the linker's: equal, but
 * for the ABI suffix of assembly functions ("runtime.rt0_go" and "runtime.rt0_go.abi0") and the
 * shape of a generic function's type arguments ("eq.[...]T" and "eq.[5]T").
 */
static bool same_name(const char *runtime, const char *linker)
{
	size_t n = strlen(runtime);
	const char *b = strchr(runtime, '[');

	if (!strcmp(runtime, linker))
		return true;
	if (!strncmp(runtime, linker, n) && !strcmp(linker + n, ".abi0"))
		return true;
	return b && !strncmp(runtime, linker, b - runtime + 1);
}

/* Every function of the binary's .symtab in .gopclntab, same start and name, and the reverse
 * for at least 99%: the symbol table is the linker's view of the same functions. */
static void test_matches_symtab(void **state)
{
	struct funcs fs = {};
	Elf_Scn *scn = NULL;
	size_t i, j, nsym = 0, found = 0;
	Elf_Data *d;
	GElf_Shdr sh;
	GElf_Sym sym;
	const char *name;
	int fd, n;
	Elf *elf;

	(void)state;
	elf = elf_open(GOCHAIN, &fd);
	n = gopclntab__functions(elf, collect, &fs);
	assert_true(n > 500);
	assert_int_equal((size_t)n, fs.cnt);
	for (i = 1; i < fs.cnt; i++)
		assert_true(fs.f[i].start >= fs.f[i - 1].start + fs.f[i - 1].size);
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < d->d_size / sizeof(Elf64_Sym); i++) {
			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			nsym++;
			for (j = 0; j < fs.cnt; j++) {
				if (fs.f[j].start == sym.st_value && same_name(fs.f[j].name, name)) {
					found++;
					break;
				}
			}
		}
	}
	assert_true(nsym > 500);
	fprintf(stderr, "gopclntab: %zu functions, .symtab %zu, %zu of them found alike\n", fs.cnt,
		nsym, found);
	/* The symbol table also has assembly stubs the runtime's table leaves out. */
	assert_true(found * 100 >= fs.cnt * 99);
	assert_true(found * 100 >= nsym * 95);
	elf_end(elf);
	close(fd);
	free(fs.f);
}

/* A row of the DWARF line tables: [addr, next row's addr) is at file:line. */
struct dline {
	uint64_t addr;
	const char *file;
	int line;
	bool end; /* end of a sequence: no position */
};

static int cmp_dline(const void *a, const void *b)
{
	const struct dline *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : (int)x->end - (int)y->end;
}

/* Every row of every CU's line table, sorted (Go writes no .debug_aranges: no dwarf_addrdie). */
static struct dline *dwarf_rows(Dwarf *dw, size_t *cnt)
{
	Dwarf_Off off = 0, next;
	size_t hsz, n = 0, cap = 0, i, nl;
	struct dline *rows = NULL;
	Dwarf_Lines *lines;
	Dwarf_Addr addr;
	Dwarf_Die cu;
	Dwarf_Line *l;
	bool end;

	while (!dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL)) {
		if (dwarf_offdie(dw, off + hsz, &cu) && !dwarf_getsrclines(&cu, &lines, &nl)) {
			for (i = 0; i < nl; i++) {
				l = dwarf_onesrcline(lines, i);
				if (n == cap) {
					cap = cap ? 2 * cap : 4096;
					rows = realloc(rows, cap * sizeof(*rows));
					assert_non_null(rows);
				}
				dwarf_lineaddr(l, &addr);
				dwarf_lineendsequence(l, &end);
				rows[n] = (struct dline){ .addr = addr, .end = end };
				dwarf_lineno(l, &rows[n].line);
				rows[n].file = dwarf_linesrc(l, NULL, NULL);
				n++;
			}
		}
		off = next;
	}
	qsort(rows, n, sizeof(*rows), cmp_dline);
	*cnt = n;
	return rows;
}

/* The row covering pc: the last one at or below it, unless it ends a sequence. */
static const struct dline *dwarf_row(const struct dline *rows, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rows[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && !rows[lo - 1].end && rows[lo - 1].file ? &rows[lo - 1] : NULL;
}

/* The unstripped gochain opened for a comparison with its DWARF: its table, DWARF and
 * functions (more than 500). */
struct go_dwarf {
	Elf *elf;
	int fd;
	struct gopclntab *g;
	Dwarf *dw;
	struct funcs fs;
};

static void go_dwarf_open(struct go_dwarf *d)
{
	memset(d, 0, sizeof(*d));
	d->elf = elf_open(GOCHAIN, &d->fd);
	d->g = gopclntab__new(d->elf);
	assert_non_null(d->g);
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	assert_non_null(d->dw);
	assert_true(gopclntab__functions(d->elf, collect, &d->fs) > 500);
}

static void go_dwarf_close(struct go_dwarf *d)
{
	dwarf_end(d->dw);
	gopclntab__free(d->g);
	elf_end(d->elf);
	close(d->fd);
	free(d->fs.f);
}

/*
 * gopclntab__line() against the DWARF line table the Go linker wrote from the same pcln data:
 * every 4th byte of every function, the same file and line wherever the pclntab gives one
 * (in inlined code, the inlined function's, as DWARF), and most addresses have one.
 */
static void test_lines_match_dwarf(void **state)
{
	uint64_t pc, tried = 0, given = 0, same = 0;
	const struct dline *row;
	struct dline *rows;
	struct go_dwarf d;
	const char *file;
	uint32_t line;
	size_t i, nrows;

	(void)state;
	go_dwarf_open(&d);
	rows = dwarf_rows(d.dw, &nrows);
	assert_true(nrows > 1000);
	for (i = 0; i < d.fs.cnt; i++) {
		for (pc = d.fs.f[i].start; pc < d.fs.f[i].start + d.fs.f[i].size; pc += 4) {
			tried++;
			if (gopclntab__line(d.g, pc, &file, &line))
				continue;
			given++;
			row = dwarf_row(rows, nrows, pc);
			/* libdw joins a relative name to the CU's directory, "." for Go. */
			if (row && (uint32_t)row->line == line &&
			    !strcmp(row->file + (strncmp(row->file, "./", 2) ? 0 : 2), file))
				same++;
			else if (given - same < 5)
				fprintf(stderr, "%#lx %s: pclntab %s:%u, DWARF %s:%d\n",
					(unsigned long)pc, d.fs.f[i].name, file, line,
					row ? row->file : "-", row ? row->line : 0);
		}
	}
	fprintf(stderr, "gopclntab lines: %lu addresses, %lu with a line, %lu as DWARF says\n",
		(unsigned long)tried, (unsigned long)given, (unsigned long)same);
	assert_true(given * 100 >= tried * 60);
	assert_true(same * 1000 >= given * 995);
	/* Outside every function: nothing. */
	assert_int_equal(gopclntab__line(d.g, 0, &file, &line), -ENOENT);
	free(rows);
	go_dwarf_close(&d);
}

/* A DW_TAG_subprogram's range, for finding the function DIE of a pc (Go writes no aranges;
 * libdw 0.188's dwarf_getscopes() leaks on Go's inlined subroutines, so the scopes are found
 * here). */
struct sub_range {
	uint64_t lo, hi;
	Dwarf_Off off;
};

static int sub_cmp(const void *a, const void *b)
{
	const struct sub_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every concrete DW_TAG_subprogram with a pc range, sorted. */
static struct sub_range *sub_ranges(Dwarf *dw, size_t *cnt)
{
	Dwarf_Off off = 0, next;
	struct sub_range *r = NULL;
	Dwarf_Addr lo, hi;
	size_t hsz, n = 0, cap = 0;
	Dwarf_Die cu, die;

	while (!dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL)) {
		if (dwarf_offdie(dw, off + hsz, &cu) && !dwarf_child(&cu, &die)) {
			do {
				if (dwarf_tag(&die) != DW_TAG_subprogram || dwarf_lowpc(&die, &lo) ||
				    dwarf_highpc(&die, &hi) || hi <= lo)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 1024;
					r = realloc(r, cap * sizeof(*r));
					assert_non_null(r);
				}
				r[n++] = (struct sub_range){ lo, hi, dwarf_dieoffset(&die) };
			} while (!dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	qsort(r, n, sizeof(*r), sub_cmp);
	*cnt = n;
	return r;
}

/* The innermost DW_TAG_inlined_subroutine under parent holding pc, into *out. */
static bool innermost_inlined(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *out)
{
	Dwarf_Die child;
	int tag;

	if (dwarf_child(parent, &child))
		return false;
	do {
		tag = dwarf_tag(&child);
		if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) ||
		    dwarf_haspc(&child, pc) <= 0)
			continue;
		if (innermost_inlined(&child, pc, out))
			return true;
		if (tag == DW_TAG_inlined_subroutine) {
			*out = child;
			return true;
		}
	} while (!dwarf_siblingof(&child, &child));
	return false;
}

/* The inline frames DWARF gives at pc, innermost first: names, and the call line of each but
 * the innermost (what bpfprof's own DWARF reader does: the innermost function scope, then its
 * concrete parents to the DW_TAG_subprogram). Returns the count. */
static int dwarf_frames(Dwarf *dw, const struct sub_range *r, size_t nr, uint64_t pc,
			const char **names, int *lines, int cap)
{
	Dwarf_Die sub, in, *chain = NULL;
	size_t lo = 0, hi = nr, mid;
	Dwarf_Attribute attr;
	int nc, i, n = 0, tag;
	Dwarf_Word w;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (!nr || pc < r[lo].lo || pc >= r[lo].hi || !dwarf_offdie(dw, r[lo].off, &sub))
		return 0;
	nc = dwarf_getscopes_die(innermost_inlined(&sub, pc, &in) ? &in : &sub, &chain);
	for (i = 0; i < nc && n < cap; i++) {
		tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		names[n] = dwarf_formstring(dwarf_attr_integrate(&chain[i], DW_AT_name, &attr));
		if (n + 1 < cap)
			lines[n + 1] = !dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr),
							&w) ? (int)w : -1;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(chain);
	return n;
}

/*
 * gopclntab__frames() against the DWARF inline scopes the Go compiler wrote for the same code:
 * at every 48th byte of every function, the same functions in the same order, the callers at
 * their inlined callees' call lines; and code inlined somewhere (the runtime inlines its lock
 * helpers, for one).
 */
static void test_inline_frames_match_dwarf(void **state)
{
	struct go_src_frame gf[16];
	const char *dn[16];
	int dl[16];
	uint64_t pc, tried = 0, same = 0, inlined = 0;
	struct sub_range *r;
	struct go_dwarf d;
	size_t i, nr;
	int n, m, k;

	(void)state;
	go_dwarf_open(&d);
	r = sub_ranges(d.dw, &nr);
	for (i = 0; i < d.fs.cnt; i++) {
		for (pc = d.fs.f[i].start; pc < d.fs.f[i].start + d.fs.f[i].size; pc += 48) {
			m = dwarf_frames(d.dw, r, nr, pc, dn, dl, 16);
			if (m <= 0)
				continue;
			tried++;
			n = gopclntab__frames(d.g, pc, gf, 16);
			inlined += n > 1;
			/* Names, and each caller's line: its inlined callee's call site. */
			for (k = 0; k < n && k < m && dn[k] && !strcmp(gf[k].name, dn[k]) &&
				    (!k || dl[k] < 0 || (int)gf[k].line == dl[k]);
			     k++)
				;
			if (k == n && n == m)
				same++;
			else if (tried - same < 5)
				fprintf(stderr, "%#lx in %s: pclntab %d frames (%s, %s), DWARF %d (%s, %s)\n",
					(unsigned long)pc, d.fs.f[i].name, n, n > 0 ? gf[0].name : "-",
					n > 1 ? gf[1].name : "-", m, dn[0] ? dn[0] : "-",
					m > 1 && dn[1] ? dn[1] : "-");
		}
	}
	fprintf(stderr, "gopclntab inline frames: %lu addresses with DWARF scopes, %lu the same, "
		"%lu inlined\n", (unsigned long)tried, (unsigned long)same, (unsigned long)inlined);
	assert_true(tried > 5000);
	assert_true(inlined * 100 >= tried);
	assert_true(same * 1000 >= tried * 995);
	free(r);
	go_dwarf_close(&d);
}

/* The stripped build: symtab.c names the chain from .gopclntab. */
static void test_stripped_names(void **state)
{
	const char *want[] = { "main.leafSpin", "main.level1", "main.level2", "main.main",
			       "runtime.main", "runtime.goexit" };
	struct funcs fs = {};
	struct symtab *st;
	uint64_t off;
	size_t i, j;
	int fd, found;
	Elf *elf;

	(void)state;
	elf = elf_open(GOCHAIN ".stripped", &fd);
	assert_true(gopclntab__functions(elf, collect, &fs) > 500);
	st = symtab__new(elf, GOCHAIN ".stripped");
	assert_non_null(st);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		for (j = 0, found = 0; j < fs.cnt && !found; j++) {
			if (strcmp(fs.f[j].name, want[i]))
				continue;
			found = 1;
			/* Any address inside names the function, offset from its start. */
			assert_string_equal(symtab__find(st, fs.f[j].start + fs.f[j].size / 2, &off),
					    want[i]);
			assert_int_equal(off, fs.f[j].size / 2);
		}
		assert_true(found);
	}
	symtab__free(st);
	elf_end(elf);
	close(fd);
	free(fs.f);
}

static int count_only(void *ctx, uint64_t start, uint64_t size, const char *name)
{
	(void)start;
	(void)size;
	assert_non_null(memchr(name, '\0', 1 << 20)); /* terminated */
	(*(size_t *)ctx)++;
	return 0;
}

/* Random bytes written over the table of a copy: no crash, nothing unterminated, in the
 * function walk and in the lookups (frame, line, inline frames). */
static void test_corrupted(void **state)
{
	char path[] = "/tmp/bpfprof-test-gopclntab-XXXXXX", cmd[512];
	unsigned int seed = 17;
	uint64_t off = 0, len = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct go_src_frame src[16];
	struct funcs fs = {};
	struct gopclntab *g;
	struct go_frame gf;
	const char *file;
	uint32_t line;
	size_t cnt, k;
	int fd, i, j, n, wfd;
	uint64_t pc;
	Elf *elf;
	uint8_t b;

	(void)state;
	elf = elf_open(GOCHAIN ".stripped", &fd);
	assert_true(gopclntab__functions(elf, collect, &fs) > 500);
	while ((scn = elf_nextscn(elf, scn))) {
		size_t shstrndx;

		elf_getshdrstrndx(elf, &shstrndx);
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".gopclntab")) {
			off = sh.sh_offset;
			len = sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(len > 64);
	wfd = mkstemp(path);
	assert_true(wfd >= 0);
	close(wfd);
	snprintf(cmd, sizeof(cmd), "cp %s %s", GOCHAIN ".stripped", path);
	assert_int_equal(system(cmd), 0);
	for (i = 0; i < 40; i++) {
		wfd = open(path, O_WRONLY);
		assert_true(wfd >= 0);
		/* The header and the function table's start take most of the hits. */
		for (j = 0; j < 64; j++) {
			b = rand_r(&seed);
			assert_int_equal(pwrite(wfd, &b, 1,
						off + (j < 32 ? (uint64_t)rand_r(&seed) % 128 :
								(uint64_t)rand_r(&seed) % len)),
					 1);
		}
		close(wfd);
		elf = elf_open(path, &fd);
		cnt = 0;
		gopclntab__functions(elf, count_only, &cnt);
		/* The unwinding and naming lookups at addresses of the intact table's functions. */
		g = gopclntab__new(elf);
		for (k = 0; g && k < fs.cnt; k += 3) {
			pc = fs.f[k].start + fs.f[k].size / 2;
			gopclntab__frame(g, pc, &gf);
			gopclntab__line(g, pc, &file, &line);
			n = gopclntab__frames(g, pc, src, 16);
			assert_true(n <= 16);
			while (n-- > 0)
				assert_non_null(memchr(src[n].name, '\0', 1 << 20));
		}
		gopclntab__free(g);
		elf_end(elf);
		close(fd);
	}
	unlink(path);
	free(fs.f);
}

/* What tests/fixtures/gopclntab_craft.py writes: functions 16 bytes apart from TEXT_START, the
 * first SHORT_FUNCS named by suffixes of a SHORT_LEN-byte name, LONG_FUNCS more by suffixes of
 * a name that runs to the section's end (megabytes). Its crafted .symtab has fewer short ones
 * (a symbol is 24 bytes). */
#define CRAFT_TEXT_START  0x10000000ull
#define CRAFT_SHORT_FUNCS 200000
#define CRAFT_SYMTAB_SHORT 100000
#define CRAFT_LONG_FUNCS  1000
#define CRAFT_SHORT_LEN	  3000

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/*
 * In a child with the agent's memory limit (RLIMIT_DATA 256 MiB: the DaemonSet's; not under
 * ASan, whose shadow counts) and 60 s: symtab.c's table of the crafted file at path (nshort
 * functions with short names), its names as the file spells them, none longer than the
 * bound. Exits 0 when all hold.
 */
static int crafted_names_child(const char *path, int nshort)
{
#ifndef UNDER_ASAN
	struct rlimit lim = { 256ull << 20, 256ull << 20 };
#endif
	char want[CRAFT_SHORT_LEN + 1];
	struct timespec t0, t1;
	struct symtab *st;
	const char *name;
	uint64_t off;
	int fd, i;
	Elf *elf;

	alarm(60);
#ifndef UNDER_ASAN
	if (setrlimit(RLIMIT_DATA, &lim))
		return 2;
#endif
	elf = elf_open(path, &fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = symtab__new(elf, path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!st) {
		fprintf(stderr, "crafted: symtab__new: %s\n", strerror(errno));
		return 3;
	}
	fprintf(stderr, "crafted names: symtab__new %.3f s, %zu symbols\n",
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, symtab__cnt(st));
	memcpy(want, "crafted_", 8);
	memset(want + 8, 'x', CRAFT_SHORT_LEN - 8);
	want[CRAFT_SHORT_LEN] = '\0';
	for (i = 0; i < nshort + CRAFT_LONG_FUNCS; i++) {
		name = symtab__find(st, CRAFT_TEXT_START + 16 * i + 4, &off);
		if (i < nshort && (!name || off != 4 || strcmp(name, want + i % CRAFT_SHORT_LEN))) {
			fprintf(stderr, "crafted: function %d named %.40s\n", i, name ? name : "-");
			return 4;
		}
		if (i >= nshort && name) {
			fprintf(stderr, "crafted: function %d named, %zu bytes\n", i, strlen(name));
			return 5;
		}
	}
	symtab__free(st);
	elf_end(elf);
	close(fd);
	return 0;
}

/* crafted_names_child() in a child; its peak RSS within 32 times the file's size. */
static void crafted_names_check(const char *path, int nshort)
{
	struct timespec t0, t1;
	struct rusage ru;
	struct stat sb;
	int status = 0;
	pid_t pid;

	assert_int_equal(stat(path, &sb), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(crafted_names_child(path, nshort));
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "crafted names: %lld-byte file, checked in %.3f s, peak RSS %ld KiB\n",
		(long long)sb.st_size,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
#ifndef UNDER_ASAN
	/* The file, its copy in libelf, and the table: well under 32 times the file. */
	assert_true((uint64_t)ru.ru_maxrss * 1024 < 32 * (uint64_t)sb.st_size);
#endif
}

/*
 * A crafted .gopclntab whose functions name suffixes of one region, some of one that runs to
 * the section's end (a 4 MB program): reading it costs memory and time linear in its size (a
 * reader that scans and copies a name per function took bpfprof 42 s and 4.9 GB). Names
 * longer than BPFPROF_SYM_NAME_MAX are no names; the real ones are shared, not copied per
 * function.
 */
static void test_crafted_names(void **state)
{
	(void)state;
	crafted_names_check(GO_CRAFTED "-names", CRAFT_SHORT_FUNCS);
}

/* The same names in a .symtab (a 4 MB ELF file): a reader that scanned each symbol's name to
 * the string table's end took minutes. */
static void test_crafted_symtab(void **state)
{
	(void)state;
	crafted_names_check(CRAFTED_SYMTAB, CRAFT_SYMTAB_SHORT);
}

/*
 * A pcsp table that adds 0x7fffffff twice: the value leaves int32 (Go's runtime would wrap
 * it), which no real table does: the frame is unknown, not undefined behaviour (UBSan aborts
 * on it under SANITIZE=1).
 */
static void test_crafted_pcsp(void **state)
{
	struct gopclntab *g;
	struct go_frame f;
	int fd;
	Elf *elf;

	(void)state;
	elf = elf_open(GO_CRAFTED "-pcsp", &fd);
	g = gopclntab__new(elf);
	assert_non_null(g);
	/* At the entry, the first value: -1 + 0x7fffffff. */
	assert_int_equal(gopclntab__frame(g, CRAFT_TEXT_START, &f), 0);
	assert_int_equal(f.sp_delta, 0x7ffffffe);
	assert_int_equal(f.start, CRAFT_TEXT_START);
	/* One byte on, the second delta overflows. */
	assert_int_equal(gopclntab__frame(g, CRAFT_TEXT_START + 1, &f), -ENOENT);
	gopclntab__free(g);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_symtab),
		cmocka_unit_test(test_lines_match_dwarf),
		cmocka_unit_test(test_inline_frames_match_dwarf),
		cmocka_unit_test(test_stripped_names),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_crafted_names),
		cmocka_unit_test(test_crafted_symtab),
		cmocka_unit_test(test_crafted_pcsp),
	};

	/* symtab.c names a stripped Go binary's functions through Go's symbol source, which a
	 * session registers (runtime_go_ops.new). */
	if (go__register())
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_symtab.c: symbol tables checked against nm, debug file lookups, corrupt ELF files. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "symbols/symtab.h"

#ifndef SYMTEST_ELF
#define SYMTEST_ELF "build/tests/fixtures/symtest"
#endif

#define PYTHON_ELF "/usr/bin/python3" /* Debian's: stripped, .dynsym only (make deps) */
#define LIBC_ELF "/lib/x86_64-linux-gnu/libc.so.6"

/* One line of "nm -S --defined-only". */
struct nm_sym {
	uint64_t addr;
	uint64_t size;		/* 0: nm printed no size */
	char type;
	char name[128];
};

static struct nm_sym *nm_syms;
static size_t nm_cnt;
static char tmpdir[64];
static char debug_root[128];

static const char *symtest(const char *suffix)
{
	static char path[PATH_MAX];
	const char *base = getenv("SYMTEST_ELF") ?: SYMTEST_ELF;

	snprintf(path, sizeof(path), "%s%s", base, suffix);
	return path;
}

static const char *tmp_path(const char *rel)
{
	static char path[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", tmpdir, rel);
	return path[i];
}

static bool is_text_type(char t)
{
	return t == 'T' || t == 't' || t == 'W' || t == 'w' || t == 'i';
}

static int nm_load(const char *path)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr, size = 0;
		struct nm_sym s = {};

		if (sscanf(line, "%llx %llx %c %127s", &addr, &size, &s.type, s.name) != 4) {
			size = 0;
			if (sscanf(line, "%llx %c %127s", &addr, &s.type, s.name) != 3)
				continue;
		}
		if (!is_text_type(s.type))
			continue;
		s.addr = addr;
		s.size = size;
		nm_syms = realloc(nm_syms, (nm_cnt + 1) * sizeof(*nm_syms));
		if (!nm_syms)
			return -1;
		nm_syms[nm_cnt++] = s;
	}
	return pclose(p) == 0 && nm_cnt ? 0 : -1;
}

static const struct nm_sym *nm_find(const char *name)
{
	size_t i;

	for (i = 0; i < nm_cnt; i++) {
		if (!strcmp(nm_syms[i].name, name))
			return &nm_syms[i];
	}
	fail_msg("nm has no %s", name);
	return NULL;
}

static uint64_t nm_addr(const char *name)
{
	return nm_find(name)->addr;
}

static struct symtab *symtab_from_image(const unsigned char *image, size_t size);

struct loaded {
	int fd;
	Elf *elf;
	struct symtab *st;
};

static struct symtab *load(const char *path, struct loaded *l)
{
	l->fd = open(path, O_RDONLY);
	if (l->fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	l->elf = elf_begin(l->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(l->elf);
	l->st = symtab__new(l->elf, path);
	assert_non_null(l->st);
	return l->st;
}

static void unload(struct loaded *l)
{
	symtab__free(l->st);
	elf_end(l->elf);
	close(l->fd);
}

static void assert_sym(struct symtab *st, uint64_t addr, const char *name, uint64_t off)
{
	uint64_t got_off = ~0ull;
	const char *got = symtab__find(st, addr, &got_off);

	assert_symbol(addr, got, got_off, name, off);
	if (!name)
		return;
	if (strcmp(got, name) || got_off != off)
		fail_msg("%#llx: want %s+%#llx, got %s+%#llx", (unsigned long long)addr, name,
			 (unsigned long long)off, got, (unsigned long long)got_off);
}

static void assert_not_sym(struct symtab *st, uint64_t addr, const char *name)
{
	const char *got = symtab__find(st, addr, NULL);

	if (got && !strcmp(got, name))
		fail_msg("%#llx: want anything but %s", (unsigned long long)addr, name);
}

/* What nm says about addr: the answer must name an nm symbol that starts at addr - off. */
static void assert_consistent_with_nm(struct symtab *st, uint64_t addr, bool must_find)
{
	uint64_t off;
	const char *got = symtab__find(st, addr, &off);
	size_t i;

	if (!got) {
		if (must_find)
			fail_msg("%#llx: no symbol, nm has one", (unsigned long long)addr);
		return;
	}
	for (i = 0; i < nm_cnt; i++) {
		const struct nm_sym *s = &nm_syms[i];

		if (s->addr == addr - off && !strcmp(s->name, got) && (!s->size || off < s->size))
			return;
	}
	fail_msg("%#llx: %s+%#llx is not an nm symbol covering it", (unsigned long long)addr, got,
		 (unsigned long long)off);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int setup(void **state)
{
	elf_version(EV_CURRENT);
	if (nm_load(symtest("")) < 0) {
		fprintf(stderr, "cannot read symbols of %s with nm: build it first\n", symtest(""));
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_symbolize.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	/* Keep /usr/lib/debug out of the fixture tests: only what a test puts there is found. */
	snprintf(debug_root, sizeof(debug_root), "%s/debugroot", tmpdir);
	mkdir(debug_root, 0755);
	return debug_file__set_dir(debug_root);
}

/* A failed test leaves by longjmp, past its own restores: every test starts from defaults. */
static int reset(void **state)
{
	demangle__set(1);
	demangle__set_full_names(0);
	return debug_file__set_dir(debug_root);
}

static int teardown(void **state)
{
	if (tmpdir[0])
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(nm_syms);
	debug_file__set_dir(NULL);
	return 0;
}

/* Every sized function nm lists, at its start, middle and last byte, and just past it. */
static void check_all_like_nm(struct symtab *st)
{
	size_t i;

	demangle__set(0);
	for (i = 0; i < nm_cnt; i++) {
		const struct nm_sym *s = &nm_syms[i];
		uint64_t off;

		if (!s->size)
			continue;
		/* At its start: this symbol or an alias (same address, offset 0). */
		assert_non_null(symtab__find(st, s->addr, &off));
		assert_true(off == 0);
		assert_consistent_with_nm(st, s->addr, true);
		assert_consistent_with_nm(st, s->addr + s->size / 2, true);
		assert_consistent_with_nm(st, s->addr + s->size - 1, true);
		assert_consistent_with_nm(st, s->addr + s->size, false);
	}
	demangle__set(1);
}

static void test_like_nm(void **state)
{
	struct loaded l;

	check_all_like_nm(load(symtest(""), &l));
	unload(&l);
}

static void test_known_symbols(void **state)
{
	const struct nm_sym *g = nm_find("symtest_global");
	struct symtab *st;
	struct loaded l;

	st = load(symtest(""), &l);
	assert_true(g->size > 8);
	assert_sym(st, g->addr, "symtest_global", 0);
	assert_sym(st, g->addr + 5, "symtest_global", 5);
	assert_sym(st, g->addr + g->size - 1, "symtest_global", g->size - 1);
	/* A LOCAL (static) function. */
	assert_sym(st, nm_addr("symtest_local") + 1, "symtest_local", 1);
	assert_sym(st, nm_addr("main"), "main", 0);
	/* Outside every function. */
	assert_sym(st, 0, NULL, 0);
	assert_sym(st, UINT64_MAX, NULL, 0);
	assert_sym(st, nm_addr("_init") - 1, NULL, 0);
	assert_true(symtab__cnt(st) >= 15);
	unload(&l);
}

static void test_aliases(void **state)
{
	struct symtab *st;
	struct loaded l;

	st = load(symtest(""), &l);
	/* GLOBAL over WEAK over LOCAL. */
	assert_sym(st, nm_addr("alias_local"), "alias_global", 0);
	assert_sym(st, nm_addr("alias_weak") + 1, "alias_global", 1);
	/* Binding first, spelling second. */
	assert_sym(st, nm_addr("plain_weak"), "__under_global", 0);
	assert_sym(st, nm_addr("_spelled_under"), "spelled_plain", 0);
	assert_sym(st, nm_addr("weak_vs_local_l"), "weak_vs_local_w", 0);
	/* Then fewer leading underscores, then the shorter name. */
	assert_sym(st, nm_addr("__GI___decorated"), "__decorated", 0);
	assert_sym(st, nm_addr("__two_under"), "_one_under_longer", 0);
	/* "nop; ret" then alignment padding: the padding belongs to no function. */
	assert_sym(st, nm_addr("alias_global") + 2, NULL, 0);
	assert_sym(st, nm_addr("spelled_plain") + 15, NULL, 0);
	unload(&l);
}

static void test_sizeless_and_nested(void **state)
{
	uint64_t outer = nm_addr("nest_outer"), tail = nm_addr("tail_fn");
	struct symtab *st;
	struct loaded l;

	st = load(symtest(""), &l);
	/* No size: up to the next symbol. */
	assert_true(nm_find("sizeless_fn")->size == 0);
	assert_sym(st, nm_addr("sizeless_fn") + 3, "sizeless_fn", 3);
	assert_sym(st, nm_addr("sized_after"), "sized_after", 0);
	assert_true(nm_addr("sized_after") == nm_addr("sizeless_fn") + 4);
	/* No size, last in its section: up to the section's end (3 bytes). */
	assert_true(nm_find("tail_fn")->size == 0);
	assert_sym(st, tail + 2, "tail_fn", 2);
	assert_not_sym(st, tail + 3, "tail_fn");
	/* nest_inner [4, 8) inside nest_outer [0, 16): the innermost wins, then the outer again. */
	assert_sym(st, outer + 3, "nest_outer", 3);
	assert_sym(st, outer + 4, "nest_inner", 0);
	assert_sym(st, outer + 7, "nest_inner", 3);
	assert_sym(st, outer + 8, "nest_outer", 8);
	assert_sym(st, outer + 15, "nest_outer", 15);
	assert_not_sym(st, outer + 16, "nest_outer");
	unload(&l);
}

static void test_demangle(void **state)
{
	uint64_t foo = nm_addr("_ZN2ns3fooEv");
	const char *a, *b, *raw = NULL;
	struct symtab *st;
	struct loaded l;
	char *s;

	/* The short form by default, as perf shows it; --full-names: the signature. */
	s = demangle__name("_ZN2ns3fooEv");
	assert_string_equal(s, "ns::foo");
	free(s);
	s = demangle__name("_ZNSt6vectorIiSaIiEE9push_backERKi");
	assert_string_equal(s, "std::vector<int, std::allocator<int> >::push_back");
	free(s);
	demangle__set_full_names(1);
	s = demangle__name("_ZN2ns3fooEv");
	assert_string_equal(s, "ns::foo()");
	free(s);
	s = demangle__name("_ZNSt6vectorIiSaIiEE9push_backERKi");
	assert_string_equal(s, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(s);
	demangle__set_full_names(0);
	assert_null(demangle__name("main"));
	assert_null(demangle__name("_Z"));
	assert_null(demangle__name("_Zx!"));
	assert_null(demangle__name("Z3foov"));
	assert_null(demangle__name(NULL));

	st = load(symtest(""), &l);
	a = symtab__find(st, foo + 1, NULL);
	assert_string_equal(a, "ns::foo");
	/* Cached in the table: the same string again. */
	b = symtab__find(st, foo, NULL);
	assert_ptr_equal(a, b);
	/* The name as the file spells it, for pprof's system_name. */
	assert_ptr_equal(symtab__find_sym(st, foo, NULL, &raw), a);
	assert_string_equal(raw, "_ZN2ns3fooEv");
	demangle__set(0);
	assert_sym(st, foo, "_ZN2ns3fooEv", 0);
	demangle__set(1);
	assert_sym(st, foo, "ns::foo", 0);
	/* Not mangled: as is. */
	assert_sym(st, nm_addr("symtest_global"), "symtest_global", 0);
	unload(&l);
}

static uint64_t entry_of(const char *path)
{
	GElf_Ehdr ehdr;
	uint64_t entry;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(gelf_getehdr(elf, &ehdr));
	entry = ehdr.e_entry;
	elf_end(elf);
	close(fd);
	return entry;
}

/* The table of a stripped copy plus its debug file answers like the unstripped file. */
static void assert_same_as_full(struct symtab *st)
{
	struct loaded full;

	load(symtest(""), &full);
	assert_int_equal(symtab__cnt(st), symtab__cnt(full.st));
	check_all_like_nm(st);
	assert_sym(st, nm_addr("symtest_local"), "symtest_local", 0);
	assert_sym(st, nm_addr("_ZN2ns3fooEv"), "ns::foo", 0);
	unload(&full);
}

/* How many PLT symbols path should have: objdump's labels in .plt and .plt.sec (PLT0 and an
 * entry each), and one for .plt.got if there is one. */
static size_t plt_symbols(const char *path)
{
	char cmd[2 * PATH_MAX + 160];
	unsigned int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "{ objdump -d -j .plt -j .plt.sec '%s' | grep -c '^[0-9a-f]* <.*>:$';"
		 " objdump -h '%s' | grep -c ' \\.plt\\.got '; } | awk '{ n += $1 } END { print n }'",
		 path, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%u", &n), 1);
	pclose(p);
	return n;
}

static void test_stripped_synthesizes_start(void **state)
{
	const struct nm_sym *start = nm_find("_start");
	const char *bin = tmp_path("alone/symtest");
	struct symtab *st;
	struct loaded l;

	/* No debug file anywhere: only .dynsym (imports only) and .eh_frame are left. */
	copy_file(symtest(".stripped"), bin);
	st = load(bin, &l);
	assert_true(entry_of(bin) == start->addr);
	assert_sym(st, nm_addr("symtest_local"), NULL, 0);
	assert_sym(st, nm_addr("symtest_global"), NULL, 0);
	/* _start spans its whole FDE, which is what the linker's size says too. */
	assert_true(start->size > 1);
	assert_sym(st, start->addr, "_start", 0);
	assert_sym(st, start->addr + start->size - 1, "_start", start->size - 1);
	assert_not_sym(st, start->addr + start->size, "_start");
	/* And the PLT's: the section names and an entry per import (test_plt_like_objdump). */
	assert_int_equal(symtab__cnt(st), 1 + plt_symbols(bin));
	unload(&l);
}

/*
 * The PLT has no symbols: its entries are "name@plt" and its stub PLT0 ".plt", where objdump
 * puts its own labels (<name@plt>, <first@plt-0x10>), in the file and in a stripped copy.
 */
static void check_plt_like_objdump(const char *path)
{
	char cmd[PATH_MAX + 64], line[512], name[256];
	unsigned long long addr;
	struct symtab *st;
	struct loaded l;
	int entries = 0, plt0 = 0;
	FILE *p;

	st = load(path, &l);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *at;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2)
			continue;
		at = strstr(name, "@plt");
		assert_non_null(at);
		if (at[4] == '-') {
			assert_sym(st, addr, ".plt", 0);
			plt0++;
			continue;
		}
		assert_sym(st, addr, name, 0);
		assert_sym(st, addr + 15, name, 15);
		entries++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(plt0, 1);
	assert_true(entries >= 1); /* printf */
	unload(&l);
}

static void test_plt_like_objdump(void **state)
{
	check_plt_like_objdump(symtest(""));
	check_plt_like_objdump(symtest(".stripped"));
}

/* An entry point whose FDE has several rows (main's prologue): _start spans all of them. */
static void test_start_spans_whole_fde(void **state)
{
	const struct nm_sym *m = nm_find("main");
	struct symtab *st;
	unsigned char *buf;
	size_t size;

	assert_int_equal(read_file(symtest(".stripped"), &buf, &size), 0);
	((Elf64_Ehdr *)buf)->e_entry = m->addr;
	st = symtab_from_image(buf, size);
	assert_sym(st, m->addr, "_start", 0);
	assert_sym(st, m->addr + m->size / 2, "_start", m->size / 2);
	assert_sym(st, m->addr + m->size - 1, "_start", m->size - 1);
	assert_not_sym(st, m->addr + m->size, "_start");
	symtab__free(st);
	free(buf);
}

static void test_debuglink_next_to_file(void **state)
{
	const char *bin = tmp_path("link1/symtest");
	struct loaded l;

	copy_file(symtest(".stripped"), bin);
	copy_file(symtest(".debug"), tmp_path("link1/symtest.debug"));
	assert_same_as_full(load(bin, &l));
	unload(&l);
}

static void test_debuglink_dot_debug(void **state)
{
	const char *bin = tmp_path("link2/symtest");
	struct loaded l;

	copy_file(symtest(".stripped"), bin);
	copy_file(symtest(".debug"), tmp_path("link2/.debug/symtest.debug"));
	assert_same_as_full(load(bin, &l));
	unload(&l);
}

static void test_debuglink_under_debug_dir(void **state)
{
	char dbg[PATH_MAX];
	const char *bin = tmp_path("link3/bin/symtest");
	struct loaded l;

	copy_file(symtest(".stripped"), bin);
	/* <debug dir>/<the file's directory>/<debuglink name> */
	snprintf(dbg, sizeof(dbg), "%s%s/link3/bin/symtest.debug", debug_root, tmpdir);
	copy_file(symtest(".debug"), dbg);
	assert_same_as_full(load(bin, &l));
	unload(&l);
}

static void test_build_id_path(void **state)
{
	char dbg[PATH_MAX];
	const char *bin = tmp_path("byid/symtest");
	uint8_t id[64];
	struct loaded l;
	size_t len, i;
	int n;

	/* A debug root of its own: the other tests must not find this file. */
	assert_int_equal(debug_file__set_dir(tmp_path("byid-root")), 0);
	len = build_id_of(symtest(".stripped"), id, sizeof(id));
	assert_true(len >= 2);
	n = snprintf(dbg, sizeof(dbg), "%s/.build-id/%02x/", tmp_path("byid-root"), id[0]);
	for (i = 1; i < len; i++)
		n += snprintf(dbg + n, sizeof(dbg) - n, "%02x", id[i]);
	snprintf(dbg + n, sizeof(dbg) - n, ".debug");
	copy_file(symtest(".debug"), dbg);
	copy_file(symtest(".stripped"), bin);
	assert_same_as_full(load(bin, &l));
	unload(&l);
	/* path is only for the debuglink: the build-id needs none. */
	l.fd = open(bin, O_RDONLY);
	l.elf = elf_begin(l.fd, ELF_C_READ_MMAP, NULL);
	l.st = symtab__new(l.elf, NULL);
	assert_non_null(l.st);
	assert_sym(l.st, nm_addr("symtest_local"), "symtest_local", 0);
	unload(&l);
}

static void test_debuglink_wrong_build_id(void **state)
{
	const char *bin = tmp_path("wrongid/symtest");
	unsigned char *buf, *p;
	uint8_t id[64];
	struct loaded l;
	size_t size, len;

	/* A debug file of another build under the right name: not used. */
	len = build_id_of(symtest(".debug"), id, sizeof(id));
	assert_true(len >= 2);
	assert_int_equal(read_file(symtest(".debug"), &buf, &size), 0);
	p = memmem(buf, size, id, len);
	assert_non_null(p);
	p[0] ^= 0xff;
	write_file(tmp_path("wrongid/symtest.debug"), buf, size);
	free(buf);
	copy_file(symtest(".stripped"), bin);
	load(bin, &l);
	assert_sym(l.st, nm_addr("symtest_local"), NULL, 0);
	assert_int_equal(symtab__cnt(l.st), 1 + plt_symbols(bin));
	unload(&l);
}

/* A table from a private copy of the first size bytes of image, freed before the lookups. */
static struct symtab *symtab_from_image(const unsigned char *image, size_t size)
{
	struct symtab *st;
	char *copy;
	Elf *elf;

	copy = malloc(size ? size : 1);
	assert_non_null(copy);
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	st = symtab__new(elf, NULL);
	assert_non_null(st);
	elf_end(elf);
	free(copy);
	return st;
}

struct image {
	unsigned char *buf;
	size_t size;
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *symtab;
	Elf64_Shdr *strtab;
	Elf64_Shdr *eh_frame;
};

static void image_load(struct image *img, const char *path)
{
	Elf64_Shdr *sh;
	const char *shstr;
	size_t i;

	assert_int_equal(read_file(path, &img->buf, &img->size), 0);
	img->ehdr = (Elf64_Ehdr *)img->buf;
	assert_int_equal(img->ehdr->e_ident[EI_CLASS], ELFCLASS64);
	sh = (Elf64_Shdr *)(img->buf + img->ehdr->e_shoff);
	shstr = (const char *)img->buf + sh[img->ehdr->e_shstrndx].sh_offset;
	img->symtab = img->strtab = img->eh_frame = NULL;
	for (i = 0; i < img->ehdr->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB)
			img->symtab = &sh[i];
		if (!strcmp(shstr + sh[i].sh_name, ".eh_frame"))
			img->eh_frame = &sh[i];
	}
	assert_non_null(img->symtab);
	assert_non_null(img->eh_frame);
	img->strtab = &sh[img->symtab->sh_link];
}

static Elf64_Sym *image_sym(struct image *img, const char *name)
{
	Elf64_Sym *sym = (Elf64_Sym *)(img->buf + img->symtab->sh_offset);
	const char *str = (const char *)img->buf + img->strtab->sh_offset;
	size_t i, n = img->symtab->sh_size / sizeof(*sym);

	for (i = 0; i < n; i++) {
		/* Some names were broken on purpose already. */
		if (sym[i].st_name < img->strtab->sh_size && !strcmp(str + sym[i].st_name, name))
			return &sym[i];
	}
	fail_msg("no symbol %s in the image", name);
	return NULL;
}

/* Only what is left readable: _start from .eh_frame and the PLT, nothing from the broken
 * .symtab. */
static void assert_only_start(struct symtab *st)
{
	assert_sym(st, nm_addr("_start"), "_start", 0);
	assert_sym(st, nm_addr("symtest_local"), NULL, 0);
	assert_int_equal(symtab__cnt(st), 1 + plt_symbols(symtest("")));
}

static void test_corrupt_sections(void **state)
{
	struct symtab *st;
	struct image img;
	Elf64_Shdr saved;
	size_t i;

	image_load(&img, symtest(""));
	/* Sanity: the untouched image gives the full table. */
	st = symtab_from_image(img.buf, img.size);
	assert_sym(st, nm_addr("symtest_local"), "symtest_local", 0);
	symtab__free(st);

	saved = *img.symtab;
	img.symtab->sh_link = 0xffff;
	st = symtab_from_image(img.buf, img.size);
	assert_only_start(st);
	symtab__free(st);

	/* sh_link to a section that is not a string table (the symtab itself). */
	*img.symtab = saved;
	img.symtab->sh_link = img.symtab - (Elf64_Shdr *)(img.buf + img.ehdr->e_shoff);
	st = symtab_from_image(img.buf, img.size);
	assert_only_start(st);
	symtab__free(st);

	*img.symtab = saved;
	img.symtab->sh_type = SHT_NOBITS;
	st = symtab_from_image(img.buf, img.size);
	assert_only_start(st);
	symtab__free(st);

	*img.symtab = saved;
	img.symtab->sh_offset = img.size + 4096;
	symtab__free(symtab_from_image(img.buf, img.size));

	*img.symtab = saved;
	img.symtab->sh_size = 1ull << 40;
	symtab__free(symtab_from_image(img.buf, img.size));

	/* A partial last entry (libelf refuses the section). */
	*img.symtab = saved;
	img.symtab->sh_size -= 5;
	symtab__free(symtab_from_image(img.buf, img.size));

	*img.symtab = saved;
	saved = *img.strtab;
	img.strtab->sh_size = 1ull << 40;
	symtab__free(symtab_from_image(img.buf, img.size));
	img.strtab->sh_offset = img.size - 1;
	img.strtab->sh_size = 1;
	symtab__free(symtab_from_image(img.buf, img.size));
	*img.strtab = saved;

	/* Section headers themselves: names unreadable, count and offset out of range. */
	img.ehdr->e_shstrndx = 0xfff0;
	st = symtab_from_image(img.buf, img.size);
	assert_sym(st, nm_addr("symtest_global"), "symtest_global", 0);
	symtab__free(st);
	free(img.buf);

	image_load(&img, symtest(""));
	img.ehdr->e_shoff = img.size - 10;
	symtab__free(symtab_from_image(img.buf, img.size));
	free(img.buf);

	image_load(&img, symtest(""));
	for (i = 0; i < 2; i++) {
		img.ehdr->e_shnum = i ? 0xffff : 1;
		symtab__free(symtab_from_image(img.buf, img.size));
	}
	free(img.buf);
}

static void test_corrupt_symbols(void **state)
{
	struct symtab *st;
	struct image img;
	char *strtab;

	image_load(&img, symtest(""));
	strtab = (char *)img.buf + img.strtab->sh_offset;

	/* Name offset past the string table: that symbol is skipped, not the others. */
	image_sym(&img, "symtest_global")->st_name = 0x7fffffff;
	image_sym(&img, "sizeless_fn")->st_shndx = 0xff00;
	image_sym(&img, "tail_fn")->st_shndx = 0x7000;
	/* Unterminated string table: the last name runs into the section's end. */
	strtab[img.strtab->sh_size - 1] = 'X';
	st = symtab_from_image(img.buf, img.size);
	assert_not_sym(st, nm_addr("symtest_global"), "symtest_global");
	assert_sym(st, nm_addr("symtest_local"), "symtest_local", 0);
	/* No section: a sizeless symbol still runs up to the next one. */
	assert_sym(st, nm_addr("sizeless_fn") + 3, "sizeless_fn", 3);
	assert_sym(st, nm_addr("tail_fn"), "tail_fn", 0);
	symtab__free(st);
	free(img.buf);
}

/* Deterministic byte noise over .symtab, .strtab and .eh_frame: anything but a crash. */
static void test_corrupt_fuzz(void **state)
{
	unsigned int seed = 12345;
	struct image img;
	unsigned char *orig;
	size_t i, j;

	image_load(&img, symtest(""));
	orig = malloc(img.size);
	memcpy(orig, img.buf, img.size);
	for (i = 0; i < 300; i++) {
		const Elf64_Shdr *targets[] = { img.symtab, img.strtab, img.eh_frame };
		const Elf64_Shdr *t = targets[i % 3];
		struct symtab *st;

		/* With .symtab hidden, _start comes from parsing the noisy .eh_frame. */
		if (t == img.eh_frame)
			img.symtab->sh_type = SHT_NOBITS;
		for (j = 0; j < 16; j++)
			img.buf[t->sh_offset + rand_r(&seed) % t->sh_size] = rand_r(&seed);
		st = symtab_from_image(img.buf, img.size);
		symtab__find(st, nm_addr("main"), NULL);
		symtab__find(st, nm_addr("_start") + 1, NULL);
		symtab__free(st);
		/* The section headers are in the image too: this undoes everything. */
		memcpy(img.buf, orig, img.size);
	}
	free(orig);
	free(img.buf);
}

static void test_truncated(void **state)
{
	unsigned char *buf;
	size_t size, len;

	assert_int_equal(read_file(symtest(""), &buf, &size), 0);
	for (len = 0; len < size; len += len < 256 ? 7 : 97) {
		struct symtab *st = symtab_from_image(buf, len);

		symtab__find(st, nm_addr("main"), NULL);
		symtab__free(st);
	}
	free(buf);
}

static void test_not_elf(void **state)
{
	char junk[] = "#!/bin/sh\necho not an ELF file\n";
	struct symtab *st;
	Elf *elf;

	st = symtab__new(NULL, NULL);
	assert_non_null(st);
	assert_int_equal(symtab__cnt(st), 0);
	assert_null(symtab__find(st, 0x1000, NULL));
	symtab__free(st);

	elf = elf_memory(junk, sizeof(junk));
	st = symtab__new(elf, "/nonexistent");
	assert_non_null(st);
	assert_int_equal(symtab__cnt(st), 0);
	symtab__free(st);
	elf_end(elf);

	assert_null(symtab__find(NULL, 0, NULL));
	symtab__free(NULL);
	assert_int_equal(debug_file__set_dir(tmp_path("x")), 0);
	{
		char long_dir[PATH_MAX + 2];

		memset(long_dir, 'a', sizeof(long_dir) - 1);
		long_dir[sizeof(long_dir) - 1] = '\0';
		assert_int_equal(debug_file__set_dir(long_dir), -ENAMETOOLONG);
	}
	assert_int_equal(debug_file__set_dir(debug_root), 0);
}

/* Value and size of a defined function in .dynsym, read here with libelf. */
static bool dynsym_lookup(Elf *elf, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && gelf_getsym(d, i, &sym); i++) {
			const char *n = elf_strptr(elf, shdr.sh_link, sym.st_name);

			if (n && !strcmp(n, name) && sym.st_shndx != SHN_UNDEF &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				*addr = sym.st_value;
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

static void test_python(void **state)
{
	uint64_t addr, size, off;
	struct symtab *st;
	struct loaded l;
	GElf_Ehdr ehdr;

	if (access(PYTHON_ELF, R_OK) && getenv("CI") && !strcmp(getenv("CI"), "true"))
		fail_msg("%s is missing (make deps installs python3)", PYTHON_ELF);
	if (access(PYTHON_ELF, R_OK))
		skip();
	debug_file__set_dir(NULL);
	st = load(PYTHON_ELF, &l);
	assert_non_null(gelf_getehdr(l.elf, &ehdr));
	assert_sym(st, ehdr.e_entry, "_start", 0);
	/* The return address of _start's call to __libc_start_main, near its end. */
	assert_non_null(symtab__find(st, ehdr.e_entry + 0x10, &off));
	assert_true(off == 0x10);

	assert_true(dynsym_lookup(l.elf, "_PyEval_EvalFrameDefault", &addr, &size));
	assert_true(size > 0x100);
	assert_sym(st, addr, "_PyEval_EvalFrameDefault", 0);
	assert_sym(st, addr + 0x100, "_PyEval_EvalFrameDefault", 0x100);
	assert_sym(st, addr + size - 1, "_PyEval_EvalFrameDefault", size - 1);
	assert_not_sym(st, addr + size, "_PyEval_EvalFrameDefault");
	assert_true(symtab__cnt(st) > 1000);
	unload(&l);
	debug_file__set_dir(debug_root);
}

static void test_libc(void **state)
{
	uint64_t addr, size;
	struct symtab *st;
	struct loaded l;

	if (access(LIBC_ELF, R_OK))
		skip();
	debug_file__set_dir(NULL);
	st = load(LIBC_ELF, &l);
	assert_true(dynsym_lookup(l.elf, "malloc", &addr, &size));
	assert_sym(st, addr, "malloc", 0);
	assert_sym(st, addr + size - 1, "malloc", size - 1);
	/* glibc's getpid is a WEAK alias of the GLOBAL __getpid: binding beats spelling. */
	assert_true(dynsym_lookup(l.elf, "getpid", &addr, &size));
	assert_sym(st, addr, "__getpid", 0);
	unload(&l);
	debug_file__set_dir(debug_root);
}

/* Rust's manglings (rustc's legacy one, wrapped in the Itanium grammar, and v0), C++ in both
 * forms, and names that only look mangled. */
static void test_demangle_rust(void **state)
{
	static const struct {
		const char *mangled, *want, *want_full;	/* default, --full-names */
	} cases[] = {
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", "core::fmt::write" },
		{ "_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example", "mycrate::example" },
		{ "_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar", "mycrate::foo::bar" },
		/* v0 generic arguments are part of the path: kept, as perf keeps them. */
		{ "_RINvNtCsgeViRQ9P5Or_9rustchain5chain6level2mEB4_",
		  "rustchain::chain::level2::<u32>", "rustchain::chain::level2::<u32>" },
		{ "_ZN2ns3fooEv", "ns::foo", "ns::foo()" },
		/* Template arguments kept; parameters, const, return type and clone suffix not. */
		{ "_ZNK3FooIiE3getIlEET_v", "Foo<int>::get<long>", "long Foo<int>::get<long>() const" },
		{ "_ZNK12bpfprof_test7SpinnerclEl", "bpfprof_test::Spinner::operator()",
		  "bpfprof_test::Spinner::operator()(long) const" },
		{ "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()",
		  "main::{lambda(int)#1}::operator()(int) const" },
		{ "_ZL8on_alarmi", "on_alarm", "on_alarm(int)" },
		{ "_Z3foov.cold", "foo", "foo() [clone .cold]" },
		{ "_Rfoo", NULL, NULL },
		{ "_Zfoo", NULL, NULL },
		{ "main", NULL, NULL },
	};
	const char *want;
	size_t i;
	char *got;
	int full;

	for (full = 0; full < 2; full++) {
		demangle__set_full_names(full);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			got = demangle__name(cases[i].mangled);
			want = full ? cases[i].want_full : cases[i].want;
			if (!want)
				assert_null(got);
			else
				assert_string_equal(got, want);
			free(got);
		}
	}
	demangle__set_full_names(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle_rust),
		cmocka_unit_test_setup(test_like_nm, reset),
		cmocka_unit_test_setup(test_known_symbols, reset),
		cmocka_unit_test_setup(test_aliases, reset),
		cmocka_unit_test_setup(test_sizeless_and_nested, reset),
		cmocka_unit_test_setup(test_demangle, reset),
		cmocka_unit_test_setup(test_stripped_synthesizes_start, reset),
		cmocka_unit_test_setup(test_start_spans_whole_fde, reset),
		cmocka_unit_test_setup(test_plt_like_objdump, reset),
		cmocka_unit_test_setup(test_debuglink_next_to_file, reset),
		cmocka_unit_test_setup(test_debuglink_dot_debug, reset),
		cmocka_unit_test_setup(test_debuglink_under_debug_dir, reset),
		cmocka_unit_test_setup(test_build_id_path, reset),
		cmocka_unit_test_setup(test_debuglink_wrong_build_id, reset),
		cmocka_unit_test_setup(test_corrupt_sections, reset),
		cmocka_unit_test_setup(test_corrupt_symbols, reset),
		cmocka_unit_test_setup(test_corrupt_fuzz, reset),
		cmocka_unit_test_setup(test_truncated, reset),
		cmocka_unit_test_setup(test_not_elf, reset),
		cmocka_unit_test_setup(test_python, reset),
		cmocka_unit_test_setup(test_libc, reset),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

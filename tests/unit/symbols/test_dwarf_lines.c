// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_dwarf_lines.c: inline frames and source lines checked against binutils' addr2line -i at
 * every address of the fixtures' functions, from the file's own DWARF, a .gnu_debuglink file, a
 * build-id debug file and (with run-debuginfod.sh's loopback server) debuginfod.
 */
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
#include "process/module_cache.h"
#include "symbols/debug_file.h"
#include "symbols/debuginfod.h"
#include "symbols/demangle.h"
#include "symbols/module_symbols.h"
#include "symbols/symtab.h"

#ifndef INLINE_FIXTURES
#define INLINE_FIXTURES "build/tests/fixtures"
#endif
#ifndef INLINE_SOURCES
#define INLINE_SOURCES "tests/fixtures"
#endif

#define MAX_FRAMES 16
/* A fetch from the loopback server takes well under a second; a slow CI machine, longer. */
#define FETCH_TIMEOUT_NS (60ull * 1000000000ull)

/* One frame as addr2line prints it: function, then file:line (basename kept). */
struct ref_frame {
	char function[256];
	char file[256];		/* basename, "" when unknown */
	uint32_t line;
};

/* What addr2line -i says about one address. */
struct ref_addr {
	uint64_t addr;
	size_t cnt;
	struct ref_frame frames[MAX_FRAMES];
};

/* An ELF file opened through a module cache of its own (copies share a build-id: one cache
 * would make them one entry). */
struct loaded {
	struct module_cache *mc;
	struct module *e;
};

static char tmpdir[64];
static char debug_root[128];

static const char *fix(const char *name)
{
	static char path[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", getenv("INLINE_FIXTURES") ?: INLINE_FIXTURES,
		 name);
	return path[i];
}

static const char *tmp_path(const char *rel)
{
	static char path[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", tmpdir, rel);
	return path[i];
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The line of the fixture source that holds the comment "/\* marker *\/" (once). */
static uint32_t marker_line(const char *src, const char *name)
{
	char path[PATH_MAX], line[512], marker[128];
	uint32_t n = 0, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", getenv("INLINE_SOURCES") ?: INLINE_SOURCES, src);
	snprintf(marker, sizeof(marker), "/* %s */", name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			if (found)
				fail_msg("%s: %s twice", path, marker);
			found = n;
		}
	}
	fclose(f);
	if (!found)
		fail_msg("%s: no %s", path, marker);
	return found;
}

/* Address and size of a function symbol, from nm -S. */
static void nm_func(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[PATH_MAX + 64], line[512], sym[256];
	unsigned long long a, s;
	bool found = false;
	char type;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*addr = a;
			*size = s;
			found = true;
		}
	}
	pclose(p);
	if (!found || !*size)
		fail_msg("nm %s: no sized %s", path, name);
}

/* addr2line -a -f -i [-C] for every address of [start, start + n): the reference. */
static struct ref_addr *addr2line(const char *path, uint64_t start, size_t n, bool demangle)
{
	struct ref_addr *refs = calloc(n, sizeof(*refs)), *cur = NULL;
	char line[1024], func[256] = "";
	bool have_func = false;
	size_t cmd_sz = PATH_MAX + 64 + n * 20, len, i;
	char *cmd = malloc(cmd_sz);
	FILE *p;

	assert_non_null(refs);
	assert_non_null(cmd);
	len = snprintf(cmd, cmd_sz, "addr2line -a -f -i %s -e '%s'", demangle ? "-C" : "", path);
	for (i = 0; i < n; i++)
		len += snprintf(cmd + len, cmd_sz - len, " %#llx", (unsigned long long)(start + i));
	p = popen(cmd, "r");
	assert_non_null(p);
	i = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char *colon, *disc;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2) && sscanf(line, "%llx", &a) == 1 && !have_func) {
			assert_true(i < n);
			cur = &refs[i++];
			cur->addr = a;
			assert_true(cur->addr == start + i - 1);
			continue;
		}
		assert_non_null(cur);
		if (!have_func) {
			snprintf(func, sizeof(func), "%.255s", line);
			have_func = true;
			continue;
		}
		/* "file:line", "file:line (discriminator N)", "??:0", "??:?" */
		have_func = false;
		disc = strstr(line, " (discriminator");
		if (disc)
			*disc = '\0';
		colon = strrchr(line, ':');
		assert_non_null(colon);
		*colon = '\0';
		assert_true(cur->cnt < MAX_FRAMES);
		snprintf(cur->frames[cur->cnt].function, sizeof(cur->frames[0].function), "%s",
			 func);
		snprintf(cur->frames[cur->cnt].file, sizeof(cur->frames[0].file), "%.255s",
			 strcmp(line, "??") ? base_name(line) : "");
		cur->frames[cur->cnt].line = strtoul(colon + 1, NULL, 10);
		cur->cnt++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(i, n);
	free(cmd);
	return refs;
}

static struct module *load(const char *path, struct loaded *l)
{
	l->mc = module_cache__new();
	assert_non_null(l->mc);
	l->e = module_cache__get(l->mc, path, path);
	if (!l->e)
		fail_msg("open %s: %s", path, strerror(errno));
	return l->e;
}

static void unload(struct loaded *l)
{
	module__put(l->e);
	module_cache__free(l->mc);
}

static void print_frames(uint64_t addr, const struct src_frame *f, int n)
{
	int i;

	fprintf(stderr, "  %#llx:", (unsigned long long)addr);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s@%s:%u", f[i].function, f[i].file ? base_name(f[i].file) : "?",
			f[i].line);
	fprintf(stderr, "\n");
}

/* module_symbols__frames() at every reference address gives addr2line's chain. */
static void check_like_addr2line(struct module *e, const struct ref_addr *refs, size_t n)
{
	struct src_frame f[MAX_FRAMES];
	size_t i, j;
	int cnt;

	for (i = 0; i < n; i++) {
		const struct ref_addr *r = &refs[i];

		cnt = module_symbols__frames(e, r->addr, f, MAX_FRAMES);
		if (cnt != (int)r->cnt) {
			print_frames(r->addr, f, cnt);
			fail_msg("%#llx: %d frames, addr2line -i gives %zu",
				 (unsigned long long)r->addr, cnt, r->cnt);
		}
		for (j = 0; j < r->cnt; j++) {
			const struct ref_frame *want = &r->frames[j];

			if (strcmp(f[j].function, want->function) || f[j].line != want->line ||
			    strcmp(f[j].file ? base_name(f[j].file) : "", want->file)) {
				print_frames(r->addr, f, cnt);
				fail_msg("%#llx frame %zu: want %s@%s:%u",
					 (unsigned long long)r->addr, j, want->function, want->file,
					 want->line);
			}
		}
	}
}

/* The same frames, pointer for pointer where DWARF strings are shared, at every address. */
static void assert_same_frames(struct module *a, struct module *b, uint64_t start, size_t n)
{
	struct src_frame fa[MAX_FRAMES], fb[MAX_FRAMES];
	int na, nb, j;
	size_t i;

	for (i = 0; i < n; i++) {
		na = module_symbols__frames(a, start + i, fa, MAX_FRAMES);
		nb = module_symbols__frames(b, start + i, fb, MAX_FRAMES);
		assert_true(na > 0);
		assert_int_equal(na, nb);
		for (j = 0; j < na; j++) {
			assert_string_equal(fa[j].function, fb[j].function);
			assert_string_equal(fa[j].file, fb[j].file);
			assert_int_equal(fa[j].line, fb[j].line);
		}
	}
}

/* The NT_GNU_BUILD_ID of path, read with libelf here. */
/* A copy of src whose build-id differs in its first byte: no debug file knows it. */
static void copy_other_build_id(const char *src, const char *dst)
{
	unsigned char *buf = NULL, *p;
	uint8_t id[64];
	size_t size = 0, len;

	len = build_id_of(src, id, sizeof(id));
	assert_int_equal(read_file(src, &buf, &size), 0);
	p = memmem(buf, size, id, len);
	assert_non_null(p);
	p[0] ^= 0xff;
	write_file(dst, buf, size);
	free(buf);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int setup(void **state)
{
	elf_version(EV_CURRENT);
	if (access(fix("inline"), R_OK)) {
		fprintf(stderr, "no %s: build the fixtures first\n", fix("inline"));
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_debuginfo.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	/* Only what a test puts under its debug root is found: not /usr/lib/debug. */
	snprintf(debug_root, sizeof(debug_root), "%s/debugroot", tmpdir);
	mkdir(debug_root, 0755);
	/* libdebuginfod's cache in the test's own directory, never the user's. */
	setenv("DEBUGINFOD_CACHE_PATH", tmp_path("debuginfod-cache"), 1);
	return debug_file__set_dir(debug_root);
}

static int reset(void **state)
{
	demangle__set(1);
	demangle__set_full_names(0);
	return debug_file__set_dir(debug_root);
}

static int teardown(void **state)
{
	debuginfod__shutdown();
	if (tmpdir[0])
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	debug_file__set_dir(NULL);
	return 0;
}

/* outer's and plain's addresses in path, for the checks below. */
struct fixture_funcs {
	uint64_t outer, outer_sz;
	uint64_t plain, plain_sz;
};

static void fixture_funcs(const char *path, struct fixture_funcs *ff)
{
	nm_func(path, "outer", &ff->outer, &ff->outer_sz);
	nm_func(path, "plain", &ff->plain, &ff->plain_sz);
}

/* Every address of outer and plain against addr2line; the chains and lines the source says. */
static void check_fixture(const char *path)
{
	uint32_t leaf_body = marker_line("inline.c", "LEAF_BODY");
	uint32_t call_leaf = marker_line("inline.c", "CALL_LEAF");
	uint32_t call_mid = marker_line("inline.c", "CALL_MID");
	uint32_t plain_body = marker_line("inline.c", "PLAIN_BODY");
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct ref_addr *refs;
	size_t i, three = 0, in_leaf_body = 0, at_plain_body = 0;
	struct loaded l;
	int n;

	fixture_funcs(path, &ff);
	load(path, &l);
	refs = addr2line(path, ff.outer, ff.outer_sz, false);
	check_like_addr2line(l.e, refs, ff.outer_sz);
	free(refs);
	refs = addr2line(path, ff.plain, ff.plain_sz, false);
	check_like_addr2line(l.e, refs, ff.plain_sz);
	free(refs);

	/* What the source says, whatever addr2line says. */
	for (i = 0; i < ff.outer_sz; i++) {
		n = module_symbols__frames(l.e, ff.outer + i, f, MAX_FRAMES);
		assert_true(n >= 1);
		assert_string_equal(f[n - 1].function, "outer");
		if (n != 3)
			continue;
		three++;
		assert_string_equal(f[0].function, "inl_leaf");
		assert_string_equal(f[1].function, "inl_mid");
		assert_int_equal(f[1].line, call_leaf);
		assert_int_equal(f[2].line, call_mid);
		assert_string_equal(base_name(f[2].file), "inline.c");
		if (f[0].line == leaf_body)
			in_leaf_body++;
	}
	assert_true(three > 0);
	assert_true(in_leaf_body > 0);
	for (i = 0; i < ff.plain_sz; i++) {
		n = module_symbols__frames(l.e, ff.plain + i, f, MAX_FRAMES);
		assert_int_equal(n, 1);
		assert_string_equal(f[0].function, "plain");
		if (f[0].line == plain_body)
			at_plain_body++;
	}
	assert_true(at_plain_body > 0);
	unload(&l);
}

static void test_gcc_like_addr2line(void **state)
{
	check_fixture(fix("inline"));
}

/* clang writes no .debug_aranges: the CU comes from the CUs' own ranges. */
static void test_clang_like_addr2line(void **state)
{
	check_fixture(fix("inline.clang"));
}

/* An address of outer inside inl_leaf (three frames). */
static uint64_t addr_in_leaf(struct module *e, const struct fixture_funcs *ff)
{
	struct src_frame f[MAX_FRAMES];
	size_t i;

	for (i = 0; i < ff->outer_sz; i++)
		if (module_symbols__frames(e, ff->outer + i, f, MAX_FRAMES) == 3)
			return ff->outer + i;
	fail_msg("no address of outer is in inl_leaf");
	return 0;
}

/* A chain deeper than cap keeps its outer frames; cap 0 is an error. */
static void test_cap(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded l;
	uint64_t addr;

	fixture_funcs(fix("inline"), &ff);
	load(fix("inline"), &l);
	addr = addr_in_leaf(l.e, &ff);
	assert_int_equal(module_symbols__frames(l.e, addr, f, 2), 2);
	assert_string_equal(f[0].function, "inl_mid");
	assert_int_equal(f[0].line, marker_line("inline.c", "CALL_LEAF"));
	assert_string_equal(f[1].function, "outer");
	assert_int_equal(module_symbols__frames(l.e, addr, f, 1), 1);
	assert_string_equal(f[0].function, "outer");
	assert_int_equal(f[0].line, marker_line("inline.c", "CALL_MID"));
	assert_int_equal(module_symbols__frames(l.e, addr, f, 0), -EINVAL);
	assert_int_equal(module_symbols__frames(NULL, addr, f, 1), -EINVAL);
	/* Outside every CU: no DWARF covers it. */
	assert_int_equal(module_symbols__frames(l.e, 0, f, MAX_FRAMES), 0);
	assert_int_equal(module_symbols__frames(l.e, UINT64_MAX - 1, f, MAX_FRAMES), 0);
	unload(&l);
}

/*
 * The real function is named as the symbol table names it when the symbol starts in it: the
 * GLOBAL alias over DWARF's name of the LOCAL function, as without DWARF.
 */
static void test_symtab_name(void **state)
{
	struct src_frame f[MAX_FRAMES];
	uint64_t addr, size, i;
	struct loaded l;

	nm_func(fix("inline"), "aliased_impl", &addr, &size);
	load(fix("inline"), &l);
	for (i = 0; i < size; i++) {
		assert_int_equal(module_symbols__frames(l.e, addr + i, f, MAX_FRAMES), 1);
		assert_string_equal(f[0].function, "aliased_api");
	}
	unload(&l);
}

/* A stripped copy finds inline.debug through .gnu_debuglink, next to it. */
static void test_debuglink(void **state)
{
	struct fixture_funcs ff;
	struct loaded full, link;

	fixture_funcs(fix("inline"), &ff);
	copy_file(fix("inline.stripped"), tmp_path("link/inline"));
	copy_file(fix("inline.debug"), tmp_path("link/inline.debug"));
	load(fix("inline"), &full);
	load(tmp_path("link/inline"), &link);
	assert_same_frames(full.e, link.e, ff.outer, ff.outer_sz);
	assert_same_frames(full.e, link.e, ff.plain, ff.plain_sz);
	unload(&link);
	unload(&full);
}

/* A copy without debuglink finds <debug root>/.build-id/xx/yyyy.debug. */
static void test_build_id_dir(void **state)
{
	char dbg[PATH_MAX];
	struct fixture_funcs ff;
	struct loaded full, byid;
	uint8_t id[64];
	size_t len, i;
	int n;

	fixture_funcs(fix("inline"), &ff);
	assert_int_equal(debug_file__set_dir(tmp_path("byid-root")), 0);
	len = build_id_of(fix("inline.nolink"), id, sizeof(id));
	n = snprintf(dbg, sizeof(dbg), "%s/.build-id/%02x/", tmp_path("byid-root"), id[0]);
	for (i = 1; i < len; i++)
		n += snprintf(dbg + n, sizeof(dbg) - n, "%02x", id[i]);
	snprintf(dbg + n, sizeof(dbg) - n, ".debug");
	copy_file(fix("inline.debug"), dbg);
	copy_file(fix("inline.nolink"), tmp_path("byid/inline"));
	load(fix("inline"), &full);
	load(tmp_path("byid/inline"), &byid);
	assert_same_frames(full.e, byid.e, ff.outer, ff.outer_sz);
	unload(&byid);
	unload(&full);
}

/* No DWARF anywhere: 0, the caller's cue to use the symbol table. */
static void test_no_dwarf(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded l;
	size_t i;

	fixture_funcs(fix("inline"), &ff);
	copy_file(fix("inline.nolink"), tmp_path("nodwarf/inline"));
	/* A debuglink file of another build next to it changes nothing either. */
	copy_file(fix("inline.stripped"), tmp_path("nodwarf2/inline"));
	copy_other_build_id(fix("inline.debug"), tmp_path("nodwarf2/inline.debug"));
	load(tmp_path("nodwarf/inline"), &l);
	for (i = 0; i < ff.outer_sz; i++)
		assert_int_equal(module_symbols__frames(l.e, ff.outer + i, f, MAX_FRAMES), 0);
	unload(&l);
	load(tmp_path("nodwarf2/inline"), &l);
	for (i = 0; i < ff.outer_sz; i++)
		assert_int_equal(module_symbols__frames(l.e, ff.outer + i, f, MAX_FRAMES), 0);
	unload(&l);
}

/*
 * Split DWARF whose .dwo path (next to the file, where libdw looks first) is a FIFO: libdw
 * would block in open() for ever if asked for the split unit; the skeleton's line table is all
 * module_symbols__frames() reads. SIGALRM ends the test if anything blocks.
 */
static void test_split_dwarf_fifo(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded l;
	size_t i;

	fixture_funcs(fix("inline.split"), &ff);
	copy_file(fix("inline.split"), tmp_path("split/inline.split"));
	assert_int_equal(mkfifo(tmp_path("split/inline_split.dwo"), 0600), 0);
	load(tmp_path("split/inline.split"), &l);
	alarm(20);
	for (i = 0; i < ff.outer_sz; i++) {
		assert_int_equal(module_symbols__frames(l.e, ff.outer + i, f, MAX_FRAMES), 1);
		assert_string_equal(f[0].function, "outer");
		assert_non_null(f[0].file);
		assert_string_equal(base_name(f[0].file), "inline.c");
	}
	alarm(0);
	unload(&l);
}

/*
 * A dwz'd copy whose names live in its alt file (.gnu_debugaltlink "inline.dwz", next to it):
 * the frames of the original. With a FIFO in the alt file's place, libdw would block in
 * open() for ever at the first name: the DWARF is not used (0 frames: symbol names instead).
 * SIGALRM ends the test if anything blocks.
 */
static void test_dwz_alt(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded full, l;
	size_t i;

	fixture_funcs(fix("inline"), &ff);
	copy_file(fix("inline.dwz_a"), tmp_path("dwz/inline"));
	copy_file(fix("inline.dwz"), tmp_path("dwz/inline.dwz"));
	load(fix("inline"), &full);
	load(tmp_path("dwz/inline"), &l);
	assert_same_frames(full.e, l.e, ff.outer, ff.outer_sz);
	unload(&l);
	unload(&full);

	copy_file(fix("inline.dwz_a"), tmp_path("dwzfifo/inline"));
	assert_int_equal(mkfifo(tmp_path("dwzfifo/inline.dwz"), 0600), 0);
	load(tmp_path("dwzfifo/inline"), &l);
	alarm(20);
	for (i = 0; i < ff.outer_sz; i++)
		assert_int_equal(module_symbols__frames(l.e, ff.outer + i, f, MAX_FRAMES), 0);
	alarm(0);
	assert_string_equal(symtab__find(module_symbols__symtab(l.e), ff.outer, NULL), "outer");
	unload(&l);
}

/*
 * C++: names through DW_AT_abstract_origin and DW_AT_specification, demangled or not, with the
 * mangled linkage name as system_name. Full signatures (--full-names) as addr2line -C prints
 * them; by default the short form perf shows, "ns::counter::step".
 */
static void test_cxx(void **state)
{
	const char *path = fix("inline_cxx");
	uint32_t call_step = marker_line("inline_cxx.cc", "CXX_CALL_STEP");
	struct src_frame f[MAX_FRAMES];
	struct ref_addr *refs;
	uint64_t run, run_sz;
	size_t i, two = 0;
	struct loaded l;
	int n, full;

	nm_func(path, "_ZN2ns3runEm", &run, &run_sz);
	for (full = 1; full >= 0; full--) {
		/* The form is set before the file's first lookup (its names are cached). */
		demangle__set_full_names(full);
		load(path, &l);
		if (full) {
			refs = addr2line(path, run, run_sz, true);
			check_like_addr2line(l.e, refs, run_sz);
			free(refs);
		}
		for (i = 0; i < run_sz; i++) {
			n = module_symbols__frames(l.e, run + i, f, MAX_FRAMES);
			assert_true(n >= 1);
			assert_string_equal(f[n - 1].function,
					    full ? "ns::run(unsigned long)" : "ns::run");
			assert_string_equal(f[n - 1].system_name, "_ZN2ns3runEm");
			if (n != 2)
				continue;
			two++;
			assert_string_equal(f[0].function, full ? "ns::counter::step(unsigned long)"
								 : "ns::counter::step");
			assert_string_equal(f[0].system_name, "_ZN2ns7counter4stepEm");
			assert_int_equal(f[1].line, call_step);
			demangle__set(0);
			assert_int_equal(module_symbols__frames(l.e, run + i, f, MAX_FRAMES), 2);
			assert_string_equal(f[0].function, "_ZN2ns7counter4stepEm");
			assert_string_equal(f[1].function, "_ZN2ns3runEm");
			demangle__set(1);
		}
		unload(&l);
	}
	assert_true(two > 0);
}

/* Without DEBUGINFOD_URLS nothing is queued; a file with DWARF is never fetched. */
static void test_request_without_urls(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded l;
	char buf[PATH_MAX];
	uint8_t id[64];
	size_t len;

	fixture_funcs(fix("inline"), &ff);
	unsetenv("DEBUGINFOD_URLS");
	copy_file(fix("inline.nolink"), tmp_path("nourls/inline"));
	load(tmp_path("nourls/inline"), &l);
	module_symbols__request_debuginfo(l.e);
	assert_int_equal(debuginfod__wait(0), 0);
	assert_int_equal(module_symbols__frames(l.e, ff.outer, f, MAX_FRAMES), 0);
	len = build_id_of(fix("inline.nolink"), id, sizeof(id));
	assert_int_equal(debuginfod__fetched_path(id, len, buf, sizeof(buf)), -ENOENT);
	unload(&l);
}

/* A server that refuses connections: the fetch fails, wait returns, nothing changes. */
static void test_request_unreachable(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded l;
	char buf[PATH_MAX];
	uint8_t id[64];
	size_t len;

	fixture_funcs(fix("inline"), &ff);
	/* Port 1 on loopback: nothing listens there. */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	copy_file(fix("inline.nolink"), tmp_path("unreachable/inline"));
	load(tmp_path("unreachable/inline"), &l);
	module_symbols__request_debuginfo(l.e);
	module_symbols__request_debuginfo(l.e);
	assert_int_equal(debuginfod__wait(FETCH_TIMEOUT_NS), 0);
	assert_int_equal(module_symbols__frames(l.e, ff.outer, f, MAX_FRAMES), 0);
	len = build_id_of(fix("inline.nolink"), id, sizeof(id));
	assert_int_equal(debuginfod__fetched_path(id, len, buf, sizeof(buf)), -ENOENT);
	unload(&l);
	debuginfod__shutdown();
	unsetenv("DEBUGINFOD_URLS");
}

/*
 * Against a debuginfod that serves inline.debug (tests/integration/run-debuginfod.sh sets
 * BPFPROF_TEST_DEBUGINFOD=1 and DEBUGINFOD_URLS): a stripped file without debuglink gets
 * its frames and its function names once the fetch finished; an unknown build-id fails.
 */
static void test_debuginfod_server(void **state)
{
	struct src_frame f[MAX_FRAMES];
	struct fixture_funcs ff;
	struct loaded full, l, unknown;
	char buf[PATH_MAX];
	struct symtab *st;
	uint8_t id[64];
	size_t len;

	if (!getenv("BPFPROF_TEST_DEBUGINFOD")) {
		fprintf(stderr, "  no loopback debuginfod (run-debuginfod.sh runs this test)\n");
		skip();
	}
	assert_non_null(getenv("DEBUGINFOD_URLS"));
	fixture_funcs(fix("inline"), &ff);
	copy_file(fix("inline.nolink"), tmp_path("server/inline"));
	copy_other_build_id(fix("inline.nolink"), tmp_path("server/unknown"));
	load(fix("inline"), &full);
	load(tmp_path("server/inline"), &l);
	load(tmp_path("server/unknown"), &unknown);
	assert_int_equal(module_symbols__frames(l.e, ff.outer, f, MAX_FRAMES), 0);
	assert_null(symtab__find(module_symbols__symtab(l.e), ff.outer, NULL));
	assert_false(module_symbols__symtab_stale(l.e));

	module_symbols__request_debuginfo(l.e);
	module_symbols__request_debuginfo(unknown.e);
	assert_int_equal(debuginfod__wait(FETCH_TIMEOUT_NS), 0);
	len = build_id_of(fix("inline.nolink"), id, sizeof(id));
	assert_int_equal(debuginfod__fetched_path(id, len, buf, sizeof(buf)), 0);
	assert_same_frames(full.e, l.e, ff.outer, ff.outer_sz);
	assert_same_frames(full.e, l.e, ff.plain, ff.plain_sz);
	st = symtab__new(l.e->elf, l.e->path);
	assert_string_equal(symtab__find(st, ff.outer, NULL), "outer");
	symtab__free(st);
	/* The entry's table predates the fetch: stale once, not again. */
	assert_true(module_symbols__symtab_stale(l.e));
	assert_false(module_symbols__symtab_stale(l.e));
	assert_false(module_symbols__symtab_stale(unknown.e));
	assert_int_equal(module_symbols__frames(unknown.e, ff.outer, f, MAX_FRAMES), 0);
	len = build_id_of(tmp_path("server/unknown"), id, sizeof(id));
	assert_int_equal(debuginfod__fetched_path(id, len, buf, sizeof(buf)), -ENOENT);
	unload(&unknown);
	unload(&l);
	unload(&full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_gcc_like_addr2line, reset),
		cmocka_unit_test_setup(test_clang_like_addr2line, reset),
		cmocka_unit_test_setup(test_cap, reset),
		cmocka_unit_test_setup(test_symtab_name, reset),
		cmocka_unit_test_setup(test_debuglink, reset),
		cmocka_unit_test_setup(test_build_id_dir, reset),
		cmocka_unit_test_setup(test_no_dwarf, reset),
		cmocka_unit_test_setup(test_split_dwarf_fifo, reset),
		cmocka_unit_test_setup(test_dwz_alt, reset),
		cmocka_unit_test_setup(test_cxx, reset),
		cmocka_unit_test_setup(test_request_without_urls, reset),
		cmocka_unit_test_setup(test_request_unreachable, reset),
		cmocka_unit_test_setup(test_debuginfod_server, reset),
	};

	/* run-debuginfod.sh runs only the server test: cmocka's filter, a glob on test names. */
	if (getenv("BPFPROF_TEST_FILTER"))
		cmocka_set_test_filter(getenv("BPFPROF_TEST_FILTER"));
	return cmocka_run_group_tests(tests, setup, teardown);
}

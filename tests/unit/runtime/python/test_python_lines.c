// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_python_lines.c: python_line() against CPython itself. python_lines.mk runs each
 * interpreter present (3.10 to 3.15; 3.14 and 3.15 in a container root) on tests/fixtures/python_linetable.py, which prints the
 * co_linetable of every code object it compiles and, for every offset, the line co_lines()
 * gives it: each must come out of python_line(). The test needs Debian's python3 (the
 * versioned binary /usr/bin/python3 links to, whatever its minor: python_lines.mk gives it as
 * that minor's interpreter) and skips the other versions whose interpreter (PY_LINES_3_<minor>)
 * is absent. Then the same tables cut at many
 * lengths, with bytes changed at random, and random bytes; a PROT_NONE page follows every
 * table passed, so a read past its end faults.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "runtime/python/python_lines.h"
#include "util/util.h"

/* python_lines.mk gives them all */
#ifndef PY_LINES_FIXTURES
#define PY_LINES_FIXTURES "build/tests/fixtures/python_linetable"
#endif
#ifndef PY_LINES_3_10
#define PY_LINES_3_10 "/root/.pyenv/versions/3.10.13/bin/python3.10"
#endif
#ifndef PY_LINES_3_11
#define PY_LINES_3_11 "/root/.pyenv/versions/3.11.7/bin/python3.11"
#endif
#ifndef PY_LINES_3_12
#define PY_LINES_3_12 "/root/.pyenv/versions/3.12.1/bin/python3.12"
#endif
#ifndef PY_LINES_3_13
#define PY_LINES_3_13 "/root/.pyenv/versions/3.13.0/bin/python3.13"
#endif
/* 3.14 and 3.15: a container root's (python_lines.mk's PY_LINES_ROOT), else absent */
#ifndef PY_LINES_3_14
#define PY_LINES_3_14 ""
#endif
#ifndef PY_LINES_3_15
#define PY_LINES_3_15 ""
#endif

#define DEBIAN_PYTHON "/usr/bin/python3" /* its version's interpreter must be present */
#define CUT	      4096		 /* the bytes of a table bpfprof reads from a process */

/* One code object as CPython printed it: want[i] is the line of offset 2 * i, or -ENOENT. */
struct code_fix {
	char name[64];
	int firstlineno;
	uint8_t *tab;
	size_t len;
	int *want;
	size_t cnt;
};

/* The fixture of one version; python: its interpreter, absent or not. */
struct version {
	unsigned int minor;
	const char *python;
	bool absent;
	bool bad; /* its fixture is missing or unreadable */
	struct code_fix *codes;
	size_t cnt;
};

static struct version versions[] = {
	{ .minor = 10, .python = PY_LINES_3_10 },
	{ .minor = 11, .python = PY_LINES_3_11 },
	{ .minor = 12, .python = PY_LINES_3_12 },
	{ .minor = 13, .python = PY_LINES_3_13 },
	{ .minor = 14, .python = PY_LINES_3_14 },
	{ .minor = 15, .python = PY_LINES_3_15 },
};

/* The minor of Debian's python3 (3.11 on Debian 12, 3.13 on Debian 13), 0 when it is missing. */
static unsigned int debian_minor;

/* Readable bytes that end right before a PROT_NONE page. */
static struct {
	uint8_t *map;
	size_t size;
} guard;

/* A copy of buf that ends at the guard page (valid until the next call). */
static const uint8_t *guarded(const void *buf, size_t len)
{
	size_t page = sysconf(_SC_PAGESIZE);

	if (!guard.map || len > guard.size) {
		if (guard.map)
			munmap(guard.map, guard.size + page);
		guard.size = (len / page + 1) * page;
		guard.map = mmap(NULL, guard.size + page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(guard.map != MAP_FAILED);
		assert_int_equal(mprotect(guard.map + guard.size, page, PROT_NONE), 0);
	}
	if (len)
		memcpy(guard.map + guard.size - len, buf, len);
	return guard.map + guard.size - len;
}

/* xorshift64: random tables that a failure message can name by seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "code MINOR FIRSTLINENO CODELEN HEX NAME" into a new code of v; its offsets follow. */
static int parse_code(struct version *v, char *line)
{
	struct code_fix *c, *codes;
	unsigned int minor;
	size_t codelen, i;
	char *hex, *name;
	int first, n = 0;

	if (sscanf(line, "code %u %d %zu %n", &minor, &first, &codelen, &n) != 3 || !n ||
	    minor != v->minor)
		return -1;
	hex = line + n;
	name = strchr(hex, ' ');
	if (!name)
		return -1;
	*name++ = '\0';
	name[strcspn(name, "\n")] = '\0';
	codes = realloc(v->codes, (v->cnt + 1) * sizeof(*codes));
	if (!codes)
		return -1;
	v->codes = codes;
	c = &codes[v->cnt++];
	memset(c, 0, sizeof(*c));
	c->firstlineno = first;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->len = strcmp(hex, "-") ? strlen(hex) / 2 : 0;
	c->tab = malloc(c->len + 1);
	/* every even offset of the code and two past it */
	c->want = malloc((codelen / 2 + 2) * sizeof(*c->want));
	if (!c->tab || !c->want || (c->len && strlen(hex) % 2))
		return -1;
	for (i = 0; i < c->len; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		c->tab[i] = hi << 4 | lo;
	}
	c->cnt = codelen / 2 + 2; /* checked against the "at" lines */
	return 0;
}

/* "at OFFSET LINE" of the last code: the offsets come in order from 0. */
static int parse_at(struct version *v, const char *line, size_t *seen)
{
	struct code_fix *c = v->cnt ? &v->codes[v->cnt - 1] : NULL;
	char want[16];
	size_t off;

	if (!c || sscanf(line, "at %zu %15s", &off, want) != 2 || off != 2 * *seen ||
	    *seen >= c->cnt)
		return -1;
	c->want[(*seen)++] = strcmp(want, "-") ? atoi(want) : -ENOENT;
	return 0;
}

/* PY_LINES_FIXTURES/3.<minor>.txt into v; 0, or -1 with a message. */
static int load(struct version *v)
{
	size_t cap = 0, seen = 0;
	char path[PATH_MAX], *line = NULL;
	int err = 0, lineno = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/3.%u.txt", PY_LINES_FIXTURES, v->minor);
	f = fopen(path, "r");
	if (!f) {
		print_error("open %s: %m (made by tests/unit/python_lines.mk)\n", path);
		return -1;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		lineno++;
		if (!strncmp(line, "code ", 5)) {
			err = v->cnt && seen != v->codes[v->cnt - 1].cnt;
			seen = 0;
			err = err || parse_code(v, line);
		} else if (line[0] != '#') {
			err = parse_at(v, line, &seen);
		}
	}
	if (!err && v->cnt && seen != v->codes[v->cnt - 1].cnt)
		err = 1;
	if (!err && !v->cnt)
		err = 1;
	if (err)
		print_error("%s:%d: not a fixture of 3.%u\n", path, lineno, v->minor);
	free(line);
	fclose(f);
	return err ? -1 : 0;
}

/* The minor of path's "python3.N" binary (symbolic links followed), 0 when it has none. */
static unsigned int python_minor(const char *path)
{
	char *real = realpath(path, NULL);
	const char *name = real ? strrchr(real, '/') : NULL;
	unsigned int minor = 0;
	int end = 0;

	if (name && sscanf(name, "/python3.%u%n", &minor, &end) != 1)
		minor = 0;
	if (name && name[end])
		minor = 0;
	free(real);
	return minor;
}

/* The fixtures of the interpreters present (python_lines.mk made them). */
static int setup(void **state)
{
	unsigned int i;

	debian_minor = python_minor(DEBIAN_PYTHON);
	for (i = 0; i < ARRAY_SIZE(versions); i++) {
		versions[i].absent = access(versions[i].python, X_OK) != 0;
		versions[i].bad = !versions[i].absent && load(&versions[i]);
	}
	return 0;
}

static int teardown(void **state)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ARRAY_SIZE(versions); i++) {
		for (j = 0; j < versions[i].cnt; j++) {
			free(versions[i].codes[j].tab);
			free(versions[i].codes[j].want);
		}
		free(versions[i].codes);
	}
	if (guard.map)
		munmap(guard.map, guard.size + sysconf(_SC_PAGESIZE));
	return 0;
}

/* The fixture of the test's version: a failure for Debian's python3 when absent, else skipped. */
static const struct version *version_of(void **state)
{
	const struct version *v = *state;

	if (v->absent && v->minor == debian_minor)
		fail_msg("3.%u: %s is absent; the test needs it", v->minor, v->python);
	if (v->absent) {
		print_message("skipped: 3.%u: %s is absent\n", v->minor, v->python);
		skip();
	}
	if (v->bad)
		fail_msg("3.%u: no fixture of %s", v->minor, v->python);
	return v;
}

/*
 * The fixture exercises each form of its format: 3.10's pairs of 0 bytes (line deltas split
 * over 127), of 254 bytes (ranges split over 254), negative deltas and -128 (no line); 3.11+'s
 * entry kinds (short 0-9, one line 10-12, no column 13, long 14, none 15), 8-unit entries and
 * line deltas of 3 varint chunks (13 or 14 then two bytes of bit 6 set: over 2047 lines).
 */
static void assert_forms(const struct version *v)
{
	unsigned int seen[7] = { 0 }, i;
	size_t j, k;

	for (j = 0; j < v->cnt; j++) {
		const struct code_fix *c = &v->codes[j];

		for (k = 0; v->minor == 10 && k + 1 < c->len; k += 2) {
			seen[0] += c->tab[k] == 0;
			seen[1] += c->tab[k] == 254;
			seen[2] += c->tab[k + 1] > 0x80;
			seen[3] += c->tab[k + 1] == 0x80;
		}
		for (k = 0; v->minor > 10 && k < c->len; k++) {
			unsigned int kind = c->tab[k] >> 3 & 15;

			if (!(c->tab[k] & 0x80))
				continue;
			seen[kind < 10 ? 0 : kind < 13 ? 1 : kind - 11]++;
			seen[5] += (c->tab[k] & 7) == 7;
			seen[6] += kind >= 13 && kind <= 14 && k + 2 < c->len &&
				   (c->tab[k + 1] & c->tab[k + 2] & 0x40);
		}
	}
	for (i = 0; i < (v->minor == 10 ? 4 : 7); i++)
		if (!seen[i])
			fail_msg("3.%u: the fixture lacks form %u", v->minor, i);
}

/* Every offset of every code object: the line co_lines() gives, odd offsets as the even before. */
static void test_lines(void **state)
{
	const struct version *v = version_of(state);
	size_t j, i, offs = 0, longest = 0;
	int latest = 0;

	assert_forms(v);
	for (j = 0; j < v->cnt; j++) {
		const struct code_fix *c = &v->codes[j];
		const uint8_t *tab = guarded(c->tab, c->len);

		for (i = 0; i < c->cnt; i++) {
			int got = python_line(v->minor, tab, c->len, c->firstlineno, 2 * i);
			int odd = python_line(v->minor, tab, c->len, c->firstlineno, 2 * i + 1);

			if (got != c->want[i] || odd != c->want[i])
				fail_msg("3.%u %s (%d): offset %zu: got %d (%d at +1), want %d",
					 v->minor, c->name, c->firstlineno, 2 * i, got, odd,
					 c->want[i]);
		}
		offs += c->cnt;
		longest = c->len > longest ? c->len : longest;
		latest = c->firstlineno > latest ? c->firstlineno : latest;
	}
	/* python_linetable.py: a table past the cut, a function past line 1000 */
	assert_true(longest > CUT);
	assert_true(latest > 1000);
	print_message("3.%u: %zu code objects, %zu offsets, tables up to %zu bytes\n", v->minor,
		      v->cnt, offs, longest);
}

/*
 * The lines of c's table cut to len: the offsets from the first must get the whole table's
 * line until one gets -ENOENT (the cut); all after it -ENOENT too (a sample of them for the
 * time). Returns how many came before that one.
 */
static size_t cut_prefix(unsigned int minor, const struct code_fix *c, size_t len)
{
	const uint8_t *tab = guarded(c->tab, len);
	size_t i, prefix = c->cnt;

	for (i = 0; i < c->cnt; i++) {
		int got;

		if (prefix < c->cnt && i > prefix + 8 && i != c->cnt - 1)
			continue;
		got = python_line(minor, tab, len, c->firstlineno, 2 * i);
		if (prefix == c->cnt && got == c->want[i])
			continue;
		if (got != -ENOENT)
			fail_msg("3.%u %s cut to %zu of %zu bytes: offset %zu: got %d, want %d%s",
				 minor, c->name, len, c->len, 2 * i, got, c->want[i],
				 prefix < c->cnt ? " (past the cut: -ENOENT)" : " or -ENOENT");
		if (prefix == c->cnt)
			prefix = i;
	}
	return prefix;
}

/* The cut after len: every length up to 64, then 16 steps to 2 * CUT (past which a cut costs
 * more time than it tells), and CUT - 1 to CUT + 1. */
static size_t next_cut(size_t len, size_t step)
{
	size_t next = len < 64 ? len + 1 : len + step;

	if (len >= CUT - 1 && len <= CUT)
		return len + 1;
	return len < CUT - 1 && next > CUT - 1 ? CUT - 1 : next;
}

/*
 * Tables cut: never a wrong line, nor fewer lines for a longer cut, some lines at CUT (the
 * whole table gives every line: test_lines).
 */
static void test_cut(void **state)
{
	const struct version *v = version_of(state);
	size_t j, len, span, step, prefix, last;

	for (j = 0; j < v->cnt; j++) {
		const struct code_fix *c = &v->codes[j];

		span = c->len < 2 * CUT ? c->len : 2 * CUT;
		step = span > 64 ? (span - 64) / 16 + 1 : 1;
		last = 0;
		for (len = 0; len < span; len = next_cut(len, step)) {
			prefix = cut_prefix(v->minor, c, len);
			assert_true(prefix >= last);
			assert_true(prefix > 0 || len < CUT - 1);
			last = prefix;
		}
	}
}

/* What python_line() may return for any table: a line, -ENOENT or -EINVAL. */
static void assert_sane(unsigned int minor, const uint8_t *tab, size_t len, uint32_t off,
			uint64_t seed)
{
	int got = python_line(minor, tab, len, 1, off);

	if (got < 0 && got != -ENOENT && got != -EINVAL)
		fail_msg("3.%u, %zu bytes (seed %#llx), offset %u: got %d", minor, len,
			 (unsigned long long)seed, off, got);
	if ((minor < PYTHON_LINES_MINOR_MIN || minor > PYTHON_LINES_MINOR_MAX) && got != -EINVAL)
		fail_msg("3.%u: got %d, want -EINVAL", minor, got);
}

/* The fixture's tables with 1 to 4 bytes changed at random, read at 64 offsets each. */
static void test_mutated(void **state)
{
	const struct version *v = version_of(state);
	uint64_t s = 0x9e3779b97f4a7c15ull ^ v->minor, seed;
	uint8_t *buf;
	size_t j, n;
	int round;

	for (j = 0; j < v->cnt; j++) {
		const struct code_fix *c = &v->codes[j];

		if (!c->len)
			continue;
		buf = malloc(c->len);
		assert_non_null(buf);
		for (round = 0; round < 32; round++) {
			seed = s;
			memcpy(buf, c->tab, c->len);
			for (n = rnd(&s) % 4 + 1; n; n--)
				buf[rnd(&s) % c->len] = (uint8_t)rnd(&s);
			for (n = 0; n < 64; n++)
				assert_sane(v->minor, guarded(buf, c->len), c->len,
					    rnd(&s) % (2 * c->cnt + 2), seed);
		}
		free(buf);
	}
}

/* Random bytes, some with bit 7 mostly set (3.11+'s first bytes), for 3.9 to 3.14. */
static void test_garbage(void **state)
{
	static uint8_t buf[8192];
	uint64_t s = 0x2545f4914f6cdd1dull, seed;
	unsigned int minor;
	size_t len, i;
	int round;

	for (round = 0; round < 3000; round++) {
		seed = s;
		len = rnd(&s) % sizeof(buf);
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)(rnd(&s) | (round % 3 ? 0 : 0x80));
		for (minor = PYTHON_LINES_MINOR_MIN - 1; minor <= PYTHON_LINES_MINOR_MAX + 1;
		     minor++) {
			const uint8_t *tab = guarded(buf, len);

			assert_sane(minor, tab, len, rnd(&s) % (8 * len + 16), seed);
			assert_sane(minor, tab, len, UINT32_MAX, seed);
		}
	}
}

/* Tables no CPython writes (Objects/locations.md, lnotab_notes.txt): what cannot be a table
 * cut short is -EINVAL, a table that ends -ENOENT. */
static void test_malformed(void **state)
{
	/* 3.11+: bit 7 clear; a varint into the next entry; one of 7 chunks; one cut; line 1 - 2 */
	const uint8_t no_first[] = { 0x7f };
	const uint8_t into_next[] = { 0x80 | 13 << 3, 0x40, 0x80 };
	const uint8_t varint7[] = { 0x80 | 14 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	const uint8_t cut_varint[] = { 0x80 | 13 << 3, 0x42 };
	const uint8_t below_0[] = { 0x80 | 13 << 3, 0x05 };
	/* 3.10: line 1 - 2 */
	const uint8_t down_310[] = { 2, 0xfe };
	unsigned int minor;

	for (minor = 11; minor <= PYTHON_LINES_MINOR_MAX; minor++) {
		assert_int_equal(python_line(minor, no_first, 1, 1, 0), -EINVAL);
		assert_int_equal(python_line(minor, into_next, 3, 1, 0), -EINVAL);
		assert_int_equal(python_line(minor, varint7, 8, 1, 0), -EINVAL);
		assert_int_equal(python_line(minor, cut_varint, 2, 1, 0), -ENOENT);
		assert_int_equal(python_line(minor, below_0, 2, 1, 0), -EINVAL);
	}
	assert_int_equal(python_line(10, down_310, 2, 1, 0), -EINVAL);
	assert_int_equal(python_line(10, down_310, 1, 1, 0), -ENOENT);
	for (minor = 10; minor <= PYTHON_LINES_MINOR_MAX; minor++) {
		assert_int_equal(python_line(minor, NULL, 0, 1, 0), -ENOENT);
		assert_int_equal(python_line(minor, NULL, 1, 1, 0), -EINVAL);
	}
	assert_int_equal(python_line(9, down_310, 2, 3, 0), -EINVAL);
	assert_int_equal(python_line(PYTHON_LINES_MINOR_MAX + 1, below_0, 2, 3, 0), -EINVAL);
}

/* One test of f for 3.<minor>, named after both. */
#define per_version(f, minor) { #f "_3_" #minor, f, NULL, NULL, &versions[(minor) - 10] }

/*
 * Debian's python3 is one of the versions tested, and the interpreter python_lines.mk ran for
 * its minor: a Debian whose python3 this test does not know, or none, fails.
 */
static void test_debian_python(void **state)
{
	unsigned int i;
	char *real;

	if (!debian_minor)
		fail_msg("%s is missing or not a python3.N (make deps installs python3)",
			 DEBIAN_PYTHON);
	for (i = 0; i < ARRAY_SIZE(versions) && versions[i].minor != debian_minor; i++)
		;
	if (i == ARRAY_SIZE(versions))
		fail_msg("%s is 3.%u, not a version this test knows", DEBIAN_PYTHON, debian_minor);
	real = realpath(DEBIAN_PYTHON, NULL);
	assert_non_null(real);
	if (strcmp(real, versions[i].python)) {
		free(real);
		fail_msg("3.%u: %s is tested, not Debian's %s", debian_minor, versions[i].python,
			 DEBIAN_PYTHON);
	}
	free(real);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_python),
		per_version(test_lines, 10),
		per_version(test_lines, 11),
		per_version(test_lines, 12),
		per_version(test_lines, 13),
		per_version(test_lines, 14),
		per_version(test_lines, 15),
		per_version(test_cut, 10),
		per_version(test_cut, 11),
		per_version(test_cut, 12),
		per_version(test_cut, 13),
		per_version(test_cut, 14),
		per_version(test_cut, 15),
		per_version(test_mutated, 10),
		per_version(test_mutated, 11),
		per_version(test_mutated, 12),
		per_version(test_mutated, 13),
		per_version(test_mutated, 14),
		per_version(test_mutated, 15),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

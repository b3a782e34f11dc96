// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_perf_map.c: perf map parsing, overlaps, lookups, /proc/PID/status, reloads, close, the
 * cap and wanted addresses. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "runtime/jit/perf_map.h"
#include "util/util.h"

#define SEC_NS 1000000000ull

static void assert_find(const struct perf_map *m, uint64_t addr, const char *name, uint64_t off)
{
	uint64_t got_off = ~0ull;
	const char *got = perf_map__find(m, addr, &got_off);

	assert_symbol(addr, got, got_off, name, off);
	if (!name)
		return;
	if (strcmp(got, name) || got_off != off)
		fail_msg("%#llx: want %s+%#llx, got %s+%#llx", (unsigned long long)addr, name,
			 (unsigned long long)off, got, (unsigned long long)got_off);
}

/* A temp file holding text; its path in a static buffer (one at a time). */
static const char *temp_file(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/test_perf_map.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

static struct perf_map *parse_text(const char *text)
{
	const char *path = temp_file(text);
	struct perf_map *m = perf_map__parse_file(path);

	unlink(path);
	assert_non_null(m);
	return m;
}

/*
 * perf_map_basic.map: hex with and without 0x and in upper case, a name with spaces and a tab
 * before it, leading zeros, and 7 malformed lines (no numbers, bad size, no name, size 0,
 * START + SIZE past 2^64, 17 digits, a bare "0x"); the empty line is not counted.
 */
static void test_basic(void **state)
{
	struct perf_map *m = perf_map__parse_file(fixture("perf_map_basic.map"));

	assert_non_null(m);
	assert_int_equal(perf_map__cnt(m), 4);
	assert_int_equal(perf_map__bad_cnt(m), 7);

	/* Boundaries: START is in, START + SIZE is out. */
	assert_find(m, 0x7f0000000fffull, NULL, 0);
	assert_find(m, 0x7f0000001000ull, "LazyCompile:*fib /app/fib.js:3", 0);
	assert_find(m, 0x7f000000103full, "LazyCompile:*fib /app/fib.js:3", 0x3f);
	assert_find(m, 0x7f0000001040ull, "Builtin:ArgumentsAdaptorTrampoline", 0);
	assert_find(m, 0x7f000000105full, "Builtin:ArgumentsAdaptorTrampoline", 0x1f);
	/* The gap between two entries, then the upper-case one. */
	assert_find(m, 0x7f0000001060ull, NULL, 0);
	assert_find(m, 0x7f000000107full, NULL, 0);
	assert_find(m, 0x7f0000001085ull, "jit_one", 5);
	assert_find(m, 0x7f0000001090ull, NULL, 0);
	/* Malformed lines add nothing. */
	assert_find(m, 0x7f0000002000ull, NULL, 0);
	assert_find(m, 0x7f0000002100ull, NULL, 0);
	assert_find(m, 0xfffffffffffffff8ull, NULL, 0);
	/* Inner spaces kept, trailing ones and the leading tab not. */
	assert_find(m, 0x7f0000003007ull, "tab separated, name with  two spaces", 7);
	assert_find(m, 0x7f0000003008ull, NULL, 0);
	/* off is optional. */
	assert_string_equal(perf_map__find(m, 0x7f0000001001ull, NULL),
			    "LazyCompile:*fib /app/fib.js:3");
	perf_map__put(m);
}

/* Overlaps: the later line wins where it covers; what is left of the earlier one remains. */
static void test_overlap(void **state)
{
	struct perf_map *m = perf_map__parse_file(fixture("perf_map_overlap.map"));

	assert_non_null(m);
	assert_int_equal(perf_map__bad_cnt(m), 0);
	/* outer_old cut in two by inner_new; its offsets still count from its own START. */
	assert_find(m, 0x1000, "outer_old", 0);
	assert_find(m, 0x103f, "outer_old", 0x3f);
	assert_find(m, 0x1040, "inner_new", 0);
	assert_find(m, 0x107f, "inner_new", 0x3f);
	assert_find(m, 0x1080, "outer_old", 0x80);
	assert_find(m, 0x10ff, "outer_old", 0xff);
	assert_find(m, 0x1100, NULL, 0);
	/* The same range twice: the second. */
	assert_find(m, 0x2000, "reused_v2", 0);
	assert_find(m, 0x203f, "reused_v2", 0x3f);
	/* A later, larger entry hides an earlier one inside it, in one range. */
	assert_find(m, 0x3015, "big_later", 0x15);
	assert_find(m, 0x30ff, "big_later", 0xff);
	/* Partial overlap. */
	assert_find(m, 0x403f, "first_half", 0x3f);
	assert_find(m, 0x4040, "second_half", 0);
	assert_find(m, 0x40bf, "second_half", 0x7f);
	assert_find(m, 0x40c0, NULL, 0);
	/* Adjacent entries do not overlap. */
	assert_find(m, 0x503f, "adjacent_a", 0x3f);
	assert_find(m, 0x5040, "adjacent_b", 0);
	/* outer_old 2 + inner_new + reused_v2 + big_later + 2 halves + 2 adjacent. */
	assert_int_equal(perf_map__cnt(m), 9);
	perf_map__put(m);
}

/*
 * Random overlapping entries against a brute-force answer (the last line covering an
 * address), at every address of a small space: the sweep over boundaries and the heap.
 */
static void test_overlap_random(void **state)
{
	enum { SPACE = 512, ENTRIES = 60, ROUNDS = 50 };
	static char text[ENTRIES * 40 + 1];
	unsigned int seed = 12345;
	uint64_t start[ENTRIES], size[ENTRIES], off;
	char want_name[16];
	struct perf_map *m;
	const char *got;
	int round, i, a, want;
	size_t len;

	for (round = 0; round < ROUNDS; round++) {
		len = 0;
		for (i = 0; i < ENTRIES; i++) {
			start[i] = rand_r(&seed) % SPACE;
			size[i] = 1 + rand_r(&seed) % (round % 2 ? 16 : 128);
			len += snprintf(text + len, sizeof(text) - len, "%llx %llx e%d\n",
					(unsigned long long)start[i],
					(unsigned long long)size[i], i);
		}
		m = parse_text(text);
		for (a = 0; a < SPACE + 130; a++) {
			want = -1;
			for (i = 0; i < ENTRIES; i++)
				if (a >= (int)start[i] && a < (int)(start[i] + size[i]))
					want = i;
			got = perf_map__find(m, a, &off);
			if (want < 0) {
				if (got)
					fail_msg("round %d, %#x: want none, got %s", round, a, got);
				continue;
			}
			snprintf(want_name, sizeof(want_name), "e%d", want);
			if (!got || strcmp(got, want_name) || off != a - start[want])
				fail_msg("round %d, %#x: want %s+%#llx, got %s+%#llx", round, a,
					 want_name, (unsigned long long)(a - start[want]),
					 got ?: "none", (unsigned long long)off);
		}
		perf_map__put(m);
	}
}

/* Empty files, CRLF, a last line still being written, missing files and non-files. */
static void test_edges(void **state)
{
	char dir[] = "/tmp/test_perf_map.XXXXXX", fifo[PATH_MAX];
	struct perf_map *m;

	m = parse_text("");
	assert_int_equal(perf_map__cnt(m), 0);
	assert_int_equal(perf_map__bad_cnt(m), 0);
	assert_find(m, 0, NULL, 0);
	assert_find(m, ~0ull, NULL, 0);
	perf_map__put(m);

	/* Windows line ends and trailing blanks are not part of names; an empty line is. */
	m = parse_text("10 10 crlf name \r\n\r\n30 8 last_partial");
	assert_int_equal(perf_map__cnt(m), 1);
	assert_int_equal(perf_map__bad_cnt(m), 0);
	assert_find(m, 0x1f, "crlf name", 0xf);
	/* A JIT appends while we read: the unterminated line waits for the next read. */
	assert_find(m, 0x30, NULL, 0);
	perf_map__put(m);

	/* The largest end that fits in 64 bits (2^64 does not), and leading blanks. */
	m = parse_text("  fffffffffffffff0 f top\nfffffffffffffff0 10 past_top\n");
	assert_int_equal(perf_map__bad_cnt(m), 1);
	assert_find(m, 0xfffffffffffffffeull, "top", 0xe);
	assert_find(m, 0xffffffffffffffffull, NULL, 0);
	perf_map__put(m);

	errno = 0;
	assert_null(perf_map__parse_file("/nonexistent/perf-1.map"));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(perf_map__parse_file("/tmp"));
	assert_int_equal(errno, EINVAL);
	/* A FIFO: refused at once, without blocking on a writer. */
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/perf-1.map", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	errno = 0;
	assert_null(perf_map__parse_file(fifo));
	assert_int_equal(errno, EINVAL);
	unlink(fifo);
	rmdir(dir);
}

static void test_status(void **state)
{
	static const char nested[] =
		"Name:\tnode\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\nNgid:\t0\n"
		"Pid:\t4242\nPPid:\t4000\nTracerPid:\t0\nUid:\t1000\t1001\t1002\t1003\n"
		"Gid:\t1000\t1000\t1000\t1000\nNSpgid:\t4242\t1\nNSpid:\t4242\t17\t1\n"
		"NSsid:\t4000\t1\n";
	static const char flat[] = "Uid:\t0\t0\t0\t0\nNSpid:\t321\n";
	uid_t uids[4] = {};
	pid_t nspid = -1;

	/* The innermost namespace's pid is the last field. */
	assert_int_equal(perf_map__parse_status(nested, strlen(nested), &nspid, uids), 0);
	assert_int_equal(nspid, 1);
	assert_int_equal(uids[0], 1000);
	assert_int_equal(uids[1], 1001);
	assert_int_equal(uids[3], 1003);
	assert_int_equal(perf_map__parse_status(flat, strlen(flat), &nspid, uids), 0);
	assert_int_equal(nspid, 321);
	assert_int_equal(uids[1], 0);
	/* len bounds the text: the NSpid line is cut off. */
	nspid = -1;
	assert_int_equal(perf_map__parse_status(flat, 13, &nspid, uids), -ENOENT);
	assert_int_equal(nspid, -1);
	/* Kernels before 4.1 have no NSpid line: the uids are still read. */
	uids[2] = 7;
	assert_int_equal(perf_map__parse_status("Uid:\t5\t6\t8\t9\n", 13, &nspid, uids), -ENOENT);
	assert_int_equal(uids[2], 8);
	assert_int_equal(perf_map__parse_status("NSpid:\t12x\n", 11, &nspid, uids), -EINVAL);
	assert_int_equal(perf_map__parse_status("NSpid:\n", 7, &nspid, uids), -EINVAL);
	assert_int_equal(perf_map__parse_status("NSpid:\t1\nUid:\t1\t2\n", 18, &nspid, uids),
			 -EINVAL);
}

/* This process's own perf map, as a JIT would write it (through a rename: never half seen). */
static const char *own_map_path(void)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	return path;
}

static void write_own_map(const char *text)
{
	char tmp[80];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", own_map_path());
	f = fopen(tmp, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, own_map_path()), 0);
}

static int remove_own_map(void **state)
{
	unlink(own_map_path());
	return 0;
}

static void test_load(void **state)
{
	struct perf_map *m;
	pid_t pid = getpid();
	char link[80];

	remove_own_map(NULL);
	errno = 0;
	assert_null(perf_map__load(pid));
	assert_int_equal(errno, ENOENT);

	/* Through /proc/PID/root and the NSpid of this process. */
	write_own_map("1000 20 own_jit_code\n");
	m = perf_map__load(pid);
	assert_non_null(m);
	assert_find(m, 0x1010, "own_jit_code", 0x10);
	perf_map__put(m);

	/* A symbolic link in the target's /tmp is not followed. */
	remove_own_map(NULL);
	snprintf(link, sizeof(link), "%s", own_map_path());
	assert_int_equal(symlink(fixture("perf_map_basic.map"), link), 0);
	errno = 0;
	assert_null(perf_map__load(pid));
	assert_int_equal(errno, ELOOP);
	remove_own_map(NULL);

	/* pid_max is above every pid. */
	errno = 0;
	assert_null(perf_map__load(INT_MAX));
	assert_int_equal(errno, ESRCH);
}

/* Has m's file read for the addresses wanted so far, in the reader thread, and takes it. */
static void read_now(struct perf_map *m, uint64_t now)
{
	perf_map__refresh(m, now);
	assert_int_equal(perf_map__wait(30 * SEC_NS, NULL), 0);
	perf_map__sync(m);
}

/*
 * perf_map__refresh(): reads the file when it changed or addresses were added, keeps the names
 * it read when the file goes; perf_map__close() reads it a last time, then never again.
 * Only the lines of wanted addresses are kept.
 */
static void test_refresh(void **state)
{
	uint64_t t0 = 1000 * SEC_NS;
	struct perf_map *m;

	write_own_map("1000 40 first_fn\n1800 40 not_wanted_fn\n");
	m = perf_map__open_process(getpid(), t0);
	assert_non_null(m);
	/* Nothing read yet: the sample path only gives addresses. */
	assert_int_equal(perf_map__load_cnt(m), 0);
	assert_find(m, 0x1008, NULL, 0);
	perf_map__want(m, 0x1008, now_ns());
	assert_int_equal(perf_map__wait(30 * SEC_NS, NULL), 0);
	perf_map__sync(m);
	assert_find(m, 0x1008, "first_fn", 8);
	/* Another address of the file: not wanted, not kept. */
	assert_find(m, 0x1808, NULL, 0);
	assert_int_equal(perf_map__cnt(m), 1);
	assert_int_equal(perf_map__load_cnt(m), 1);

	/* Unchanged, no new address: not read again. */
	read_now(m, t0 + SEC_NS);
	assert_int_equal(perf_map__load_cnt(m), 1);
	assert_true(perf_map__checked_ns(m) == t0 + SEC_NS);

	/* The JIT adds code, then reuses code memory: the later line wins. */
	write_own_map("1000 40 first_fn\n2000 40 second_fn\n2000 40 third_fn\n");
	perf_map__want(m, 0x2004, now_ns());
	read_now(m, t0 + 2 * SEC_NS);
	assert_int_equal(perf_map__load_cnt(m), 2);
	assert_find(m, 0x2004, "third_fn", 4);
	assert_find(m, 0x1008, "first_fn", 8);

	/* The file goes (the JIT removes it at exit): the names read stay. */
	remove_own_map(NULL);
	read_now(m, t0 + 3 * SEC_NS);
	assert_find(m, 0x1000, NULL, 0); /* never wanted */
	assert_find(m, 0x1008, "first_fn", 8);

	/* Written again, then closed: read once more by the close, never after. */
	write_own_map("1000 10 at_exit_fn\n");
	assert_false(perf_map__closed(m));
	perf_map__close(m, t0 + 4 * SEC_NS);
	assert_true(perf_map__closed(m));
	assert_int_equal(perf_map__wait(30 * SEC_NS, NULL), 0);
	perf_map__sync(m);
	assert_find(m, 0x1008, "at_exit_fn", 8);
	write_own_map("1000 10 after_close_fn\n");
	perf_map__want(m, 0x1001, now_ns());
	read_now(m, t0 + 5 * SEC_NS);
	assert_find(m, 0x1008, "at_exit_fn", 8);
	assert_int_equal(perf_map__load_cnt(m), 3);

	/* References: the last put frees (the sanitizers' run checks no leak). */
	assert_ptr_equal(perf_map__get(m), m);
	perf_map__put(m);
	perf_map__put(m);
	perf_map__put(NULL);
}

/* A process gone: an empty map, no error; nothing to read again. */
static void test_refresh_no_process(void **state)
{
	struct perf_map *m = perf_map__open_process(INT_MAX, SEC_NS);

	assert_non_null(m);
	assert_int_equal(perf_map__cnt(m), 0);
	assert_true(perf_map__closed(m));
	perf_map__want(m, 0x1000, now_ns());
	read_now(m, 2 * SEC_NS);
	assert_int_equal(perf_map__load_cnt(m), 0);
	perf_map__put(m);
}

/*
 * The map a process writes as it exits (the JVM's -XX:+DumpPerfMapAtExit) is read by
 * perf_map__close() after the process is gone and reaped: /proc/PID is no more, the map holds
 * the process's root.
 */
static void test_close_after_exit(void **state)
{
	char path[64], go;
	struct perf_map *m;
	int to_child[2], status;
	pid_t pid;
	FILE *f;

	assert_int_equal(pipe(to_child), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(to_child[1]);
		if (read(to_child[0], &go, 1) != 1)
			_exit(1);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		if (!f || fputs("5000 20 written_at_exit\n", f) < 0 || fclose(f))
			_exit(1);
		_exit(0);
	}
	close(to_child[0]);
	m = perf_map__open_process(pid, SEC_NS);
	assert_non_null(m);
	perf_map__want(m, 0x5004, now_ns());
	assert_int_equal(perf_map__cnt(m), 0);
	assert_int_equal(write(to_child[1], "x", 1), 1);
	close(to_child[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	assert_int_equal(access(path, F_OK), -1);
	perf_map__close(m, 2 * SEC_NS);
	assert_int_equal(perf_map__wait(30 * SEC_NS, NULL), 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	perf_map__sync(m);
	assert_find(m, 0x5004, "written_at_exit", 4);
	perf_map__put(m);
}

/*
 * A map larger than the cap: its first bytes are read (a line cut at the cap is not taken),
 * the rest is not, and counted: in the map and in the run's counters.
 */
static void test_cap(void **state)
{
	enum { CAP = 4096, FILLER = 1000 };
	struct perf_map_stats before, after;
	struct perf_map *m;
	char *text, *p;
	size_t len;
	int i;

	text = malloc(FILLER * 40 + 100);
	assert_non_null(text);
	p = text + sprintf(text, "1000 10 first_fn\n");
	for (i = 0; i < FILLER; i++)
		p += sprintf(p, "%x 10 filler_%d\n", 0x100000 + i * 0x10, i);
	p += sprintf(p, "9000 10 past_cap_fn\n");
	len = p - text;
	assert_true(len > CAP);

	perf_map__stats(&before);
	perf_map__set_max_size(CAP);
	m = parse_text(text);
	perf_map__set_max_size(0);
	perf_map__stats(&after);
	assert_find(m, 0x1004, "first_fn", 4);
	assert_find(m, 0x9004, NULL, 0);
	assert_int_equal(perf_map__not_read(m), len - CAP);
	assert_int_equal(perf_map__bad_cnt(m), 0);
	/* Whole lines only: those that end before the cap. */
	assert_true(perf_map__cnt(m) > 1 && perf_map__cnt(m) < CAP / 20);
	assert_int_equal(after.capped_reads, before.capped_reads + 1);
	assert_true(after.max_not_read >= len - CAP);
	assert_true(after.bytes_read - before.bytes_read == CAP);
	perf_map__put(m);

	/* Under the cap: read whole, nothing counted. */
	perf_map__stats(&before);
	m = parse_text(text);
	perf_map__stats(&after);
	assert_find(m, 0x9004, "past_cap_fn", 4);
	assert_int_equal(perf_map__not_read(m), 0);
	assert_int_equal(after.capped_reads, before.capped_reads);
	perf_map__put(m);
	free(text);
}

/*
 * A process's map keeps only the lines of wanted addresses, however many lines cover them (a
 * JIT reusing code memory): random overlapping lines against a brute-force answer, more of
 * them than a read keeps before it drops those no address needs.
 */
static void test_want_random(void **state)
{
	enum { SPACE = 4096, ENTRIES = 30000, WANTS = 40 };
	static uint64_t start[ENTRIES], size[ENTRIES];
	unsigned int seed = 4321;
	uint64_t want[WANTS], off;
	char want_name[16], *text;
	const char *got;
	struct perf_map *m;
	size_t len = 0;
	int i, w, best;

	text = malloc(ENTRIES * 32);
	assert_non_null(text);
	for (i = 0; i < ENTRIES; i++) {
		start[i] = rand_r(&seed) % SPACE;
		size[i] = 1 + rand_r(&seed) % (i % 3 ? 8 : 256);
		len += sprintf(text + len, "%llx %llx e%d\n", (unsigned long long)start[i],
			       (unsigned long long)size[i], i);
	}
	write_own_map(text);
	free(text);
	m = perf_map__open_process(getpid(), SEC_NS);
	assert_non_null(m);
	for (w = 0; w < WANTS; w++) {
		want[w] = rand_r(&seed) % (SPACE + 200);
		perf_map__want(m, want[w], now_ns());
	}
	read_now(m, 2 * SEC_NS);
	assert_true(perf_map__cnt(m) <= WANTS);
	for (w = 0; w < WANTS; w++) {
		best = -1;
		for (i = 0; i < ENTRIES; i++)
			if (want[w] >= start[i] && want[w] < start[i] + size[i])
				best = i;
		got = perf_map__find(m, want[w], &off);
		if (best < 0) {
			if (got)
				fail_msg("%#llx: want none, got %s", (unsigned long long)want[w], got);
			continue;
		}
		snprintf(want_name, sizeof(want_name), "e%d", best);
		if (!got || strcmp(got, want_name) || off != want[w] - start[best])
			fail_msg("%#llx: want %s+%#llx, got %s+%#llx",
				 (unsigned long long)want[w], want_name,
				 (unsigned long long)(want[w] - start[best]), got ?: "none",
				 (unsigned long long)off);
	}
	/* An address not wanted before the read: not looked up, whatever covers it. */
	for (i = 0; i < SPACE; i++) {
		for (w = 0; w < WANTS && want[w] != (uint64_t)i; w++)
			;
		if (w == WANTS) {
			assert_null(perf_map__find(m, i, NULL));
			break;
		}
	}
	perf_map__close(m, 3 * SEC_NS);
	assert_int_equal(perf_map__wait(30 * SEC_NS, NULL), 0);
	perf_map__put(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_overlap_random),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_status),
		cmocka_unit_test_teardown(test_load, remove_own_map),
		cmocka_unit_test_teardown(test_refresh, remove_own_map),
		cmocka_unit_test(test_refresh_no_process),
		cmocka_unit_test(test_close_after_exit),
		cmocka_unit_test(test_cap),
		cmocka_unit_test_teardown(test_want_random, remove_own_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_proc_maps.c: /proc/PID/maps parsing, on single lines, a fixture and live processes. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "process/proc_maps.h"


static void test_parse_fields(void **state)
{
	struct proc_mapping m;

	assert_int_equal(proc_mapping__parse("55d0c8a02000-55d0c8a08000 r-xp 00002000 fe:01 1311234"
					     "                    /usr/bin/head\n", &m), 0);
	assert_true(m.start == 0x55d0c8a02000ull);
	assert_true(m.end == 0x55d0c8a08000ull);
	assert_true(m.pgoff == 0x2000);
	assert_int_equal(m.dev_major, 0xfe);
	assert_int_equal(m.dev_minor, 0x01);
	assert_true(m.inode == 1311234);
	assert_int_equal(m.prot, PROC_MAPPING_R | PROC_MAPPING_X);
	assert_false(m.deleted);
	assert_string_equal(m.path, "/usr/bin/head");
	proc_mapping__clear(&m);
	assert_null(m.path);

	/* All permission bits, shared, 64-bit inode, 3-digit major, no trailing newline. */
	assert_int_equal(proc_mapping__parse("ffffffffff600000-ffffffffff601000 rwxs "
					     "7fffffffffff0000 103:1f 9876543210 /dev/shm/x",
					     &m), 0);
	assert_true(m.start == 0xffffffffff600000ull);
	assert_true(m.pgoff == 0x7fffffffffff0000ull);
	assert_int_equal(m.dev_major, 0x103);
	assert_int_equal(m.dev_minor, 0x1f);
	assert_true(m.inode == 9876543210ull);
	assert_int_equal(m.prot, PROC_MAPPING_R | PROC_MAPPING_W | PROC_MAPPING_X |
				 PROC_MAPPING_SHARED);
	assert_string_equal(m.path, "/dev/shm/x");
	proc_mapping__clear(&m);

	assert_int_equal(proc_mapping__parse("1000-2000 ---p 00000000 00:00 0 ", &m), 0);
	assert_int_equal(m.prot, 0);
	proc_mapping__clear(&m);
}

static void test_parse_paths(void **state)
{
	static const struct {
		const char *line;
		const char *path;
		bool deleted;
	} cases[] = {
		{ "1000-2000 r-xp 00000000 fe:01 7   /usr/bin/my app\n", "/usr/bin/my app", false },
		/* Inner runs of spaces and a trailing space belong to the name. */
		{ "1000-2000 r-xp 00000000 fe:01 7 /a  b /c \n", "/a  b /c ", false },
		{ "1000-2000 r-xp 00000000 08:11 42   /tmp/jit dir/libfoo.so (deleted)\n",
		  "/tmp/jit dir/libfoo.so", true },
		{ "1000-2000 r-xp 00000000 00:01 9 /memfd:jit (deleted)", "/memfd:jit", true },
		/* Only a trailing " (deleted)" means deleted. */
		{ "1000-2000 r-xp 00000000 fe:01 7 /opt/libweird(deleted).so\n",
		  "/opt/libweird(deleted).so", false },
		{ "1000-2000 r-xp 00000000 fe:01 7 /opt/x (deleted) (deleted)\n",
		  "/opt/x (deleted)", true },
		{ "1000-2000 r-xp 00000000 00:00 0                  [vdso]\n", "[vdso]", false },
		{ "1000-2000 rw-p 00000000 00:00 0                  [stack]\n", "[stack]", false },
		{ "1000-2000 rw-p 00000000 00:00 0 [anon:my heap]\n", "[anon:my heap]", false },
		/* Anonymous: the kernel leaves a space after the inode, or nothing. */
		{ "1000-2000 rw-p 00000000 00:00 0 \n", NULL, false },
		{ "1000-2000 rw-p 00000000 00:00 0\n", NULL, false },
		{ "1000-2000 rw-p 00000000 00:00 0", NULL, false },
	};
	struct proc_mapping m;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&m, 0xa5, sizeof(m));
		assert_int_equal(proc_mapping__parse(cases[i].line, &m), 0);
		if (cases[i].path)
			assert_string_equal(m.path, cases[i].path);
		else
			assert_null(m.path);
		assert_int_equal(m.deleted, cases[i].deleted);
		proc_mapping__clear(&m);
	}
}

static void test_parse_malformed(void **state)
{
	static const char *const lines[] = {
		"",
		"\n",
		"this is not a mapping",
		"7f0a30000000 r-xp 00000000 00:00 0",			/* no end */
		"7f0a30000000-7f0a30001000 r-zp 00000000 00:00 0",	/* bad perms */
		"7f0a30000000-7f0a30001000 r-x 00000000 00:00 0",	/* short perms */
		"7f0a60000000-7f0a58000000 r-xp 00000000 00:00 0",	/* end before start */
		"1000-1000 r-xp 00000000 00:00 0",			/* empty */
		"1000-2000 r-xp 00000000 00:00",			/* no inode */
		"1000-2000 r-xp 00000000 0000 0",			/* no ':' */
		"1000-2000 r-xp 00000000 00:00 12a /x",		/* inode not decimal */
		"1000-2000 r-xp 0000g000 00:00 0",			/* offset not hex */
		"10000000000000000-10000000000000001 r-xp 0 00:00 0",	/* 17 hex digits */
		"1000-2000 r-xp 00000000 00:00 99999999999999999999",	/* inode overflows */
		"1000-2000 r-xp 00000000 100000000:00 0",		/* major > 32 bits */
		" 1000-2000 r-xp 00000000 00:00 0",			/* leading space */
		"-2000 r-xp 00000000 00:00 0",
	};
	struct proc_mapping m = { .path = NULL };
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (proc_mapping__parse(lines[i], &m) != -EINVAL)
			fail_msg("accepted malformed line \"%s\"", lines[i]);
	}
	assert_int_equal(proc_mapping__parse(NULL, &m), -EINVAL);
	assert_null(m.path);
}

static void test_read_fixture(void **state)
{
	struct proc_mapping *maps;
	size_t cnt, i;

	assert_int_equal(proc_maps__read(fixture("maps.txt"), false, &maps, &cnt), 0);
	/* 20 lines: 2 comments, 5 malformed, 13 mappings. */
	assert_int_equal(cnt, 13);
	for (i = 1; i < cnt; i++)
		assert_true(maps[i - 1].start < maps[i].start);

	/* The fixture's last line has the lowest address: sorted first. */
	assert_true(maps[0].start == 0x55d0c8900000ull);
	assert_string_equal(maps[0].path, "/out of/order");
	assert_string_equal(maps[1].path, "/usr/bin/my app");
	assert_int_equal(maps[1].prot, PROC_MAPPING_R);
	assert_string_equal(maps[2].path, "/usr/bin/my app");
	assert_int_equal(maps[2].prot, PROC_MAPPING_R | PROC_MAPPING_X);
	assert_true(maps[2].pgoff == 0x2000);
	assert_null(maps[4].path);
	assert_true(maps[4].start == 0x7f0a1c000000ull);
	assert_string_equal(maps[5].path, "/tmp/jit dir/libfoo.so");
	assert_true(maps[5].deleted);
	assert_string_equal(maps[6].path, "/dev/shm/shared  buf");
	assert_true(maps[6].prot & PROC_MAPPING_SHARED);
	assert_true(maps[6].inode == 9876543210ull);
	assert_string_equal(maps[7].path, "/opt/lib/libweird(deleted).so");
	assert_false(maps[7].deleted);
	assert_string_equal(maps[8].path, "/memfd:jit-code");
	assert_true(maps[8].deleted);
	assert_string_equal(maps[9].path, "[stack]");
	assert_string_equal(maps[10].path, "[vvar]");
	assert_string_equal(maps[11].path, "[vdso]");
	assert_string_equal(maps[12].path, "[vsyscall]");
	assert_true(maps[12].end == 0xffffffffff601000ull);
	proc_maps__free(maps, cnt);
}

static void test_read_exec_only(void **state)
{
	static const char *const want[] = {
		"/out of/order", "/usr/bin/my app", "/tmp/jit dir/libfoo.so",
		"/opt/lib/libweird(deleted).so", "/memfd:jit-code", "[vdso]", "[vsyscall]",
	};
	struct proc_mapping *maps;
	size_t cnt, i;

	assert_int_equal(proc_maps__read(fixture("maps.txt"), true, &maps, &cnt), 0);
	assert_int_equal(cnt, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < cnt; i++) {
		assert_true(maps[i].prot & PROC_MAPPING_X);
		assert_string_equal(maps[i].path, want[i]);
	}
	proc_maps__free(maps, cnt);
}

static void test_read_errors(void **state)
{
	struct proc_mapping *maps = (void *)1;
	size_t cnt = 1;
	pid_t pid;

	assert_int_equal(proc_maps__read(fixture("no-such-file"), false, &maps, &cnt), -ENOENT);
	assert_null(maps);
	assert_int_equal(cnt, 0);

	/* A process that is gone (reaped): its maps file no longer exists. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		assert_int_equal(proc_maps__read(path, false, &maps, &cnt), -ENOENT);
	}

	/* An empty file is a process without mappings, not an error. */
	assert_int_equal(proc_maps__read("/dev/null", false, &maps, &cnt), 0);
	assert_int_equal(cnt, 0);
	proc_maps__free(maps, cnt);
}

static void test_read_self(void **state)
{
	char exe[PATH_MAX];
	struct proc_mapping *maps;
	bool found_exe = false, found_stack = false;
	uintptr_t here = (uintptr_t)&test_read_self;
	size_t cnt, i;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';

	assert_int_equal(proc_maps__read("/proc/self/maps", false, &maps, &cnt), 0);
	assert_true(cnt > 3);
	for (i = 0; i < cnt; i++) {
		if (i)
			assert_true(maps[i - 1].end <= maps[i].start);
		if (maps[i].path && !strcmp(maps[i].path, "[stack]"))
			found_stack = true;
		/* This function's code: an executable mapping of this binary. */
		if (here >= maps[i].start && here < maps[i].end) {
			assert_true(maps[i].prot & PROC_MAPPING_X);
			assert_non_null(maps[i].path);
			assert_string_equal(maps[i].path, exe);
			assert_true(maps[i].inode != 0);
			found_exe = true;
		}
	}
	assert_true(found_exe);
	assert_true(found_stack);
	proc_maps__free(maps, cnt);
}

/* The root line proc_table__read_maps() adds: found, and skipped as no mapping. */
static void test_root_line(void **state)
{
	static const char maps[] =
		"55d0a0000000-55d0a0001000 r-xp 00001000 fe:00 1234 /app/prog\n";
	static const char with_root[] =
		"55d0a0000000-55d0a0001000 r-xp 00001000 fe:00 1234 /app/prog\n"
		"root /var/lib/containers/x y/merged\n";
	struct proc_mapping *m = NULL;
	size_t cnt = 0;
	char *root;

	assert_int_equal(proc_maps__text_root(with_root, strlen(with_root), &root), 0);
	assert_string_equal(root, "/var/lib/containers/x y/merged");
	free(root);
	assert_int_equal(proc_maps__text_root(maps, strlen(maps), &root), 0);
	assert_null(root);
	assert_int_equal(proc_maps__parse_text(with_root, strlen(with_root), true, &m, &cnt), 0);
	assert_int_equal(cnt, 1);
	assert_string_equal(m[0].path, "/app/prog");
	proc_maps__free(m, cnt);

	/* bpfprof's own root needs no line; a process that does not exist has none. */
	assert_int_equal(proc_maps__host_root(getpid(), &root), 0);
	assert_null(root);
	assert_int_equal(proc_maps__host_root(INT_MAX, &root), -ENOENT);
	assert_null(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_paths),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_read_fixture),
		cmocka_unit_test(test_read_exec_only),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_root_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

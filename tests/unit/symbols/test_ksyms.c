// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ksyms.c: kallsyms loading and lookups, on fixtures and on the running kernel. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "symbols/ksyms.h"


static void assert_find(const struct ksyms *ks, uint64_t addr, const char *name, uint64_t off)
{
	uint64_t got_off = ~0ull;
	const char *got = ksyms__find(ks, addr, &got_off);

	assert_symbol(addr, got, got_off, name, off);
	if (!name)
		return;
	assert_string_equal(got, name);
	assert_true(got_off == off);
}

static void test_fixture(void **state)
{
	struct ksyms *ks = ksyms__load(fixture("kallsyms.txt"));

	assert_non_null(ks);
	/*
	 * Text addresses: 81000000 (3 aliases), 81000070, 810000e0, 81001000, 81001010, 81001200,
	 * 81001210, c0a00000, c0a00100 (2 aliases), c0a01000, c0b00000, c0b00080. _etext is an
	 * end marker, not a function.
	 */
	assert_int_equal(ksyms__cnt(ks), 12);

	/* Same address: T without a leading '_' over _stext and _text. */
	assert_find(ks, 0xffffffff81000000ull, "startup_64", 0);
	assert_find(ks, 0xffffffff8100006full, "startup_64", 0x6f);
	assert_find(ks, 0xffffffff81000080ull, "secondary_startup_64", 0x10);
	assert_find(ks, 0xffffffff810000e0ull, "verify_cpu", 0);
	assert_find(ks, 0xffffffff81001008ull, "__pfx_do_one_initcall", 8);
	assert_find(ks, 0xffffffff81001010ull, "do_one_initcall", 0);
	assert_find(ks, 0xffffffff81001204ull, "arch_cpu_idle_enter", 4);
	assert_find(ks, 0xffffffff8100121full, "local_helper", 0xf);
	/* _etext closes the last core text symbol. */
	assert_find(ks, 0xffffffff81001220ull, NULL, 0);
	assert_find(ks, 0xffffffff81ffffffull, NULL, 0);
	assert_find(ks, 0xffffffff82000010ull, NULL, 0);
	/* Below every symbol, and the 0 address of a per-cpu 'A' symbol. */
	assert_find(ks, 0, NULL, 0);
	assert_find(ks, 0xffffffff80ffffffull, NULL, 0);

	/* Modules: the name without the "[module]" column; T over t at one address. */
	assert_find(ks, 0xffffffffc0a00000ull, "nf_conntrack_hash_insert", 0);
	assert_find(ks, 0xffffffffc0a00105ull, "nf_ct_get_tuple", 5);
	assert_find(ks, 0xffffffffc0a001ffull, "nf_ct_get_tuple", 0xff);
	/* A module's data symbol ends its text. */
	assert_find(ks, 0xffffffffc0a00200ull, NULL, 0);
	assert_find(ks, 0xffffffffc0a010ffull, "ftrace_trampoline", 0xff);
	assert_find(ks, 0xffffffffc0a01100ull, NULL, 0);
	assert_find(ks, 0xffffffffc0b00010ull, "bpf_prog_6deef7357e7b4530_sd_fw_ingress", 0x10);
	/* Nothing follows the last symbol: its end is unknown, it keeps covering. */
	assert_find(ks, 0xffffffffc0b00090ull, "bpf_prog_abc", 0x10);

	/* offset is optional. */
	assert_string_equal(ksyms__find(ks, 0xffffffff81000004ull, NULL), "startup_64");
	ksyms__free(ks);
}

/* Already in address order (no bpf programs loaded): aliases are resolved without a sort. */
static void test_sorted_input(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 t local_alias\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000000 W weak_alias\n"
		"ffffffff81000040 W weak_first\n"
		"ffffffff81000040 T __global_second\n"
		"ffffffff81000080 T last_fn\n"
		"ffffffff81000090 T _etext\n";
	char path[] = "/tmp/test_ksyms.XXXXXX";
	struct ksyms *ks;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	ks = ksyms__load(path);
	unlink(path);
	assert_non_null(ks);
	assert_int_equal(ksyms__cnt(ks), 3);
	assert_find(ks, 0xffffffff81000008ull, "startup_64", 8);
	assert_find(ks, 0xffffffff81000040ull, "__global_second", 0);
	assert_find(ks, 0xffffffff8100008full, "last_fn", 0xf);
	assert_find(ks, 0xffffffff81000090ull, NULL, 0);
	ksyms__free(ks);
}

static void test_errors(void **state)
{
	struct ksyms *ks;

	errno = 0;
	assert_null(ksyms__load(fixture("kallsyms_zero.txt")));
	assert_int_equal(errno, EPERM);

	errno = 0;
	assert_null(ksyms__load(fixture("no-such-kallsyms")));
	assert_int_equal(errno, ENOENT);

	ks = ksyms__load("/dev/null");
	assert_non_null(ks);
	assert_int_equal(ksyms__cnt(ks), 0);
	assert_null(ksyms__find(ks, 0xffffffff81000000ull, NULL));
	ksyms__free(ks);

	assert_null(ksyms__find(NULL, 1, NULL));
	assert_int_equal(ksyms__cnt(NULL), 0);
	ksyms__free(NULL);
}

/* The running kernel: every text symbol's own address resolves to offset 0. */
static void test_live_kallsyms(void **state)
{
	unsigned long long addr, sched = 0;
	size_t lines = 0, checked = 0;
	char type, name[256];
	struct ksyms *ks;
	FILE *f;

	ks = ksyms__load("/proc/kallsyms");
	if (!ks && (errno == EPERM || errno == ENOENT || errno == EACCES))
		skip();
	assert_non_null(ks);
	assert_true(ksyms__cnt(ks) > 1000);

	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		uint64_t off = ~0ull;

		lines++;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))
			continue;
		/* BPF programs and trampolines come and go between the two reads (another
		 * process loading its programs): only the kernel's own symbols are checked. */
		if (!strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trampoline_", 15))
			continue;
		if (!strcmp(name, "schedule"))
			sched = addr;
		/* Every 7th: the whole file takes long under valgrind. */
		if (lines % 7)
			continue;
		if (!ksyms__find(ks, addr, &off) || off != 0)
			fail_msg("%s at %#llx not found at offset 0", name, addr);
		checked++;
	}
	fclose(f);
	assert_true(checked > 100);
	if (sched) {
		uint64_t off;
		const char *got = ksyms__find(ks, sched + 1, &off);

		assert_non_null(got);
		assert_true(off == 1);
		assert_string_equal(got, "schedule");
	}
	ksyms__free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_sorted_input),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_live_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

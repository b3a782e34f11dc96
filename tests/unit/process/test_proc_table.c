// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_proc_table.c: mapping events on the interval map, and ELF cache eviction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "process/proc_table.h"

/* No such process: /proc reads fail, so the list holds exactly what the events said. */
#define TGID 0x3ffffff0u

static void mmap_ev(struct proc_table *pt, uint64_t start, uint64_t len, uint64_t pgoff,
		    uint64_t ino, const char *path)
{
	struct mmap_record r = {
		.hdr = { RECORD_MMAP, sizeof(r) },
		.tgid = TGID,
		.start = start,
		.len = len,
		.pgoff = pgoff,
		.dev = (8 << 20) | 1,
		.ino = ino,
		.prot = MMAP_PROT_EXEC,
	};

	assert_int_equal(proc_table__mmap(pt, &r, path), 0);
}

/* The process's mappings, in address order. */
static size_t maps_cnt(struct proc *p)
{
	return addr_space__mapping_cnt(proc__addr_space(p));
}

static const struct mapping *map_at(struct proc *p, size_t i)
{
	return addr_space__mapping_at(proc__addr_space(p), i);
}

static void expect(struct proc *p, size_t i, uint64_t start, uint64_t end, uint64_t pgoff,
		   const char *path)
{
	assert_true(i < maps_cnt(p));
	assert_int_equal(map_at(p, i)->start, start);
	assert_int_equal(map_at(p, i)->end, end);
	assert_int_equal(map_at(p, i)->pgoff, pgoff);
	assert_string_equal(map_at(p, i)->path, path);
}

static void test_carve(void **state)
{
	struct proc_table_opts o = {};
	struct proc_table *pt = proc_table__new(&o);
	struct proc *p;

	assert_non_null(pt);
	mmap_ev(pt, 0x10000, 0x40000, 0, 1, "/a");
	p = proc_table__find(pt, TGID, false);
	assert_non_null(p);
	assert_int_equal(maps_cnt(p), 1);
	/* An overlay in the middle splits the older mapping; file offsets follow. */
	mmap_ev(pt, 0x20000, 0x10000, 0x5000, 2, "/b");
	assert_int_equal(maps_cnt(p), 3);
	expect(p, 0, 0x10000, 0x20000, 0, "/a");
	expect(p, 1, 0x20000, 0x30000, 0x5000, "/b");
	expect(p, 2, 0x30000, 0x50000, 0x20000, "/a");
	assert_int_equal(map_at(p, 1)->dev, makedev(8, 1));
	/* The same mapping again (the maps read at exec saw it): nothing changes. */
	mmap_ev(pt, 0x20000, 0x10000, 0x5000, 2, "/b");
	assert_int_equal(maps_cnt(p), 3);
	/* munmap across two: one goes, one is trimmed at its start. */
	proc_table__munmap(pt, TGID, 0x10000, 0x18000);
	assert_int_equal(maps_cnt(p), 2);
	expect(p, 0, 0x28000, 0x30000, 0xd000, "/b");
	expect(p, 1, 0x30000, 0x50000, 0x20000, "/a");
	/* dlclose A, dlopen C at the same place. */
	proc_table__munmap(pt, TGID, 0x30000, 0x20000);
	mmap_ev(pt, 0x30000, 0x20000, 0, 3, "/c");
	assert_int_equal(maps_cnt(p), 2);
	expect(p, 1, 0x30000, 0x50000, 0, "/c");
	/* Exec forgets everything. */
	proc_table__exec(pt, TGID, "x");
	assert_int_equal(maps_cnt(p), 0);
	proc_table__free(pt);
}

static void test_fork_exit(void **state)
{
	struct proc_table_opts o = {};
	struct proc_table *pt = proc_table__new(&o);
	struct proc *c;

	mmap_ev(pt, 0x10000, 0x1000, 0, 1, "/a");
	assert_int_equal(proc_table__fork(pt, TGID, TGID + 1), 0);
	c = proc_table__find(pt, TGID + 1, false);
	assert_non_null(c);
	assert_int_equal(maps_cnt(c), 1);
	expect(c, 0, 0x10000, 0x11000, 0, "/a");
	/* Exit only marks: samples before the exit record may still be in this batch. */
	proc_table__exit(pt, TGID + 1);
	assert_non_null(proc_table__find(pt, TGID + 1, false));
	proc_table__end_batch(pt);
	assert_null(proc_table__find(pt, TGID + 1, false));
	proc_table__free(pt);
}

static void test_cache_trim(void **state)
{
	const char *files[] = { "/bin/true", "/bin/false", "/bin/ls" };
	struct module_cache *mc = module_cache__new();
	struct module *e[3], *again;
	int i;

	for (i = 0; i < 3; i++) {
		e[i] = module_cache__get(mc, files[i], files[i]);
		assert_non_null(e[i]);
	}
	/* Same identity: same entry. */
	again = module_cache__get(mc, "/bin/ls", "/usr/bin/ls");
	assert_ptr_equal(again, e[2]);
	module__put(again);
	assert_int_equal(module_cache__cnt(mc), 3);
	/* Referenced files stay whatever the limit. */
	assert_int_equal(module_cache__trim(mc, 0, 0), 0);
	module__put(e[0]);
	module__put(e[1]);
	/* Two unused, one kept: the least recently used goes. */
	assert_int_equal(module_cache__trim(mc, 1, 0), 1);
	assert_int_equal(module_cache__cnt(mc), 2);
	/* Too recent to go. */
	assert_int_equal(module_cache__trim(mc, 0, 3600ull * 1000000000), 0);
	module__put(e[2]);
	module_cache__free(mc);
}

static void test_cache_build_id(void **state)
{
	char copy[] = "/tmp/bpfprof-test-true-XXXXXX", cmd[128];
	struct module_cache *mc = module_cache__new();
	struct module *a, *b, *again;
	int fd = mkstemp(copy);

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp /bin/true %s", copy);
	assert_int_equal(system(cmd), 0);
	a = module_cache__get(mc, "/bin/true", "/bin/true");
	assert_non_null(a);
	assert_true(a->build_id_sz > 0);
	/* Another inode, the same build-id: the parsed file is shared. */
	b = module_cache__get(mc, copy, copy);
	assert_ptr_equal(a, b);
	assert_int_equal(module_cache__cnt(mc), 1);
	assert_int_equal(module_cache__opened(mc), 2);
	/* The copy's identity is remembered: no second parse. */
	again = module_cache__get(mc, copy, copy);
	assert_ptr_equal(again, a);
	assert_int_equal(module_cache__opened(mc), 2);
	module__put(a);
	module__put(b);
	module__put(again);
	/* Eviction takes the aliases along. */
	assert_int_equal(module_cache__trim(mc, 0, 0), 1);
	assert_int_equal(module_cache__cnt(mc), 0);
	b = module_cache__get(mc, copy, copy);
	assert_non_null(b);
	assert_int_equal(module_cache__opened(mc), 3);
	module__put(b);
	unlink(copy);
	module_cache__free(mc);
}

/* Load bias when two PT_LOADs share a page (lld and rustc layouts): the R segment ends at
 * 0x13818, the R+X one starts at file offset 0x13820, vaddr 0x14820; the R+X VMA maps file
 * page 0x13000 at bias + 0x14000. */
static void test_bias_shared_page(void **state)
{
	struct elf_load loads[] = {
		{ .vaddr = 0, .offset = 0, .filesz = 0x13818, .memsz = 0x13818, .align = 0x1000 },
		{ .vaddr = 0x14820, .offset = 0x13820, .filesz = 0x3dfa0, .memsz = 0x3dfa0,
		  .align = 0x1000 },
		{ .vaddr = 0x537c0, .offset = 0x517c0, .filesz = 0x28b8, .memsz = 0x3840,
		  .align = 0x1000 },
	};
	struct module e = { .loads = loads, .loads_cnt = 3 };
	uint64_t base = 0x555555554000ull, bias, lo, hi;

	assert_int_equal(module__bias(&e, base + 0x14000, 0x13000, &bias, &lo, &hi), 0);
	assert_int_equal(bias, base);
	assert_int_equal(lo, base);
	assert_int_equal(hi, base + 0x537c0 + 0x3840);
	/* The first page: the R segment. */
	assert_int_equal(module__bias(&e, base, 0, &bias, &lo, &hi), 0);
	assert_int_equal(bias, base);
	/* An offset no segment holds. */
	assert_int_equal(module__bias(&e, base, 0x900000, &bias, &lo, &hi), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_carve),
		cmocka_unit_test(test_fork_exit),
		cmocka_unit_test(test_cache_trim),
		cmocka_unit_test(test_cache_build_id),
		cmocka_unit_test(test_bias_shared_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_regs.c: perf_regs -> DWARF register numbers (x86-64 psABI figure 3.36). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <asm/perf_regs.h>
#include <errno.h>
#include "unwind/regs.h"

static void test_x86_64_mapping(void **state)
{
	struct sample_record s = {
		.flags = SAMPLE_F_USER_REGS,
		.regs_arch = BPFPROF_ARCH_X86_64,
		.regs_cnt = PERF_REG_X86_64_MAX,
	};
	uint64_t dwarf[REGS_DWARF_MAX];
	size_t cnt = 0, i;

	/* Each register holds 0x100 + its perf_regs index. */
	for (i = 0; i < PERF_REG_X86_64_MAX; i++)
		s.regs[i] = 0x100 + i;
	assert_int_equal(regs__to_dwarf(&s, dwarf, REGS_DWARF_MAX, &cnt), 0);
	assert_int_equal(cnt, 17);
	assert_int_equal(dwarf[0], 0x100 + PERF_REG_X86_AX);
	assert_int_equal(dwarf[1], 0x100 + PERF_REG_X86_DX);
	assert_int_equal(dwarf[2], 0x100 + PERF_REG_X86_CX);
	assert_int_equal(dwarf[3], 0x100 + PERF_REG_X86_BX);
	assert_int_equal(dwarf[4], 0x100 + PERF_REG_X86_SI);
	assert_int_equal(dwarf[5], 0x100 + PERF_REG_X86_DI);
	assert_int_equal(dwarf[6], 0x100 + PERF_REG_X86_BP);
	assert_int_equal(dwarf[7], 0x100 + PERF_REG_X86_SP);
	for (i = 0; i < 8; i++)
		assert_int_equal(dwarf[8 + i], 0x100 + PERF_REG_X86_R8 + i);
	assert_int_equal(dwarf[16], 0x100 + PERF_REG_X86_IP);
	assert_int_equal(regs__pc(&s), 0x100 + PERF_REG_X86_IP);
	assert_int_equal(regs__sp(&s), 0x100 + PERF_REG_X86_SP);
}

static void test_rejects(void **state)
{
	struct sample_record s = {
		.flags = SAMPLE_F_USER_REGS,
		.regs_arch = BPFPROF_ARCH_X86_64,
		.regs_cnt = PERF_REG_X86_64_MAX,
	};
	uint64_t dwarf[REGS_DWARF_MAX];
	size_t cnt;

	assert_int_equal(regs__to_dwarf(&s, dwarf, 16, &cnt), -EINVAL);
	s.regs_cnt = 8;
	assert_int_equal(regs__to_dwarf(&s, dwarf, REGS_DWARF_MAX, &cnt), -EINVAL);
	s.regs_cnt = PERF_REG_X86_64_MAX;
	s.regs_arch = BPFPROF_ARCH_ARM64;
	assert_int_equal(regs__to_dwarf(&s, dwarf, REGS_DWARF_MAX, &cnt), -ENOTSUP);
	s.regs_arch = BPFPROF_ARCH_X86_64;
	s.flags = SAMPLE_F_KERNEL;	/* a kernel thread: no user registers */
	assert_int_equal(regs__to_dwarf(&s, dwarf, REGS_DWARF_MAX, &cnt), -EINVAL);
	assert_int_equal(regs__pc(&s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64_mapping),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

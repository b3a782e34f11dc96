// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* regs_x86_64.c: x86_64 perf_regs -> DWARF register mapping (System V psABI, figure 3.36). */
#include <asm/perf_regs.h>
#include <errno.h>
#include "unwind/regs.h"

/* dwarf_from_perf[DWARF regno] = PERF_REG_X86_* index */
static const unsigned char dwarf_from_perf[REGS_DWARF_X86_64_CNT] = {
	PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,	PERF_REG_X86_SI,
	PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,  PERF_REG_X86_R8,	PERF_REG_X86_R9,
	PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
	PERF_REG_X86_R15, PERF_REG_X86_IP,
};

static int check(const struct sample_record *s)
{
	if (!(s->flags & SAMPLE_F_USER_REGS))
		return -EINVAL;
	if (s->regs_arch != BPFPROF_ARCH_X86_64)
		return -ENOTSUP;
	if (s->regs_cnt < PERF_REG_X86_64_MAX)
		return -EINVAL;
	return 0;
}

int regs__to_dwarf(const struct sample_record *s, uint64_t *dwarf, size_t cap, size_t *cnt)
{
	int err = check(s);
	size_t i;

	if (err)
		return err;
	if (cap < REGS_DWARF_X86_64_CNT)
		return -EINVAL;
	for (i = 0; i < REGS_DWARF_X86_64_CNT; i++)
		dwarf[i] = s->regs[dwarf_from_perf[i]];
	*cnt = REGS_DWARF_X86_64_CNT;
	return 0;
}

uint64_t regs__pc(const struct sample_record *s)
{
	return check(s) ? 0 : s->regs[PERF_REG_X86_IP];
}

uint64_t regs__sp(const struct sample_record *s)
{
	return check(s) ? 0 : s->regs[PERF_REG_X86_SP];
}

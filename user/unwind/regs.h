/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* regs.h: sampled user registers (perf_regs order) -> DWARF register numbers for libdwfl. */
#ifndef BPFPROF_REGS_H
#define BPFPROF_REGS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"

/* DWARF registers libdwfl tracks for unwinding on x86_64: rax..r15 then rip (psABI 3.6.2). */
#define REGS_DWARF_X86_64_CNT 17
#define REGS_DWARF_MAX	      REGS_DWARF_X86_64_CNT
/* The stack pointer and the pc (return address column) among them. */
#define REGS_DWARF_X86_64_SP  7
#define REGS_DWARF_X86_64_PC  16

/*
 * Fills dwarf[0..*cnt) with the sample's registers in DWARF order (x86_64: 0 rax, 1 rdx,
 * 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip). cap is dwarf's capacity.
 * Returns 0, -ENOTSUP for an architecture bpfprof cannot unwind, -EINVAL when the sample
 * carries too few registers or cap is too small.
 */
int regs__to_dwarf(const struct sample_record *s, uint64_t *dwarf, size_t cap, size_t *cnt);

/* The sampled user pc and sp, or 0 when the sample has no user registers. */
uint64_t regs__pc(const struct sample_record *s);
uint64_t regs__sp(const struct sample_record *s);

#endif /* BPFPROF_REGS_H */

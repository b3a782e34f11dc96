/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cfi_table.h: per-ELF-file table of DWARF CFI rows (x86_64) for the fast-path unwinder. */
#ifndef BPFPROF_CFI_TABLE_H
#define BPFPROF_CFI_TABLE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct module;

/*
 * The CFI rows of one ELF file: what libdw's dwarf_cfi_addrframe() says for every address an
 * FDE covers (DWARF 5 section 6.4.1 "Structure of Call Frame Information"; .eh_frame as in the
 * LSB "Exception Frames"), evaluated once instead of at every frame. FDEs come from .eh_frame,
 * and from .debug_frame of the same file where no .eh_frame FDE covers an address: the order
 * in which libdwfl tries them (frame_unwind.c), so the table answers what libdwfl would
 * answer. Addresses are ELF virtual addresses (pc - load bias).
 *
 * Making a table only reads the FDEs' address ranges (dwarf_next_cfi()); an FDE's rows are
 * built at the first lookup inside it (a profile meets a small share of a library's FDEs).
 * Within an FDE, consecutive rows with identical rules are merged, so rows do not follow the
 * DW_CFA_advance_loc boundaries one to one.
 */
struct cfi_table;

/* What a row says. */
enum cfi_row_kind {
	CFI_ROW_NONE,	     /* no FDE covers these addresses (libdwfl: frame-pointer guess) */
	CFI_ROW_OK,	     /* CFA = cfa_reg + cfa_off, the registers as rules[] says */
	CFI_ROW_UNSUPPORTED, /* an FDE covers them with rules the table cannot express: a CFA
				 * expression (PLT entries, stack realignment), register or
				 * expression rules, a signal frame ('S' augmentation), ... */
};

/* The registers a row gives rules for, in DWARF register order (the order libdwfl evaluates
 * them in: the first read that fails is the one reported). */
enum cfi_reg {
	CFI_REG_RBX, /* DWARF 3 */
	CFI_REG_RBP, /* DWARF 6 */
	CFI_REG_R12, /* DWARF 12..15 */
	CFI_REG_R13,
	CFI_REG_R14,
	CFI_REG_R15,
	CFI_REG_RA, /* DWARF 16: the return address column (rip) */
	CFI_REG_CNT,
};

/* DWARF register number of each enum cfi_reg (System V x86_64 psABI, figure 3.36). */
extern const uint8_t cfi_reg_dwarf[CFI_REG_CNT];

/* Register rules (rules[]): besides these two, the register was saved at CFA + 8 * rule. */
#define CFI_RULE_UNDEFINED \
	INT8_MIN		     /* DW_CFA_undefined (and the default for all but
						 * rbx, rbp, r12-r15: libdw's x86_64 ABI CFI) */
#define CFI_RULE_SAME (INT8_MIN + 1) /* DW_CFA_same_value */

#define CFI_ROW_F_SIGNAL   0x40 /* info: the FDE's CIE has the 'S' augmentation */
/* info: rax keeps its value (DW_CFA_same_value). libdw's x86_64 ABI CFI (backends/
 * x86_64_cfi.c, elfutils 0.188) makes DWARF register 0 same-value where it means rbx, and
 * leaves rbx (3) undefined: libdwfl follows it, and so does this table. */
#define CFI_ROW_F_RAX_SAME 0x80

/*
 * One row, 16 bytes. Beyond these, a CFI_ROW_OK row implies rsp = CFA (libdw's x86_64 ABI
 * default, DW_CFA_val_offset rsp 0), rax undefined or same-value (CFI_ROW_F_RAX_SAME) and the
 * other registers (rcx, rdx, rsi, rdi, r8-r11) undefined; rows saying otherwise are
 * CFI_ROW_UNSUPPORTED.
 */
struct cfi_row {
	uint32_t start;		   /* first address: ELF vaddr - cfi_table_info.base */
	int32_t cfa_off;	   /* bytes: CFA = cfa_reg + cfa_off */
	uint8_t info;		   /* kind << 4 | cfa_reg (DWARF 0-15), CFI_ROW_F_* */
	int8_t rules[CFI_REG_CNT]; /* CFI_RULE_*, or the saved value's 8-byte slot from CFA */
};

_Static_assert(sizeof(struct cfi_row) == 16, "cfi_row must stay 16 bytes");

static inline enum cfi_row_kind cfi_row__kind(const struct cfi_row *r)
{
	return (enum cfi_row_kind)((r->info >> 4) & 3);
}

static inline unsigned int cfi_row__cfa_reg(const struct cfi_row *r)
{
	return r->info & 0xf;
}

/* Counters of one table (-v logs them). */
struct cfi_table_info {
	uint64_t base;		/* ELF vaddr of the first FDE */
	size_t fde_cnt;		/* FDE ranges (.debug_frame ones cut where .eh_frame covers) */
	size_t fdes_built;	/* of which with their rows built */
	size_t rows_cnt;	/* rows built */
	size_t unsupported_cnt; /* of which CFI_ROW_UNSUPPORTED */
	size_t bytes;		/* memory held, charged against the budget */
	uint64_t build_ns;	/* time making the table took (FDE ranges) */
	uint64_t rows_ns;	/* time building rows took so far */
	bool debug_frame;	/* FDEs from .debug_frame were added */
};

/*
 * Makes the table of elf (an x86_64 ELF file; libdw's public API only: dwarf_getcfi_elf() and
 * dwarf_getcfi() for .eh_frame and .debug_frame, dwarf_next_cfi() to enumerate the FDEs;
 * dwarf_cfi_addrframe() and dwarf_frame_info() later for each row's range,
 * dwarf_frame_cfa() and dwarf_frame_register() for its rules). elf must outlive the table.
 * The caller frees it with cfi_table__free().
 * Returns NULL and sets errno: ENODATA (neither .eh_frame nor .debug_frame has an FDE),
 * ENOTSUP (not x86_64), E2BIG (covering 4 GiB of addresses or more, or over the budget),
 * ENOMEM.
 */
struct cfi_table *cfi_table__build(Elf *elf);
/* NULL is fine. Gives its bytes back to the budget. */
void cfi_table__free(struct cfi_table *t);

/*
 * The table of e, built at the first call and kept on e (e->cfi, freed with the entry); a
 * build that failed is not tried again. NULL when e has none (no CFI, over the budget, ...).
 * The pointer is valid as long as e.
 */
struct cfi_table *cfi_table__get(struct module *e);

/*
 * The row covering ELF vaddr addr, or NULL when none does: no FDE covers addr, libdw finds no
 * row there (CFI_ROW_NONE), or the FDE's rows could not be built (over the budget: libdwfl then
 * unwinds those frames). Builds the FDE's rows at the first lookup inside it. With start/end
 * non-NULL, the row's [*start, *end) as ELF vaddrs. The row stays valid as long as the table.
 * A lookup updates the table (rows, a cache of recent lookups): one thread at a time.
 */
const struct cfi_row *cfi_table__lookup(struct cfi_table *t, uint64_t addr, uint64_t *start,
					uint64_t *end);

/* FDE i's range [*start, *end) as ELF vaddrs, in address order; -ENOENT past the last. */
int cfi_table__fde(const struct cfi_table *t, size_t i, uint64_t *start, uint64_t *end);
/*
 * The FDE covering ELF vaddr addr: [*start, *end) as ELF vaddrs, *start being its
 * initial_location, the start of the function holding addr. -ENOENT when no FDE covers it.
 * Reads only the FDE ranges: no rows are built.
 */
int cfi_table__fde_find(const struct cfi_table *t, uint64_t addr, uint64_t *start, uint64_t *end);
void cfi_table__info(const struct cfi_table *t, struct cfi_table_info *info);

/*
 * The bytes all tables together may hold (default 64 MiB): a table or an FDE's rows that would
 * go over it are refused (E2BIG), and libdwfl unwinds those frames. cfi_table__bytes() is what
 * they hold now.
 */
void cfi_table__set_budget(size_t bytes);
size_t cfi_table__bytes(void);

#endif /* BPFPROF_CFI_TABLE_H */

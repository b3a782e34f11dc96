/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * eh_frame.h: the addresses of FDEs in .eh_frame and .debug_frame, decoded in their pointer
 * encodings (DW_EH_PE_*: LSB, "Exception Frames"; DWARF 5, 6.4.1). The one reader of FDE
 * ranges for the CFI table and for the symbol tables' "_start". libdw walks the entries
 * (dwarf_next_cfi()) but keeps an FDE's initial_location and address_range undecoded.
 */
#ifndef BPFPROF_EH_FRAME_H
#define BPFPROF_EH_FRAME_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Reads one pointer in encoding enc at *p (not past end) and moves *p past it. field_addr is
 * the ELF virtual address of the field (DW_EH_PE_pcrel); is64 and msb are the file's class and
 * byte order. Only the absptr and pcrel bases and the fixed sizes are read (what FDEs use);
 * indirect, the other bases and LEB128 give -EINVAL. Returns 0 or -EINVAL.
 */
int eh_frame__read_pointer(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_addr,
			   bool is64, bool msb, uint64_t *val);

/*
 * The FDE pointer encoding of a CIE: its 'R' augmentation data, else absptr. The augmentation
 * string is read as libdw reads it (cie.c): 'z' says data follows, 'S' and 'B' carry none, 'L'
 * one byte, 'P' an encoding byte and a pointer; an unknown letter ends the string unless it
 * has 'z'. Returns 0, or -EINVAL for augmentation data that ends early.
 */
int eh_frame__fde_encoding(const Dwarf_CIE *cie, bool is64, bool msb, uint8_t *enc);

/* The last CIE read by eh_frame__fde_range(): most FDEs of a file share one or two. Start it
 * zeroed with off (Dwarf_Off)-1. */
struct eh_frame_cie {
	Dwarf_Off off; /* CIE_pointer of the CIE read, (Dwarf_Off)-1: none yet */
	bool ok;       /* its encoding could be read */
	uint8_t enc;   /* its FDE pointer encoding */
};

/*
 * The range [*start, *start + *len) of fde, an entry that dwarf_next_cfi(ident, data,
 * eh_frame_p, ...) returned, data being a section at ELF vaddr sec_addr (0 for .debug_frame).
 * cie caches its CIE between calls. Returns 0, or -EINVAL when the CIE or the FDE cannot be
 * decoded (the caller skips the FDE).
 */
int eh_frame__fde_range(const unsigned char *ident, Elf_Data *data, bool eh_frame_p,
			uint64_t sec_addr, const Dwarf_FDE *fde, struct eh_frame_cie *cie,
			uint64_t *start, uint64_t *len);

#endif /* BPFPROF_EH_FRAME_H */

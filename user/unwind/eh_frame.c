// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* eh_frame.c: FDE address ranges decoded in their DW_EH_PE_* pointer encodings. */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include "unwind/eh_frame.h"

static uint64_t read_uint(const uint8_t *p, size_t n, bool msb)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* Size in bytes of a DW_EH_PE format; 0 for the ones .eh_frame does not use for FDEs. */
static size_t pointer_size(uint8_t enc, bool is64)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return is64 ? 8 : 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0; /* uleb128/sleb128: never seen for FDE addresses */
	}
}

int eh_frame__read_pointer(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_addr,
			   bool is64, bool msb, uint64_t *val)
{
	size_t n = pointer_size(enc, is64);
	uint64_t v;

	if (!n || n > (size_t)(end - *p) || (enc & DW_EH_PE_indirect))
		return -EINVAL;
	v = read_uint(*p, n, msb);
	if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field_addr;
		break;
	default:
		return -EINVAL; /* textrel, datarel, funcrel, aligned: not on x86_64 */
	}
	if (!is64)
		v &= 0xffffffffu;
	*p += n;
	*val = v;
	return 0;
}

int eh_frame__fde_encoding(const Dwarf_CIE *cie, bool is64, bool msb, uint8_t *enc)
{
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *end = d + cie->augmentation_data_size;
	const char *a;
	bool sized = false;
	uint64_t ignored;

	*enc = DW_EH_PE_absptr;
	for (a = cie->augmentation; a && *a; a++) {
		switch (*a) {
		case 'z':
			sized = true;
			continue;
		case 'S':
		case 'B':
			continue;
		case 'L':
			if (d >= end)
				return -EINVAL;
			d++;
			continue;
		case 'R':
			if (d >= end)
				return -EINVAL;
			*enc = *d++;
			continue;
		case 'P':
			if (d >= end)
				return -EINVAL;
			d++;
			/* the personality pointer's value does not matter: any base will do */
			if (eh_frame__read_pointer(&d, end, d[-1] & 0x7f, 0, is64, msb, &ignored))
				return -EINVAL;
			continue;
		default:
			if (sized)
				continue;
		}
		break;
	}
	return 0;
}

int eh_frame__fde_range(const unsigned char *ident, Elf_Data *data, bool eh_frame_p,
			uint64_t sec_addr, const Dwarf_FDE *fde, struct eh_frame_cie *cie,
			uint64_t *start, uint64_t *len)
{
	bool is64 = ident[EI_CLASS] == ELFCLASS64, msb = ident[EI_DATA] == ELFDATA2MSB;
	const uint8_t *p = fde->start;
	Dwarf_CFI_Entry ent;
	Dwarf_Off next;

	if (fde->CIE_pointer != cie->off) {
		cie->off = fde->CIE_pointer;
		cie->ok = !dwarf_next_cfi(ident, data, eh_frame_p, cie->off, &next, &ent) &&
			  dwarf_cfi_cie_p(&ent) &&
			  !eh_frame__fde_encoding(&ent.cie, is64, msb, &cie->enc);
	}
	if (!cie->ok)
		return -EINVAL;
	/* pcrel is relative to the initial_location field's own address. */
	if (eh_frame__read_pointer(&p, fde->end, cie->enc,
				   sec_addr + (p - (const uint8_t *)data->d_buf), is64, msb,
				   start) ||
	    eh_frame__read_pointer(&p, fde->end, cie->enc & 0x0f, 0, is64, msb, len))
		return -EINVAL;
	return 0;
}

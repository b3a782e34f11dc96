// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* python_lines.c: source lines of CPython bytecode offsets, from a code object's co_linetable:
 * 3.10's (Objects/lnotab_notes.txt) and 3.11 to 3.15's (Objects/locations.md: the same format, and
 * _PyCodeLocationInfoKind of Include/cpython/code.h the same, in each). */
#include <errno.h>
#include <limits.h>
#include "runtime/python/python_lines.h"

/* A line as computed, once the table gives it to an offset: >= 0, or the table is malformed. */
static int line_or_einval(int64_t line)
{
	return line >= 0 && line <= INT_MAX ? (int)line : -EINVAL;
}

/*
 * 3.10 (Objects/lnotab_notes.txt; PyLineTable_NextAddressRange(), _PyCode_CheckLineNumber() of
 * Objects/codeobject.c): pairs (bytecode bytes, line delta as a signed byte) from line
 * co_firstlineno at offset 0. A delta of -128 says the range has no line; the line computed so
 * far is kept for the next pair. Pairs of 0 bytes only move the line (deltas over 127 are split).
 */
static int line_310(const uint8_t *tab, size_t len, int64_t line, uint32_t off)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; len - i >= 2; i += 2) {
		int delta = tab[i + 1] < 0x80 ? tab[i + 1] : tab[i + 1] - 0x100;

		if (delta != -128)
			line += delta;
		end += tab[i];
		if (off < end)
			return delta == -128 ? -ENOENT : line_or_einval(line);
	}
	return -ENOENT;
}

/* 3.11+ location kinds (_PyCodeLocationInfoKind, Include/cpython/code.h). */
enum {
	LOC_ONE_LINE0 = 10, /* 10 to 12: the line moves by code - 10 */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13, /* svarint line delta */
	LOC_LONG = 14,	     /* svarint line delta, then end line and columns (varints) */
	LOC_NONE = 15,	     /* no location; the line is kept */
};

/*
 * A varint of Objects/locations.md (6-bit chunks, least significant first; bit 6: another
 * follows) at tab[*i], which must stay in its entry (bit 7 clear). At most 6 chunks: CPython
 * writes 32-bit values (an svarint of one needs 33 bits). 0, -ENOENT when the table ends in it,
 * -EINVAL when its entry does or it is longer.
 */
static int read_varint(const uint8_t *tab, size_t len, size_t *i, uint64_t *val)
{
	unsigned int shift;

	*val = 0;
	for (shift = 0; shift <= 30; shift += 6) {
		uint8_t b;

		if (*i >= len)
			return -ENOENT;
		b = tab[(*i)++];
		if (b & 0x80)
			return -EINVAL;
		*val |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40))
			return 0;
	}
	return -EINVAL;
}

/*
 * 3.11 to 3.15 (Objects/locations.md; advance() and get_line_delta() of Objects/codeobject.c):
 * entries of a first byte 1CCCCLLL (kind C, LLL + 1 code units of 2 bytes) and bytes of bit 7
 * clear; the line moves by the entry's delta from co_firstlineno. Only the line delta is read:
 * the column bytes are skipped up to the next first byte.
 */
static int line_311(const uint8_t *tab, size_t len, int64_t line, uint32_t off)
{
	uint64_t end = 0, uval;
	size_t i = 0;
	int kind, err;

	while (i < len) {
		uint8_t head = tab[i++];

		/* Only the first byte can lack bit 7: the others follow a skip to one with it. */
		if (!(head & 0x80))
			return -EINVAL;
		kind = (head >> 3) & 0xf;
		if (kind == LOC_NO_COLUMNS || kind == LOC_LONG) {
			err = read_varint(tab, len, &i, &uval);
			if (err)
				return err;
			/* svarint: the magnitude shifted left, bit 0 the sign */
			line += uval & 1 ? -(int64_t)(uval >> 1) : (int64_t)(uval >> 1);
		} else if (kind >= LOC_ONE_LINE0 && kind <= LOC_ONE_LINE2) {
			line += kind - LOC_ONE_LINE0;
		}
		/* CPython keeps the line in an int: beyond, the table is garbage (and the next
		 * deltas cannot overflow line). */
		if (line < INT_MIN || line > INT_MAX)
			return -EINVAL;
		end += ((head & 7) + 1) * 2;
		if (off < end)
			return kind == LOC_NONE ? -ENOENT : line_or_einval(line);
		while (i < len && !(tab[i] & 0x80))
			i++;
	}
	return -ENOENT;
}

int python_line(unsigned minor, const uint8_t *tab, size_t len, int firstlineno, uint32_t instr_off)
{
	if (!tab && len)
		return -EINVAL;
	if (minor == 10)
		return line_310(tab, len, firstlineno, instr_off);
	if (minor >= 11 && minor <= PYTHON_LINES_MINOR_MAX)
		return line_311(tab, len, firstlineno, instr_off);
	return -EINVAL;
}

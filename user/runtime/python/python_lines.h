/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* python_lines.h: source lines of CPython bytecode offsets, from a code object's co_linetable. */
#ifndef BPFPROF_PYTHON_LINES_H
#define BPFPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The minor versions of CPython 3 whose tables python_line() reads. */
#define PYTHON_LINES_MINOR_MIN 10
#define PYTHON_LINES_MINOR_MAX 15

/*
 * The source line of the instruction at byte offset instr_off of a code object's bytecode,
 * from its co_linetable (tab, len bytes) and co_firstlineno; format of CPython 3.<minor>
 * (10: Objects/lnotab_notes.txt; 11+: Objects/locations.md). Returns the line (>= 0),
 * -ENOENT when the table gives none for that offset (or the table ends before it), -EINVAL for a
 * malformed table or unsupported minor.
 *
 * The table may come from another process's memory and be cut anywhere (at 4096 bytes): no
 * byte past len is read, and a cut table gives the lines its bytes still determine, then
 * -ENOENT (never a wrong line). Time linear in len.
 */
int python_line(unsigned minor, const uint8_t *tab, size_t len, int firstlineno,
		uint32_t instr_off);

#endif /* BPFPROF_PYTHON_LINES_H */

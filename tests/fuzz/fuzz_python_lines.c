// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_python_lines.c: libFuzzer target of python/python_lines.c, CPython's line tables
 * (co_linetable) as python_line() reads them: the lines of the table's first bytecode offsets
 * and of a few past its end, each checked against what python_lines.h promises: a line >= 0,
 * -ENOENT or -EINVAL; and a table cut short (as BPF copies at most BPFPROF_PY_LINETABLE_SZ bytes
 * of it) gives the lines its bytes still determine, never a wrong one (a line from the cut
 * table is the whole table's).
 *
 * Input: the minor version - 10 (one byte, modulo 6: 3.10 to 3.15), co_firstlineno (i32, LE),
 * where the table is cut for that check (u16, LE), then the table. Seeds:
 * tests/fuzz/seeds/python_lines, real tables (tests/fuzz/gen_python_lines_seeds.py).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/python/python_lines.h"

/* Bytecode offsets looked up from 0, 2 bytes apart (a code unit), at most. */
#define OFFSETS_MAX 256

static void check(int ret, const char *what, uint32_t off)
{
	if (ret >= 0 || ret == -ENOENT || ret == -EINVAL)
		return;
	fprintf(stderr, "python_line(%s, offset %u) returned %d\n", what, off, ret);
	abort();
}

static void lookup(unsigned minor, const uint8_t *tab, size_t len, size_t cut, int first,
		   uint32_t off)
{
	int whole = python_line(minor, tab, len, first, off);
	int part = python_line(minor, tab, cut, first, off);

	check(whole, "whole table", off);
	check(part, "cut table", off);
	if (part >= 0 && part != whole) {
		fprintf(stderr, "offset %u: line %d from the table cut at %zu bytes, %d from the "
			"whole table (%zu bytes)\n", off, part, cut, whole, len);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t sz)
{
	uint8_t *tab;
	unsigned minor;
	uint16_t cut;
	size_t len, i;
	int first;

	if (sz < 7)
		return 0;
	minor = PYTHON_LINES_MINOR_MIN +
		in[0] % (PYTHON_LINES_MINOR_MAX - PYTHON_LINES_MINOR_MIN + 1);
	memcpy(&first, in + 1, 4);
	memcpy(&cut, in + 5, 2);
	len = sz - 7;
	/* Its own allocation: ASan sees a read past the table's end. */
	tab = malloc(len ? len : 1);
	if (!tab)
		return 0;
	memcpy(tab, in + 7, len);
	if (cut > len)
		cut = len;
	for (i = 0; i < OFFSETS_MAX && i <= 2 * len + 2; i++)
		lookup(minor, tab, len, cut, first, 2 * i);
	lookup(minor, tab, len, cut, first, UINT32_MAX);
	lookup(minor, tab, len, cut, first, UINT32_MAX - 1);
	/* The unsupported versions around them. */
	check(python_line(9, tab, len, first, 0), "3.9", 0);
	check(python_line(14, tab, len, first, 0), "3.14", 0);
	free(tab);
	return 0;
}

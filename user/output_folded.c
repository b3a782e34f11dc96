// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_folded.c: folded stacks writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output_folded.h"

struct lines {
	char **v;
	size_t cnt;
};

static void put_name(FILE *mem, const char *name, enum frame_kind kind)
{
	const char *c;

	for (c = name; *c; c++) {
		if (*c == ';')
			fputc(':', mem);
		else if (*c == ' ' && kind == FRAME_COMM)
			fputc('_', mem);
		else if ((unsigned char)*c < 0x20 || *c == 0x7f)
			fputc('?', mem);
		else
			fputc(*c, mem);
	}
	if (kind == FRAME_KERNEL)
		fputs("_[k]", mem);
}

static int add_line(const uint32_t *ids, size_t n, uint64_t count, void *arg)
{
	const struct aggregate *agg = ((void **)arg)[0];
	struct lines *lines = ((void **)arg)[1];
	size_t sz = 0, i;
	char *buf = NULL;
	FILE *mem;

	mem = open_memstream(&buf, &sz);
	if (!mem)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (i)
			fputc(';', mem);
		put_name(mem, aggregate__name(agg, ids[i]), aggregate__kind(agg, ids[i]));
	}
	fprintf(mem, " %llu\n", (unsigned long long)count);
	if (fclose(mem)) {
		free(buf);
		return -ENOMEM;
	}
	lines->v[lines->cnt++] = buf;
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int output_folded__write(const struct aggregate *agg, FILE *fp)
{
	struct lines lines = {};
	void *arg[2] = { (void *)agg, &lines };
	size_t i;
	int err;

	lines.v = calloc(aggregate__stacks(agg) + 1, sizeof(*lines.v));
	if (!lines.v)
		return -ENOMEM;
	err = aggregate__for_each(agg, add_line, arg);
	if (!err) {
		/* Identical text from different stacks (sanitized names) is written twice: the
		 * readers sum duplicate lines. */
		qsort(lines.v, lines.cnt, sizeof(*lines.v), cmp_lines);
		for (i = 0; i < lines.cnt; i++)
			if (fputs(lines.v[i], fp) == EOF) {
				err = -EIO;
				break;
			}
	}
	for (i = 0; i < lines.cnt; i++)
		free(lines.v[i]);
	free(lines.v);
	return err;
}

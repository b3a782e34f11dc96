// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_folded.c: folded stacks writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/output_folded.h"

static void put_name(FILE *mem, const char *name, const struct frame_kind *kind)
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
	fputs(kind->suffix, mem);
}

struct line {
	char *text; /* the stack, without the count */
	uint64_t count;
};

struct lines {
	const struct aggregate *agg;
	struct line *v;
	size_t cnt;
};

static int add_line(const struct agg_frame *frames, size_t n, uint64_t count,
		    const struct agg_stack *st, void *arg)
{
	struct lines *lines = arg;
	size_t sz = 0, i;
	char *buf = NULL;
	FILE *mem;

	mem = open_memstream(&buf, &sz);
	if (!mem)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (i)
			fputc(';', mem);
		put_name(mem, aggregate__str(lines->agg, frames[i].name), frames[i].kind);
	}
	if (fclose(mem)) {
		free(buf);
		return -ENOMEM;
	}
	lines->v[lines->cnt].text = buf;
	lines->v[lines->cnt++].count = count;
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int output_folded__write(struct aggregate *agg, FILE *fp, struct output_counts *counts)
{
	struct output_counts done = { 0 };
	struct lines lines = { .agg = agg };
	uint64_t count;
	size_t i, j;
	int err;

	lines.v = calloc(aggregate__stacks(agg) + 1, sizeof(*lines.v));
	if (!lines.v)
		return -ENOMEM;
	err = aggregate__for_each_frames(agg, add_line, &lines);
	if (!err) {
		/* Threads, addresses and names that sanitize alike give equal lines: sum them. */
		qsort(lines.v, lines.cnt, sizeof(*lines.v), cmp_lines);
		for (i = 0; i < lines.cnt; i = j) {
			count = 0;
			for (j = i; j < lines.cnt && !strcmp(lines.v[i].text, lines.v[j].text); j++)
				count += lines.v[j].count;
			if (fprintf(fp, "%s %llu\n", lines.v[i].text, (unsigned long long)count) <
			    0) {
				err = -EIO;
				break;
			}
			done.stacks++;
			done.samples += count;
		}
	}
	if (counts)
		*counts = done;
	for (i = 0; i < lines.cnt; i++)
		free(lines.v[i].text);
	free(lines.v);
	return err;
}

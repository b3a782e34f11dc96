// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ksyms.c: kernel text symbols from /proc/kallsyms, sorted for binary search. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/ksyms.h"
#include "util/util.h"

#define KSYMS_READ_BUF (256 * 1024)

struct ksym {
	uint64_t start;
	uint64_t end;  /* the next symbol's address; UINT64_MAX when unknown */
	uint32_t name; /* offset in ksyms->names */
	uint32_t pref; /* alias preference: lower wins */
};

struct ksyms {
	struct ksym *syms;
	size_t cnt;
	size_t cap;
	char *names;
	size_t names_len;
	size_t names_cap;
	/* Addresses that end the text before them: data symbols and _etext-like markers. */
	uint64_t *stops;
	size_t stops_cnt;
	size_t stops_cap;
	bool unsorted; /* the kernel's part is in address order, bpf programs not */
};

static int ksyms__add_stop(struct ksyms *ks, uint64_t addr)
{
	if (array_grow((void **)&ks->stops, &ks->stops_cap, ks->stops_cnt + 1, sizeof(*ks->stops),
		       1024))
		return -ENOMEM;
	ks->stops[ks->stops_cnt++] = addr;
	return 0;
}

static int ksyms__add(struct ksyms *ks, uint64_t addr, char type, const char *name, size_t len)
{
	struct ksym *s;
	uint32_t pref;

	if (ks->names_len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (array_grow((void **)&ks->syms, &ks->cap, ks->cnt + 1, sizeof(*ks->syms), 1024) ||
	    array_grow((void **)&ks->names, &ks->names_cap, ks->names_len + len + 1, 1, 1024))
		return -ENOMEM;
	/* Same order as user space symbols: global, weak, local, then no leading '_'. */
	pref = type == 'T' ? 0 : type == 'W' || type == 'w' ? 1 : 2;
	pref = pref * 2 + (name[0] == '_');
	if (ks->cnt && addr < ks->syms[ks->cnt - 1].start)
		ks->unsorted = true;
	s = &ks->syms[ks->cnt++];
	s->start = addr;
	s->end = UINT64_MAX;
	s->name = ks->names_len;
	s->pref = pref;
	memcpy(ks->names + ks->names_len, name, len);
	ks->names[ks->names_len + len] = '\0';
	ks->names_len += len + 1;
	return 0;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static bool is_data_type(char t)
{
	return t == 'd' || t == 'D' || t == 'b' || t == 'B' || t == 'r' || t == 'R';
}

/* Zero-size markers that close a text region rather than start a function. */
static bool is_text_end(const char *name, size_t len)
{
	return (len == 6 && !memcmp(name, "_etext", 6)) ||
	       (len == 10 && !memcmp(name, "_einittext", 10));
}

/*
 * "addr type name[\t[module]]". Returns 1 for a parsed line, 0 for a line to skip, or -ENOMEM.
 * *nonzero is set when the address is not 0.
 */
static int ksyms__parse_line(struct ksyms *ks, const char *line, bool *nonzero)
{
	const char *p = line, *name;
	uint64_t addr = 0;
	size_t len;
	char type;

	if (hex_parse(&p, NULL, &addr) || *p != ' ' || !p[1] || p[2] != ' ')
		return 0;
	type = p[1];
	name = p + 3;
	len = strcspn(name, " \t\n");
	if (!len)
		return 0;
	if (addr)
		*nonzero = true;

	if (is_text_type(type) && !is_text_end(name, len))
		return ksyms__add(ks, addr, type, name, len) ? -ENOMEM : 1;
	if (is_data_type(type) || is_text_type(type))
		return ksyms__add_stop(ks, addr) ? -ENOMEM : 1;
	return 1;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pref != y->pref)
		return x->pref < y->pref ? -1 : 1;
	/* qsort is not stable: among equals, the first in the file wins. */
	return x->name < y->name ? -1 : x->name > y->name;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts, keeps one name per address and bounds each symbol by the next symbol or stop. */
static void ksyms__finish(struct ksyms *ks)
{
	size_t i, j, s = 0;

	if (ks->unsorted)
		qsort(ks->syms, ks->cnt, sizeof(*ks->syms), ksym_cmp);
	if (ks->stops_cnt > 1)
		qsort(ks->stops, ks->stops_cnt, sizeof(*ks->stops), u64_cmp);

	for (i = 0, j = 0; i < ks->cnt; i++) {
		if (j && ks->syms[j - 1].start == ks->syms[i].start) {
			/* Unsorted input was ordered by preference too; sorted input was not. */
			if (!ks->unsorted && ksym_cmp(&ks->syms[i], &ks->syms[j - 1]) < 0)
				ks->syms[j - 1] = ks->syms[i];
			continue;
		}
		ks->syms[j++] = ks->syms[i];
	}
	ks->cnt = j;

	for (i = 0; i < ks->cnt; i++) {
		uint64_t end = i + 1 < ks->cnt ? ks->syms[i + 1].start : UINT64_MAX;

		while (s < ks->stops_cnt && ks->stops[s] <= ks->syms[i].start)
			s++;
		if (s < ks->stops_cnt && ks->stops[s] < end)
			end = ks->stops[s];
		ks->syms[i].end = end;
	}
	free(ks->stops);
	ks->stops = NULL;
	ks->stops_cnt = ks->stops_cap = 0;
}

static struct ksyms *load_stream(FILE *f)
{
	struct ksyms *ks = NULL;
	bool nonzero = false;
	size_t linecap = 0;
	char *line = NULL;
	int err = 0;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &linecap, f) >= 0) {
		if (ksyms__parse_line(ks, line, &nonzero) < 0) {
			err = ENOMEM;
			goto cleanup;
		}
	}
	if (ferror(f)) {
		err = errno ? errno : EIO;
		goto cleanup;
	}
	/* kptr_restrict hides every address, not just some: nothing here is usable. */
	if ((ks->cnt || ks->stops_cnt) && !nonzero) {
		err = EPERM;
		goto cleanup;
	}
	ksyms__finish(ks);

cleanup:
	free(line);
	if (err) {
		ksyms__free(ks);
		errno = err;
		return NULL;
	}
	return ks;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks;
	char *buf;
	FILE *f;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	f = fopen(path, "re");
	if (!f)
		return NULL;
	/* Each read() of /proc/kallsyms formats symbols anew: fewer, larger reads are faster. */
	buf = malloc(KSYMS_READ_BUF);
	if (buf)
		setvbuf(f, buf, _IOFBF, KSYMS_READ_BUF);
	ks = load_stream(f);
	err = errno;
	fclose(f);
	free(buf);
	errno = err;
	return ks;
}

struct ksyms *ksyms__load_text(const char *text, size_t len)
{
	struct ksyms *ks;
	FILE *f;
	int err;

	if (!len)
		return calloc(1, sizeof(struct ksyms));
	f = fmemopen((void *)text, len, "r");
	if (!f)
		return NULL;
	ks = load_stream(f);
	err = errno;
	fclose(f);
	errno = err;
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks->stops);
	free(ks);
}

size_t ksyms__cnt(const struct ksyms *ks)
{
	return ks ? ks->cnt : 0;
}

const char *ksyms__find(const struct ksyms *ks, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ks || !ks->cnt)
		return NULL;
	/* The first symbol starting above addr; the one before it is the candidate. */
	hi = ks->cnt;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &ks->syms[lo - 1];
	if (addr >= s->end)
		return NULL;
	if (offset)
		*offset = addr - s->start;
	return ks->names + s->name;
}

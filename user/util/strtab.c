// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* strtab.c: strings interned in a uthash table keyed by their bytes, with an array by id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define HASH_NONFATAL_OOM 1 /* a failed add leaves hh.tbl NULL instead of exiting */
#include <uthash.h>
#include "util/strtab.h"
#include "util/util.h"

struct strtab_entry {
	UT_hash_handle hh;
	uint32_t id;
	char s[]; /* NUL-terminated */
};

struct strtab {
	struct strtab_entry *by_s;
	struct strtab_entry **by_id;
	size_t cnt, cap;
};

struct strtab *strtab__new(void)
{
	return calloc(1, sizeof(struct strtab));
}

void strtab__free(struct strtab *t)
{
	size_t i;

	if (!t)
		return;
	HASH_CLEAR(hh, t->by_s);
	for (i = 0; i < t->cnt; i++)
		free(t->by_id[i]);
	free(t->by_id);
	free(t);
}

int64_t strtab__intern(struct strtab *t, const char *s)
{
	size_t len = strlen(s);
	struct strtab_entry *e;

	HASH_FIND(hh, t->by_s, s, len, e);
	if (e)
		return e->id;
	if (t->cnt >= UINT32_MAX ||
	    array_grow((void **)&t->by_id, &t->cap, t->cnt + 1, sizeof(*t->by_id), 256))
		return -ENOMEM;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->s, s, len + 1);
	e->id = t->cnt;
	HASH_ADD(hh, t->by_s, s[0], len, e);
	if (!e->hh.tbl) {
		free(e);
		return -ENOMEM;
	}
	t->by_id[t->cnt++] = e;
	return e->id;
}

const char *strtab__str(const struct strtab *t, uint32_t id)
{
	return id < t->cnt ? t->by_id[id]->s : NULL;
}

size_t strtab__cnt(const struct strtab *t)
{
	return t->cnt;
}

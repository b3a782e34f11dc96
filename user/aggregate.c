// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* aggregate.c: string table and stack counts (uthash). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "aggregate.h"

struct name_entry {
	uint32_t id;
	enum frame_kind kind;
	UT_hash_handle hh;
	char key[];		/* kind byte + name: one name can be a user and a kernel frame */
};

struct stack_entry {
	uint64_t count;
	size_t n;
	UT_hash_handle hh;
	uint32_t ids[];		/* the key */
};

struct aggregate {
	struct name_entry *names;	/* by key */
	struct name_entry **by_id;
	size_t names_cnt, names_cap;
	struct stack_entry *stacks;
	uint64_t samples;
};

struct aggregate *aggregate__new(void)
{
	return calloc(1, sizeof(struct aggregate));
}

void aggregate__free(struct aggregate *agg)
{
	struct name_entry *ne, *nt;
	struct stack_entry *se, *st;

	if (!agg)
		return;
	HASH_ITER(hh, agg->names, ne, nt) {
		HASH_DEL(agg->names, ne);
		free(ne);
	}
	HASH_ITER(hh, agg->stacks, se, st) {
		HASH_DEL(agg->stacks, se);
		free(se);
	}
	free(agg->by_id);
	free(agg);
}

int64_t aggregate__intern(struct aggregate *agg, const char *name, enum frame_kind kind)
{
	size_t len = strlen(name);
	struct name_entry *e, **by_id;
	char stack_key[256], *key = stack_key;
	int64_t ret;

	if (len + 2 > sizeof(stack_key)) {
		key = malloc(len + 2);
		if (!key)
			return -ENOMEM;
	}
	key[0] = (char)('0' + kind);
	memcpy(key + 1, name, len + 1);
	HASH_FIND(hh, agg->names, key, len + 1, e);
	if (e) {
		ret = e->id;
		goto out;
	}
	if (agg->names_cnt == agg->names_cap) {
		size_t cap = agg->names_cap ? agg->names_cap * 2 : 1024;

		by_id = realloc(agg->by_id, cap * sizeof(*by_id));
		if (!by_id) {
			ret = -ENOMEM;
			goto out;
		}
		agg->by_id = by_id;
		agg->names_cap = cap;
	}
	e = malloc(sizeof(*e) + len + 2);
	if (!e) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(e->key, key, len + 2);
	e->id = agg->names_cnt;
	e->kind = kind;
	agg->by_id[agg->names_cnt++] = e;
	HASH_ADD(hh, agg->names, key, len + 1, e);
	ret = e->id;
out:
	if (key != stack_key)
		free(key);
	return ret;
}

const char *aggregate__name(const struct aggregate *agg, uint32_t id)
{
	return id < agg->names_cnt ? agg->by_id[id]->key + 1 : "?";
}

enum frame_kind aggregate__kind(const struct aggregate *agg, uint32_t id)
{
	return id < agg->names_cnt ? agg->by_id[id]->kind : FRAME_USER;
}

int aggregate__add(struct aggregate *agg, const uint32_t *ids, size_t n, uint64_t count)
{
	size_t sz = n * sizeof(*ids);
	struct stack_entry *e;

	HASH_FIND(hh, agg->stacks, ids, sz, e);
	if (!e) {
		e = malloc(sizeof(*e) + sz);
		if (!e)
			return -ENOMEM;
		e->count = 0;
		e->n = n;
		memcpy(e->ids, ids, sz);
		HASH_ADD(hh, agg->stacks, ids, sz, e);
	}
	e->count += count;
	agg->samples += count;
	return 0;
}

size_t aggregate__names(const struct aggregate *agg)
{
	return agg->names_cnt;
}

size_t aggregate__stacks(const struct aggregate *agg)
{
	return HASH_COUNT(agg->stacks);
}

uint64_t aggregate__samples(const struct aggregate *agg)
{
	return agg->samples;
}

int aggregate__for_each(const struct aggregate *agg, aggregate_stack_fn cb, void *arg)
{
	const struct stack_entry *e;
	int ret;

	for (e = agg->stacks; e; e = e->hh.next) {
		ret = cb(e->ids, e->n, e->count, arg);
		if (ret)
			return ret;
	}
	return 0;
}

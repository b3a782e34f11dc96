// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* aggregate.c: string table, locations and sample keys (uthash). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "profile/aggregate.h"
#include "process/module_cache.h"
#include "util/strtab.h"
#include "util/utf8.h"
#include "util/util.h"

/* The hash key of a location: no padding, so it can be hashed as bytes. */
struct loc_key {
	uint64_t addr;
	uint64_t entry; /* (uintptr_t)entry, or (uintptr_t)ref */
	uint64_t kind;	/* (uintptr_t)kind */
	uint32_t name;
	uint32_t ref; /* 1: entry is a runtime's reference (aggregate__ref_location()) */
};

struct loc_entry {
	struct loc_key key;
	UT_hash_handle hh;
};

/* Slots of the location cache: a direct-mapped front of loc_hash. A sample's frames are
 * mostly the ones of the samples before it, and uthash's lookup (Jenkins over the 32-byte key,
 * then a chain walk) was the largest user-space cost per frame after the unwind itself. */
#define LOC_CACHE_BITS 12

struct stack_entry {
	UT_hash_handle hh;
	struct agg_stack st; /* pid .. locs[] is the key, count is not */
};

#define STACK_KEY_OFF offsetof(struct agg_stack, pid)

struct aggregate {
	struct strtab *strings;
	struct loc_entry *loc_hash; /* by key */
	struct loc_entry *loc_keys; /* by id: stable storage of the hash nodes... */
	struct agg_location *locs;  /* ... and of the locations, both loc_cap long */
	size_t loc_cnt, loc_cap;
	uint32_t loc_cache[1u << LOC_CACHE_BITS]; /* location id + 1, or 0 */
	struct stack_entry *stacks;
	uint64_t samples;
	bool off_cpu;		  /* a SAMPLE_OFF_CPU stack was added */
	bool cpu;		  /* a SAMPLE_CPU stack was added */
	struct sample_weight off; /* of all SAMPLE_OFF_CPU samples */
	uint64_t period_ns;	  /* aggregate__set_period() */
	uint32_t off_cpu_str;	  /* string id of "[off-cpu]" */
};

struct aggregate *aggregate__new(void)
{
	struct aggregate *agg = calloc(1, sizeof(*agg));

	if (!agg)
		return NULL;
	agg->strings = strtab__new();
	if (!agg->strings || aggregate__string(agg, "") != 0) {
		aggregate__free(agg);
		return NULL;
	}
	return agg;
}

void aggregate__free(struct aggregate *agg)
{
	struct stack_entry *ke, *ktmp;
	size_t i;

	if (!agg)
		return;
	strtab__free(agg->strings);
	HASH_ITER(hh, agg->stacks, ke, ktmp) {
		HASH_DEL(agg->stacks, ke);
		free(ke);
	}
	HASH_CLEAR(hh, agg->loc_hash);
	for (i = 0; i < agg->loc_cnt; i++) {
		if (agg->locs[i].entry)
			module__put(agg->locs[i].entry);
		/* The kind it was added with: the key's (a location its reference did not name
		 * is FRAME_USER now, aggregate__set_kind()). */
		if (agg->locs[i].ref)
			((const struct frame_kind *)(uintptr_t)agg->loc_keys[i].key.kind)
				->put(agg->locs[i].ref);
		free(agg->locs[i].lines);
	}
	free(agg->loc_keys);
	free(agg->locs);
	free(agg);
}

/* Every string of every output enters here: one check that it is UTF-8, which the pprof
 * encoding's string fields must be (a decoder rejects the whole profile otherwise), whatever
 * bytes a file or process gave for a name. */
int64_t aggregate__string(struct aggregate *agg, const char *s)
{
	char *fixed;
	int64_t id;

	if (utf8__valid(s))
		return strtab__intern(agg->strings, s);
	fixed = utf8__sanitize(s);
	if (!fixed)
		return -ENOMEM;
	id = strtab__intern(agg->strings, fixed);
	free(fixed);
	return id;
}

int64_t aggregate__string_fmt(struct aggregate *agg, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return aggregate__string(agg, buf);
}

const char *aggregate__str(const struct aggregate *agg, uint32_t id)
{
	const char *s;

	if (id == AGG_NO_NAME)
		return "[unknown]";
	s = strtab__str(agg->strings, id);
	return s ? s : "?";
}

size_t aggregate__strings(const struct aggregate *agg)
{
	return strtab__cnt(agg->strings);
}

/* Grows locs and loc_keys together. The hash points into loc_keys: rebuild it after a move. */
static int grow_locations(struct aggregate *agg)
{
	size_t cap = agg->loc_cap ? agg->loc_cap * 2 : 4096, i;
	struct agg_location *locs;
	struct loc_entry *keys;

	locs = realloc(agg->locs, cap * sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	agg->locs = locs;
	keys = malloc(cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	HASH_CLEAR(hh, agg->loc_hash);
	for (i = 0; i < agg->loc_cnt; i++) {
		keys[i].key = agg->loc_keys[i].key;
		HASH_ADD(hh, agg->loc_hash, key, sizeof(keys[i].key), &keys[i]);
	}
	free(agg->loc_keys);
	agg->loc_keys = keys;
	agg->loc_cap = cap;
	return 0;
}

/* The location of key, added on first use with a reference on entry or ref (of kind). */
static inline __attribute__((always_inline)) int64_t location(struct aggregate *agg,
							      const struct loc_key *key,
							      const struct frame_kind *kind,
							      struct module *entry, void *ref)
{
	uint64_t h = (key->addr ^ key->entry ^ key->kind ^ (uint64_t)key->name << 32) *
		     0x9e3779b97f4a7c15ull;
	uint32_t *slot = &agg->loc_cache[h >> (64 - LOC_CACHE_BITS)];
	struct agg_location *l;
	struct loc_entry *e;
	size_t id;

	if (*slot && !memcmp(&agg->loc_keys[*slot - 1].key, key, sizeof(*key)))
		return *slot - 1;
	HASH_FIND(hh, agg->loc_hash, key, sizeof(*key), e);
	if (e) {
		*slot = e - agg->loc_keys + 1;
		return *slot - 1;
	}
	if (agg->loc_cnt == agg->loc_cap && grow_locations(agg))
		return -ENOMEM;
	id = agg->loc_cnt;
	l = &agg->locs[id];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->name = key->name;
	l->addr = key->addr;
	if (key->name != AGG_NO_NAME && !ref) {
		l->lines = calloc(1, sizeof(*l->lines));
		if (!l->lines)
			return -ENOMEM;
		l->lines[0].function = key->name;
		l->lines_cnt = 1;
	}
	l->entry = entry ? module__get(entry) : NULL;
	l->ref = ref ? kind->get(ref) : NULL;
	e = &agg->loc_keys[id];
	e->key = *key;
	HASH_ADD(hh, agg->loc_hash, key, sizeof(e->key), e);
	agg->loc_cnt++;
	*slot = id + 1;
	return id;
}

int64_t aggregate__location(struct aggregate *agg, const struct frame_kind *kind,
			    struct module *entry, uint64_t addr, uint32_t name)
{
	struct loc_key key = {
		.addr = addr,
		.entry = (uintptr_t)entry,
		.kind = (uintptr_t)kind,
		.name = name,
	};

	return location(agg, &key, kind, entry, NULL);
}

int64_t aggregate__ref_location(struct aggregate *agg, const struct frame_kind *kind, void *ref,
				uint64_t addr, uint32_t fallback)
{
	/* Another key than aggregate__location()'s of the same kind (named at once). */
	struct loc_key key = {
		.addr = addr,
		.entry = (uintptr_t)ref,
		.kind = (uintptr_t)kind,
		.name = fallback,
		.ref = 1,
	};

	if (!ref || !kind->get || !kind->put)
		return -EINVAL;
	return location(agg, &key, kind, NULL, ref);
}

const struct agg_location *aggregate__loc(const struct aggregate *agg, uint32_t id)
{
	return id < agg->loc_cnt ? &agg->locs[id] : NULL;
}

size_t aggregate__locations(const struct aggregate *agg)
{
	return agg->loc_cnt;
}

int aggregate__set_lines(struct aggregate *agg, uint32_t id, const struct agg_line *lines,
			 uint32_t cnt)
{
	struct agg_location *l;
	struct agg_line *copy;

	if (id >= agg->loc_cnt || !cnt)
		return -EINVAL;
	l = &agg->locs[id];
	copy = malloc(cnt * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, lines, cnt * sizeof(*copy));
	free(l->lines);
	l->lines = copy;
	l->lines_cnt = cnt;
	return 0;
}

int aggregate__add(struct aggregate *agg, uint32_t pid, uint32_t tid, uint32_t comm,
		   enum sample_origin origin, const struct sample_weight *w, const uint32_t *locs,
		   size_t n)
{
	int64_t id;

	if (origin == SAMPLE_OFF_CPU && !agg->off_cpu_str) {
		id = aggregate__string(agg, "[off-cpu]");
		if (id < 0)
			return id;
		agg->off_cpu_str = id;
	}
	/* Up to the last location: no tail padding (uninitialized) in the key. */
	size_t sz = offsetof(struct agg_stack, locs) + n * sizeof(*locs);
	struct agg_stack *key;
	struct stack_entry *e;
	char buf[sizeof(struct agg_stack) + 128 * sizeof(uint32_t)];

	key = sz <= sizeof(buf) ? (struct agg_stack *)buf : malloc(sz);
	if (!key)
		return -ENOMEM;
	key->count = 0;
	key->ns = 0;
	key->pid = pid;
	key->tid = tid;
	key->comm = comm;
	key->origin = origin;
	key->n = n;
	memcpy(key->locs, locs, n * sizeof(*locs));
	HASH_FIND(hh, agg->stacks, (char *)key + STACK_KEY_OFF, sz - STACK_KEY_OFF, e);
	if (!e) {
		e = malloc(sizeof(*e) + n * sizeof(*locs));
		if (!e) {
			if (key != (struct agg_stack *)buf)
				free(key);
			return -ENOMEM;
		}
		memcpy(&e->st, key, sz);
		HASH_ADD_KEYPTR(hh, agg->stacks, (char *)&e->st + STACK_KEY_OFF, sz - STACK_KEY_OFF,
				e);
	}
	if (key != (struct agg_stack *)buf)
		free(key);
	e->st.count += w->count;
	e->st.ns += w->ns;
	agg->samples += w->count;
	if (origin == SAMPLE_OFF_CPU) {
		agg->off.count += w->count;
		agg->off.ns += w->ns;
		agg->off_cpu = true;
	} else {
		agg->cpu = true;
	}
	return 0;
}

uint64_t aggregate__value(const struct aggregate *agg, const struct agg_stack *st)
{
	if (st->origin == SAMPLE_OFF_CPU)
		return (st->ns + 500) / 1000;
	return aggregate__mixed(agg) ? (st->count * agg->period_ns + 500) / 1000 : st->count;
}

void aggregate__set_period(struct aggregate *agg, uint64_t period_ns)
{
	agg->period_ns = period_ns;
}

bool aggregate__mixed(const struct aggregate *agg)
{
	return agg->off_cpu && agg->cpu;
}

struct sample_weight aggregate__weight(const struct aggregate *agg, enum sample_origin origin)
{
	struct sample_weight w = {};

	if (origin == SAMPLE_OFF_CPU)
		return agg->off;
	/* Every sample not off CPU is a CPU sample, of no time of its own. */
	w.count = agg->samples - agg->off.count;
	return w;
}

bool aggregate__has_off_cpu(const struct aggregate *agg)
{
	return agg->off_cpu;
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
		ret = cb(&e->st, arg);
		if (ret)
			return ret;
	}
	return 0;
}

int aggregate__for_each_frames(const struct aggregate *agg, aggregate_frames_fn cb, void *arg)
{
	struct agg_frame *frames = NULL;
	size_t cap = 0, n, i;
	const struct stack_entry *e;
	int ret = 0;
	uint32_t j;

	for (e = agg->stacks; e; e = e->hh.next) {
		const struct agg_stack *st = &e->st;

		n = 0;
		if (array_grow((void **)&frames, &cap, 1, sizeof(*frames), 64)) {
			ret = -ENOMEM;
			break;
		}
		frames[n].name = st->comm;
		frames[n++].kind = FRAME_COMM;
		if (st->origin == SAMPLE_OFF_CPU && aggregate__mixed(agg)) {
			if (array_grow((void **)&frames, &cap, 2, sizeof(*frames), 64)) {
				ret = -ENOMEM;
				break;
			}
			frames[n].name = agg->off_cpu_str;
			frames[n++].kind = FRAME_USER;
		}
		for (i = 0; i < st->n; i++) {
			const struct agg_location *l = &agg->locs[st->locs[i]];

			if (array_grow((void **)&frames, &cap, n + l->lines_cnt + 1,
				       sizeof(*frames), 64)) {
				ret = -ENOMEM;
				goto out;
			}
			if (!l->lines_cnt) { /* not symbolized: AGG_NO_NAME */
				frames[n].name = l->name;
				frames[n++].kind = l->kind;
				continue;
			}
			/* Outermost (the real function) first, then what it inlined. */
			for (j = l->lines_cnt; j-- > 0;) {
				frames[n].name = l->lines[j].function;
				frames[n++].kind = j == l->lines_cnt - 1 ? l->kind : FRAME_INLINE;
			}
		}
		ret = cb(frames, n, aggregate__value(agg, st), st, arg);
		if (ret)
			break;
	}
out:
	free(frames);
	return ret;
}

void aggregate__set_kind(struct aggregate *agg, uint32_t id, const struct frame_kind *kind)
{
	if (id < agg->loc_cnt)
		agg->locs[id].kind = kind;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pending.c: the per-CPU join of records with the sample that follows them (pending.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "util/pending.h"

struct pending_slot {
	bool full; /* a record waits */
	uint32_t tid;
	uint64_t time_ns;
	_Alignas(8) unsigned char rec[];
};

int pending__init(struct pending *pd, size_t rec_sz)
{
	memset(pd, 0, sizeof(*pd));
	pd->slot = calloc(PENDING_CPUS_MAX, sizeof(*pd->slot));
	if (!pd->slot)
		return -ENOMEM;
	pd->rec_sz = rec_sz;
	return 0;
}

void pending__free(struct pending *pd)
{
	size_t i;

	if (!pd->slot)
		return;
	for (i = 0; i < PENDING_CPUS_MAX; i++)
		free(pd->slot[i]);
	free(pd->slot);
	pd->slot = NULL;
}

void *pending__put(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns,
		   const void *rec, size_t len)
{
	struct pending_slot *p;

	if (!pd->slot || cpu >= PENDING_CPUS_MAX || len > pd->rec_sz)
		return NULL;
	p = pd->slot[cpu];
	if (p && p->full)
		pd->unmatched++;
	if (!p) {
		p = malloc(sizeof(*p) + pd->rec_sz);
		if (!p)
			return NULL;
		pd->slot[cpu] = p;
	}
	p->full = true;
	p->tid = tid;
	p->time_ns = time_ns;
	memcpy(p->rec, rec, len);
	return p->rec;
}

void *pending__peek(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns)
{
	struct pending_slot *p = pd->slot && cpu < PENDING_CPUS_MAX ? pd->slot[cpu] : NULL;

	if (!p || !p->full || p->tid != tid || p->time_ns != time_ns)
		return NULL;
	return p->rec;
}

const void *pending__take(struct pending *pd, uint32_t cpu, uint32_t tid, uint64_t time_ns)
{
	struct pending_slot *p = pd->slot && cpu < PENDING_CPUS_MAX ? pd->slot[cpu] : NULL;

	if (!p || !p->full)
		return NULL;
	p->full = false;
	if (p->tid != tid || p->time_ns != time_ns) {
		pd->unmatched++;
		return NULL;
	}
	pd->matched++;
	return p->rec;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* aggregate.h: interned frame names and stack -> sample count. */
#ifndef BPFPROF_AGGREGATE_H
#define BPFPROF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

/* Frame kinds, for outputs that tell them apart (folded suffixes, colours). */
enum frame_kind {
	FRAME_USER,
	FRAME_KERNEL,	/* folded suffix "_[k]" */
	FRAME_COMM,	/* the process name at the root of a folded stack */
	FRAME_INLINE,	/* a function inlined into its caller (folded suffix "_[i]") */
};

struct aggregate;

struct aggregate *aggregate__new(void);
void aggregate__free(struct aggregate *agg);

/*
 * The id of name (of kind) in the string table, added on first use. Ids are dense from 0 and
 * stable for the aggregate's life. Returns a negative errno (-ENOMEM) on failure.
 */
int64_t aggregate__intern(struct aggregate *agg, const char *name, enum frame_kind kind);
const char *aggregate__name(const struct aggregate *agg, uint32_t id);
enum frame_kind aggregate__kind(const struct aggregate *agg, uint32_t id);

/* Adds count samples of the stack ids[0..n), root first (the comm first). 0 or -ENOMEM. */
int aggregate__add(struct aggregate *agg, const uint32_t *ids, size_t n, uint64_t count);

/* Interned names (ids are 0 .. count - 1), unique stacks, total samples. */
size_t aggregate__names(const struct aggregate *agg);
size_t aggregate__stacks(const struct aggregate *agg);
uint64_t aggregate__samples(const struct aggregate *agg);

/* Calls cb once per unique stack (order unspecified); stops early when cb returns non-zero and
 * returns that value. */
typedef int (*aggregate_stack_fn)(const uint32_t *ids, size_t n, uint64_t count, void *arg);
int aggregate__for_each(const struct aggregate *agg, aggregate_stack_fn cb, void *arg);

#endif /* BPFPROF_AGGREGATE_H */

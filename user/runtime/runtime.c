// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* runtime.c: the table of runtimes (one registration line each) and the calls of their hooks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/runtime.h"
#include "util/util.h"

/* The registrations: one line per runtime, in the order their hooks run. */
extern const struct runtime_ops runtime_go_ops;
extern const struct runtime_ops runtime_python_ops;
extern const struct runtime_ops runtime_jit_ops;
const struct runtime_ops *const runtime_table[] = {
	&runtime_go_ops,
	&runtime_python_ops,
	&runtime_jit_ops,
};
const size_t runtime_cnt = ARRAY_SIZE(runtime_table);
/* --no-<name> and runtimes__new()'s disabled are a bit per runtime. */
_Static_assert(ARRAY_SIZE(runtime_table) <= 64, "at most 64 runtimes");

struct runtimes {
	void *state[ARRAY_SIZE(runtime_table)]; /* what each one's new() made */
	bool on[ARRAY_SIZE(runtime_table)];	/* false: turned off (--no-<name>) */
};

#define for_each_runtime(rts, i, ops)                                                        \
	for ((i) = 0; (i) < runtime_cnt; (i)++)                                              \
		if (((ops) = runtime_table[i]) && (rts)->on[i])

struct runtimes *runtimes__new(const struct runtime_env *env, uint64_t disabled)
{
	struct runtimes *rts = calloc(1, sizeof(*rts));
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return NULL;
	for (i = 0; i < runtime_cnt; i++) {
		ops = runtime_table[i];
		if (disabled & 1ull << i)
			continue;
		if (ops->new) {
			rts->state[i] = ops->new(env);
			if (!rts->state[i]) {
				int err = errno;

				runtimes__free(rts);
				errno = err;
				return NULL;
			}
		}
		rts->on[i] = true;
	}
	return rts;
}

void runtimes__free(struct runtimes *rts)
{
	size_t i;

	if (!rts)
		return;
	for (i = runtime_cnt; i-- > 0;)
		if (rts->on[i] && runtime_table[i]->free)
			runtime_table[i]->free(rts->state[i]);
	free(rts);
}

int runtimes__record(struct runtimes *rts, const struct record_header *hdr, size_t len)
{
	const struct runtime_ops *ops;
	const uint32_t *t;
	size_t i;

	if (!rts)
		return -ENOENT;
	for (i = 0; i < runtime_cnt; i++) {
		ops = runtime_table[i];
		if (!ops->record_types)
			continue;
		for (t = ops->record_types; *t; t++) {
			if (*t != hdr->type)
				continue;
			/* A disabled runtime's records (a capture made with it) are dropped. */
			return rts->on[i] ? ops->record(rts->state[i], hdr, len) : 0;
		}
	}
	return -ENOENT;
}

int runtimes__attach(struct runtimes *rts, uint32_t tgid, const char *exe, bool next_exec)
{
	const struct runtime_ops *ops;
	int err, ret = 0;
	size_t i;

	if (!rts)
		return 0;
	for_each_runtime(rts, i, ops) {
		if (!ops->attach)
			continue;
		err = ops->attach(rts->state[i], tgid, exe, next_exec);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

void runtimes__forget(struct runtimes *rts, uint32_t tgid, bool exec)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->forget)
			ops->forget(rts->state[i], tgid, exec);
}

void runtimes__pre_unwind(struct runtimes *rts, const struct runtime_sample *rs)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->pre_unwind)
			ops->pre_unwind(rts->state[i], rs);
}

void runtimes__post_unwind(struct runtimes *rts, const struct runtime_sample *rs)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->post_unwind)
			ops->post_unwind(rts->state[i], rs);
}

void runtimes__summary(struct runtimes *rts, const struct bpf_stats *bpf, FILE *fp)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->summary)
			ops->summary(rts->state[i], bpf, fp);
}

void runtimes__stats(struct runtimes *rts, const struct bpf_stats *bpf, FILE *fp)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->stats)
			ops->stats(rts->state[i], bpf, fp);
}

size_t runtimes__splice_max(const struct runtimes *rts)
{
	const struct runtime_ops *ops;
	size_t i, max = 0;

	if (!rts)
		return 0;
	for_each_runtime(rts, i, ops)
		if (ops->splice && ops->splice_max > max)
			max = ops->splice_max;
	return max;
}

int runtimes__splice(struct runtimes *rts, const struct runtime_sample *rs,
		     struct runtime_splice *sp)
{
	const struct runtime_ops *ops;
	int groups;
	size_t i;

	sp->root_cnt = 0;
	sp->ops = NULL;
	sp->rt = NULL;
	if (!rts)
		return 0;
	for_each_runtime(rts, i, ops) {
		if (!ops->splice)
			continue;
		groups = ops->splice(rts->state[i], rs, sp);
		if (groups) { /* a sample runs one runtime's interpreter: the others are not asked */
			sp->ops = groups > 0 ? ops : NULL;
			sp->rt = groups > 0 ? rts->state[i] : NULL;
			return groups;
		}
	}
	return 0;
}

int runtimes__splice_group(const struct runtime_splice *sp, struct aggregate *agg, size_t g,
			   uint32_t *locs, size_t cap)
{
	if (!sp->ops || !sp->ops->splice_group)
		return 0;
	return sp->ops->splice_group(sp->rt, agg, g, locs, cap);
}

int64_t runtimes__anon_location(struct runtimes *rts, struct proc *p, struct aggregate *agg,
				uint64_t pc, uint32_t fallback)
{
	const struct runtime_ops *ops;
	int64_t id;
	size_t i;

	if (!rts)
		return -ENOENT;
	for_each_runtime(rts, i, ops) {
		if (!ops->anon_location)
			continue;
		id = ops->anon_location(rts->state[i], p, agg, pc, fallback);
		if (id != -ENOENT)
			return id;
	}
	return -ENOENT;
}

void runtimes__summary_stacks(struct runtimes *rts, FILE *fp)
{
	const struct runtime_ops *ops;
	size_t i;

	if (!rts)
		return;
	for_each_runtime(rts, i, ops)
		if (ops->summary_stacks)
			ops->summary_stacks(rts->state[i], fp);
}

int runtimes__check(const struct record_header *hdr, size_t len)
{
	const struct runtime_ops *ops;
	const uint32_t *t;
	size_t i;

	for (i = 0; i < runtime_cnt; i++) {
		ops = runtime_table[i];
		if (!ops->record_types)
			continue;
		for (t = ops->record_types; *t; t++)
			if (*t == hdr->type)
				return ops->check ? ops->check(hdr, len) : 0;
	}
	return -ENOENT;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python_runtime.c: CPython as a runtime of the table (runtime/runtime.h): its records, its
 * processes forgotten at exec and exit, its groups of Python frames placed in the native stack
 * (each in place of the _PyEval_EvalFrameDefault activation that runs it), its summary lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "process/proc_table.h"
#include "runtime/python/python.h"
#include "runtime/runtime.h"
#include "unwind/unwind.h"

static void *py_new(const struct runtime_env *env)
{
	return python__new(env->maps, env->pt);
}

static void py_free(void *rt)
{
	python__free(rt);
}

static const uint32_t py_record_types[] = { RECORD_PY_STACK, RECORD_PY_CODE, 0 };

/* Records python__record_check() checked (runtimes__check()). */
static int py_record(void *rt, const struct record_header *hdr, size_t len)
{
	(void)len;
	if (hdr->type == RECORD_PY_CODE)
		return python__code(rt, (const struct py_code_record *)hdr);
	python__stack(rt, (const struct py_stack_record *)hdr);
	return 0;
}

/* bpfprof -p PID or -- CMD: armed before its first record (python__attach()). */
static int py_attach(void *rt, uint32_t tgid, const char *exe, bool next_exec)
{
	return python__attach(rt, tgid, exe, next_exec);
}

static void py_forget(void *rt, uint32_t tgid, bool exec)
{
	(void)exec;
	python__forget(rt, tgid);
}

static void py_summary(void *rt, const struct bpf_stats *bpf, FILE *fp)
{
	python__print(rt, bpf, fp);
}

/*
 * Which native frame runs each group of Python frames (group[i]: the group, or -1), by the
 * groups' anchors: group g goes to the frame whose stack range [sp, caller's sp) holds its
 * anchor, whatever its symbol (GCC's .cold part of _PyEval_EvalFrameDefault has none). Both
 * grow towards the root, so one pass. placed[g] says which found one. False when a group has
 * no anchor (3.10): then by count.
 */
static bool groups_by_anchor(struct python *py, const struct runtime_sample *rs, int *group,
			     size_t groups, bool *placed)
{
	const struct unwind_frame *frames = rs->frames;
	int i = 0, cnt = rs->cnt;
	uint64_t a, hi;
	size_t g;

	for (g = 0; g < groups; g++)
		if (!python__group_anchor(py, g))
			return false;
	for (g = 0; g < groups; g++) {
		a = python__group_anchor(py, g);
		for (; i < cnt; i++) {
			hi = i + 1 < cnt ? frames[i + 1].sp : UINT64_MAX;
			if (a < hi)
				break;
		}
		if (i < cnt && a >= frames[i].sp && group[i] < 0) {
			group[i] = g;
			placed[g] = true;
		}
	}
	return true;
}

/* Which native frame runs each group, by count: the g-th _PyEval_EvalFrameDefault activation
 * from the leaf runs group g. */
static void groups_by_count(struct python *py, const struct runtime_sample *rs, int *group,
			    size_t groups, bool *placed)
{
	size_t evals = 0;
	int i;

	for (i = 0; i < rs->cnt && evals < groups; i++) {
		if (python__is_eval(py, &rs->frames[i])) {
			placed[evals] = true;
			group[i] = evals++;
		}
	}
}

/*
 * The sample's groups of Python frames, each in place of the native frame that runs it
 * (groups_by_anchor(), else groups_by_count()); groups without one (a native unwind that
 * stopped early) at the root.
 */
static int py_splice(void *rt, const struct runtime_sample *rs, struct runtime_splice *sp)
{
	bool placed[BPFPROF_PY_FRAMES_MAX], by_anchor;
	struct python *py = rt;
	size_t groups, g, at_root = 0;

	groups = python__sample(py, proc__addr_space(rs->p), rs->s);
	if (!groups)
		return 0; /* most samples: nothing zeroed for them */
	memset(placed, 0, sizeof(placed));
	if (!(by_anchor = groups_by_anchor(py, rs, sp->frame_group, groups, placed)))
		groups_by_count(py, rs, sp->frame_group, groups, placed);
	for (g = groups; g-- > 0;) {
		if (placed[g])
			continue;
		at_root++;
		if (sp->root_cnt < sp->root_cap)
			sp->root[sp->root_cnt++] = g;
	}
	python__placed(py, by_anchor, at_root);
	return groups;
}

static int py_splice_group(void *rt, struct aggregate *agg, size_t g, uint32_t *locs, size_t cap)
{
	return python__group(rt, agg, g, locs, cap);
}

const struct runtime_ops runtime_python_ops = {
	.name = "python",
	.option_help =
		"CPython programs as native frames only: no Python frames (the interpreter's "
		"_PyEval_EvalFrameDefault in their place), nothing read of their interpreter "
		"state",
	.new = py_new,
	.free = py_free,
	.record_types = py_record_types,
	.record = py_record,
	.check = python__record_check,
	.attach = py_attach,
	.forget = py_forget,
	.summary = py_summary,
	.splice = py_splice,
	.splice_group = py_splice_group,
	.splice_max = BPFPROF_PY_FRAMES_MAX,
	.bpf_switch = "python_frames", /* bpf/sample.bpf.c */
};

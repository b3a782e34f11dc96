// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* summary.c: what a user checks first: did samples arrive, were stacks whole, where is time. */
#include <stdlib.h>
#include <string.h>
#include "pipeline/summary.h"
#include "runtime/runtime.h"
#include "unwind/proc_unwind.h"
#include "signal/off_cpu.h"
#include "signal/wakers.h"
#include "unwind/unwind.h"

struct func_count {
	uint64_t self;
	uint64_t total;
	uint64_t seen; /* last stack counted in total: 1 + stack index */
	const struct frame_kind *kind; /* NULL until seen */
};

struct top_ctx {
	struct func_count *f; /* by string id */
	uint64_t stack_no;
	uint64_t total; /* samples, or us (aggregate__value()) */
	const struct aggregate *agg;
};

static int count_stack(const struct agg_frame *frames, size_t n, uint64_t count,
		       const struct agg_stack *st, void *arg)
{
	struct top_ctx *t = arg;
	struct func_count *f;
	size_t i;

	t->stack_no++;
	t->total += count;
	/* --wakers: the waker's stack after "--" is not where this time went. */
	if (st->origin == SAMPLE_OFF_CPU)
		n = wakers__blocked_frames(t->agg, frames, n);
	if (n < 2)
		return 0;
	/* A location the symbolizer has not named (AGG_NO_NAME) is no function. */
	if (frames[n - 1].name != AGG_NO_NAME)
		t->f[frames[n - 1].name].self += count;
	/* frames[0] is the comm; count each function once per stack (recursion). */
	for (i = 1; i < n; i++) {
		if (frames[i].name == AGG_NO_NAME)
			continue;
		f = &t->f[frames[i].name];
		f->kind = frames[i].kind;
		if (f->seen == t->stack_no)
			continue;
		f->seen = t->stack_no;
		f->total += count;
	}
	return 0;
}

static const struct func_count *sort_base;
static int by_self(const void *a, const void *b)
{
	uint64_t x = sort_base[*(const uint32_t *)a].self, y = sort_base[*(const uint32_t *)b].self;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_total(const void *a, const void *b)
{
	uint64_t x = sort_base[*(const uint32_t *)a].total;
	uint64_t y = sort_base[*(const uint32_t *)b].total;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void print_top(FILE *fp, const struct summary_input *in)
{
	struct aggregate *agg = in->agg;
	uint64_t samples = aggregate__samples(agg);
	struct top_ctx t = {};
	uint32_t *order = NULL, nids = 0, i;
	const char *kind;

	if (!samples)
		return;
	nids = aggregate__strings(agg);
	t.f = calloc(nids + 1, sizeof(*t.f));
	order = calloc(nids + 1, sizeof(*order));
	if (!t.f || !order)
		goto out;
	t.agg = agg;
	aggregate__for_each_frames(agg, count_stack, &t);
	samples = t.total;
	if (!samples)
		goto out;
	for (i = 0; i < nids; i++)
		order[i] = i;
	sort_base = t.f;
	for (int pass = 0; pass < 2; pass++) {
		qsort(order, nids, sizeof(*order), pass ? by_total : by_self);
		fprintf(fp, "bpfprof: top %u functions by %s time%s:\n", in->top,
			pass ? "total" : "self",
			in->off_cpu && in->on_cpu ? " on and off CPU (us)" :
			in->off_cpu		  ? " off CPU (us)" :
						    "");
		for (i = 0; i < nids && i < in->top; i++) {
			const struct func_count *f = &t.f[order[i]];
			uint64_t v = pass ? f->total : f->self;

			if (!v)
				break;
			kind = f->kind ? f->kind->suffix : "";
			fprintf(fp, "bpfprof:   %6.2f%%  %8llu  %s%s\n", 100.0 * v / samples,
				(unsigned long long)v, aggregate__str(agg, order[i]), kind);
		}
	}
out:
	free(t.f);
	free(order);
}

void summary__print(FILE *fp, const struct summary_input *in)
{
	const struct consumer_stats *cs = in->consumer;
	const struct bpf_stats *b = in->bpf;
	struct proc_stats st;
	struct proc_table_counts counts;
	struct off_cpu_summary oc = {
		.duration_ns = in->duration_ns,
		.bpf = in->bpf,
		.agg = in->agg,
		.min_ns = in->off_cpu_min_ns,
		.on_cpu = in->on_cpu,
		.bad_records = in->consumer->bad,
		.joins = in->off_cpu_joins,
	};
	uint64_t user_samples;
	int i;

	st = *in->unwound;
	if (in->off_cpu)
		off_cpu__print_summary(fp, &oc);
	if (in->off_cpu && !in->on_cpu)
		goto unwound;
	fprintf(fp, "bpfprof: %s %.2f s at %llu Hz: %llu samples received",
		b ? "profiled" : "replayed", in->duration_ns / 1e9, (unsigned long long)in->freq_hz,
		(unsigned long long)cs->samples);
	if (in->target_cpu_ns >= 0) {
		double expected = in->target_cpu_ns / 1e9 * in->freq_hz;

		fprintf(fp, ", %.0f expected from %.2f s of CPU time (%.1f%%)", expected,
			in->target_cpu_ns / 1e9, expected > 0 ? 100.0 * cs->samples / expected : 0);
	}
	fprintf(fp, "\n");
	if (b)
		fprintf(fp,
			"bpfprof: lost: %llu samples (ringbuf full), %llu task events; "
			"%llu stack copies failed, %llu bad records\n",
			(unsigned long long)b->lost, (unsigned long long)b->events_lost,
			(unsigned long long)b->stack_copy_failed, (unsigned long long)cs->bad);
	else /* a capture replayed: its losses were counted when it ran */
		fprintf(fp, "bpfprof: %llu bad records\n", (unsigned long long)cs->bad);
unwound:
	user_samples = st.samples - st.stops[UNWIND_STOP_NO_REGS];
	if (user_samples) {
		fprintf(fp, "bpfprof: unwound to root: %.1f%% of %llu user stacks",
			100.0 * st.root / user_samples, (unsigned long long)user_samples);
		const char *sep = "; stopped early:";

		for (i = 0; i < UNWIND_STOP_CNT; i++) {
			if (i == UNWIND_STOP_ROOT || i == UNWIND_STOP_NO_REGS || !st.stops[i])
				continue;
			fprintf(fp, "%s %s %llu", sep, unwind_stop_names[i],
				(unsigned long long)st.stops[i]);
			sep = ",";
		}
		fprintf(fp, "\n");
	}
	proc_table__counts(in->pt, &counts);
	fprintf(fp,
		"bpfprof: %llu unique stacks; %llu forks, %llu execs, %llu exits seen; "
		"%u ELF files open\n",
		(unsigned long long)aggregate__stacks(in->agg), (unsigned long long)cs->forks,
		(unsigned long long)cs->execs, (unsigned long long)cs->exits, counts.files);
	runtimes__summary_stacks(in->runtimes, fp);
	if (in->top)
		print_top(fp, in);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* consumer.c: ringbuf records -> sample handler and process table. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/capture.h"
#include "pipeline/consumer.h"
#include "util/log.h"
#include "sampling/record_decode.h"
#include "util/stage_timer.h"
#include "sampling/targets.h"
#include "runtime/runtime.h"
#include "signal/off_cpu.h"
#include "util/util.h"

struct consumer {
	struct ring_buffer *rb;
	struct sample_handler *sh;
	struct proc_table *pt;
	struct capture_writer *capture;
	struct targets *targets;
	struct runtimes *runtimes;
	struct consumer_stats stats;
};

static int handle_record(void *arg, void *data, size_t sz)
{
	struct consumer *c = arg;
	int err;

	consumer__handle(c, data, sz);
	if (c->capture && (err = capture_writer__record(c->capture, data, sz))) {
		pr_warn("write raw capture: %s; capture stopped, profiling goes on",
			strerror(-err));
		c->capture = NULL;
	}
	return 0;
}

/* A record that cannot be trusted (err: -EINVAL malformed, -ENOTSUP of an unknown type): counted
 * bad, not an error, and the first one said. */
static int skip_bad(struct consumer *c, size_t sz, int err)
{
	if (!c->stats.bad++)
		pr_warn("skip ringbuf record of %zu bytes: %s", sz, strerror(-err));
	return 0;
}

int consumer__handle(struct consumer *c, const void *data, size_t sz)
{
	uint64_t t0 = stage_timers_on ? now_ns() : 0;
	char comm[BPFPROF_COMM_LEN + 1], path[PATH_MAX];
	struct record_view v;
	int err;

	err = record__decode(data, sz, &v);
	if (err)
		return skip_bad(c, sz, err);
	switch (v.type) {
	case RECORD_SAMPLE:
		/* perf_event samples: the blocked and waker stacks of --off-cpu are not. */
		if (!(v.sample->flags & (SAMPLE_F_OFF_CPU | SAMPLE_F_WAKER)))
			c->stats.samples++;
		if (v.sample->stack_err)
			pr_debug("sample of %u: stack copy error %d at sp-128 0x%llx",
				 v.sample->tid, v.sample->stack_err,
				 (unsigned long long)v.sample->regs[7] - 128);
		err = sample_handler__handle(c->sh, v.sample);
		break;
		break;
	case RECORD_OFF_CPU:
		off_cpu__record(sample_handler__off_cpu(c->sh), v.off_cpu);
		break;
	case RECORD_WAKER:
		off_cpu__waker_record(sample_handler__off_cpu(c->sh), v.waker);
		break;
	default: /* a runtime's section of bpf/record.h, checked by its runtime */
		err = runtimes__check(v.raw, sz);
		if (err) /* -ENOENT: no runtime takes it, an unknown type */
			return skip_bad(c, sz, err == -ENOENT ? -ENOTSUP : err);
		err = runtimes__record(c->runtimes, v.raw, sz);
		break;
	case RECORD_FORK:
		c->stats.forks++;
		pr_debug("fork: %u -> %u (%s)", v.task->parent_tgid, v.task->tgid,
			 record__comm(v.task->comm, comm));
		err = proc_table__fork(c->pt, v.task->parent_tgid, v.task->tgid);
		break;
	case RECORD_EXEC:
		c->stats.execs++;
		pr_debug("exec: %u (%s)", v.task->tgid, record__comm(v.task->comm, comm));
		proc_table__exec(c->pt, v.task->tgid, record__comm(v.task->comm, comm));
		sample_handler__forget(c->sh, v.task->tgid, true);
		runtimes__forget(c->runtimes, v.task->tgid, true);
		break;
	case RECORD_MMAP:
		c->stats.mmaps++;
		err = proc_table__mmap(c->pt, v.mmap,
				       record__mmap_path(v.mmap, path, sizeof(path)));
		break;
	case RECORD_MUNMAP:
		c->stats.munmaps++;
		proc_table__munmap(c->pt, v.munmap->tgid, v.munmap->start, v.munmap->len);
		break;
	case RECORD_EXIT:
		c->stats.exits++;
		pr_debug("exit: %u (%s)", v.task->tgid, record__comm(v.task->comm, comm));
		sample_handler__forget(c->sh, v.task->tgid, false);
		runtimes__forget(c->runtimes, v.task->tgid, false);
		proc_table__exit(c->pt, v.task->tgid);
		if (c->targets && v.task_cpu_ns >= 0)
			targets__exit(c->targets, v.task->tgid, v.task_cpu_ns);
		break;
	}
	/* Keep going: one failed record must not stop the drain. */
	if (err)
		c->stats.errors++;
	if (stage_timers_on && v.type != RECORD_SAMPLE)
		stage_timer__add(STAGE_EVENT, now_ns() - t0);
	return 0;
}

struct consumer *consumer__new(int ringbuf_fd, struct sample_handler *sh, struct proc_table *pt)
{
	struct consumer *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sh = sh;
	c->pt = pt;
	if (ringbuf_fd < 0)
		return c;
	c->rb = ring_buffer__new(ringbuf_fd, handle_record, c, NULL);
	if (!c->rb) {
		free(c);
		return NULL;
	}
	return c;
}

void consumer__free(struct consumer *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	free(c);
}

int consumer__drain(struct consumer *c)
{
	struct record_header batch = { RECORD_CAPTURE_BATCH, sizeof(batch) };
	uint64_t t0 = stage_timers_on ? now_ns() : 0;
	int n = ring_buffer__consume(c->rb);

	if (stage_timers_on && n > 0)
		stage_timer__add(STAGE_DRAIN, now_ns() - t0);
	proc_table__end_batch(c->pt);
	if (c->capture && n > 0 && capture_writer__record(c->capture, &batch, sizeof(batch)))
		c->capture = NULL;
	return n;
}

int consumer__wakeup_fd(const struct consumer *c)
{
	return c->rb ? ring_buffer__epoll_fd(c->rb) : -1;
}

void consumer__set_capture(struct consumer *c, struct capture_writer *w)
{
	c->capture = w;
}

void consumer__set_targets(struct consumer *c, struct targets *t)
{
	c->targets = t;
}

void consumer__set_runtimes(struct consumer *c, struct runtimes *rts)
{
	c->runtimes = rts;
}

const struct consumer_stats *consumer__stats(const struct consumer *c)
{
	return &c->stats;
}

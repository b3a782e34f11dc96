// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.c: bpfprof report FILE: a raw capture replayed through the live pipeline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/record.h"
#include "cmd/modes.h"
#include "pipeline/session.h"
#include "process/proc_table.h"
#include "profile/aggregate.h"
#include "sampling/capture.h"
#include "pipeline/consumer.h"
#include "symbols/ksyms.h"
#include "util/log.h"

/* One recorded read of /proc/PID/maps. */
struct replay_maps {
	uint32_t tgid;
	char *text;
	size_t len;
	struct replay_maps *next;
};

/* The maps texts not read yet, in capture order: append at *tail. */
struct replay {
	struct replay_maps *maps;
	struct replay_maps **tail;
};

/* The recorded text of the next read of tgid's maps (proc_maps_text_fn). */
static int replay_maps_text(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	struct replay *rp = ctx;
	struct replay_maps *m, **prev;

	for (prev = &rp->maps; (m = *prev); prev = &m->next) {
		if (m->tgid != tgid)
			continue;
		*prev = m->next;
		if (rp->tail == &m->next)
			rp->tail = prev;
		*text = m->text;
		*len = m->len;
		free(m);
		return 0;
	}
	return -ENOENT; /* the process was gone when the capture read it */
}

/* A RECORD_CAPTURE_MAPS record, kept for the read it answers. 0 or -ENOMEM. */
static int replay_add_maps(struct replay *rp, const struct capture_maps_record *mr, size_t sz)
{
	struct replay_maps *m = calloc(1, sizeof(*m));

	if (!m || sz < sizeof(*mr) || mr->len > sz - sizeof(*mr) ||
	    !(m->text = malloc(mr->len + 1))) {
		free(m);
		return -ENOMEM;
	}
	memcpy(m->text, mr->text, mr->len);
	m->text[mr->len] = '\0';
	m->len = mr->len;
	m->tgid = mr->tgid;
	/* In order: a process's reads are served as they happened. */
	*rp->tail = m;
	rp->tail = &m->next;
	return 0;
}

static void replay_free(struct replay *rp)
{
	struct replay_maps *m;

	while ((m = rp->maps)) {
		rp->maps = m->next;
		free(m->text);
		free(m);
	}
	rp->tail = &rp->maps;
}

/* The records after the header (the first: n, data, sz) through the pipeline. Returns what the
 * last capture_reader__next() did: 0 at the end, or a negative errno. */
static int replay_records(struct session *s, struct capture_reader *r, struct replay *rp, int n,
			  const void *data, size_t sz)
{
	const struct record_header *rh;

	for (; n > 0; n = capture_reader__next(r, &data, &sz)) {
		rh = data;
		if (rh->type == RECORD_CAPTURE_BATCH) {
			proc_table__end_batch(s->pt);
		} else if (rh->type == RECORD_CAPTURE_MAPS) {
			n = replay_add_maps(rp, data, sz);
			if (n)
				break;
		} else {
			consumer__handle(s->consumer, data, sz);
		}
	}
	return n;
}

int report__run(struct session *s)
{
	struct replay rp = { .tail = &rp.maps };
	const struct capture_maps_record *mr;
	struct capture_header hdr;
	struct capture_reader *r;
	const void *data;
	size_t sz;
	int n, err;

	r = capture_reader__open(s->opts->report, &hdr);
	if (!r) {
		pr_warn("open %s: %s", s->opts->report,
			errno == EINVAL ? "not a bpfprof raw capture" : strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	err = session__open_outputs(s);
	if (err) {
		capture_reader__close(r);
		return err;
	}
	/* The kernel symbols of the capture's time, if it recorded them (its first record). */
	n = capture_reader__next(r, &data, &sz);
	if (n > 0 && ((const struct record_header *)data)->type == RECORD_CAPTURE_KALLSYMS) {
		mr = data;
		if (sz >= sizeof(*mr) && mr->len <= sz - sizeof(*mr))
			s->ksyms = ksyms__load_text(mr->text, mr->len);
		n = capture_reader__next(r, &data, &sz);
	}
	/* The capture's rate, before the pipeline's aggregate takes its sample period, and what
	 * it profiled: the outputs' messages and the summary count blocked time in us. */
	s->opts->freq_hz = hdr.freq_hz;
	s->opts->off_cpu = (hdr.flags & CAPTURE_F_OFF_CPU) || !hdr.freq_hz;
	s->opts->on_cpu = s->opts->off_cpu && hdr.freq_hz;
	err = session__setup_pipeline(s, -1, hdr.max_copy_size, hdr.flags & CAPTURE_F_LAZY_MAPS,
				      replay_maps_text, &rp);
	if (err)
		goto out;
	n = replay_records(s, r, &rp, n, data, sz);
	/* A capture of --off-cpu --on-cpu from before CAPTURE_F_OFF_CPU: told by what it holds. */
	if (!s->opts->off_cpu && aggregate__weight(s->agg, SAMPLE_OFF_CPU).count)
		s->opts->off_cpu = s->opts->on_cpu = true;
	if (n < 0)
		pr_warn("read %s: %s; the records before are reported", s->opts->report,
			strerror(-n));
	s->start_ns = 0;
	s->end_ns = hdr.duration_ns;
	s->start_realtime_ns = hdr.start_realtime_ns;
	err = session__write_outputs(s) ? BPFPROF_EXIT_ERROR : 0;
	session__print_summary(s);
out:
	replay_free(&rp);
	capture_reader__close(r);
	return err;
}

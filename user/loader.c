// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* loader.c: the skeleton's life cycle and its maps. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpfprof.skel.h"
#include "loader.h"
#include "log.h"

struct loader {
	struct bpfprof_bpf *skel;
	struct bpf_link **perf_links;
	int perf_links_cnt;
};

struct loader *loader__load(const struct loader_opts *opts)
{
	struct loader *l;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		errno = ENOENT;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->skel = bpfprof_bpf__open();
	if (!l->skel) {
		err = -errno;
		goto fail;
	}
	l->skel->rodata->stack_max_sz = opts->max_stack_sz;
	l->skel->rodata->stack_init_sz = opts->stack_sz;
	l->skel->rodata->target_all = opts->target_all;
	l->skel->rodata->self_tgid = opts->self_tgid;
	/* A quarter full: wake the consumer instead of waiting for its timer. */
	l->skel->rodata->wakeup_bytes = opts->ringbuf_sz / 4;
	err = bpf_map__set_max_entries(l->skel->maps.ringbuf, opts->ringbuf_sz);
	if (!err)
		err = bpf_map__set_max_entries(l->skel->maps.target_tgids, opts->max_targets);
	if (err)
		goto fail;
	err = bpfprof_bpf__load(l->skel);
	if (err)
		goto fail;
	return l;
fail:
	loader__free(l);
	errno = err < 0 ? -err : EINVAL;
	return NULL;
}

void loader__free(struct loader *l)
{
	int i;

	if (!l)
		return;
	for (i = 0; i < l->perf_links_cnt; i++)
		bpf_link__destroy(l->perf_links[i]);
	free(l->perf_links);
	bpfprof_bpf__destroy(l->skel);
	free(l);
}

int loader__attach_tracepoints(struct loader *l)
{
	struct bpfprof_bpf *s = l->skel;

	s->links.handle_fork = bpf_program__attach(s->progs.handle_fork);
	if (!s->links.handle_fork)
		return -errno;
	s->links.handle_exec = bpf_program__attach(s->progs.handle_exec);
	if (!s->links.handle_exec)
		return -errno;
	s->links.handle_exit = bpf_program__attach(s->progs.handle_exit);
	if (!s->links.handle_exit)
		return -errno;
	s->links.handle_sys_exit = bpf_program__attach(s->progs.handle_sys_exit);
	if (!s->links.handle_sys_exit)
		return -errno;
	return 0;
}

int loader__attach_perf_events(struct loader *l, const struct perf_events *pe)
{
	int i;

	l->perf_links = calloc(pe->cnt, sizeof(*l->perf_links));
	if (!l->perf_links)
		return -ENOMEM;
	for (i = 0; i < pe->cnt; i++) {
		l->perf_links[i] = bpf_program__attach_perf_event(l->skel->progs.handle_perf_event,
								  pe->fds[i]);
		if (!l->perf_links[i])
			return -errno;
		l->perf_links_cnt++;
	}
	return 0;
}

void loader__detach_perf_events(struct loader *l)
{
	int i;

	for (i = 0; i < l->perf_links_cnt; i++)
		bpf_link__destroy(l->perf_links[i]);
	l->perf_links_cnt = 0;
}

int loader__add_target(struct loader *l, uint32_t tgid, uint32_t state)
{
	int err = bpf_map__update_elem(l->skel->maps.target_tgids, &tgid, sizeof(tgid), &state,
				       sizeof(state), BPF_ANY);

	return err < 0 ? -errno : 0;
}

int loader__is_target(struct loader *l, uint32_t tgid)
{
	uint32_t state;

	return !bpf_map__lookup_elem(l->skel->maps.target_tgids, &tgid, sizeof(tgid), &state,
				     sizeof(state), 0);
}

int loader__ringbuf_fd(struct loader *l)
{
	return bpf_map__fd(l->skel->maps.ringbuf);
}

void loader__prog_stats(struct loader *l,
			void (*cb)(const char *name, uint64_t run_cnt, uint64_t run_time_ns,
				   void *arg),
			void *arg)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	__u32 len;

	bpf_object__for_each_program(prog, l->skel->obj) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		cb(bpf_program__name(prog), info.run_cnt, info.run_time_ns, arg);
	}
}

int loader__set_copy_size(struct loader *l, uint32_t tgid, uint32_t bytes)
{
	if (bpf_map__update_elem(l->skel->maps.copy_sizes, &tgid, sizeof(tgid), &bytes,
				 sizeof(bytes), BPF_ANY))
		return -errno;
	return 0;
}

int loader__read_stats(struct loader *l, struct sample_stats *total)
{
	int ncpu = libbpf_num_possible_cpus(), i, err = 0;
	struct sample_stats *percpu;
	uint32_t zero = 0;

	memset(total, 0, sizeof(*total));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	percpu = calloc(ncpu, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(l->skel->maps.stats, &zero, sizeof(zero), percpu,
				 ncpu * sizeof(*percpu), 0)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < ncpu; i++) {
		total->samples += percpu[i].samples;
		total->lost += percpu[i].lost;
		total->stack_copy_failed += percpu[i].stack_copy_failed;
		total->stack_truncated += percpu[i].stack_truncated;
		total->stack_bytes += percpu[i].stack_bytes;
		total->stack_capped += percpu[i].stack_capped;
		total->stack_vma_unknown += percpu[i].stack_vma_unknown;
		total->kstack_failed += percpu[i].kstack_failed;
		total->no_user_regs += percpu[i].no_user_regs;
		total->events += percpu[i].events;
		total->events_lost += percpu[i].events_lost;
		total->targets_full += percpu[i].targets_full;
		total->mmap_events += percpu[i].mmap_events;
		total->mmap_lost += percpu[i].mmap_lost;
		total->stack_vma_lookups += percpu[i].stack_vma_lookups;
	}
out:
	free(percpu);
	return err;
}

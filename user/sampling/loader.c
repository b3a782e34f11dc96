// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* loader.c: the skeleton's life cycle and its maps. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpfprof.skel.h"
#include "sampling/loader.h"
#include "util/log.h"

struct loader {
	struct bpfprof_bpf *skel;
	struct bpf_link **perf_links;
	int perf_links_cnt;
	struct kernel_features kf;
	bool compat;
	bool off_cpu;
	bool wakers;
	struct runtime_maps maps; /* loader__runtime_maps() */
};

/* libbpf's messages during a load, kept for the error report: the last bytes only. */
static struct loader_error *load_log;
static libbpf_print_fn_t prev_print;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	size_t len, have, room = sizeof(load_log->log) - 1;
	const char *text;
	char *line;
	va_list copy;

	if (prev_print) {
		va_copy(copy, args);
		prev_print(level, fmt, copy);
		va_end(copy);
	}
	if (!load_log || level == LIBBPF_DEBUG || vasprintf(&line, fmt, args) < 0)
		return 0;
	/* The verifier's log comes as one message: keep its end, where the refusal is. */
	len = strlen(line);
	text = len > room ? line + len - room : line;
	len = strlen(text);
	have = strlen(load_log->log);
	if (have + len > room) { /* drop the oldest bytes */
		memmove(load_log->log, load_log->log + (have + len - room), room - len);
		have = room - len;
	}
	memcpy(load_log->log + have, text, len);
	load_log->log[have + len] = '\0';
	free(line);
	return 0;
}

/* Reads libbpf's messages for the cause: "prog 'NAME': BPF program load failed",
 * "failed to resolve CO-RE relocation", the verifier's log markers. */
static void classify(struct loader_error *e)
{
	const char *p = strstr(e->log, "prog '");
	const char *q;

	if (strstr(e->log, "failed to resolve CO-RE relocation") ||
	    strstr(e->log, "invalid CO-RE relocation"))
		e->core = true;
	/* The log's start may be gone: its end marker and the verifier's last line stay. */
	if (!e->core && (strstr(e->log, "-- END PROG LOAD LOG --") || strstr(e->log, "processed ")))
		e->verifier = true;
	while (p && !strstr(p, "load failed")) {
		q = strstr(p + 1, "prog '");
		if (!q)
			break;
		p = q;
	}
	if (p) {
		p += strlen("prog '");
		q = strchr(p, '\'');
		if (q && (size_t)(q - p) < sizeof(e->prog))
			snprintf(e->prog, sizeof(e->prog), "%.*s", (int)(q - p), p);
	}
}

/* Loads one program of each pair: NAME or NAME_compat (bpf/compat.bpf.h); the off-CPU ones
 * (and their maps) only for --off-cpu. */
static void select_programs(struct bpfprof_bpf *s, bool compat, bool off_cpu, bool wakers)
{
	bpf_program__set_autoload(s->progs.handle_sched_switch, off_cpu);
	bpf_program__set_autoload(s->progs.handle_off_cpu_sys_exit, off_cpu);
	bpf_program__set_autoload(s->progs.handle_sched_waking, wakers);
	bpf_map__set_autocreate(s->maps.off_cpu_states, off_cpu);
	bpf_map__set_autocreate(s->maps.off_cpu_rates, off_cpu);
	bpf_program__set_autoload(s->progs.handle_perf_event, !compat);
	bpf_program__set_autoload(s->progs.handle_sys_exit, !compat);
	bpf_program__set_autoload(s->progs.handle_exec, !compat);
	bpf_program__set_autoload(s->progs.handle_exit, !compat);
	bpf_program__set_autoload(s->progs.handle_perf_event_compat, compat);
	bpf_program__set_autoload(s->progs.handle_sys_exit_compat, compat);
	bpf_program__set_autoload(s->progs.handle_exec_compat, compat);
	bpf_program__set_autoload(s->progs.handle_exit_compat, compat);
	bpf_map__set_autocreate(s->maps.stack_vmas, !compat);
	bpf_map__set_autocreate(s->maps.stack_vmas_compat, compat);
}

/*
 * Sets the variable name of the BPF object's .rodata to 0 before the load, found by name in the
 * object's BTF (its .rodata DATASEC gives the offset and size in skel->rodata). 0, or -ENOENT when there is no
 * such variable.
 */
static int rodata_clear(struct bpfprof_bpf *skel, const char *name)
{
	struct btf *btf = bpf_object__btf(skel->obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec, *var;
	char *data = (char *)skel->rodata; /* the map's initial value, until the load */
	size_t size = sizeof(*skel->rodata);
	int id, i;

	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (id < 0 || !data)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		var = btf__type_by_id(btf, vs->type);
		if (!var || strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if ((size_t)vs->offset + vs->size > size)
			return -ERANGE;
		memset(data + vs->offset, 0, vs->size);
		return 0;
	}
	return -ENOENT;
}

/*
 * The BPF walkers of the runtimes turned off (bit i of off: runtime_table[i]) switched off
 * before the load (runtime_ops.bpf_switch), so that the verifier drops them. 0 or a negative
 * errno (reported).
 */
static int switch_runtimes_off(struct bpfprof_bpf *skel, uint64_t off)
{
	const struct runtime_ops *ops;
	size_t i;
	int err;

	for (i = 0; i < runtime_cnt && i < 64; i++) {
		ops = runtime_table[i];
		if (!ops || !ops->bpf_switch || !(off & 1ull << i))
			continue;
		err = rodata_clear(skel, ops->bpf_switch);
		if (err) {
			pr_warn("load BPF programs: --no-%s: no switch %s in the BPF object's .rodata",
				ops->name, ops->bpf_switch);
			return err;
		}
	}
	return 0;
}

struct loader *loader__load(const struct loader_opts *opts, struct loader_error *e)
{
	struct loader_error dummy;
	struct loader *l;
	int err;

	if (!e)
		e = &dummy;
	memset(e, 0, sizeof(*e));
	l = calloc(1, sizeof(*l));
	if (!l) {
		e->err = ENOMEM;
		return NULL;
	}
	kernel_features__probe(&l->kf);
	e->kf = l->kf;
	e->privileged = kernel_features__privileged(&l->kf);
	/* Unprivileged (root too, without the capabilities): say what is wrong, not what the
	 * probes could not tell. */
	if (!e->privileged) {
		err = -EPERM;
		goto fail;
	}
	if (!l->kf.have[KF_BTF]) {
		err = -ENOENT;
		goto fail;
	}
	if (kernel_features__missing(&l->kf) != KF__CNT) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	l->compat = kernel_features__compat(&l->kf);
	if (opts->off_cpu && l->compat) {
		e->off_cpu_compat = true;
		err = -EOPNOTSUPP;
		goto fail;
	}
	l->off_cpu = opts->off_cpu;
	l->skel = bpfprof_bpf__open();
	if (!l->skel) {
		err = -errno;
		goto fail;
	}
	l->wakers = opts->off_cpu && opts->wakers;
	select_programs(l->skel, l->compat, l->off_cpu, l->wakers);
	l->skel->rodata->off_cpu_wakers = l->wakers;
	l->skel->rodata->off_cpu_min_ns = opts->off_cpu_min_ns;
	/* The rate's cost per record, divided here once (options keep it >= 1). */
	l->skel->rodata->off_cpu_cost_ns = 1000000000ull / (opts->off_cpu_max_rate ?: 1);
	l->skel->rodata->stack_max_sz = opts->max_copy_size;
	l->skel->rodata->stack_init_sz = opts->copy_size;
	l->skel->rodata->target_all = opts->target_all;
	l->skel->rodata->self_tgid = opts->self_tgid;
	/* RECORD_FP_CHAINs of a sample: enough for --max-frames past the copy, at most the
	 * BPFPROF_FP_CHAIN_PIECES user space joins (16,320 frames). */
	if (opts->max_frames &&
	    (opts->max_frames + BPFPROF_FP_CHAIN_MAX - 1) / BPFPROF_FP_CHAIN_MAX < BPFPROF_FP_CHAIN_PIECES)
		l->skel->rodata->fp_chain_pieces =
			(opts->max_frames + BPFPROF_FP_CHAIN_MAX - 1) / BPFPROF_FP_CHAIN_MAX;
	/* A quarter full: wake the consumer instead of waiting for its timer. */
	l->skel->rodata->wakeup_bytes = opts->ringbuf_sz / 4;
	err = bpf_map__set_max_entries(l->skel->maps.ringbuf, opts->ringbuf_sz);
	if (!err)
		err = bpf_map__set_max_entries(l->skel->maps.target_tgids, opts->max_targets);
	if (!err)
		err = switch_runtimes_off(l->skel, opts->runtimes_off);
	if (err)
		goto fail;
	load_log = e;
	prev_print = libbpf_set_print(capture_print);
	err = bpfprof_bpf__load(l->skel);
	libbpf_set_print(prev_print);
	load_log = NULL;
	if (err) {
		classify(e);
		goto fail;
	}
	return l;
fail:
	loader__free(l);
	e->err = err < 0 ? -err : EINVAL;
	errno = e->err;
	return NULL;
}

/* Prints the last n lines of text, each as "bpfprof:   LINE". */
static void print_tail(const char *text, int n)
{
	const char *p = text + strlen(text), *end;
	int lines = 0;

	while (p > text && lines <= n) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (end > p)
			pr_warn("  %.*s", (int)(end - p), p);
	}
}

void loader__report_error(const struct loader_error *e)
{
	const struct kernel_feature_info *fi;
	enum kernel_feature missing = kernel_features__missing(&e->kf);
	const char *rel = e->kf.release;
	char hint[160];

	if (e->err == EPERM && !e->privileged) {
		pr_warn("load BPF programs: %s: %s", strerror(e->err),
			kernel_features__privilege_hint(&e->kf, hint, sizeof(hint)));
		return;
	}
	if (e->err == ENOENT && missing == KF_BTF) {
		pr_warn("load BPF programs: this kernel (%s) has no BTF (/sys/kernel/btf/vmlinux): "
			"bpfprof needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, Linux >= 5.10",
			rel);
		return;
	}
	if (e->off_cpu_compat) {
		pr_warn("load BPF programs: --off-cpu needs Linux >= 5.17 (task storage, "
			"bpf_task_pt_regs(), bpf_get_task_stack()); this kernel is %s", rel);
		return;
	}
	if (e->err == EOPNOTSUPP && missing != KF__CNT) {
		fi = kernel_feature__info(missing);
		if (fi->fallback) /* a kernel >= 6.1 without a 5.17 feature */
			pr_warn("load BPF programs: this kernel (%s) has no %s (Linux %s), and its "
				"fallback needs mm->mm_rb (kernels before 6.1), which it lacks too; "
				"`bpfprof check` lists what it has",
				rel, fi->name, fi->since);
		else
			pr_warn("load BPF programs: this kernel (%s) has no %s (Linux %s): bpfprof "
				"needs Linux >= 5.10; `bpfprof check` lists what it has",
				rel, fi->name, fi->since);
		return;
	}
	if (e->core) {
		pr_warn("load BPF programs: program %s reads a kernel field this kernel (%s) lacks "
			"(a bpfprof bug: please report it with `bpfprof check` and -v's output)",
			e->prog[0] ? e->prog : "?", rel);
	} else if (e->verifier) {
		pr_warn("load BPF programs: the kernel's verifier refused program %s on this kernel "
			"(%s): %s%s%s",
			e->prog[0] ? e->prog : "?", rel, strerror(e->err),
			e->err == E2BIG ? " (too complex for this verifier)" : "",
			log__enabled(LOG_DEBUG) ? "; its last lines:" :
						  "; run with -v for the verifier's last lines");
	} else if (e->err == EPERM || e->err == EACCES) {
		/* Privileged, yet refused: lockdown, an LSM or a seccomp filter. */
		pr_warn("load BPF programs: %s although bpfprof has CAP_BPF/CAP_SYS_ADMIN: is the "
			"kernel locked down (/sys/kernel/security/lockdown) or BPF blocked by an LSM "
			"or seccomp?%s",
			strerror(e->err),
			log__enabled(LOG_DEBUG) ? " libbpf said:" :
						  " Run with -v for libbpf's messages");
	} else {
		pr_warn("load BPF programs on this kernel (%s): %s%s", rel, strerror(e->err),
			log__enabled(LOG_DEBUG) ? "; libbpf said:" :
						  "; run with -v for libbpf's messages");
	}
	if (log__enabled(LOG_DEBUG))
		print_tail(e->log, 20);
}

bool loader__compat(const struct loader *l)
{
	return l->compat;
}

const struct kernel_features *loader__features(const struct loader *l)
{
	return &l->kf;
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

/* Attaches prog, and records its link in *link. 0 or -errno. */
static int attach(struct bpf_program *prog, struct bpf_link **link)
{
	*link = bpf_program__attach(prog);
	return *link ? 0 : -errno;
}

/* Program NAME or NAME_compat, whichever is loaded, and its link slot: two arguments. */
#define LOADED(l, s, name)                                          \
	((l)->compat ? (s)->progs.name##_compat : (s)->progs.name), \
		((l)->compat ? &(s)->links.name##_compat : &(s)->links.name)

int loader__attach_tracepoints(struct loader *l)
{
	struct bpfprof_bpf *s = l->skel;
	int err;

	err = attach(s->progs.handle_fork, &s->links.handle_fork);
	if (!err)
		err = attach(LOADED(l, s, handle_exec));
	if (!err)
		err = attach(LOADED(l, s, handle_exit));
	if (!err)
		err = attach(LOADED(l, s, handle_sys_exit));
	if (!err && l->off_cpu)
		err = attach(s->progs.handle_sched_switch, &s->links.handle_sched_switch);
	if (!err && l->off_cpu)
		err = attach(s->progs.handle_off_cpu_sys_exit, &s->links.handle_off_cpu_sys_exit);
	if (!err && l->wakers)
		err = attach(s->progs.handle_sched_waking, &s->links.handle_sched_waking);
	return err;
}

int loader__attach_perf_events(struct loader *l, const struct perf_events *pe)
{
	int i;

	l->perf_links = calloc(pe->cnt, sizeof(*l->perf_links));
	if (!l->perf_links)
		return -ENOMEM;
	for (i = 0; i < pe->cnt; i++) {
		l->perf_links[i] = bpf_program__attach_perf_event(
			l->compat ? l->skel->progs.handle_perf_event_compat :
				    l->skel->progs.handle_perf_event,
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

int loader__remove_target(struct loader *l, uint32_t tgid)
{
	int err = bpf_map__delete_elem(l->skel->maps.target_tgids, &tgid, sizeof(tgid), 0);

	return err < 0 ? -errno : 0;
}

int loader__next_target(struct loader *l, const uint32_t *prev, uint32_t *next)
{
	int err = bpf_map__get_next_key(l->skel->maps.target_tgids, prev, next, sizeof(*next));

	return err < 0 ? -errno : 0;
}

int loader__ringbuf_fd(struct loader *l)
{
	return bpf_map__fd(l->skel->maps.ringbuf);
}

static struct bpf_map *runtime_map(const struct runtime_maps *m, const char *name)
{
	struct loader *l = m->ctx;

	return bpf_object__find_map_by_name(l->skel->obj, name);
}

static int runtime_map_update(const struct runtime_maps *m, const char *name, const void *key,
			      const void *value)
{
	struct bpf_map *map = runtime_map(m, name);

	if (!map || bpf_map__fd(map) < 0)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(map), key, value, BPF_ANY) ? -errno : 0;
}

static int runtime_map_insert(const struct runtime_maps *m, const char *name, const void *key,
			      const void *value)
{
	struct bpf_map *map = runtime_map(m, name);

	if (!map || bpf_map__fd(map) < 0)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(map), key, value, BPF_NOEXIST) ? -errno : 0;
}

static int runtime_map_remove(const struct runtime_maps *m, const char *name, const void *key)
{
	struct bpf_map *map = runtime_map(m, name);

	if (!map || bpf_map__fd(map) < 0)
		return -ENOENT;
	return bpf_map_delete_elem(bpf_map__fd(map), key) ? -errno : 0;
}

const struct runtime_maps *loader__runtime_maps(struct loader *l)
{
	l->maps.update = runtime_map_update;
	l->maps.remove = runtime_map_remove;
	l->maps.insert = runtime_map_insert;
	l->maps.ctx = l;
	return &l->maps;
}

void loader__prog_stats(struct loader *l,
			void (*cb)(const char *name, uint64_t run_cnt, uint64_t run_time_ns,
				   uint64_t misses, void *arg),
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
		cb(bpf_program__name(prog), info.run_cnt, info.run_time_ns, info.recursion_misses,
		   arg);
	}
}

int loader__set_copy_size(struct loader *l, uint32_t tgid, uint32_t bytes)
{
	if (bpf_map__update_elem(l->skel->maps.copy_sizes, &tgid, sizeof(tgid), &bytes,
				 sizeof(bytes), BPF_ANY))
		return -errno;
	return 0;
}

int loader__read_stats(struct loader *l, struct bpf_stats *total)
{
	int ncpu = libbpf_num_possible_cpus(), i, err = 0;
	struct bpf_stats *percpu;
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
	/* Every field is a __u64 counter (bpf/record.h): summed as such, so that a counter added
	 * there is never left out (the Python ones were). */
	for (i = 0; i < ncpu; i++) {
		const uint64_t *src = (const uint64_t *)&percpu[i];
		uint64_t *dst = (uint64_t *)total;
		size_t k;

		for (k = 0; k < sizeof(*total) / sizeof(uint64_t); k++)
			dst[k] += src[k];
	}
out:
	free(percpu);
	return err;
}

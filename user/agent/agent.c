// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* agent.c: cut the machine's aggregate into labelled per-group profiles and export them. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "agent/agent.h"
#include "agent/cgroup.h"
#include "agent/export.h"
#include "agent/kube.h"
#include "util/log.h"
#include "agent/metrics.h"
#include "process/module_cache.h"
#include "output/output_pprof.h"
#include "util/util.h"

#define AGENT_MAX_LABELS 16

/* What a process is, read once from /proc (off the sampling path, at a cut). */
struct pid_info {
	uint32_t pid;
	uint64_t cut;	    /* the last cut that saw it */
	bool read;	    /* /proc was read (the process may be gone since) */
	char exe[PATH_MAX]; /* readlink /proc/PID/exe, "" when unknown */
	char container_id[CGROUP_CONTAINER_ID_LEN + 1];
	char pod_uid[CGROUP_POD_UID_LEN + 1];
	char unit[CGROUP_UNIT_MAX];
	struct group *group; /* its group in this cut */
	UT_hash_handle hh;
};

/* One profile of a cut: the processes of one executable in one container (or one process). */
struct group {
	char key[PATH_MAX + 96];
	char exe[PATH_MAX];
	char comm[17];
	char container_id[CGROUP_CONTAINER_ID_LEN + 1];
	char unit[CGROUP_UNIT_MAX];
	uint32_t pid; /* --group-by pid */
	char build_id[41];
	struct kube_pod pod;
	bool has_pod;
	uint64_t samples;
	uint64_t cpu_samples, off_cpu_samples; /* of them: perf_event samples, blocked periods */
	char service[256]; /* service_name */
	char file[600];	   /* its files' name in --output-dir, before sanitizing */
	bool alike;	   /* another group of the cut has the same file */
	UT_hash_handle hh;
};

struct agent {
	const struct agent_opts *ao;
	char hostname[256];
	const char *node;
	struct pyroscope_exporter *pyro;
	struct dir_exporter *dir;
	struct metrics *metrics;
	struct kube *kube;
	struct pid_info *pids;
	uint64_t cut_no;
	pthread_mutex_t lock; /* c, cuts, profiles */
	struct agent_counters c;
	uint64_t cuts, profiles, profile_bytes;
	uint64_t last_cut_ns; /* CLOCK_REALTIME of the last cut's end */
	/* Liveness of the sampling loop for /healthz, CLOCK_MONOTONIC ns, under lock. */
	uint64_t loop_ns;	  /* the last agent__set_counters(): the loop drained the ringbuf */
	uint64_t sample_ns;	  /* the last time the sample count grew */
	uint64_t health_limit_ns; /* AGENT_HEALTH_INTERVALS intervals */
	bool need_samples;	  /* every process is profiled: samples must keep coming */
};

/* Copies s into out (sz bytes), cut short if it must be. */
static void copy_str(char *out, size_t sz, const char *s)
{
	size_t n = strlen(s);

	if (n > sz - 1)
		n = sz - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

static void fill_metrics(struct metrics_writer *w, void *arg)
{
	struct agent *a = arg;
	struct agent_counters c;
	uint64_t cuts, profiles, bytes;

	pthread_mutex_lock(&a->lock);
	c = a->c;
	cuts = a->cuts;
	profiles = a->profiles;
	bytes = a->profile_bytes;
	pthread_mutex_unlock(&a->lock);
	metrics__counter(w, "bpfprof_samples_total", "Samples received from the BPF ringbuf.", NULL,
			 c.samples);
	metrics__counter(w, "bpfprof_samples_lost_total", "Samples lost: the ringbuf was full.",
			 NULL, c.lost);
	metrics__counter(w, "bpfprof_events_lost_total", "Task and mmap records lost.", NULL,
			 c.events_lost);
	metrics__counter(w, "bpfprof_user_stacks_total", "Samples with a user stack unwound.", NULL,
			 c.user_stacks);
	metrics__counter(w, "bpfprof_user_stacks_root_total",
			 "User stacks unwound to their root (_start, clone3).", NULL,
			 c.root_stacks);
	metrics__counter(w, "bpfprof_user_stacks_truncated_total",
			 "User stacks cut short by the stack copy size.", NULL, c.truncated_stacks);
	metrics__gauge(w, "bpfprof_unwind_root_ratio",
		       "Share of user stacks unwound to their root, since start.", NULL,
		       c.user_stacks ? (double)c.root_stacks / c.user_stacks : 0);
	metrics__gauge(w, "bpfprof_processes", "Processes tracked.", NULL, c.processes);
	metrics__gauge(w, "bpfprof_elf_files", "ELF files open.", NULL, c.files);
	metrics__counter(w, "bpfprof_cuts_total", "Intervals cut into profiles.", NULL, cuts);
	metrics__counter(w, "bpfprof_profiles_total", "Profiles made (one per group per interval).",
			 NULL, profiles);
	metrics__counter(w, "bpfprof_profile_bytes_total", "Bytes of gzipped pprof made.", NULL,
			 bytes);
	if (a->pyro)
		pyroscope_exporter__metrics(a->pyro, w);
	if (a->dir)
		dir_exporter__metrics(a->dir, w);
}

bool agent__health(struct agent *a, uint64_t now, char *reason, size_t sz)
{
	uint64_t loop_age, sample_age;
	double limit_s = a->health_limit_ns / 1e9;

	pthread_mutex_lock(&a->lock);
	loop_age = now > a->loop_ns ? now - a->loop_ns : 0;
	sample_age = now > a->sample_ns ? now - a->sample_ns : 0;
	pthread_mutex_unlock(&a->lock);
	if (loop_age > a->health_limit_ns) {
		snprintf(reason, sz,
			 "sampling loop stalled: no ringbuf drain for %.1f s (limit %.1f s, "
			 "%d intervals)",
			 loop_age / 1e9, limit_s, AGENT_HEALTH_INTERVALS);
		return false;
	}
	if (a->need_samples && sample_age > a->health_limit_ns) {
		snprintf(reason, sz,
			 "sampling stopped: no sample handled for %.1f s (limit %.1f s, "
			 "%d intervals)",
			 sample_age / 1e9, limit_s, AGENT_HEALTH_INTERVALS);
		return false;
	}
	return true;
}

static bool health(char *reason, size_t sz, void *arg)
{
	return agent__health(arg, now_ns(), reason, sz);
}

struct agent *agent__new(const struct agent_opts *ao)
{
	struct agent *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->ao = ao;
	pthread_mutex_init(&a->lock, NULL);
	if (gethostname(a->hostname, sizeof(a->hostname) - 1))
		snprintf(a->hostname, sizeof(a->hostname), "unknown");
	a->node = getenv("NODE_NAME");
	a->loop_ns = a->sample_ns = now_ns();
	a->health_limit_ns = AGENT_HEALTH_INTERVALS * (ao->interval_ns ?: 60000000000ull);
	/* A -p or -- CMD target may sleep for long; a whole machine never stops running. */
	a->need_samples = ao->whole_machine;
	if (ao->pyroscope_url) {
		struct pyroscope_opts po = {
			.url = ao->pyroscope_url,
			.api = ao->pyroscope_push ? PYROSCOPE_API_PUSH : PYROSCOPE_API_INGEST,
			.basic_auth_file = ao->basic_auth_file,
			.bearer_token_file = ao->bearer_token_file,
			.tenant_id = ao->tenant_id,
			.headers = ao->headers,
			.headers_cnt = ao->headers_cnt,
			.queue_size = ao->queue_size,
		};

		a->pyro = pyroscope_exporter__new(&po);
		if (!a->pyro) {
			err = errno;
			pr_warn("agent: start the Pyroscope exporter for %s: %s", ao->pyroscope_url,
				strerror(err));
			goto fail;
		}
	}
	if (ao->output_dir) {
		a->dir = dir_exporter__new(ao->output_dir, ao->output_dir_max);
		if (!a->dir) {
			err = errno;
			pr_warn("agent: open output directory %s: %s", ao->output_dir,
				strerror(err));
			goto fail;
		}
	}
	if (ao->kubernetes) {
		struct kube_opts ko = {
			.api_url = ao->kubernetes_api,
			.node_name = a->node,
			/* Samples of a container that just went are still labelled at the cut. */
			.deleted_ttl_ms = ao->interval_ns / 1000000 + 10000,
		};

		a->kube = kube__start(&ko);
		if (!a->kube) {
			err = errno;
			pr_warn("agent: watch Kubernetes pods: %s", strerror(err));
			goto fail;
		}
	}
	if (ao->metrics_addr) {
		a->metrics = metrics__start(ao->metrics_addr, fill_metrics, health, a);
		if (!a->metrics) {
			err = errno;
			pr_warn("agent: serve /metrics on %s: %s", ao->metrics_addr, strerror(err));
			goto fail;
		}
		pr_info("agent: /metrics and /healthz on %s (port %d)", ao->metrics_addr,
			metrics__port(a->metrics));
	}
	return a;
fail:
	agent__free(a, 0);
	errno = err;
	return NULL;
}

void agent__set_counters(struct agent *a, const struct agent_counters *c)
{
	uint64_t now = now_ns();

	pthread_mutex_lock(&a->lock);
	a->loop_ns = now;
	if (c->samples != a->c.samples)
		a->sample_ns = now;
	a->c = *c;
	pthread_mutex_unlock(&a->lock);
}

static struct pid_info *pid_info(struct agent *a, uint32_t pid)
{
	struct cgroup_info *cg;
	struct pid_info *pi;
	char path[64];
	ssize_t n;

	HASH_FIND(hh, a->pids, &pid, sizeof(pid), pi);
	if (pi)
		return pi;
	pi = calloc(1, sizeof(*pi));
	if (!pi)
		return NULL;
	pi->pid = pid;
	HASH_ADD(hh, a->pids, pid, sizeof(pi->pid), pi);
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, pi->exe, sizeof(pi->exe) - 1);
	if (n > 0)
		pi->exe[n] = '\0';
	else
		pi->exe[0] = '\0';
	/* A deleted or replaced executable is still the same program. */
	if (n > 10 && !strcmp(pi->exe + n - 10, " (deleted)"))
		pi->exe[n - 10] = '\0';
	cg = malloc(sizeof(*cg));
	if (cg && !cgroup__read(pid, cg)) {
		copy_str(pi->container_id, sizeof(pi->container_id), cg->container_id);
		copy_str(pi->pod_uid, sizeof(pi->pod_uid), cg->pod_uid);
		copy_str(pi->unit, sizeof(pi->unit), cg->unit);
	}
	free(cg);
	pi->read = true;
	return pi;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The group of a sample key's process, made on first use in this cut. */
static struct group *group_of(struct agent *a, struct group **groups, struct pid_info *pi,
			      const char *comm)
{
	struct group *g;
	char key[sizeof(g->key)];

	if (a->ao->group_by_pid)
		snprintf(key, sizeof(key), "pid %u", pi->pid);
	else
		snprintf(key, sizeof(key), "%s|%s", pi->exe[0] ? pi->exe : comm, pi->container_id);
	HASH_FIND_STR(*groups, key, g);
	if (g)
		return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	copy_str(g->key, sizeof(g->key), key);
	copy_str(g->exe, sizeof(g->exe), pi->exe);
	copy_str(g->comm, sizeof(g->comm), comm);
	copy_str(g->container_id, sizeof(g->container_id), pi->container_id);
	copy_str(g->unit, sizeof(g->unit), pi->unit);
	g->pid = pi->pid;
	/* A container's pod; a pod's (a process in the pod but in no container of its own). */
	if (a->kube && g->container_id[0])
		g->has_pod = !kube__lookup(a->kube, g->container_id, &g->pod);
	else if (a->kube && pi->pod_uid[0])
		g->has_pod = !kube__lookup_pod(a->kube, pi->pod_uid, &g->pod);
	HASH_ADD_STR(*groups, key, g);
	return g;
}

struct cut_ctx {
	struct agent *a;
	struct aggregate *agg;
	struct group *groups;
	struct group *g; /* the group being encoded */
	int err;
};

/* Pass 1: every sample key's process gets its group; each group its executable's build-id,
 * from the ELF file the samples were unwound through. */
static int assign_group(const struct agg_stack *st, void *arg)
{
	struct cut_ctx *c = arg;
	const struct agg_location *l;
	struct pid_info *pi;
	struct group *g;
	uint32_t i;

	pi = pid_info(c->a, st->pid);
	if (!pi)
		return -ENOMEM;
	if (pi->cut != c->a->cut_no) {
		pi->cut = c->a->cut_no;
		pi->group = group_of(c->a, &c->groups, pi, aggregate__str(c->agg, st->comm));
		if (!pi->group)
			return -ENOMEM;
	}
	g = pi->group;
	g->samples += st->count;
	if (st->origin == SAMPLE_OFF_CPU)
		g->off_cpu_samples += st->count;
	else
		g->cpu_samples += st->count;
	if (g->build_id[0] || !g->exe[0])
		return 0;
	for (i = 0; i < st->n; i++) {
		l = aggregate__loc(c->agg, st->locs[i]);
		if (l->entry && l->entry->build_id_sz && !strcmp(l->entry->path, g->exe)) {
			hex_encode(g->build_id, l->entry->build_id, l->entry->build_id_sz);
			break;
		}
	}
	return 0;
}

static bool in_group(const struct agg_stack *st, void *arg)
{
	struct cut_ctx *c = arg;
	struct pid_info *pi;

	HASH_FIND(hh, c->a->pids, &st->pid, sizeof(st->pid), pi);
	return pi && pi->group == c->g;
}

/* service_name by the --service-name-from rules, first that applies; the executable's name
 * when none does. */
static void service_name(const struct agent *a, const struct group *g, char *out, size_t sz)
{
	const char *rules = a->ao->service_name_from, *r = rules, *end;
	size_t len, ulen;

	while (r && *r) {
		end = strchr(r, ',');
		len = end ? (size_t)(end - r) : strlen(r);
		if (len == 9 && !strncmp(r, "container", 9) && g->has_pod && g->pod.container[0]) {
			copy_str(out, sz, g->pod.app[0] ? g->pod.app : g->pod.container);
			return;
		}
		ulen = strlen(g->unit);
		if (len == 4 && !strncmp(r, "unit", 4) && ulen > 8 &&
		    !strcmp(g->unit + ulen - 8, ".service") && strncmp(g->unit, "user@", 5)) {
			snprintf(out, sz, "%.*s", (int)(ulen - 8), g->unit);
			return;
		}
		if (len == 4 && !strncmp(r, "comm", 4))
			break;
		r = end ? end + 1 : NULL;
	}
	copy_str(out, sz, g->exe[0] ? base_name(g->exe) : g->comm);
}

/*
 * Names every group of the cut: service_name, and the name of its files in --output-dir: the
 * service, then what tells apart groups of one service on a node: the pod (replicas of a
 * Deployment), else the container (12 hex digits, as docker ps shows), and the pid with
 * --group-by pid. Groups of one service still alike (two executables of one name, a unit
 * running two programs) add 8 hex digits of a hash of their executable's path and container:
 * the same name at every interval, never "name.1" for one and "name" for the other by chance.
 */
static void name_groups(const struct agent *a, struct group *groups)
{
	struct group *g, *o;
	int n;

	for (g = groups; g; g = g->hh.next) {
		service_name(a, g, g->service, sizeof(g->service));
		n = snprintf(g->file, sizeof(g->file), "%s", g->service);
		if (g->has_pod && g->pod.pod[0])
			n += snprintf(g->file + n, sizeof(g->file) - n, "_%s", g->pod.pod);
		else if (g->container_id[0])
			n += snprintf(g->file + n, sizeof(g->file) - n, "_%.12s", g->container_id);
		if (a->ao->group_by_pid && (size_t)n < sizeof(g->file))
			snprintf(g->file + n, sizeof(g->file) - n, "-%u", g->pid);
	}
	for (g = groups; g; g = g->hh.next)
		for (o = groups; o && !g->alike; o = o->hh.next)
			g->alike = o != g && !strcmp(o->file, g->file);
	for (g = groups; g; g = g->hh.next) {
		n = strlen(g->file);
		if (g->alike && (size_t)n + 10 <= sizeof(g->file))
			snprintf(g->file + n, sizeof(g->file) - n, "_%08x",
				 (unsigned int)hash_bytes(g->key, strlen(g->key), 0));
	}
}

/* One profile of group g: its samples of one origin (--off-cpu's "off_cpu" profile) or, without
 * only_origin, all of them ("process_cpu"); to --output-dir and the Pyroscope queue. */
static int export_origin(struct cut_ctx *c, struct group *g, struct pprof_opts *po,
			 const struct export_label *labels, size_t n, int64_t start_ns,
			 int64_t end_ns)
{
	struct agent *a = c->a;
	bool off = po->only_origin && po->origin == SAMPLE_OFF_CPU;
	char file[sizeof(g->file) + 16];
	struct export_profile *p;
	size_t gz_sz = 0;
	void *gz = NULL;
	int err;

	err = output_pprof__encode(c->agg, po, &gz, &gz_sz);
	if (err)
		return err;
	p = export_profile__new(gz, gz_sz, labels, n, start_ns, end_ns, a->ao->freq_hz);
	free(gz);
	if (!p)
		return -errno;
	p->type = off ? "off_cpu" : "process_cpu";
	snprintf(file, sizeof(file), "%s%s", g->file, off ? ".off-cpu" : "");
	if (a->dir) {
		err = dir_exporter__write(a->dir, p, file);
		if (err)
			pr_warn("agent: write profile of %s to %s: %s", g->service,
				a->ao->output_dir, strerror(-err));
	}
	pthread_mutex_lock(&a->lock);
	a->profiles++;
	a->profile_bytes += gz_sz;
	pthread_mutex_unlock(&a->lock);
	if (a->pyro)
		pyroscope_exporter__enqueue(a->pyro, p); /* takes p */
	else
		export_profile__free(p);
	pr_debug("agent: profile %s%s: %llu samples, %zu bytes", g->service,
		 off ? " (off CPU)" : "", (unsigned long long)g->samples, gz_sz);
	return 0;
}

static int export_group(struct cut_ctx *c, struct group *g, int64_t start_ns, int64_t end_ns)
{
	struct agent *a = c->a;
	struct export_label labels[AGENT_MAX_LABELS];
	struct pprof_label plabels[AGENT_MAX_LABELS];
	struct pprof_opts po = {
		.freq_hz = a->ao->freq_hz,
		.time_ns = start_ns,
		.duration_ns = end_ns - start_ns,
		.labels = plabels,
		.keep = in_group,
		.keep_arg = c,
	};
	const char *service = g->service;
	char pid[16];
	size_t i, n = 0;
	int err;

	labels[n++] = (struct export_label){ "service_name", service };
	labels[n++] = (struct export_label){ "hostname", a->hostname };
	if (a->node)
		labels[n++] = (struct export_label){ "node", a->node };
	if (g->exe[0])
		labels[n++] = (struct export_label){ "exe", g->exe };
	if (g->build_id[0])
		labels[n++] = (struct export_label){ "build_id", g->build_id };
	if (g->container_id[0])
		labels[n++] = (struct export_label){ "container_id", g->container_id };
	if (g->has_pod) {
		labels[n++] = (struct export_label){ "namespace", g->pod.namespace };
		labels[n++] = (struct export_label){ "pod", g->pod.pod };
		if (g->pod.container[0])
			labels[n++] = (struct export_label){ "container", g->pod.container };
	}
	if (g->unit[0])
		labels[n++] = (struct export_label){ "unit", g->unit };
	if (a->ao->group_by_pid) {
		snprintf(pid, sizeof(pid), "%u", g->pid);
		labels[n++] = (struct export_label){ "pid", pid };
	}
	/* The profile carries its labels too: a file or a body read alone says what it is of. */
	for (i = 0; i < n; i++)
		plabels[i] = (struct pprof_label){ labels[i].key, labels[i].value };
	po.labels_cnt = n;
	c->g = g;
	/* --off-cpu: the CPU samples and the blocked time of a service, two profiles labelled
	 * alike (Pyroscope: process_cpu and off_cpu), each sent when it has samples. */
	if (!a->ao->off_cpu)
		return export_origin(c, g, &po, labels, n, start_ns, end_ns);
	po.only_origin = true;
	err = 0;
	if (g->cpu_samples) {
		po.origin = SAMPLE_CPU;
		err = export_origin(c, g, &po, labels, n, start_ns, end_ns);
	}
	if (!err && g->off_cpu_samples) {
		po.origin = SAMPLE_OFF_CPU;
		err = export_origin(c, g, &po, labels, n, start_ns, end_ns);
	}
	return err;
}

int agent__cut(struct agent *a, struct aggregate *agg, int64_t start_ns, int64_t end_ns,
	       int named_err)
{
	struct cut_ctx c = { .a = a, .agg = agg };
	struct pid_info *pi, *ptmp;
	struct group *g, *gtmp;
	int err, cnt = 0;

	a->cut_no++;
	err = named_err;
	if (!err)
		err = aggregate__for_each(agg, assign_group, &c);
	name_groups(a, c.groups);
	HASH_ITER(hh, c.groups, g, gtmp) {
		if (!err) {
			err = export_group(&c, g, start_ns, end_ns);
			cnt += !err;
		}
	}
	HASH_ITER(hh, c.groups, g, gtmp) {
		HASH_DEL(c.groups, g);
		free(g);
	}
	/* Processes not seen in this cut are forgotten (a recycled pid is read afresh). */
	HASH_ITER(hh, a->pids, pi, ptmp) {
		pi->group = NULL;
		if (pi->cut != a->cut_no) {
			HASH_DEL(a->pids, pi);
			free(pi);
		}
	}
	pthread_mutex_lock(&a->lock);
	a->cuts++;
	a->last_cut_ns = end_ns;
	pthread_mutex_unlock(&a->lock);
	if (err)
		pr_warn("agent: cut profiles: %s", strerror(-err));
	else
		pr_info("agent: %d profiles of %.1f s (%llu samples)", cnt,
			(end_ns - start_ns) / 1e9, (unsigned long long)aggregate__samples(agg));
	return err ? err : cnt;
}

void agent__free(struct agent *a, uint64_t timeout_ms)
{
	struct pid_info *pi, *ptmp;

	if (!a)
		return;
	if (a->pyro) {
		if (pyroscope_exporter__flush(a->pyro, timeout_ms))
			pr_warn("agent: some profiles were not delivered to %s before exit",
				a->ao->pyroscope_url);
		pyroscope_exporter__free(a->pyro);
	}
	metrics__stop(a->metrics);
	kube__stop(a->kube);
	dir_exporter__free(a->dir);
	HASH_ITER(hh, a->pids, pi, ptmp) {
		HASH_DEL(a->pids, pi);
		free(pi);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
}

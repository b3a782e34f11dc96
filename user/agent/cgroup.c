// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup.c: container, pod and unit labels from the cgroup path of a process. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent/cgroup.h"
#include "util/file.h"

/* Line ranks, best first: where a container id is looked for first. */
enum cgroup_rank {
	RANK_UNIFIED, /* "0::/path" */
	RANK_SYSTEMD, /* "N:name=systemd:/path" (v1 hybrid) */
	RANK_PIDS,    /* "N:pids:/path" (v1: every task is in the pids hierarchy) */
	RANK_OTHER,   /* other v1 controllers */
	RANK_CNT,
};

/* Prefixes of a container's cgroup name, and the runtime each names. */
static const struct {
	const char *prefix;
	const char *runtime;
} container_prefixes[] = {
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
};

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* s[0..n) is "<64 hex>" or "<64 hex>.scope". */
static bool is_container_id(const char *s, size_t n)
{
	if (n == CGROUP_CONTAINER_ID_LEN + 6 && !memcmp(s + CGROUP_CONTAINER_ID_LEN, ".scope", 6))
		n = CGROUP_CONTAINER_ID_LEN;
	return n == CGROUP_CONTAINER_ID_LEN && is_hex(s, n);
}

/* s is a pod UID in text form, with '-' or (systemd slice names) '_' between the groups. */
static bool is_pod_uid(const char *s, size_t n)
{
	if (n != CGROUP_POD_UID_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-' && s[i] != '_')
				return false;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t sn = strlen(suffix);

	return n > sn && !memcmp(s + n - sn, suffix, sn);
}

static bool comp_is(const char *s, size_t n, const char *name)
{
	return n == strlen(name) && !memcmp(s, name, n);
}

/*
 * The container id in component c[0..n) (parent p[0..pn), pn 0 at the top), into id (65
 * bytes), its runtime into *runtime. False when c names no container.
 */
static bool component_container(const char *c, size_t n, const char *p, size_t pn, char *id,
				const char **runtime)
{
	const char *rt = NULL;
	size_t i;

	for (i = 0; i < sizeof(container_prefixes) / sizeof(container_prefixes[0]); i++) {
		size_t pl = strlen(container_prefixes[i].prefix);

		if (n > pl && !memcmp(c, container_prefixes[i].prefix, pl)) {
			rt = container_prefixes[i].runtime;
			c += pl;
			n -= pl;
			break;
		}
	}
	if (!is_container_id(c, n))
		return false;
	if (!rt) {
		/* A bare id: only the parent tells the runtime (cgroupfs drivers). */
		if (comp_is(p, pn, "docker"))
			rt = "docker";
		else if (comp_is(p, pn, "libpod_parent"))
			rt = "podman";
	}
	for (i = 0; i < CGROUP_CONTAINER_ID_LEN; i++)
		id[i] = tolower((unsigned char)c[i]);
	id[CGROUP_CONTAINER_ID_LEN] = '\0';
	*runtime = rt;
	return true;
}

/* The pod UID in component c[0..n): "pod<uid>" or "kubepods[-<qos>]-pod<uid_>.slice". */
static bool component_pod_uid(const char *c, size_t n, char *uid)
{
	const char *u = NULL;

	if (n == 3 + CGROUP_POD_UID_LEN && !memcmp(c, "pod", 3))
		u = c + 3;
	else if (n > 4 + CGROUP_POD_UID_LEN + 6 && has_suffix(c, n, ".slice") &&
		 !memcmp(c + n - 6 - CGROUP_POD_UID_LEN - 4, "-pod", 4))
		u = c + n - 6 - CGROUP_POD_UID_LEN;
	if (!u || !is_pod_uid(u, CGROUP_POD_UID_LEN))
		return false;
	for (size_t i = 0; i < CGROUP_POD_UID_LEN; i++)
		uid[i] = u[i] == '_' ? '-' : u[i];
	uid[CGROUP_POD_UID_LEN] = '\0';
	return true;
}

/* Fills out's labels from path[0..n) (no path copy); true when it holds a container id. */
static bool path_labels(const char *path, size_t n, struct cgroup_info *out)
{
	const char *end = path + n, *c = path, *parent = "";
	size_t pn = 0;

	out->container_id[0] = '\0';
	out->runtime = NULL;
	out->pod_uid[0] = '\0';
	out->unit[0] = '\0';
	while (c < end) {
		const char *slash = memchr(c, '/', end - c);
		size_t cn = (slash ? slash : end) - c;

		if (cn) {
			component_container(c, cn, parent, pn, out->container_id, &out->runtime);
			component_pod_uid(c, cn, out->pod_uid);
			if (has_suffix(c, cn, ".service") && cn < CGROUP_UNIT_MAX) {
				memcpy(out->unit, c, cn);
				out->unit[cn] = '\0';
			}
			parent = c;
			pn = cn;
		}
		if (!slash)
			break;
		c = slash + 1;
	}
	return out->container_id[0];
}

struct cgroup_line {
	const char *path;
	size_t path_len;
	enum cgroup_rank rank;
};

/* controllers[0..n) holds name as one of its comma-separated entries. */
static bool has_controller(const char *controllers, size_t n, const char *name)
{
	const char *c = controllers, *end = controllers + n;

	while (c < end) {
		const char *comma = memchr(c, ',', end - c);
		size_t cn = (comma ? comma : end) - c;

		if (comp_is(c, cn, name))
			return true;
		c += cn + 1;
	}
	return false;
}

/* Splits one line s[0..n) ("ID:CONTROLLERS:/PATH[ (deleted)]"). */
static int parse_line(const char *s, size_t n, struct cgroup_line *l)
{
	const char *end = s + n, *c1, *c2;

	c1 = memchr(s, ':', n);
	if (!c1 || c1 == s)
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', end - c1 - 1);
	if (!c2 || c2 + 1 == end || c2[1] != '/')
		return -EINVAL;
	for (const char *d = s; d < c1; d++)
		if (!isdigit((unsigned char)*d))
			return -EINVAL;
	l->path = c2 + 1;
	l->path_len = end - l->path;
	/* The kernel marks a removed cgroup v2 (the process is a zombie in it). */
	if (has_suffix(l->path, l->path_len, " (deleted)"))
		l->path_len -= strlen(" (deleted)");
	if (c1 - s == 1 && s[0] == '0' && c2 == c1 + 1)
		l->rank = RANK_UNIFIED;
	else if (has_controller(c1 + 1, c2 - c1 - 1, "name=systemd"))
		l->rank = RANK_SYSTEMD;
	else if (has_controller(c1 + 1, c2 - c1 - 1, "pids"))
		l->rank = RANK_PIDS;
	else
		l->rank = RANK_OTHER;
	return 0;
}

int cgroup__parse(const char *text, struct cgroup_info *out)
{
	/* The kernel has at most 16 hierarchies (CGROUP_SUBSYS_COUNT and named ones fewer). */
	struct cgroup_line lines[32];
	const struct cgroup_line *best = NULL;
	size_t cnt = 0, i;
	const char *s = text;
	int err, rank;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		if (n) {
			if (cnt == sizeof(lines) / sizeof(lines[0]))
				return -EINVAL;
			err = parse_line(s, n, &lines[cnt]);
			if (err)
				return err;
			cnt++;
		}
		s += n + (nl ? 1 : 0);
	}
	if (!cnt)
		return -ENOENT;

	for (rank = 0; rank < RANK_CNT && !best; rank++)
		for (i = 0; i < cnt && !best; i++)
			if (lines[i].rank == (enum cgroup_rank)rank &&
			    path_labels(lines[i].path, lines[i].path_len, out))
				best = &lines[i];
	for (rank = 0; rank < RANK_OTHER && !best; rank++)
		for (i = 0; i < cnt && !best; i++)
			if (lines[i].rank == (enum cgroup_rank)rank && lines[i].path_len > 1)
				best = &lines[i];
	for (rank = 0; rank < RANK_CNT && !best; rank++)
		for (i = 0; i < cnt && !best; i++)
			if (lines[i].rank == (enum cgroup_rank)rank)
				best = &lines[i];

	if (best->path_len >= sizeof(out->path))
		return -ENAMETOOLONG;
	memcpy(out->path, best->path, best->path_len);
	out->path[best->path_len] = '\0';
	path_labels(best->path, best->path_len, out);
	return 0;
}

int cgroup__read(pid_t pid, struct cgroup_info *out)
{
	char file[64], *buf;
	size_t len;
	int err;

	if (pid)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/cgroup");
	/* -ENOENT also for a process that exits while being read (ESRCH). */
	err = file__read_all(file, &buf, &len);
	if (err)
		return err;
	err = cgroup__parse(buf, out);
	free(buf);
	return err;
}

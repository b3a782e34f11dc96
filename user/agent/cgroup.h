/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cgroup.h: a process's container id, runtime, pod UID and systemd unit from /proc/PID/cgroup. */
#ifndef BPFPROF_CGROUP_H
#define BPFPROF_CGROUP_H

#include <sys/types.h>

#define CGROUP_PATH_MAX		4096 /* PATH_MAX: a cgroup path under its mount */
#define CGROUP_UNIT_MAX		256  /* systemd's UNIT_NAME_MAX, with the NUL */
#define CGROUP_CONTAINER_ID_LEN 64   /* hex digits of an OCI container id (sha256) */
#define CGROUP_POD_UID_LEN	36   /* "8-4-4-4-12" (RFC 4122 text form) */

/*
 * What a process's cgroup path tells about it (the kernel's "/proc/PID/cgroup" format:
 * "hierarchy-ID:controller-list:path" lines, Documentation/admin-guide/cgroup-v2.rst).
 *
 * Container ids: a path component that is 64 hex digits, bare or as "<prefix><id>[.scope]":
 *   kubelet, cgroupfs driver:  /kubepods[/<qos>]/pod<uid>/<id>
 *   kubelet, systemd driver:   /kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid with
 *                              '_' for '-'>.slice/{cri-containerd,crio,docker}-<id>.scope
 *   CRI-O, cgroupfs driver:    .../pod<uid>/crio-<id>
 *   Docker:                    /docker/<id> (cgroupfs), /system.slice/docker-<id>.scope (systemd)
 *   podman:                    .../libpod-<id>.scope (systemd),
 *                              /libpod_parent/libpod-<id> (cgroupfs)
 * "crio-conmon-<id>" and "libpod-conmon-<id>" hold the runtime's container monitor, which is not
 * in the container: no container id there (the pod UID is still given). When containers nest
 * (docker-in-docker: .../docker-<outer>.scope/docker/<inner>) the deepest id is the process's.
 * A bare id under kubepods does not tell containerd from cri-dockerd: runtime is NULL there (the
 * API server's containerID "<runtime>://<id>" tells, see kube.h).
 */
struct cgroup_info {
	/* The cgroup v2 path ("0::" line) or the v1 one used, relative to the reader's cgroup
	 * namespace, without the kernel's " (deleted)" mark. */
	char path[CGROUP_PATH_MAX];
	/* Lowercase hex; "" when not in a container. */
	char container_id[CGROUP_CONTAINER_ID_LEN + 1];
	/* Static: "containerd", "cri-o", "docker", "podman"; NULL when not in a container or
	 * when the layout does not name the runtime. */
	const char *runtime;
	/* With '-' (systemd's '_' turned back); "" when not in a Kubernetes pod. */
	char pod_uid[CGROUP_POD_UID_LEN + 1];
	/* The deepest "*.service" component ("nginx.service", "user@1000.service"), or "". */
	char unit[CGROUP_UNIT_MAX];
};

/*
 * Parses the text of /proc/PID/cgroup (NUL-terminated, lines separated by '\n') into *out.
 * Which line: the first line (unified "0::", then "name=systemd", then "pids", then the other v1
 * controllers) whose path holds a container id; when none does, the first non-root path among
 * "0::", "name=systemd" and "pids" (a v1 hybrid host whose unified line says "/"), else the
 * first line in that order.
 * Returns 0; -ENOENT when text has no cgroup line (an exited process), -EINVAL when a line is
 * not "ID:CONTROLLERS:/PATH", -ENAMETOOLONG when the chosen path does not fit out->path.
 */
int cgroup__parse(const char *text, struct cgroup_info *out);

/*
 * Reads /proc/PID/cgroup (pid 0: the calling process) and parses it with cgroup__parse().
 * Returns 0 or a negative errno: -ENOENT for a process that is gone (or exited: no lines),
 * -ENOMEM, or cgroup__parse()'s errors.
 */
int cgroup__read(pid_t pid, struct cgroup_info *out);

#endif /* BPFPROF_CGROUP_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cgroup.c: container id, runtime, pod UID and unit from /proc/PID/cgroup texts of every
 * layout in cgroup.h. "test_cgroup --read PID" prints cgroup__read()'s fields instead, one
 * "key=value" a line (tests/integration/run-labels.sh runs it on processes in real cgroups).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "agent/cgroup.h"
#include "util/util.h"

#define ID_A "8d4ac2a7bd1e7c4bbd0cf5e0a1f4b3e9d2c6a5b8e7f9012345678901abcdef01"
#define ID_B "f00dfeedcafe0123456789abcdef0123456789abcdef0123456789abcdef0123"
#define ID_A_UPPER "8D4AC2A7BD1E7C4BBD0CF5E0A1F4B3E9D2C6A5B8E7F9012345678901ABCDEF01"
#define ID_63 "8d4ac2a7bd1e7c4bbd0cf5e0a1f4b3e9d2c6a5b8e7f9012345678901abcdef0"
#define UID "0c2f5c2e-7d6b-4f0e-9b8a-1f2e3d4c5b6a"
#define UID_ "0c2f5c2e_7d6b_4f0e_9b8a_1f2e3d4c5b6a"

struct cgroup_case {
	const char *name;
	const char *text;	/* /proc/PID/cgroup */
	const char *path;	/* expected fields */
	const char *container_id;
	const char *runtime;	/* NULL: none */
	const char *pod_uid;
	const char *unit;
};

static void check_case(const struct cgroup_case *c)
{
	struct cgroup_info info;
	int err;

	memset(&info, 0xa5, sizeof(info));
	err = cgroup__parse(c->text, &info);
	if (err)
		fail_msg("%s: cgroup__parse() = %d, want 0", c->name, err);
	if (strcmp(info.path, c->path))
		fail_msg("%s: path '%s', want '%s'", c->name, info.path, c->path);
	if (strcmp(info.container_id, c->container_id))
		fail_msg("%s: container_id '%s', want '%s'", c->name, info.container_id,
			 c->container_id);
	if (!c->runtime != !info.runtime || (c->runtime && strcmp(info.runtime, c->runtime)))
		fail_msg("%s: runtime %s, want %s", c->name, info.runtime ?: "NULL",
			 c->runtime ?: "NULL");
	if (strcmp(info.pod_uid, c->pod_uid))
		fail_msg("%s: pod_uid '%s', want '%s'", c->name, info.pod_uid, c->pod_uid);
	if (strcmp(info.unit, c->unit))
		fail_msg("%s: unit '%s', want '%s'", c->name, info.unit, c->unit);
}

static void check_cases(const struct cgroup_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i]);
}

static void test_kubernetes(void **state)
{
	static const struct cgroup_case cases[] = {
		{ "kubelet cgroupfs, burstable",
		  "0::/kubepods/burstable/pod" UID "/" ID_A "\n",
		  "/kubepods/burstable/pod" UID "/" ID_A, ID_A, NULL, UID, "" },
		{ "kubelet cgroupfs, guaranteed (no QoS level)",
		  "0::/kubepods/pod" UID "/" ID_A "\n",
		  "/kubepods/pod" UID "/" ID_A, ID_A, NULL, UID, "" },
		{ "kubelet systemd, containerd, besteffort",
		  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
		  ".slice/cri-containerd-" ID_A ".scope\n",
		  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
		  ".slice/cri-containerd-" ID_A ".scope", ID_A, "containerd", UID, "" },
		{ "kubelet systemd, containerd, guaranteed",
		  "0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID_A ".scope\n",
		  "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID_A ".scope",
		  ID_A, "containerd", UID, "" },
		{ "kubelet systemd, CRI-O",
		  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/crio-" ID_B ".scope\n",
		  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/crio-" ID_B ".scope", ID_B, "cri-o", UID, "" },
		{ "kubelet cgroupfs, CRI-O",
		  "0::/kubepods/besteffort/pod" UID "/crio-" ID_B "\n",
		  "/kubepods/besteffort/pod" UID "/crio-" ID_B, ID_B, "cri-o", UID, "" },
		/* conmon is the runtime's monitor: in the pod, not in the container. */
		{ "CRI-O conmon",
		  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/crio-conmon-" ID_B ".scope\n",
		  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/crio-conmon-" ID_B ".scope", "", NULL, UID, "" },
		{ "kubelet systemd, dockershim",
		  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
		  ".slice/docker-" ID_A ".scope\n",
		  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
		  ".slice/docker-" ID_A ".scope", ID_A, "docker", UID, "" },
		/* The pod's slice without a container: the pause process moving, a pod cgroup. */
		{ "pod slice only",
		  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice\n",
		  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
		  "", NULL, UID, "" },
		/* Read from inside another cgroup namespace: the path climbs out first. */
		{ "cgroup namespace relative path",
		  "0::/../../kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID_A ".scope\n",
		  "/../../kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID_A ".scope",
		  ID_A, "containerd", UID, "" },
		{ "removed cgroup (zombie)",
		  "0::/kubepods/burstable/pod" UID "/" ID_A " (deleted)\n",
		  "/kubepods/burstable/pod" UID "/" ID_A, ID_A, NULL, UID, "" },
	};

	check_cases(cases, ARRAY_SIZE(cases));
}

static void test_docker_podman(void **state)
{
	static const struct cgroup_case cases[] = {
		{ "docker cgroupfs", "0::/docker/" ID_A "\n", "/docker/" ID_A, ID_A, "docker", "",
		  "" },
		{ "docker systemd", "0::/system.slice/docker-" ID_A ".scope\n",
		  "/system.slice/docker-" ID_A ".scope", ID_A, "docker", "", "" },
		/* dind on cgroup v2: the inner daemon nests under the outer container's scope. */
		{ "docker-in-docker, systemd outside",
		  "0::/system.slice/docker-" ID_A ".scope/docker/" ID_B "\n",
		  "/system.slice/docker-" ID_A ".scope/docker/" ID_B, ID_B, "docker", "", "" },
		{ "docker-in-docker, cgroupfs both", "0::/docker/" ID_A "/docker/" ID_B "\n",
		  "/docker/" ID_A "/docker/" ID_B, ID_B, "docker", "", "" },
		{ "docker-in-docker in a pod",
		  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID_A ".scope/docker/" ID_B "\n",
		  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID_A ".scope/docker/" ID_B, ID_B, "docker", UID, "" },
		/* dind's entrypoint moves its own processes to a child (no internal processes). */
		{ "docker container's init child", "0::/system.slice/docker-" ID_A ".scope/init\n",
		  "/system.slice/docker-" ID_A ".scope/init", ID_A, "docker", "", "" },
		{ "podman rootless",
		  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_A
		  ".scope\n",
		  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_A ".scope",
		  ID_A, "podman", "", "user@1000.service" },
		{ "podman conmon",
		  "0::/machine.slice/libpod-conmon-" ID_A ".scope\n",
		  "/machine.slice/libpod-conmon-" ID_A ".scope", "", NULL, "", "" },
		{ "podman cgroupfs", "0::/libpod_parent/libpod-" ID_A "\n",
		  "/libpod_parent/libpod-" ID_A, ID_A, "podman", "", "" },
		{ "bare id, unknown parent", "0::/ecs/task/" ID_A "\n", "/ecs/task/" ID_A, ID_A,
		  NULL, "", "" },
		{ "upper-case hex", "0::/docker/" ID_A_UPPER "\n", "/docker/" ID_A_UPPER, ID_A,
		  "docker", "", "" },
	};

	check_cases(cases, ARRAY_SIZE(cases));
}

static void test_no_container(void **state)
{
	static const struct cgroup_case cases[] = {
		{ "service", "0::/system.slice/nginx.service\n", "/system.slice/nginx.service", "",
		  NULL, "", "nginx.service" },
		{ "template service's child",
		  "0::/system.slice/system-getty.slice/getty@tty1.service/sub\n",
		  "/system.slice/system-getty.slice/getty@tty1.service/sub", "", NULL, "",
		  "getty@tty1.service" },
		{ "session", "0::/user.slice/user-1000.slice/session-3.scope\n",
		  "/user.slice/user-1000.slice/session-3.scope", "", NULL, "", "" },
		{ "user manager's service",
		  "0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n",
		  "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "", NULL,
		  "", "foo.service" },
		{ "root", "0::/\n", "/", "", NULL, "", "" },
		{ "no trailing newline", "0::/init.scope", "/init.scope", "", NULL, "", "" },
		/* Near misses: 63 hex digits, a "pod" name that is no UID, ".service" alone. */
		{ "63 hex digits", "0::/docker/" ID_63 "\n", "/docker/" ID_63, "", NULL, "", "" },
		{ "65 hex digits", "0::/x/cri-containerd-" ID_A "0.scope\n",
		  "/x/cri-containerd-" ID_A "0.scope", "", NULL, "", "" },
		{ "not a pod UID", "0::/kubepods/podcast-0c2f5c2e-7d6b-4f0e-9b8a-1f2e3d4c5b\n",
		  "/kubepods/podcast-0c2f5c2e-7d6b-4f0e-9b8a-1f2e3d4c5b", "", NULL, "", "" },
		{ "bare .service", "0::/system.slice/.service\n", "/system.slice/.service", "",
		  NULL, "", "" },
	};

	check_cases(cases, ARRAY_SIZE(cases));
}

static void test_v1_hybrid(void **state)
{
	static const struct cgroup_case cases[] = {
		/* Docker on a hybrid host: the unified hierarchy still says "/". */
		{ "docker, v1 with name=systemd",
		  "12:pids:/docker/" ID_A "\n"
		  "11:memory:/docker/" ID_A "\n"
		  "3:cpu,cpuacct:/docker/" ID_A "\n"
		  "1:name=systemd:/docker/" ID_A "\n"
		  "0::/\n",
		  "/docker/" ID_A, ID_A, "docker", "", "" },
		/* The unified line wins when it names a container. */
		{ "unified first",
		  "1:name=systemd:/docker/" ID_B "\n"
		  "0::/system.slice/docker-" ID_A ".scope\n",
		  "/system.slice/docker-" ID_A ".scope", ID_A, "docker", "", "" },
		{ "name=systemd over pids",
		  "5:pids:/docker/" ID_B "\n"
		  "1:name=systemd:/docker/" ID_A "\n",
		  "/docker/" ID_A, ID_A, "docker", "", "" },
		{ "kubelet cgroupfs, v1 only",
		  "10:cpuset:/kubepods/besteffort/pod" UID "/" ID_A "\n"
		  "6:pids:/kubepods/besteffort/pod" UID "/" ID_A "\n"
		  "1:name=systemd:/kubepods/besteffort/pod" UID "/" ID_A "\n",
		  "/kubepods/besteffort/pod" UID "/" ID_A, ID_A, NULL, UID, "" },
		/* Only a plain v1 controller names the container (no name=systemd, no pids). */
		{ "memory controller only",
		  "4:memory:/docker/" ID_A "\n"
		  "3:cpu,cpuacct:/\n",
		  "/docker/" ID_A, ID_A, "docker", "", "" },
		{ "service, hybrid",
		  "8:pids:/system.slice/cron.service\n"
		  "1:name=systemd:/system.slice/cron.service\n"
		  "0::/system.slice/cron.service\n",
		  "/system.slice/cron.service", "", NULL, "", "cron.service" },
		/* A unified line of "/" and a systemd line that says more: the latter. */
		{ "unified root, systemd service",
		  "1:name=systemd:/system.slice/sshd.service\n"
		  "0::/\n",
		  "/system.slice/sshd.service", "", NULL, "", "sshd.service" },
		/* No container, nothing better than "/" among the preferred lines: "0::/". */
		{ "memory path only",
		  "9:name=systemd:/\n"
		  "4:memory:/process_api/94bb93c93623e200327e117f982c71d8\n"
		  "0::/\n",
		  "/", "", NULL, "", "" },
		{ "cgroup name with a colon",
		  "1:name=systemd:/system.slice/a:b.service\n",
		  "/system.slice/a:b.service", "", NULL, "", "a:b.service" },
	};

	check_cases(cases, ARRAY_SIZE(cases));
}

static void test_errors(void **state)
{
	static const struct {
		const char *text;
		int err;
	} cases[] = {
		{ "", -ENOENT },
		{ "\n\n", -ENOENT },
		{ "garbage\n", -EINVAL },
		{ "0::relative/path\n", -EINVAL },
		{ "0:\n", -EINVAL },
		{ "x::/docker\n", -EINVAL },
		{ ":pids:/\n", -EINVAL },
		{ "0::/\nbad line\n", -EINVAL },
		{ "0::\n", -EINVAL },
	};
	struct cgroup_info info;
	char *text;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int err = cgroup__parse(cases[i].text, &info);

		if (err != cases[i].err)
			fail_msg("cgroup__parse(\"%s\") = %d, want %d", cases[i].text, err,
				 cases[i].err);
	}

	/* A path of CGROUP_PATH_MAX bytes leaves no room for the NUL. */
	text = malloc(CGROUP_PATH_MAX + 8);
	assert_non_null(text);
	strcpy(text, "0::/");
	memset(text + 4, 'a', CGROUP_PATH_MAX - 1);
	text[3 + CGROUP_PATH_MAX] = '\0';
	assert_int_equal(cgroup__parse(text, &info), -ENAMETOOLONG);
	text[3 + CGROUP_PATH_MAX - 1] = '\0';
	assert_int_equal(cgroup__parse(text, &info), 0);
	assert_int_equal(strlen(info.path), CGROUP_PATH_MAX - 1);
	free(text);
}

/* A pid no process has now: counted down from pid_max. */
static pid_t unused_pid(void)
{
	char path[64];
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int pid = 32768;

	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 32768;
		fclose(f);
	}
	for (pid--; pid > 1; pid--) {
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (access(path, F_OK))
			break;
	}
	return pid;
}

static void test_read_live(void **state)
{
	struct cgroup_info self, by_pid;
	char want[CGROUP_PATH_MAX + 64], line[CGROUP_PATH_MAX + 64];
	FILE *f;

	assert_int_equal(cgroup__read(0, &self), 0);
	assert_int_equal(cgroup__read(getpid(), &by_pid), 0);
	assert_string_equal(self.path, by_pid.path);
	assert_true(self.path[0] == '/');

	/* On a pure v2 host, the path is the "0::" line's. */
	want[0] = '\0';
	f = fopen("/proc/self/cgroup", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3) && !want[0]) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(want, sizeof(want), "%s", line + 3);
		}
	}
	fclose(f);
	if (want[0] && strcmp(want, "/"))
		assert_string_equal(self.path, want);

	assert_int_equal(cgroup__read(unused_pid(), &by_pid), -ENOENT);
}

/* "--read PID": the fields of cgroup__read(PID), for the integration test. */
static int print_cgroup(const char *arg)
{
	struct cgroup_info info;
	char *end;
	long pid = strtol(arg, &end, 10);
	int err;

	if (*end || pid < 0) {
		fprintf(stderr, "test_cgroup: bad pid '%s'\n", arg);
		return 64;
	}
	err = cgroup__read(pid, &info);
	if (err) {
		printf("error=%d\n", err);
		return 1;
	}
	printf("path=%s\ncontainer_id=%s\nruntime=%s\npod_uid=%s\nunit=%s\n", info.path,
	       info.container_id, info.runtime ?: "", info.pod_uid, info.unit);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_docker_podman),
		cmocka_unit_test(test_no_container),
		cmocka_unit_test(test_v1_hybrid),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_read_live),
	};

	if (argc == 3 && !strcmp(argv[1], "--read"))
		return print_cgroup(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_targets.c: targets__alive() removes the targets whose process exited without an exit
 * record (they were exiting when they became targets), and keeps the others: running ones,
 * and a zombie leader whose other threads still run. The loader's target_tgids map is a
 * stand-in array here (libbpfprof.a leaves loader.o out).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "sampling/targets.h"

/* target_tgids, in insertion order. */
static uint32_t map[16];
static int map_len;

int loader__add_target(struct loader *l, uint32_t tgid, uint32_t state)
{
	if (map_len == (int)(sizeof(map) / sizeof(map[0])))
		return -E2BIG;
	map[map_len++] = tgid;
	return 0;
}

int loader__remove_target(struct loader *l, uint32_t tgid)
{
	int i;

	for (i = 0; i < map_len; i++) {
		if (map[i] == tgid) {
			memmove(&map[i], &map[i + 1], (map_len - i - 1) * sizeof(map[0]));
			map_len--;
			return 0;
		}
	}
	return -ENOENT;
}

int loader__next_target(struct loader *l, const uint32_t *prev, uint32_t *next)
{
	int i = 0;

	if (prev) {
		while (i < map_len && map[i] != *prev)
			i++;
		i++;	/* a removed prev restarts the walk past the end: none here */
	}
	if (i >= map_len)
		return -ENOENT;
	*next = map[i];
	return 0;
}

static bool in_map(uint32_t tgid)
{
	int i;

	for (i = 0; i < map_len; i++)
		if (map[i] == tgid)
			return true;
	return false;
}

/* fork(), with the child killed when the test process ends (a failed assertion too). */
static pid_t fork_child(void)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
	}
	return pid;
}

/* A child that waits in pause() until killed. */
static pid_t start_sleeper(void)
{
	pid_t pid = fork_child();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* Waits until pid has exited, leaving it a zombie (not reaped). */
static void wait_zombie(pid_t pid)
{
	siginfo_t si;

	assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
}

/* The state letter of /proc/PID/stat (field 3). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

static int reset(void **state)
{
	map_len = 0;
	return 0;
}

/* A zombie and a process gone altogether are removed; a running target stays. */
static void test_exited_removed(void **state)
{
	pid_t zombie, gone, running;
	struct targets *t;

	zombie = fork_child();
	if (zombie == 0)
		_exit(0);
	wait_zombie(zombie);
	gone = fork_child();
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	running = start_sleeper();

	/* As targets__add_tree() leaves an exiting process: in the map, its exit hook past. */
	loader__add_target(NULL, zombie, 0);
	loader__add_target(NULL, gone, 0);
	loader__add_target(NULL, running, 0);
	t = targets__new(NULL);
	assert_non_null(t);
	assert_true(targets__alive(t));
	assert_false(in_map(zombie));
	assert_false(in_map(gone));
	assert_true(in_map(running));
	targets__free(t);

	/* The last one exits the same way: nothing is left. */
	kill(running, SIGKILL);
	wait_zombie(running);
	t = targets__new(NULL);
	assert_false(targets__alive(t));
	assert_int_equal(map_len, 0);
	targets__free(t);
	waitpid(zombie, NULL, 0);
	waitpid(running, NULL, 0);
}

static void *thread_pause(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/* A leader that called pthread_exit() is a zombie while its other threads run: alive. */
static void test_zombie_leader_alive(void **state)
{
	struct targets *t;
	pthread_t th;
	pid_t pid;
	int i;

	pid = fork_child();
	if (pid == 0) {
		if (pthread_create(&th, NULL, thread_pause, NULL))
			_exit(1);
		pthread_exit(NULL);
	}
	for (i = 0; i < 200 && proc_state(pid) != 'Z'; i++)
		usleep(10000);
	assert_int_equal(proc_state(pid), 'Z');
	loader__add_target(NULL, pid, 0);
	t = targets__new(NULL);
	assert_true(targets__alive(t));
	assert_true(in_map(pid));
	targets__free(t);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* targets__add_tree() of a process that exited already makes no target. */
static void test_add_exited(void **state)
{
	struct targets *t = targets__new(NULL);
	pid_t pid = fork_child();

	if (pid == 0)
		_exit(0);
	wait_zombie(pid);
	assert_int_equal(targets__add_tree(t, pid, 0), 0);
	assert_int_equal(map_len, 0);
	targets__free(t);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_exited_removed, reset),
		cmocka_unit_test_setup(test_zombie_leader_alive, reset),
		cmocka_unit_test_setup(test_add_exited, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

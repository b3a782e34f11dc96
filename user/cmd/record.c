// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record.c: bpfprof [record] -- CMD, -p PID, -a: start the targets, sample, write. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd/modes.h"
#include "pipeline/session.h"
#include "runtime/runtime.h"
#include "pipeline/sample.h"
#include "sampling/loader.h"
#include "sampling/targets.h"
#include "util/file.h"
#include "util/log.h"
#include "util/util.h"

/* /proc/PID/status: its Tgid line comes fourth, after Name (its comm, escaped: at most 64
 * bytes), Umask and State. */
#define STATUS_HEAD_SZ 512

/*
 * The process (thread group) that thread tid belongs to: its Tgid in /proc/TID/status (which
 * exists for any thread, listed or not), from a bounded read of the file's start. 0, or a
 * negative errno (-ENOENT: gone; -EINVAL: no Tgid line).
 */
static int thread_tgid(uint32_t tid, uint32_t *tgid)
{
	char path[48], buf[STATUS_HEAD_SZ], *p;
	unsigned long v;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	fd = file__open_regular(path, O_NOFOLLOW, NULL);
	if (fd < 0)
		return fd;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		err = errno == ESRCH ? -ENOENT : -errno;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:\t");
	if (!p)
		return -EINVAL;
	errno = 0;
	v = strtoul(p + strlen("\nTgid:\t"), &p, 10);
	if (errno || *p != '\n' || v == 0 || v > UINT32_MAX)
		return -EINVAL;
	*tgid = v;
	return 0;
}

/*
 * -p TID of a thread that is not its process's leader (as top -H and ps -L list them): its
 * whole process, as perf record -p does, with one line saying so. A process named twice that
 * way is one. Exits no process: one gone is left for check_pids().
 */
static void pids_to_processes(struct bpfprof_opts *o)
{
	uint32_t tgid;
	size_t i, j;

	for (i = 0; i < o->pids_cnt; i++) {
		if (thread_tgid(o->pids[i], &tgid) || tgid == o->pids[i])
			continue;
		pr_info("profile PID %u: a thread of process %u; profiling process %u, every thread",
			o->pids[i], tgid, tgid);
		for (j = 0; j < o->pids_cnt && o->pids[j] != tgid; j++)
			;
		if (j < o->pids_cnt) { /* named already */
			o->pids[i--] = o->pids[--o->pids_cnt];
			continue;
		}
		o->pids[i] = tgid;
	}
}

static int check_pids(struct bpfprof_opts *o)
{
	size_t i;

	pids_to_processes(o);
	for (i = 0; i < o->pids_cnt; i++) {
		if (o->pids[i] == (uint32_t)getpid()) {
			pr_warn("profile PID %u: bpfprof does not profile itself", o->pids[i]);
			return -EINVAL;
		}
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			pr_warn("profile PID %u: no such process", o->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

/* The child waits on go_fd until it is a target, so its first instruction after exec is
 * sampled and bpfprof's own code in it never is (the target arms at exec). If CMD cannot run,
 * execvp()'s errno goes to status_fd (close-on-exec: an exec closes it empty). */
static void child_exec(struct session *s, int go_fd, int status_fd)
{
	int err;
	char go;

	if (read(go_fd, &go, 1) != 1)
		_exit(127);
	close(go_fd);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (s->opts->realtime_prio) {
		struct sched_param sp = { .sched_priority = 0 };

		sched_setscheduler(0, SCHED_OTHER, &sp);
	}
	execvp(s->opts->cmd[0], s->opts->cmd);
	err = errno;
	if (write(status_fd, &err, sizeof(err)) != sizeof(err))
		fprintf(stderr, "bpfprof: run %s: %s\n", s->opts->cmd[0], strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* The file execvp(3) runs for file: itself when it has a '/', else the first executable of
 * that name along $PATH. NULL when there is none; free it. */
static char *cmd_path(const char *file)
{
	const char *path = getenv("PATH") ?: "/usr/local/bin:/bin:/usr/bin", *p, *end;
	char *full;

	if (strchr(file, '/'))
		return strdup(file);
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (asprintf(&full, "%.*s/%s", (int)(end - p), end == p ? "." : p, file) < 0)
			return NULL;
		if (!access(full, X_OK))
			return full;
		free(full);
	}
	return NULL;
}

/* A command is armed for its runtime's BPF walker before its exec: a Go program's start-up's
 * collections come before its first sample is handled. */
static void arm_cmd(struct session *s)
{
	char *path = cmd_path(s->opts->cmd[0]);
	int err;

	if (path && (err = runtimes__attach(s->runtimes, s->child, path, true)))
		pr_debug("arm %s for its runtime: %s", path, strerror(-err));
	free(path);
}

/* Whether the child ran CMD: the status pipe closes empty at its exec, or holds execvp()'s
 * errno (kept in s->cmd_errno). Waits for the exec. */
static void read_exec_status(struct session *s, int status_fd)
{
	ssize_t n;
	int err;

	do
		n = read(status_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(err))
		s->cmd_errno = err ? err : EIO;
}

static int start_cmd(struct session *s)
{
	int go[2], status[2] = { -1, -1 }, err;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(status, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	fflush(NULL);
	s->child = fork();
	if (s->child < 0) {
		err = -errno;
		s->child = 0;
		goto out;
	}
	if (s->child == 0) {
		close(go[1]);
		close(status[0]);
		child_exec(s, go[0], status[1]);
	}
	close(status[1]);
	status[1] = -1;
	err = loader__add_target(s->loader, s->child, TARGET_PENDING_EXEC | TARGET_F_FOLLOW_FORK);
	if (err)
		goto out; /* the child reads EOF and exits 127 */
	arm_cmd(s);
	if (write(go[1], "g", 1) != 1) {
		err = -errno;
		goto out;
	}
	close(go[1]);
	go[1] = -1;
	read_exec_status(s, status[0]);
out:
	close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (status[0] >= 0)
		close(status[0]);
	if (status[1] >= 0)
		close(status[1]);
	return err;
}

/* -p: each process with its descendants, running and to come (targets__add_tree()). */
static int add_pids(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	size_t i;
	int n;

	for (i = 0; i < o->pids_cnt; i++) {
		n = targets__add_tree(s->targets, o->pids[i], TARGET_ACTIVE | TARGET_F_FOLLOW_FORK);
		if (n < 0)
			return n;
		if (n > 0) {
			char exe[64];

			/* A runtime's program (Go's): armed for its BPF walker from its first
			 * sample. */
			snprintf(exe, sizeof(exe), "/proc/%u/exe", o->pids[i]);
			runtimes__attach(s->runtimes, o->pids[i], exe, false);
		}
		if (n == 0 && !loader__is_target(s->loader, o->pids[i]))
			pr_warn("PID %u exited before profiling started", o->pids[i]);
		else if (n > 1)
			pr_info("PID %u: %d descendant process%s running already profiled too",
				o->pids[i], n - 1, n > 2 ? "es" : "");
	}
	return 0;
}

static int child_exit_code(const struct session *s)
{
	if (!s->child_done)
		return s->stop_signal ? 128 + s->stop_signal : BPFPROF_EXIT_ERROR;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return BPFPROF_EXIT_ERROR;
}

/* After set-up, before CMD: SCHED_FIFO for bpfprof (the child gets the normal policy back). */
static int set_realtime(const struct bpfprof_opts *o)
{
	struct sched_param sp = { .sched_priority = o->realtime_prio };

	int err;

	if (!o->realtime_prio || !sched_setscheduler(0, SCHED_FIFO, &sp))
		return 0;
	err = -errno;
	pr_warn("set SCHED_FIFO priority %d: %s; needs root or CAP_SYS_NICE", o->realtime_prio,
		strerror(-err));
	return err;
}

/* The targets from now on: CMD started, the machine's busy time (-a), or -p's processes. 0 or
 * BPFPROF_EXIT_ERROR (reported). */
static int start_targets(struct session *s)
{
	const struct bpfprof_opts *o = s->opts;
	char how[96];
	int err;

	if (o->off_cpu && o->on_cpu)
		snprintf(how, sizeof(how),
			 "at %" PRIu64 " Hz and off CPU (blocked >= %" PRIu64 " us)", o->freq_hz,
			 o->off_cpu_min_ns / 1000);
	else if (o->off_cpu)
		snprintf(how, sizeof(how), "off CPU (blocked >= %" PRIu64 " us)",
			 o->off_cpu_min_ns / 1000);
	else
		snprintf(how, sizeof(how), "at %" PRIu64 " Hz", o->freq_hz);
	if (o->cmd) {
		err = start_cmd(s);
		if (err) {
			pr_warn("start %s: %s", o->cmd[0], strerror(-err));
			return BPFPROF_EXIT_ERROR;
		}
		/* Nothing to profile: the outputs (temp files until written) stay as they were. */
		if (s->cmd_errno) {
			pr_warn("run %s: %s; nothing profiled, no output written", o->cmd[0],
				strerror(s->cmd_errno));
			session__reap_child(s, 0);
			return s->cmd_errno == ENOENT ? BPFPROF_EXIT_NOT_FOUND :
							BPFPROF_EXIT_CANNOT_RUN;
		}
		pr_info("profiling %s (PID %d) %s", o->cmd[0], s->child, how);
	} else if (o->all) {
		s->busy_start_ns = session__machine_busy_ns();
		pr_info("profiling every process %s%s", how,
			o->duration_ns ? "" : "; Ctrl-C to stop");
	} else {
		err = add_pids(s);
		if (err) {
			pr_warn("add target processes: %s", strerror(-err));
			return BPFPROF_EXIT_ERROR;
		}
		pr_info("profiling %zu process%s %s%s", o->pids_cnt, o->pids_cnt > 1 ? "es" : "",
			how, o->duration_ns ? "" : "; Ctrl-C to stop");
	}
	return 0;
}

int record__run(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	int err;

	if (o->pids_cnt && check_pids(o))
		return BPFPROF_EXIT_ERROR;
	err = session__setup(s);
	if (!err)
		err = session__open_outputs(s);
	if (err)
		return err;
	if (set_realtime(o))
		return BPFPROF_EXIT_ERROR;
	s->start_ns = now_ns();
	s->start_realtime_ns = realtime_ns();
	err = start_targets(s);
	if (err)
		return err;
	session__run_loop(s, NULL, NULL);
	s->end_ns = now_ns();
	if (s->targets)
		targets__snapshot(s->targets); /* for the expected sample count */
	session__final_drain(s);
	session__reap_child(s, WNOHANG);
	err = session__close_capture(s);
	err = session__write_outputs(s) || err ? BPFPROF_EXIT_ERROR : 0;
	session__print_summary(s);
	if (o->cmd)
		return err ? err : child_exit_code(s);
	return err;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* exec.c: bpfprof --exec -- CMD: CMD keeps bpfprof's PID, a detached process profiles it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "agent/agent_loop.h"
#include "bpf/record.h"
#include "cmd/modes.h"
#include "cmd/opts.h"
#include "pipeline/session.h"
#include "sampling/loader.h"
#include "sampling/targets.h"
#include "util/log.h"
#include "util/util.h"

/* How long CMD waits for the detached profiler of --exec to be ready before it runs anyway. */
#define EXEC_READY_TIMEOUT_MS 15000

/*
 * The profiler's set-up: the pipeline, the outputs (or the agent's exporters: *loop), and
 * target (the original process) armed for its exec of CMD, with its descendants. 0, a negative
 * errno, or BPFPROF_EXIT_ERROR (reported).
 */
static int exec_setup(struct session *s, pid_t target, struct agent_loop *loop)
{
	struct bpfprof_opts *o = s->opts;
	int err;

	err = session__setup(s);
	if (!err && !loop)
		err = session__open_outputs(s);
	if (err)
		return err;
	o->pids = calloc(1, sizeof(*o->pids));
	if (!o->pids)
		return -ENOMEM;
	o->pids[0] = target;
	o->pids_cnt = 1;
	/* Sampling starts at its exec of CMD: bpfprof's own code is never profiled. */
	return loader__add_target(s->loader, target, TARGET_PENDING_EXEC | TARGET_F_FOLLOW_FORK);
}

/* Whether the original process failed to run CMD: it wrote execvp()'s errno to status_fd
 * (O_NONBLOCK), whose write end its exec closes otherwise. Read once the target exited. */
static bool exec_failed(int status_fd)
{
	int err;

	return read(status_fd, &err, sizeof(err)) == sizeof(err);
}

/*
 * The detached profiler of --exec (a grandchild, so not CMD's parent): loads BPF, arms target
 * (the original process) for its exec of CMD, says so on ready_fd, then profiles it and its
 * descendants until it exits: -o files at the end (none when CMD never ran: status_fd), or
 * profiles per interval to the exporters. Returns the exit status of the profiler.
 */
static int exec_profiler(struct session *s, pid_t target, int ready_fd, int status_fd, int argc,
			 char **argv)
{
	struct bpfprof_opts *o = s->opts;
	struct agent_loop *loop = NULL;
	int err, fd;

	setsid();
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	if (o->ag.pyroscope_url || o->ag.output_dir) {
		loop = agent_loop__new(s, argc, argv, &opts__parser);
		if (!loop)
			return BPFPROF_EXIT_ERROR;
	}
	err = exec_setup(s, target, loop);
	if (err) {
		if (err < 0)
			pr_warn("--exec: set up profiling: %s", strerror(-err));
		close(ready_fd); /* CMD runs unprofiled (or not at all with --strict) */
		agent_loop__free(loop, false);
		return BPFPROF_EXIT_ERROR;
	}
	if (write(ready_fd, "r", 1) != 1) {
		close(ready_fd);
		agent_loop__free(loop, false);
		return BPFPROF_EXIT_ERROR;
	}
	close(ready_fd);
	s->start_ns = now_ns();
	s->start_realtime_ns = realtime_ns();
	if (loop)
		agent_loop__start(loop);
	err = session__run_loop(s, loop ? agent_loop__tick : NULL, loop);
	s->end_ns = now_ns();
	if (s->targets)
		targets__snapshot(s->targets);
	session__final_drain(s);
	if (session__close_capture(s))
		err = BPFPROF_EXIT_ERROR;
	/* CMD never ran: the outputs (temp files until written) stay as they were. */
	if (!loop && exec_failed(status_fd)) {
		pr_info("--exec: %s did not run; nothing profiled, no output written",
			s->opts->cmd[0]);
		err = BPFPROF_EXIT_ERROR;
	} else if (!loop || !agent_loop__flush(loop)) {
		err = session__write_outputs(s) ? BPFPROF_EXIT_ERROR : err;
		session__print_summary(s);
	}
	agent_loop__free(loop, true);
	return err ? BPFPROF_EXIT_ERROR : BPFPROF_EXIT_OK;
}

int exec__run(struct session *s, int argc, char **argv)
{
	struct bpfprof_opts *o = s->opts;
	struct pollfd pfd;
	pid_t target = getpid(), mid;
	int ready[2], exec_status[2], status, err;
	char r = 0;

	if (pipe2(ready, O_CLOEXEC)) {
		pr_warn("--exec: pipe: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	/* execvp()'s errno if CMD cannot run, for the profiler: no profile to write then. */
	if (pipe2(exec_status, O_CLOEXEC | O_NONBLOCK)) {
		pr_warn("--exec: pipe: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return BPFPROF_EXIT_ERROR;
	}
	fflush(NULL);
	mid = fork();
	if (mid == 0) {
		close(ready[0]);
		close(exec_status[1]);
		/* Fork again and leave: the profiler is nobody's child that CMD would see. */
		mid = fork();
		if (mid)
			_exit(mid < 0 ? 1 : 0);
		status = exec_profiler(s, target, ready[1], exec_status[0], argc, argv);
		session__teardown(s); /* temp files of outputs never written are removed */
		_exit(status);
	}
	close(ready[1]);
	close(exec_status[0]);
	if (mid > 0)
		waitpid(mid, &status, 0);
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (mid > 0 && poll(&pfd, 1, EXEC_READY_TIMEOUT_MS) == 1 && read(ready[0], &r, 1) != 1)
		r = 0;
	close(ready[0]);
	if (r != 'r') {
		if (o->strict) {
			pr_warn("--exec --strict: profiling could not start; not running %s",
				o->cmd[0]);
			return BPFPROF_EXIT_ERROR;
		}
		pr_warn("--exec: profiling could not start; running %s unprofiled", o->cmd[0]);
	}
	/* CMD inherits nothing of bpfprof's: signal mask and dispositions back. */
	close(s->sigfd);
	s->sigfd = -1;
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	execvp(o->cmd[0], o->cmd);
	err = errno;
	if (write(exec_status[1], &err, sizeof(err)) < 0) /* then it writes an empty profile */
		pr_debug("--exec: tell the profiler: %s", strerror(errno));
	fprintf(stderr, "bpfprof: run %s: %s\n", o->cmd[0], strerror(err));
	return err == ENOENT ? BPFPROF_EXIT_NOT_FOUND : BPFPROF_EXIT_CANNOT_RUN;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* forkexec.c: spins in its chain, forks a child that execs another program, and spins on. */
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "targets.h"

static const char usage[] =
	"usage: forkexec [-c CHILD_SECONDS] SECONDS PROGRAM [ARGS...]\n"
	"       forkexec --print-chain\n"
	"Spins SECONDS in fe_leaf below main -> spin -> fe_f01..fe_f10, then forks. The child\n"
	"spins CHILD_SECONDS (default 0.3) more in the same chain, then execs PROGRAM ARGS; the\n"
	"parent spins in the chain until the child exits. Exits with the child's status (128+N\n"
	"if signal N killed it).\n"
	"--print-chain prints the frames from main to fe_leaf, ';'-separated.\n";

/* Set by SIGALRM (a phase's time is over) or SIGCHLD (the child exited); the leaf polls it. */
static volatile sig_atomic_t stop;

#define FE_STEPS(X)			\
	X(fe_f01, fe_f02)		\
	X(fe_f02, fe_f03)		\
	X(fe_f03, fe_f04)		\
	X(fe_f04, fe_f05)		\
	X(fe_f05, fe_f06)		\
	X(fe_f06, fe_f07)		\
	X(fe_f07, fe_f08)		\
	X(fe_f08, fe_f09)		\
	X(fe_f09, fe_f10)		\
	X(fe_f10, fe_leaf)

CHAIN_KEEP long fe_leaf(const struct chain_ctx *ctx, long depth);
FE_STEPS(CHAIN_DECLARE)
FE_STEPS(CHAIN_DEFINE)

/* The hot leaf: spins until stop, calling nothing. */
CHAIN_KEEP long fe_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	while (!stop)
		n++;
	return n;
}

static void on_signal(int sig)
{
	stop = 1;
}

/*
 * Runs the chain until stop; with seconds > 0, SIGALRM sets stop after that wall time. A frame
 * of the chain (never inlined): main calls it in both processes.
 */
CHAIN_KEEP static long spin(double seconds)
{
	struct itimerval it = {
		.it_value.tv_sec = (time_t)seconds,
		.it_value.tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6),
	};
	struct chain_ctx ctx = { 0 };

	if (seconds > 0) {
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	return fe_f01(&ctx, 1);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	double seconds, child_seconds = 0.3;
	sigset_t chld, old;
	int opt, status;
	pid_t child;
	long r;

	/* '+': the options after PROGRAM are PROGRAM's. */
	while ((opt = getopt_long(argc, argv, "+c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			child_seconds = parse_seconds(optarg);
			break;
		case 'P':
			printf("main;spin;%sfe_leaf\n", FE_STEPS(CHAIN_NAME));
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind < 2) {
		fputs(usage, stderr);
		return 2;
	}
	seconds = parse_seconds(argv[optind]);
	sigaction(SIGALRM, &sa, NULL);

	r = spin(seconds);

	/* SIGCHLD blocked until the parent is ready for it: the child may exit at once. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	sigaction(SIGCHLD, &sa, NULL);
	stop = 0;
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		signal(SIGCHLD, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		r += spin(child_seconds);
		execvp(argv[optind + 1], &argv[optind + 1]);
		fprintf(stderr, "forkexec: %s: %s\n", argv[optind + 1], strerror(errno));
		_exit(r ? 127 : 126);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	r += spin(0);
	while (waitpid(child, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		perror("waitpid");
		return 1;
	}
	if (!r)
		return 99;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

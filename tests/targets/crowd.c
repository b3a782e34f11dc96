// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* crowd.c: starts many processes of one program at once, all alive together, and waits for them. */
#include <getopt.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "targets.h"

static const char usage[] =
	"usage: crowd [-n COUNT] [-t RESULT_FILE] PROGRAM [ARGS...]\n"
	"Forks COUNT children (default 200); each waits until all are forked, then they all exec\n"
	"PROGRAM ARGS at once. Waits for them; RESULT_FILE gets \"children N\", \"failed N\" (not\n"
	"exited 0), \"first_exit_ms N\" and \"last_exit_ms N\": when the first and the last child\n"
	"exited, from their release. Exits 0 when every child exited 0.\n";

/*
 * Blocks until the parent closes the write end of the pipe, once all children are forked (0);
 * a byte read instead means that a fork failed and the child must not run PROGRAM (-1).
 */
static int wait_release(int fd)
{
	ssize_t n;
	char c;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	close(fd);
	return n ? -1 : 0;
}

/* A fork failed: one byte for each of the n children forked so far (they exit without exec). */
static void abort_children(int fd, long n)
{
	static const char bytes[256];
	ssize_t w;

	while (n > 0) {
		w = write(fd, bytes, n < (long)sizeof(bytes) ? (size_t)n : sizeof(bytes));
		if (w < 0 && errno != EINTR)
			break;
		if (w > 0)
			n -= w;
	}
	close(fd);
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *result_file = NULL;
	long count = 200, i, failed = 0, exited = 0;
	long long release_ns, first_ns = -1, last_ns = -1, now;
	char text[256];
	int prog, exit_code = 2, status, gate[2];
	pid_t pid;

	prog = parse_driver_args(argc, argv, usage, &count, &result_file, &exit_code);
	if (prog < 0)
		return exit_code;
	if (pipe(gate)) {
		perror("pipe");
		return 1;
	}

	for (i = 0; i < count; i++) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			abort_children(gate[1], i);
			return 1;
		}
		if (!pid) {
			close(gate[1]);
			if (wait_release(gate[0]))
				_exit(1);
			execvp(argv[prog], &argv[prog]);
			fprintf(stderr, "crowd: %s: %s\n", argv[prog], strerror(errno));
			_exit(127);
		}
	}
	close(gate[0]);
	/* Every child is forked: let them all go. */
	release_ns = clock_ns(CLOCK_MONOTONIC);
	close(gate[1]);

	while (exited < count) {
		if (wait(&status) < 0) {
			if (errno == EINTR)
				continue;
			perror("wait");
			return 1;
		}
		now = clock_ns(CLOCK_MONOTONIC) - release_ns;
		if (first_ns < 0)
			first_ns = now;
		last_ns = now;
		exited++;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	if (result_file) {
		snprintf(text, sizeof(text),
			 "children %ld\nfailed %ld\nfirst_exit_ms %lld\nlast_exit_ms %lld\n", count,
			 failed, first_ns / 1000000, last_ns / 1000000);
		write_result(result_file, text);
	}
	return failed ? 1 : 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shortlived.c: runs a program many times, one process after another, and sums their CPU time. */
#include <getopt.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "targets.h"

static const char usage[] =
	"usage: shortlived [-n COUNT] [-t RESULT_FILE] PROGRAM [ARGS...]\n"
	"Runs PROGRAM ARGS COUNT times (default 200), one after another: fork, exec, wait4.\n"
	"RESULT_FILE gets \"runs N\", \"failed N\" (not exited 0), \"cpu_ns N\": the user and\n"
	"system time of all of them, from wait4's rusage, and \"self_cpu_ns N\": shortlived's own\n"
	"(the forks). Exits 0 when every run exited 0.\n";

int main(int argc, char **argv)
{
	const char *result_file = NULL;
	long count = 200, i, failed = 0;
	long long cpu_ns = 0;
	struct rusage ru;
	char text[256];
	int prog, exit_code = 2, status;
	pid_t pid;

	prog = parse_driver_args(argc, argv, usage, &count, &result_file, &exit_code);
	if (prog < 0)
		return exit_code;

	for (i = 0; i < count; i++) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			execvp(argv[prog], &argv[prog]);
			fprintf(stderr, "shortlived: %s: %s\n", argv[prog], strerror(errno));
			_exit(127);
		}
		while (wait4(pid, &status, 0, &ru) < 0) {
			if (errno != EINTR) {
				perror("wait4");
				return 1;
			}
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
		cpu_ns += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	}
	if (result_file) {
		getrusage(RUSAGE_SELF, &ru);
		snprintf(text, sizeof(text), "runs %ld\nfailed %ld\ncpu_ns %lld\nself_cpu_ns %lld\n",
			 count, failed, cpu_ns,
			 (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
				 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
		write_result(result_file, text);
	}
	return failed ? 1 : 0;
}

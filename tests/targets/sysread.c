// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysread.c: spends its time in the kernel, read()ing /dev/zero at the bottom of a 14-frame chain. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "targets.h"

static const char usage[] =
	"usage: sysread SECONDS\n"
	"       sysread --print-chain\n"
	"For SECONDS, read()s /dev/zero in 256 KiB blocks from sys_leaf, below\n"
	"main -> sys_f01..sys_f12 -> sys_leaf: most of its CPU time is kernel time.\n"
	"--print-chain prints the frames from main to sys_leaf, ';'-separated.\n";

#define READ_SIZE (256 * 1024)

static volatile sig_atomic_t stop;
static char buf[READ_SIZE];

#define SYS_STEPS(X)			\
	X(sys_f01, sys_f02)		\
	X(sys_f02, sys_f03)		\
	X(sys_f03, sys_f04)		\
	X(sys_f04, sys_f05)		\
	X(sys_f05, sys_f06)		\
	X(sys_f06, sys_f07)		\
	X(sys_f07, sys_f08)		\
	X(sys_f08, sys_f09)		\
	X(sys_f09, sys_f10)		\
	X(sys_f10, sys_f11)		\
	X(sys_f11, sys_f12)		\
	X(sys_f12, sys_leaf)

CHAIN_KEEP long sys_leaf(const struct chain_ctx *ctx, long depth);
SYS_STEPS(CHAIN_DECLARE)
SYS_STEPS(CHAIN_DEFINE)

/* The leaf: ctx->spin is the fd of /dev/zero; each read() is ~all kernel time (clearing buf). */
CHAIN_KEEP long sys_leaf(const struct chain_ctx *ctx, long depth)
{
	long total = depth;
	ssize_t n;

	while (!stop) {
		n = read((int)ctx->spin, buf, sizeof(buf));
		if (n < 0 && errno != EINTR)
			return -1;
		total += n;
	}
	return total;
}

static void on_alarm(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { 0 };
	struct chain_ctx ctx = { 0 };
	double seconds;
	int fd;

	if (argc == 2 && !strcmp(argv[1], "--print-chain")) {
		printf("main;%ssys_leaf\n", SYS_STEPS(CHAIN_NAME));
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fputs(usage, argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	seconds = parse_seconds(argv[1]);

	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	ctx.spin = fd;
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);

	if (sys_f01(&ctx, 1) < 0) {
		perror("read /dev/zero");
		return 1;
	}
	return 0;
}

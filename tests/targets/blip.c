// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* blip.c: a short-lived process: spins a few ms of CPU at the bottom of a 13-frame chain, exits. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include "targets.h"

static const char usage[] =
	"usage: blip MILLISECONDS\n"
	"       blip --print-chain\n"
	"Spins MILLISECONDS of its own CPU time (ITIMER_PROF) in blip_leaf below main ->\n"
	"blip_f01..blip_f12, then exits 0.\n"
	"--print-chain prints the frames from main to blip_leaf, ';'-separated.\n";

/* Set by SIGPROF when the CPU time is spent; the leaf polls it. */
static volatile sig_atomic_t stop;

#define BLIP_STEPS(X)			\
	X(blip_f01, blip_f02)		\
	X(blip_f02, blip_f03)		\
	X(blip_f03, blip_f04)		\
	X(blip_f04, blip_f05)		\
	X(blip_f05, blip_f06)		\
	X(blip_f06, blip_f07)		\
	X(blip_f07, blip_f08)		\
	X(blip_f08, blip_f09)		\
	X(blip_f09, blip_f10)		\
	X(blip_f10, blip_f11)		\
	X(blip_f11, blip_f12)		\
	X(blip_f12, blip_leaf)

CHAIN_KEEP long blip_leaf(const struct chain_ctx *ctx, long depth);
BLIP_STEPS(CHAIN_DECLARE)
BLIP_STEPS(CHAIN_DEFINE)

/* The hot leaf: spins until stop, calling nothing. */
CHAIN_KEEP long blip_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	while (!stop)
		n++;
	return n;
}

static void on_prof(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_prof };
	struct chain_ctx ctx = { 0 };
	struct itimerval it = { 0 };
	double ms;

	if (argc == 2 && !strcmp(argv[1], "--print-chain")) {
		printf("main;%sblip_leaf\n", BLIP_STEPS(CHAIN_NAME));
		return 0;
	}
	if (argc != 2 || !strcmp(argv[1], "--help")) {
		fputs(usage, argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	ms = parse_seconds(argv[1]);
	it.it_value.tv_sec = (time_t)(ms / 1000);
	it.it_value.tv_usec = (suseconds_t)((ms - it.it_value.tv_sec * 1000.0) * 1000);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	/* The leaf counts up from depth > 0: never 0. */
	return blip_f01(&ctx, 1) ? 0 : 99;
}

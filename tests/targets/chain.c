// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* chain.c: spins in a hot leaf at the bottom of a 28-frame chain that crosses libchain.so. */
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include "targets.h"

static const char usage[] =
	"usage: chain [-t CPUTIME_FILE] [-x STATUS] [-s SIGNAL] SECONDS\n"
	"       chain --print-chain\n"
	"Spins SECONDS of CPU in chain_leaf below main -> chain_f01..chain_f10 -> libchain.so\n"
	"lib_f01..lib_f08 -> cb_f01..cb_f08 -> chain_leaf, then writes its process CPU time in ns\n"
	"to CPUTIME_FILE, and exits with STATUS (default 0) or dies of SIGNAL (a number).\n"
	"--print-chain prints the frames from main to the leaf, ';'-separated.\n";

/* Set by SIGALRM: the leaf polls it, so the leaf itself calls nothing. */
static volatile sig_atomic_t stop;

/* main's part of the chain: ends in libchain.so, which calls back into CB_STEPS. */
#define MAIN_STEPS(X)			\
	X(chain_f01, chain_f02)		\
	X(chain_f02, chain_f03)		\
	X(chain_f03, chain_f04)		\
	X(chain_f04, chain_f05)		\
	X(chain_f05, chain_f06)		\
	X(chain_f06, chain_f07)		\
	X(chain_f07, chain_f08)		\
	X(chain_f08, chain_f09)		\
	X(chain_f09, chain_f10)		\
	X(chain_f10, lib_f01)

#define CB_STEPS(X)			\
	X(cb_f01, cb_f02)		\
	X(cb_f02, cb_f03)		\
	X(cb_f03, cb_f04)		\
	X(cb_f04, cb_f05)		\
	X(cb_f05, cb_f06)		\
	X(cb_f06, cb_f07)		\
	X(cb_f07, cb_f08)		\
	X(cb_f08, chain_leaf)

CHAIN_KEEP long chain_leaf(const struct chain_ctx *ctx, long depth);
MAIN_STEPS(CHAIN_DECLARE)
CB_STEPS(CHAIN_DECLARE)
MAIN_STEPS(CHAIN_DEFINE)
CB_STEPS(CHAIN_DEFINE)

/* The hot leaf: nearly every sample of this program lands in this loop. */
CHAIN_KEEP long chain_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	while (!stop)
		n++;
	return n;
}

static void on_alarm(int sig)
{
	stop = 1;
}

static void arm_timer(double seconds)
{
	struct itimerval it = {
		.it_value.tv_sec = (time_t)seconds,
		.it_value.tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6),
	};
	struct sigaction sa = { .sa_handler = on_alarm };

	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void print_chain(void)
{
	printf("main;%s%s%schain_leaf\n", MAIN_STEPS(CHAIN_NAME), libchain_f_frames(),
	       CB_STEPS(CHAIN_NAME));
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct chain_ctx ctx = { .callback = cb_f01 };
	const char *cputime_file = NULL;
	int status = 0, sig = 0, opt;
	char text[64];
	long r;

	while ((opt = getopt_long(argc, argv, "t:x:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			cputime_file = optarg;
			break;
		case 'x':
			status = atoi(optarg);
			break;
		case 's':
			sig = atoi(optarg);
			break;
		case 'P':
			print_chain();
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}

	arm_timer(parse_seconds(argv[optind]));
	r = chain_f01(&ctx, 1);

	if (cputime_file) {
		snprintf(text, sizeof(text), "%lld\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID));
		write_result(cputime_file, text);
	}
	if (sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	/* r is never 0 (the leaf counts up from depth > 0): only keeps the result used. */
	return r ? status : 99;
}

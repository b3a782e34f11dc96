// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* threads.c: threads "alpha" (always busy) and "beta" (busy half the time), each in its own chain. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include "targets.h"

static const char usage[] =
	"usage: threads [-w] [-t CPUTIME_FILE] SECONDS\n"
	"       threads --print-chain alpha|beta\n"
	"Runs two threads for SECONDS: \"alpha\" spins all the time in alpha_leaf, \"beta\"\n"
	"alternates spinning in beta_leaf and sleeping as long. Each chain is 27 frames, crossing\n"
	"libchain.so (alpha: lib_f*, beta: lib_g*). Then writes \"alpha NS\" and \"beta NS\" lines,\n"
	"each thread's own CPU time, to CPUTIME_FILE.\n"
	"-w: SECONDS count from SIGUSR2 (a test sends it once its profiler is attached).\n"
	"--print-chain prints a thread's frames from its start routine to its leaf, ';'-separated.\n";

/* Set by the main thread when SECONDS are over; the leaves poll it. */
static atomic_int stop;

enum { ALPHA, BETA, NR_WORKERS };
static const char *const worker_names[NR_WORKERS] = { "alpha", "beta" };
static long long worker_cpu_ns[NR_WORKERS];

/* Iterations of one busy period of beta (a few ms): then beta sleeps as long as it took. */
#define BETA_SPIN_ITERATIONS 10000000L

#define ALPHA_STEPS(X)			\
	X(alpha_f01, alpha_f02)		\
	X(alpha_f02, alpha_f03)		\
	X(alpha_f03, alpha_f04)		\
	X(alpha_f04, alpha_f05)		\
	X(alpha_f05, alpha_f06)		\
	X(alpha_f06, alpha_f07)		\
	X(alpha_f07, alpha_f08)		\
	X(alpha_f08, alpha_f09)		\
	X(alpha_f09, lib_f01)

#define ALPHA_CB_STEPS(X)		\
	X(alpha_cb01, alpha_cb02)	\
	X(alpha_cb02, alpha_cb03)	\
	X(alpha_cb03, alpha_cb04)	\
	X(alpha_cb04, alpha_cb05)	\
	X(alpha_cb05, alpha_cb06)	\
	X(alpha_cb06, alpha_cb07)	\
	X(alpha_cb07, alpha_cb08)	\
	X(alpha_cb08, alpha_leaf)

#define BETA_STEPS(X)			\
	X(beta_f01, beta_f02)		\
	X(beta_f02, beta_f03)		\
	X(beta_f03, beta_f04)		\
	X(beta_f04, beta_f05)		\
	X(beta_f05, beta_f06)		\
	X(beta_f06, beta_f07)		\
	X(beta_f07, beta_f08)		\
	X(beta_f08, beta_f09)		\
	X(beta_f09, lib_g01)

#define BETA_CB_STEPS(X)		\
	X(beta_cb01, beta_cb02)		\
	X(beta_cb02, beta_cb03)		\
	X(beta_cb03, beta_cb04)		\
	X(beta_cb04, beta_cb05)		\
	X(beta_cb05, beta_cb06)		\
	X(beta_cb06, beta_cb07)		\
	X(beta_cb07, beta_duty)

CHAIN_KEEP long alpha_leaf(const struct chain_ctx *ctx, long depth);
CHAIN_KEEP long beta_duty(const struct chain_ctx *ctx, long depth);
CHAIN_KEEP long beta_leaf(const struct chain_ctx *ctx, long depth);
ALPHA_STEPS(CHAIN_DECLARE)
ALPHA_CB_STEPS(CHAIN_DECLARE)
BETA_STEPS(CHAIN_DECLARE)
BETA_CB_STEPS(CHAIN_DECLARE)
ALPHA_STEPS(CHAIN_DEFINE)
ALPHA_CB_STEPS(CHAIN_DEFINE)
BETA_STEPS(CHAIN_DEFINE)
BETA_CB_STEPS(CHAIN_DEFINE)

/* A macro, not a function: the leaves must not even show inlined callees in debug info. */
#define STOPPED() atomic_load_explicit(&stop, memory_order_relaxed)

/* alpha's hot leaf: spins until stop, calling nothing. */
CHAIN_KEEP long alpha_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	while (!STOPPED())
		n++;
	return n;
}

/* beta's hot leaf: one busy period of ctx->spin iterations, calling nothing. */
CHAIN_KEEP long beta_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth, i;

	for (i = 0; i < ctx->spin && !STOPPED(); i++)
		n++;
	return n;
}

/* beta's duty cycle: a busy period in beta_leaf, then a sleep of the same wall time. */
CHAIN_KEEP long beta_duty(const struct chain_ctx *ctx, long depth)
{
	struct timespec idle;
	long long busy_ns;
	long sum = 0;

	while (!STOPPED()) {
		busy_ns = clock_ns(CLOCK_MONOTONIC);
		sum += beta_leaf(ctx, depth + 1);
		busy_ns = clock_ns(CLOCK_MONOTONIC) - busy_ns;
		idle.tv_sec = busy_ns / 1000000000LL;
		idle.tv_nsec = busy_ns % 1000000000LL;
		nanosleep(&idle, NULL);
	}
	return sum;
}

/* Thread start routines: the first frames of each chain, right below glibc's start_thread. */
CHAIN_KEEP void *alpha_thread(void *arg)
{
	struct chain_ctx ctx = { .callback = alpha_cb01 };
	long r;

	pthread_setname_np(pthread_self(), worker_names[ALPHA]);
	r = alpha_f01(&ctx, 1);
	worker_cpu_ns[ALPHA] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return (void *)r;
}

CHAIN_KEEP void *beta_thread(void *arg)
{
	struct chain_ctx ctx = { .callback = beta_cb01, .spin = BETA_SPIN_ITERATIONS };
	long r;

	pthread_setname_np(pthread_self(), worker_names[BETA]);
	r = beta_f01(&ctx, 1);
	worker_cpu_ns[BETA] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return (void *)r;
}

static int print_chain(const char *worker)
{
	if (!strcmp(worker, worker_names[ALPHA]))
		printf("alpha_thread;%s%s%salpha_leaf\n", ALPHA_STEPS(CHAIN_NAME),
		       libchain_f_frames(), ALPHA_CB_STEPS(CHAIN_NAME));
	else if (!strcmp(worker, worker_names[BETA]))
		printf("beta_thread;%s%s%sbeta_duty;beta_leaf\n", BETA_STEPS(CHAIN_NAME),
		       libchain_g_frames(), BETA_CB_STEPS(CHAIN_NAME));
	else
		return 2;
	return 0;
}

/* Set by SIGUSR2: -w's wait is over. */
static volatile sig_atomic_t go;

static void on_usr2(int sig)
{
	go = 1;
}

static void sleep_seconds(double seconds)
{
	struct timespec left = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};

	while (nanosleep(&left, &left) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	void *(*const start[NR_WORKERS])(void *) = { alpha_thread, beta_thread };
	const char *cputime_file = NULL;
	pthread_t tids[NR_WORKERS];
	char text[128];
	double seconds;
	int opt, i, err, wait = 0;

	signal(SIGUSR2, on_usr2);
	while ((opt = getopt_long(argc, argv, "wt:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			wait = 1;
			break;
		case 't':
			cputime_file = optarg;
			break;
		case 'P':
			if (!print_chain(optarg))
				return 0;
			fputs(usage, stderr);
			return 2;
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
	seconds = parse_seconds(argv[optind]);

	for (i = 0; i < NR_WORKERS; i++) {
		err = pthread_create(&tids[i], NULL, start[i], NULL);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	while (wait && !go)
		sleep_seconds(0.01);
	sleep_seconds(seconds);
	atomic_store(&stop, 1);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(tids[i], NULL);

	if (cputime_file) {
		snprintf(text, sizeof(text), "%s %lld\n%s %lld\n",
			 worker_names[ALPHA], worker_cpu_ns[ALPHA],
			 worker_names[BETA], worker_cpu_ns[BETA]);
		write_result(cputime_file, text);
	}
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* offcpu.c: thread "blocker" sleeps 10 ms at a time under a known chain, thread "spinner" never
 * blocks: what --off-cpu should see, and each thread's own account of its time. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include "targets.h"

static const char usage[] =
	"usage: offcpu [-w] [-t RESULT_FILE] SECONDS\n"
	"       offcpu --print-chain\n"
	"Runs two threads for SECONDS: \"blocker\" calls blk_entry -> blk_level1 ->\n"
	"blk_leaf_sleep, which sleeps 10 ms (nanosleep) and spins 1 ms, over and over; \"spinner\"\n"
	"spins in spin_leaf. Then writes \"NAME WALL_NS CPU_NS\" for each thread to RESULT_FILE:\n"
	"its time in its loop, and its own CPU time in it (CLOCK_THREAD_CPUTIME_ID).\n"
	"-w: SECONDS count from SIGUSR2 (a test sends it once its profiler is attached).\n"
	"--print-chain prints blocker's frames from its start routine to its leaf.\n";

static atomic_int stop;
#define STOPPED() atomic_load_explicit(&stop, memory_order_relaxed)

struct account {
	const char *name;
	long long wall_ns, cpu_ns;
};
static struct account accounts[2] = { { "blocker" }, { "spinner" } };

CHAIN_KEEP long blk_leaf_sleep(long depth)
{
	struct timespec ts = { .tv_nsec = 10 * 1000000L };

	nanosleep(&ts, NULL);
	/* A little CPU too, so that blocked and running time are told apart. */
	spin_cpu_ms(1);
	return depth;
}

CHAIN_KEEP long blk_level1(long depth)
{
	return blk_leaf_sleep(depth + 1) + depth;
}

CHAIN_KEEP long blk_entry(long depth)
{
	long sum = 0;

	while (!STOPPED())
		sum += blk_level1(depth + 1);
	return sum;
}

CHAIN_KEEP long spin_leaf(long depth)
{
	long n = depth;

	while (!STOPPED())
		n++;
	return n;
}

/* Runs fn, and keeps its wall and CPU time in a. */
CHAIN_KEEP static void *run(struct account *a, long (*fn)(long))
{
	long long wall = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	long r;

	pthread_setname_np(pthread_self(), a->name);
	r = fn(1);
	a->wall_ns = clock_ns(CLOCK_MONOTONIC) - wall;
	a->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	return (void *)r;
}

CHAIN_KEEP void *blocker_thread(void *arg)
{
	return run(&accounts[0], blk_entry);
}

CHAIN_KEEP void *spinner_thread(void *arg)
{
	return run(&accounts[1], spin_leaf);
}

static volatile sig_atomic_t go;

static void on_usr2(int sig)
{
	go = 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *result_file = NULL;
	pthread_t tids[2];
	char text[256];
	struct timespec ts;
	double seconds;
	int opt, wait = 0;

	signal(SIGUSR2, on_usr2);
	while ((opt = getopt_long(argc, argv, "wt:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			wait = 1;
			break;
		case 't':
			result_file = optarg;
			break;
		case 'P':
			puts("blocker_thread;run;blk_entry;blk_level1;blk_leaf_sleep");
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
	seconds = parse_seconds(argv[optind]);
	while (wait && !go)
		pause();
	if (pthread_create(&tids[0], NULL, blocker_thread, NULL) ||
	    pthread_create(&tids[1], NULL, spinner_thread, NULL)) {
		perror("pthread_create");
		return 2;
	}
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stop, 1);
	pthread_join(tids[0], NULL);
	pthread_join(tids[1], NULL);
	snprintf(text, sizeof(text), "%s %lld %lld\n%s %lld %lld\n", accounts[0].name,
		 accounts[0].wall_ns, accounts[0].cpu_ns, accounts[1].name, accounts[1].wall_ns,
		 accounts[1].cpu_ns);
	if (result_file)
		write_result(result_file, text);
	return 0;
}

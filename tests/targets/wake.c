// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* wake.c: threads that block until another wakes them, under known chains (--wakers). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "targets.h"

static const char usage[] =
	"usage: wake mutex|pipe SECONDS\n"
	"       wake pingpong ROUNDS [wait]\n"
	"       wake --print-chain holder|waiter|writer|reader\n"
	"mutex: thread \"holder\" takes a mutex under hold_entry -> hold_level1 -> hold_leaf_work,\n"
	"spins 5 ms, lets it go, sleeps 1 ms; thread \"waiter\" takes it under wait_entry ->\n"
	"wait_level1 -> wait_leaf_lock and lets it go at once: it blocks until holder wakes it.\n"
	"pipe: a child process \"writer\" writes a byte to a pipe every 5 ms of its CPU under\n"
	"wr_entry -> wr_leaf_write; the parent \"reader\" reads them under rd_entry -> rd_leaf_read.\n"
	"pingpong: two threads pass a byte back and forth over two pipes ROUNDS times (two\n"
	"context switches a round), then print the seconds it took (make bench); with \"wait\",\n"
	"only once SIGUSR2 comes (a profiler that attaches to a PID is ready then).\n"
	"--print-chain prints a thread's frames from its start routine (or main) to its leaf.\n";

static atomic_int stop;
#define STOPPED() atomic_load_explicit(&stop, memory_order_relaxed)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

CHAIN_KEEP long hold_leaf_work(long depth)
{
	pthread_mutex_lock(&lock);
	spin_cpu_ms(5);
	pthread_mutex_unlock(&lock);
	return depth;
}

CHAIN_KEEP long hold_level1(long depth)
{
	struct timespec ts = { .tv_nsec = 1000000L };
	long r = hold_leaf_work(depth + 1);

	nanosleep(&ts, NULL);
	return r + depth;
}

CHAIN_KEEP long hold_entry(long depth)
{
	long sum = 0;

	while (!STOPPED())
		sum += hold_level1(depth + 1);
	return sum;
}

CHAIN_KEEP long wait_leaf_lock(long depth)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return depth;
}

CHAIN_KEEP long wait_level1(long depth)
{
	return wait_leaf_lock(depth + 1) + depth;
}

CHAIN_KEEP long wait_entry(long depth)
{
	long sum = 0;

	while (!STOPPED())
		sum += wait_level1(depth + 1);
	return sum;
}

CHAIN_KEEP void *holder_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "holder");
	return (void *)hold_entry(1);
}

CHAIN_KEEP void *waiter_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	return (void *)wait_entry(1);
}

CHAIN_KEEP long wr_leaf_write(int fd, long depth)
{
	char c = 'x';

	spin_cpu_ms(5);
	return write(fd, &c, 1) == 1 ? depth : -1;
}

CHAIN_KEEP long wr_entry(int fd, double seconds)
{
	long long end = clock_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	long sum = 0;

	while (clock_ns(CLOCK_MONOTONIC) < end)
		sum += wr_leaf_write(fd, 1);
	return sum;
}

CHAIN_KEEP long rd_leaf_read(int fd, long depth)
{
	char c;

	return read(fd, &c, 1) == 1 ? depth : -1;
}

CHAIN_KEEP long rd_entry(int fd)
{
	long sum = 0, r;

	while ((r = rd_leaf_read(fd, 1)) > 0)
		sum += r;
	return sum;
}

static int run_mutex(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	pthread_t h, w;

	if (pthread_create(&h, NULL, holder_thread, NULL) ||
	    pthread_create(&w, NULL, waiter_thread, NULL)) {
		perror("pthread_create");
		return 2;
	}
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stop, 1);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	return 0;
}

/* The calling thread's name (comm): what the folded stacks start with. */
static void prctl_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

CHAIN_KEEP static int run_pipe(double seconds)
{
	int fds[2], status;
	pid_t pid;

	if (pipe(fds)) {
		perror("pipe");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (!pid) {
		close(fds[0]);
		prctl_name("writer");
		wr_entry(fds[1], seconds);
		_exit(0);
	}
	close(fds[1]);
	prctl_name("reader");
	rd_entry(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}

static int ping[2], pong[2];

static void *pong_thread(void *arg)
{
	long rounds = (long)arg;
	char c;

	for (long i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static int run_pingpong(long rounds, const sigset_t *start_sigs)
{
	long long t0;
	pthread_t t;
	char c = 'x';
	int sig, err;
	long i;

	if (start_sigs && (err = sigwait(start_sigs, &sig))) {
		fprintf(stderr, "pingpong: sigwait: %s\n", strerror(err));
		return 2;
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, pong_thread, (void *)rounds)) {
		perror("pingpong");
		return 2;
	}
	for (i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
	pthread_join(t, NULL);
	printf("%.6f\n", (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	return i == rounds ? 0 : 1;
}

static int print_chain(const char *who)
{
	static const char *const chains[][2] = {
		{ "holder", "holder_thread;hold_entry;hold_level1;hold_leaf_work" },
		{ "waiter", "waiter_thread;wait_entry;wait_level1;wait_leaf_lock" },
		{ "writer", "main;run_pipe;wr_entry;wr_leaf_write" },
		{ "reader", "main;run_pipe;rd_entry;rd_leaf_read" },
	};

	for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++)
		if (!strcmp(who, chains[i][0])) {
			puts(chains[i][1]);
			return 0;
		}
	fputs(usage, stderr);
	return 2;
}

int main(int argc, char **argv)
{
	sigset_t usr2;

	if (argc == 4 && !strcmp(argv[1], "pingpong") && !strcmp(argv[3], "wait") &&
	    atol(argv[2]) > 0) {
		/* Blocked at once: the SIGUSR2 that starts the rounds waits for sigwait(). */
		sigemptyset(&usr2);
		sigaddset(&usr2, SIGUSR2);
		sigprocmask(SIG_BLOCK, &usr2, NULL);
		return run_pingpong(atol(argv[2]), &usr2);
	}
	if (argc == 3 && !strcmp(argv[1], "--print-chain"))
		return print_chain(argv[2]);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 3) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "mutex"))
		return run_mutex(parse_seconds(argv[2]));
	if (!strcmp(argv[1], "pipe"))
		return run_pipe(parse_seconds(argv[2]));
	if (!strcmp(argv[1], "pingpong") && atol(argv[2]) > 0)
		return run_pingpong(atol(argv[2]), NULL);
	fputs(usage, stderr);
	return 2;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* chain.c: spins in a hot leaf at the bottom of a 28-frame chain that crosses libchain.so. */
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "targets.h"

static const char usage[] =
	"usage: chain [-f] [-g] [-E] [-S] [-b BYTES [-w DELAY]] [-l DELAY] [-t CPUTIME_FILE]\n"
	"             [-x STATUS]\n"
	"             [-s SIGNAL] SECONDS\n"
	"       chain [-S] --print-chain\n"
	"Spins SECONDS of CPU in chain_leaf below main -> chain_f01..chain_f10 -> libchain.so\n"
	"lib_f01..lib_f08 -> cb_f01..cb_f08 -> chain_leaf, then writes its process CPU time in ns\n"
	"to CPUTIME_FILE, and exits with STATUS (default 0) or dies of SIGNAL (a number).\n"
	"-f: fork first; the child spins as long (and exits 0), CPUTIME_FILE gets both CPU times.\n"
	"-b: main's frame holds BYTES more (touched), so the stack from leaf to root is that deep.\n"
	"-w: with -b, first spin DELAY seconds of CPU in pad_wait below the pad before writing it:\n"
	"    pages of the stack between sp and main's frame are not present until then.\n"
	"-E: the leaf spins with sp about 64 bytes above a stack page never touched (the red zone\n"
	"    below sp crosses into it); exits 3 if that could not be arranged.\n"
	"-g: re-exec until a page that was never touched lies between argv and the top of the\n"
	"    stack mapping (the random gap the kernel leaves there spans one in some runs).\n"
	"-l: sleep DELAY seconds (or until SIGUSR2), then dlopen libchain_dl.so (a copy of\n"
	"    libchain.so) and go through it instead: its mapping appears only then.\n"
	"-S: the leaf is sig_leaf, which raises SIGUSR1 over and over; the CPU is burnt in the\n"
	"    handler, sig_spin, on top of the signal frame.\n"
	"--print-chain prints the frames from main to the leaf, ';'-separated.\n";

/* Set by SIGALRM: the leaf polls it, so the leaf itself calls nothing. */
static volatile sig_atomic_t stop;

/*
 * main's part of the chain: ends in libchain.so (lib_f01, or its copy libchain_dl.so loaded
 * with dlopen), which calls back into CB_STEPS.
 */
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
	X(chain_f10, ctx->lib_entry)

#define CB_STEPS(X)			\
	X(cb_f01, cb_f02)		\
	X(cb_f02, cb_f03)		\
	X(cb_f03, cb_f04)		\
	X(cb_f04, cb_f05)		\
	X(cb_f05, cb_f06)		\
	X(cb_f06, cb_f07)		\
	X(cb_f07, cb_f08)		\
	X(cb_f08, ctx->leaf)

CHAIN_KEEP long chain_leaf(const struct chain_ctx *ctx, long depth);
CHAIN_KEEP long sig_leaf(const struct chain_ctx *ctx, long depth);
MAIN_STEPS(CHAIN_DECLARE)
CB_STEPS(CHAIN_DECLARE)
MAIN_STEPS(CHAIN_DEFINE)
CB_STEPS(CHAIN_DEFINE)

/* -E: the leaf's sp, recorded by the leaf (1: and return at once, 2: then spin). */
static volatile int record_sp;
static volatile uintptr_t leaf_sp;

/* The hot leaf: nearly every sample of this program lands in this loop. */
CHAIN_KEEP long chain_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	if (record_sp) {
		uintptr_t sp;

		__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
		leaf_sp = sp;
		if (record_sp == 1)
			return n;
	}
	while (!stop)
		n++;
	return n;
}

/* -w: spins below main's pad, whose pages are not written yet, until SIGALRM. */
CHAIN_KEEP long pad_wait(long n)
{
	while (!stop)
		n++;
	return n;
}

/* Iterations of sig_spin per signal: about a millisecond, much longer than raising it. */
#define SIG_SPIN_ITERATIONS 2000000L

/* -S: the handler of SIGUSR1, where the CPU time goes; it runs on top of a signal frame. */
CHAIN_KEEP static void sig_spin(int sig)
{
	long i;

	for (i = 0; i < SIG_SPIN_ITERATIONS && !stop; i++)
		;
}

/* -S's leaf: keeps signalling itself until SIGALRM. */
CHAIN_KEEP long sig_leaf(const struct chain_ctx *ctx, long depth)
{
	long n = depth;

	while (!stop) {
		raise(SIGUSR1);
		n++;
	}
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

static void print_chain(const char *leaf)
{
	printf("main;%s%s%s%s\n", MAIN_STEPS(CHAIN_NAME), libchain_f_frames(),
	       CB_STEPS(CHAIN_NAME), leaf);
}

/* Set by SIGUSR2: -l's sleep ends (a test starts it once its profiler is attached). */
static volatile sig_atomic_t dlopen_now;

static void on_usr2(int sig)
{
	dlopen_now = 1;
}

/* -l: after delay seconds, routes the chain through libchain_dl.so, loaded only now. */
static int load_lib_copy(struct chain_ctx *ctx, double delay)
{
	struct timespec ts = {
		.tv_sec = (time_t)delay,
		.tv_nsec = (long)((delay - (time_t)delay) * 1e9),
	};
	void *lib;

	while (!dlopen_now && nanosleep(&ts, &ts) && errno == EINTR)
		;
	/* Found through the executable's RUNPATH ($ORIGIN), like libchain.so. */
	lib = dlopen("libchain_dl.so", RTLD_NOW | RTLD_LOCAL);
	ctx->lib_entry = lib ? (chain_fn *)dlsym(lib, "lib_f01") : NULL;
	if (!ctx->lib_entry) {
		fprintf(stderr, "libchain_dl.so: %s\n", dlerror());
		return -1;
	}
	return 0;
}

/* The [stack] mapping of this process: 0 and its bounds, or -1. */
static int stack_mapping(uintptr_t *start, uintptr_t *end)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%lx-%lx", (unsigned long *)start, (unsigned long *)end) == 2) {
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

/* Some page of [from, to) is not present (pagemap bit 63); to NULL: the top of the stack
 * mapping. With to, only open, pread and close: little stack (-E checks a page just below). */
static int untouched_page(const void *from, const void *to)
{
	uintptr_t start, end = (uintptr_t)to, page;
	uint64_t entry;
	int fd, found = 0;

	if (!to && stack_mapping(&start, &end))
		return 0;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return 0;
	for (page = ((uintptr_t)from + 4095) & ~(uintptr_t)4095; page < end; page += 4096) {
		if (pread(fd, &entry, sizeof(entry), page / 4096 * sizeof(entry)) != sizeof(entry))
			break;
		if (!(entry >> 63)) {
			found = 1;
			break;
		}
	}
	close(fd);
	return found;
}

/*
 * -g: the kernel puts a random gap (up to 8 KiB on x86_64) between the argument strings at
 * the top of the stack and the argv/auxv tables; when it spans a whole page, that page is
 * never touched, so a profiler's read of the stack up to the mapping's end fails there.
 * Re-exec (the same file, so the same comm) until this run has one; at most 60 tries.
 */
static void want_stack_gap(char **argv)
{
	static const char tries_var[] = "CHAIN_GAP_TRIES";
	const char *tries = getenv(tries_var);
	char self[PATH_MAX], count[16];
	ssize_t n;

	if (untouched_page(argv, NULL))
		return;
	if (tries && atoi(tries) >= 60) {
		fputs("chain: no untouched stack page after 60 execs\n", stderr);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	snprintf(count, sizeof(count), "%d", tries ? atoi(tries) + 1 : 1);
	setenv(tries_var, count, 1);
	execv(self, argv);
}

static inline uintptr_t current_sp(void)
{
	uintptr_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

/* -E: runs the chain once to learn how deep its leaf's sp lies below this caller's, then
 * returns how much more stack (alloca) puts the leaf's sp 64 bytes above a page boundary two
 * pages below the deepest the chain went so far; *below: that page boundary. */
static size_t edge_pad(struct chain_ctx *ctx, uintptr_t *below)
{
	uintptr_t here, depth, target;

	record_sp = 1;
	here = current_sp();
	chain_f01(ctx, 1);
	record_sp = 0;
	depth = here - leaf_sp;
	*below = (leaf_sp & ~(uintptr_t)4095) - 2 * 4096;
	target = *below + 64;
	return here - depth - target;
}

/* The CPU time of the process and of its waited-for children, ns. */
static long long cputime_with_children(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID) +
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-chain", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct chain_ctx ctx = { .lib_entry = lib_f01, .callback = cb_f01, .leaf = chain_leaf };
	struct sigaction sa = { .sa_handler = sig_spin };
	const char *cputime_file = NULL;
	double dlopen_delay = 0, pad_delay = 0;
	int status = 0, sig = 0, fork_child = 0, stack_gap = 0, edge = 0, opt;
	long pad_bytes = 0;
	pid_t child = 0;
	char *pad = NULL;
	char text[64];
	long r;

	/* No SA_RESTART: SIGUSR2 ends -l's nanosleep. */
	sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = on_usr2 }, NULL);
	while ((opt = getopt_long(argc, argv, "fgESb:w:l:t:x:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			ctx.leaf = sig_leaf;
			sigaction(SIGUSR1, &sa, NULL);
			break;
		case 'g':
			stack_gap = 1;
			break;
		case 'E':
			edge = 1;
			break;
		case 'w':
			pad_delay = parse_seconds(optarg);
			break;
		case 'l':
			dlopen_delay = parse_seconds(optarg);
			break;
		case 'f':
			fork_child = 1;
			break;
		case 'b':
			pad_bytes = atol(optarg);
			break;
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
			print_chain(ctx.leaf == sig_leaf ? "sig_leaf" : "chain_leaf");
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || pad_bytes < 0 || (pad_delay > 0 && !pad_bytes)) {
		fputs(usage, stderr);
		return 2;
	}

	if (stack_gap)
		want_stack_gap(argv);
	if (pad_bytes) {
		/* Written, so that its pages exist: a profiler reads them, it cannot fault them in. */
		pad = alloca(pad_bytes);
		if (pad_delay > 0) {
			if (!untouched_page(pad, pad + pad_bytes))
				fputs("chain: -w: every page of the pad is present already\n", stderr);
			arm_timer(pad_delay);
			pad_wait(0);
			stop = 0;
		}
		memset(pad, 1, pad_bytes);
	}
	if (dlopen_delay > 0 && load_lib_copy(&ctx, dlopen_delay))
		return 1;
	if (fork_child) {
		child = fork();
		if (child < 0) {
			perror("fork");
			return 1;
		}
	}
	/* Armed after the fork: timers are not inherited. */
	arm_timer(parse_seconds(argv[optind]));
	if (edge) {
		volatile size_t one = 1;
		uintptr_t below;
		size_t n;

		/* The first call through a PLT slot binds it, in _dl_runtime_resolve, which saves
		 * the whole register file (KiBs with AVX-512) on the stack: bind memset, open,
		 * pread and close now, while the stack is higher. */
		memset(text, 0, one);
		below = (uintptr_t)text & ~(uintptr_t)4095;
		untouched_page((void *)below, (void *)(below + 4096));
		n = edge_pad(&ctx, &below);

		/* Written, so that the stack above the leaf is all there; the page below it must
		 * never have been touched (exec, ld.so and the probe ran higher). */
		pad = alloca(n);
		memset(pad, 1, n);
		if (!untouched_page((void *)(below - 4096), (void *)below)) {
			fputs("chain: -E: the page below the leaf was touched already\n", stderr);
			return 3;
		}
		record_sp = 2;
	}
	r = chain_f01(&ctx, 1);
	/* sp - 128 must lie in the page below. */
	if (edge && ((leaf_sp & 4095) == 0 || (leaf_sp & 4095) >= 128)) {
		fprintf(stderr, "chain: -E: the leaf's sp ended at page offset %lu, not below 128\n",
			(unsigned long)(leaf_sp & 4095));
		return 3;
	}
	if (pad)
		r += pad[pad_bytes - 1];
	if (fork_child && !child)
		return 0;
	if (child > 0)
		waitpid(child, NULL, 0);

	if (cputime_file) {
		snprintf(text, sizeof(text), "%lld\n", cputime_with_children());
		write_result(cputime_file, text);
	}
	if (sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	/* r is never 0 (the leaf counts up from depth > 0): only keeps the result used. */
	return r ? status : 99;
}

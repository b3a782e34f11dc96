// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_opts.c: the command line: numbers of every kind, subcommands, help. Each case runs
 * opts__parse() in a child process, which exits with its status as main() would (a usage error,
 * --help), and reads its status,
 * stdout and stderr. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd/opts.h"
#include "runtime/runtime.h"

#define OUT_MAX 65536

/* One opts__parse() run: exit status, stdout and stderr. On success (the parser returned),
 * stdout holds the fields the tests look at, one "name value" line each. */
struct parse_result {
	int status;
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static void read_fd(int fd, char *buf)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, OUT_MAX - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void print_opts(const struct bpfprof_opts *o)
{
	printf("pids");
	for (size_t i = 0; i < o->pids_cnt; i++)
		printf("%s%u", i ? "," : " ", o->pids[i]);
	printf("\nduration_ns %" PRIu64 "\ninterval_ns %" PRIu64 "\nfreq_hz %" PRIu64
	       "\noutput_dir_max %" PRIu64 "\nstack_sz %u\nringbuf_sz %u\n",
	       o->duration_ns, o->ag.interval_ns, o->freq_hz, o->ag.output_dir_max, o->copy_size,
	       o->ringbuf_sz);
	printf("cmd %s\nreport %s\ncheck %d\nagent %d\n", o->cmd ? o->cmd[0] : "-",
	       o->report ? o->report : "-", o->check, o->agent);
	printf("runtimes_off %#" PRIx64 "\n", o->runtimes_off);
}

/* parse(r, "arg", ..., NULL): bpfprof's argv after argv[0]. */
static void parse(struct parse_result *r, ...)
{
	char *argv[64] = { "bpfprof" };
	int argc = 1, out, err, status;
	va_list ap;
	pid_t pid;

	va_start(ap, r);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	out = memfd_create("stdout", MFD_CLOEXEC);
	err = memfd_create("stderr", MFD_CLOEXEC);
	assert_true(out >= 0 && err >= 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct bpfprof_opts o;

		alarm(10);	/* a parser blocked on a file fails the test, not hangs it */
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		status = opts__parse(argc, argv, &o);
		if (status != OPTS_RUN) {
			fflush(NULL);
			_exit(status);	/* what main() returns */
		}
		print_opts(&o);
		opts__free(&o);
		fflush(NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r->status = WEXITSTATUS(status);
	read_fd(out, r->out);
	read_fd(err, r->err);
}

static struct parse_result r_;

/* The last parse() was refused with exit 64 and a message on stderr that quotes what (NULL:
 * any message). args: the arguments, as written in the test. */
static void expect_usage_error(const char *what, const char *args)
{
	if (r_.status != BPFPROF_EXIT_USAGE)
		fail_msg("%s [%s]: exit %d, want 64; stderr: %s", args, what ? what : "", r_.status,
			 r_.err);
	if (what ? !strstr(r_.err, what) : !r_.err[0])
		fail_msg("%s: stderr does not name '%s': %s", args, what ? what : "", r_.err);
}

/* The last parse() was accepted, and a field has this value (line: "name value" as
 * print_opts() writes it). */
static void expect_parsed(const char *line, const char *args)
{
	char want[256];

	if (r_.status != 0)
		fail_msg("%s: exit %d, want 0; stderr: %s", args, r_.status, r_.err);
	snprintf(want, sizeof(want), "%s\n", line);
	if (!strstr(r_.out, want))
		fail_msg("%s: want '%s' in:\n%s", args, line, r_.out);
}

#define assert_usage_error(what, ...) \
	(parse(&r_, __VA_ARGS__, NULL), expect_usage_error((what), #__VA_ARGS__))
#define assert_parsed(line, ...) \
	(parse(&r_, __VA_ARGS__, NULL), expect_parsed((line), #__VA_ARGS__))

static void test_durations(void **state)
{
	static const char *const bad[] = {
		"nan", "NaN", "inf", "-inf", "infinity", "-1", "0", "0.0", "0.0001", "1e3",
		"0x10", "0x1p3", " 5", "5 ", "+5", "", ".", "5x", "5ms", "5d", "31536001",
		"99999999999999999999", "184467440737095516160",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char arg[64];

		snprintf(arg, sizeof(arg), "'%s'", bad[i]);
		assert_usage_error(arg, "-d", bad[i], "--", "true");
		assert_usage_error(arg, "--exec", "--interval", bad[i], "--", "true");
	}
	assert_usage_error("'0.5'", "--exec", "--interval", "0.5", "--", "true");
	assert_usage_error("'25h'", "--exec", "--interval", "25h", "--", "true");
	assert_parsed("duration_ns 1500000000", "-d", "1.5", "--", "true");
	assert_parsed("duration_ns 1000000", "-d", "0.001", "--", "true");
	assert_parsed("duration_ns 120000000000", "-d", "2m", "--", "true");
	assert_parsed("duration_ns 5000000000", "-d", "005s", "--", "true");
	assert_parsed("duration_ns 31536000000000000", "-d", "8760h", "--", "true");
	/* A fraction finer than 1 ns is dropped, not rounded up past the limit. */
	assert_parsed("duration_ns 31535999999999999", "-d", "31535999.9999999999", "--",
		      "true");
}

static void test_pids(void **state)
{
	static const char *const bad[] = {
		"1,,1", ",1", "1,", ",", "", "-1", "0", "+1", " 1", "1 ", "0x10", "1a", "1;2",
		"2147483648", "99999999999999999999",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char arg[64];

		snprintf(arg, sizeof(arg), "'%s'", bad[i]);
		assert_usage_error(arg, "-p", bad[i]);
	}
	/* Decimal, as ps and /proc write them: a leading zero is not octal. */
	assert_parsed("pids 10460", "-p", "010460");
	assert_parsed("pids 8", "-p", "08");
	/* One process once, whatever the list repeats. */
	assert_parsed("pids 5,6", "-p", "5,5", "-p", "6,5");
	assert_parsed("pids 2147483647,1", "-p", "2147483647,1");
}

static void test_counts_and_sizes(void **state)
{
	assert_usage_error("'nan'", "-F", "nan", "--", "true");
	assert_usage_error("'0'", "-F", "0", "--", "true");
	assert_usage_error("'100001'", "-F", "100001", "--", "true");
	assert_usage_error("'-99'", "-F", "-99", "--", "true");
	assert_usage_error("'0x63'", "-F", "0x63", "--", "true");
	assert_usage_error("'18446744073709551715'", "-F", "18446744073709551715", "--", "true");
	assert_parsed("freq_hz 10", "-F", "010", "--", "true");
	assert_usage_error("'511'", "--stack-size", "511", "--", "true");
	assert_usage_error("'1G'", "--stack-size", "1G", "--", "true");
	assert_usage_error("'16KB'", "--stack-size", "16KB", "--", "true");
	assert_usage_error("'18014398509481984K'", "--stack-size", "18014398509481984K", "--",
			   "true");
	assert_parsed("stack_sz 32768", "--stack-size", "32k", "--", "true");
	assert_usage_error("'3M'", "--ringbuf-size", "3M", "--", "true");
	assert_usage_error("'-4M'", "--ringbuf-size", "-4M", "--", "true");
	assert_parsed("ringbuf_sz 4194304", "--ringbuf-size", "4M", "--", "true");
	/* 2^54 + 1024 KiB wraps to 1 MiB in 64 bits. */
	assert_usage_error("'18014398509481985K'", "--exec", "--output-dir-max-bytes",
			   "18014398509481985K", "--", "true");
	assert_usage_error("'1T'", "--exec", "--output-dir-max-bytes", "1T", "--", "true");
	assert_parsed("output_dir_max 2147483648", "--exec", "--output-dir-max-bytes", "2G",
		      "--", "true");
	assert_usage_error("'0'", "--max-frames", "0", "--", "true");
	assert_usage_error("'-1'", "--top", "-1", "--", "true");
	assert_usage_error("'100'", "--realtime", "100", "--", "true");
	assert_usage_error("'0'", "--drain-interval", "0", "--", "true");
	assert_usage_error("'1e3'", "--exec", "--queue-size", "1e3", "--", "true");
}

/* --config FILE is read only as the agent's, spelled out: anything else would be ignored. */
static void test_config(void **state)
{
	char dir[] = "/tmp/test_opts.XXXXXX", conf[64], fifo[64];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	assert_usage_error("not a regular file", "agent", "--config", dir, "--output-dir", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* No reader: an open without O_NONBLOCK would block this child forever. */
	assert_usage_error("not a regular file", "agent", "--config", fifo, "--output-dir", dir);
	snprintf(conf, sizeof(conf), "%s/agent.conf", dir);
	f = fopen(conf, "w");
	assert_non_null(f);
	fprintf(f, "# test\noutput-dir = %s\ninterval = nan\n", dir);
	fclose(f);
	assert_usage_error("'nan'", "agent", "--config", conf);
	f = fopen(conf, "w");
	fprintf(f, "output-dir = %s\ninterval = 2m\n", dir);
	fclose(f);
	assert_parsed("interval_ns 120000000000", "agent", "--config", conf);
	assert_usage_error("--config", "agent", "--conf", conf);
	assert_usage_error("--config", "--exec", "--config", conf, "--", "true");
	unlink(conf);
	unlink(fifo);
	rmdir(dir);
}

static void test_subcommands(void **state)
{
	struct parse_result *r = &r_;

	/* record is what perf users type: the same as no subcommand. */
	assert_parsed("cmd true", "record", "--", "true");
	assert_parsed("cmd true", "record", "-F", "49", "true", "-x");
	assert_parsed("pids 7", "record", "-p", "7");
	/* A program named like a subcommand runs after --; before, it is a mistake. */
	assert_parsed("cmd record", "--", "record");
	assert_usage_error("subcommand", "-q", "record", "--", "true");
	assert_usage_error("subcommand", "-F", "99", "report", "x.raw");
	/* report FILE, its options before or after FILE. */
	assert_parsed("report x.raw", "report", "x.raw", "-o", "x.folded");
	assert_parsed("report x.raw", "report", "-o", "x.folded", "x.raw");
	assert_usage_error("FILE", "report");
	assert_usage_error("'y.raw'", "report", "x.raw", "y.raw");
	assert_usage_error(NULL, "report", "x.raw", "-p", "1");
	assert_parsed("check 1", "check");
	/* -h as --help, for each subcommand too: usage on stdout, exit 0. */
	const char *const help[][2] = {
		{ "-h", "Usage: bpfprof [OPTION...] -- CMD" },
		{ "--help", "Usage: bpfprof [OPTION...] -- CMD" },
	};
	for (size_t i = 0; i < 2; i++) {
		parse(r, help[i][0], NULL);
		assert_int_equal(r->status, 0);
		assert_non_null(strstr(r->out, help[i][1]));
		assert_non_null(strstr(r->out, "--pid"));
	}
	const char *const subs[] = { "record", "report", "check", "agent" };
	for (size_t i = 0; i < 4; i++) {
		char usage[64];

		snprintf(usage, sizeof(usage), "Usage: bpfprof %s [OPTION...]", subs[i]);
		parse(r, subs[i], "-h", NULL);
		if (r->status || !strstr(r->out, usage))
			fail_msg("%s -h: exit %d, stdout:\n%s\nstderr:\n%s", subs[i], r->status,
				 r->out, r->err);
		parse(r, subs[i], "--help", NULL);
		if (r->status || !strstr(r->out, usage))
			fail_msg("%s --help: exit %d, stdout:\n%s\nstderr:\n%s", subs[i],
				 r->status, r->out, r->err);
	}
}

/* Each runtime of the table with an option_help has its --no-<name> (its bit of runtimes_off),
 * in --help with that text, from the agent's --config file and environment too; the others
 * have none. */
static void test_runtime_options(void **state)
{
	char dir[] = "/tmp/test_opts.XXXXXX", conf[64], opt[64], want[64], var[64], *c;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/agent.conf", dir);
	assert_parsed("runtimes_off 0", "--", "true");
	for (size_t i = 0; i < runtime_cnt; i++) {
		const struct runtime_ops *ops = runtime_table[i];

		snprintf(opt, sizeof(opt), "--no-%s", ops->name);
		if (!ops->option_help) {
			assert_usage_error(opt, opt, "--", "true");
			continue;
		}
		snprintf(want, sizeof(want), "runtimes_off %#llx", 1ull << i);
		assert_parsed(want, opt, "--", "true");
		assert_parsed(want, "report", "x.raw", opt);
		parse(&r_, "--help", NULL);
		assert_int_equal(r_.status, 0);
		assert_non_null(strstr(r_.out, opt));
		/* argp wraps the text: its first word. */
		snprintf(var, sizeof(var), "%.*s", (int)strcspn(ops->option_help, " "),
			 ops->option_help);
		assert_non_null(strstr(strstr(r_.out, opt), var));
		f = fopen(conf, "w");
		assert_non_null(f);
		fprintf(f, "output-dir = %s\nno-%s = true\n", dir, ops->name);
		fclose(f);
		assert_parsed(want, "agent", "--config", conf);
		snprintf(var, sizeof(var), "BPFPROF_NO_%s", ops->name);
		for (c = var; *c; c++)
			*c = *c == '-' ? '_' : toupper((unsigned char)*c);
		setenv(var, "1", 1);
		assert_parsed(want, "agent", "--output-dir", dir);
		setenv(var, "0", 1);
		assert_parsed("runtimes_off 0", "agent", "--output-dir", dir);
		unsetenv(var);
	}
	unlink(conf);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_counts_and_sizes),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_subcommands),
		cmocka_unit_test(test_runtime_options),
	};

	/* The parser reads BPFPROF_<OPTION> variables for the agent: none from the caller. */
	for (char **e = environ; *e;)
		if (!strncmp(*e, "BPFPROF_", 8)) {
			char name[128];

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
			unsetenv(name);
		} else {
			e++;
		}
	return cmocka_run_group_tests(tests, NULL, NULL);
}

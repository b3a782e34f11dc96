// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_metrics.c: the Prometheus text exposition (0.0.4) of the metrics writer, and the
 * /metrics, /healthz endpoint scraped with libcurl: status, content type, one HELP and TYPE per
 * family before its samples, every line in the format's grammar, process metrics, errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <curl/curl.h>
#include "agent/export.h"
#include "util/log.h"
#include "agent/metrics.h"
#include "util/util.h"

struct body {
	char *s;
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;

	b->s = realloc(b->s, b->len + size * n + 1);
	assert_non_null(b->s);
	memcpy(b->s + b->len, p, size * n);
	b->len += size * n;
	b->s[b->len] = '\0';
	return size * n;
}

/* GET (or POST when post) http://127.0.0.1:port/path: the status; body and content type out. */
static long http_get(int port, const char *path, bool post, char **body, char **ctype)
{
	struct body b = { .s = calloc(1, 1) };
	char url[128], *ct = NULL;
	long code = 0;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	if (post)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x");
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	if (ctype)
		*ctype = strdup(ct ?: "");
	curl_easy_cleanup(c);
	if (body)
		*body = b.s;
	else
		free(b.s);
	return code;
}

static const char *const re_help = "^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*$";
static const char *const re_type = "^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)$";
#define LABEL "[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\""
static const char *const re_sample =
	"^([a-zA-Z_:][a-zA-Z0-9_:]*)"
	"(\\{" LABEL "(," LABEL ")*\\})?"
	" ([-+]?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[-+]Inf)$";

/*
 * Checks text against the exposition grammar: every line a HELP, TYPE or sample line; HELP then
 * TYPE once per family, before its samples, which follow without another family between;
 * counters end in _total. Returns the number of sample lines.
 */
static int check_exposition(const char *text)
{
	regex_t help, type, sample;
	char fam[128] = "", seen[8192] = " ", *copy = strdup(text), *line, *save;
	regmatch_t mt[8];
	bool counter = false, typed = false;
	int samples = 0;

	assert_int_equal(regcomp(&help, re_help, REG_EXTENDED), 0);
	assert_int_equal(regcomp(&type, re_type, REG_EXTENDED), 0);
	assert_int_equal(regcomp(&sample, re_sample, REG_EXTENDED), 0);
	assert_true(text[0] && text[strlen(text) - 1] == '\n');
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], key[140];
		int n;

		if (!regexec(&help, line, 8, mt, 0)) {
			n = mt[1].rm_eo - mt[1].rm_so;
			snprintf(fam, sizeof(fam), "%.*s", n, line + mt[1].rm_so);
			snprintf(key, sizeof(key), " %s ", fam);
			if (strstr(seen, key))
				fail_msg("family %s described twice", fam);
			strcat(seen, key + 1);
			typed = false;
		} else if (!regexec(&type, line, 8, mt, 0)) {
			n = mt[1].rm_eo - mt[1].rm_so;
			if (strncmp(line + mt[1].rm_so, fam, n) || typed)
				fail_msg("TYPE line out of place: %s", line);
			counter = !strncmp(line + mt[2].rm_so, "counter", 7);
			if (counter && (strlen(fam) < 6 || strcmp(fam + strlen(fam) - 6, "_total")))
				fail_msg("counter %s does not end in _total", fam);
			typed = true;
		} else if (!regexec(&sample, line, 8, mt, 0)) {
			n = mt[1].rm_eo - mt[1].rm_so;
			snprintf(name, sizeof(name), "%.*s", n, line + mt[1].rm_so);
			if (!typed || strcmp(name, fam))
				fail_msg("sample of %s under family '%s': %s", name, fam, line);
			samples++;
		} else {
			fail_msg("not exposition format 0.0.4: '%s'", line);
		}
	}
	regfree(&help);
	regfree(&type);
	regfree(&sample);
	free(copy);
	return samples;
}

static void test_writer_format(void **state)
{
	struct metrics_writer *w = metrics_writer__new();
	const struct metrics_label a[] = { { "exporter", "pyroscope" }, {} };
	const struct metrics_label b[] = { { "exporter", "dir" }, { "why", "a \"b\"\\c\nd" }, {} };
	size_t sz;
	char *text;

	assert_non_null(w);
	assert_int_equal(metrics__counter(w, "x_sent_total", "Sent.\nTwo \\ lines.", a, 5), 0);
	assert_int_equal(metrics__gauge(w, "x_depth", "Depth.", NULL, 0.25), 0);
	/* A family's samples added apart are rendered together, its HELP once. */
	assert_int_equal(metrics__counter(w, "x_sent_total", "ignored", b, 18446744073709551615.0),
			 0);
	assert_int_equal(metrics__gauge(w, "x_depth", NULL, a, -3), 0);
	assert_int_equal(metrics__gauge(w, "x_nan", "", NULL, NAN), 0);
	text = metrics_writer__render(w, &sz);
	assert_non_null(text);
	assert_string_equal(text,
		"# HELP x_sent_total Sent.\\nTwo \\\\ lines.\n"
		"# TYPE x_sent_total counter\n"
		"x_sent_total{exporter=\"pyroscope\"} 5\n"
		"x_sent_total{exporter=\"dir\",why=\"a \\\"b\\\"\\\\c\\nd\"} "
		"1.8446744073709552e+19\n"
		"# HELP x_depth Depth.\n"
		"# TYPE x_depth gauge\n"
		"x_depth 0.25\n"
		"x_depth{exporter=\"pyroscope\"} -3\n"
		"# HELP x_nan \n"
		"# TYPE x_nan gauge\n"
		"x_nan NaN\n");
	assert_int_equal(sz, strlen(text));
	assert_int_equal(check_exposition(text), 5);
	free(text);
}

static void test_writer_errors(void **state)
{
	struct metrics_writer *w = metrics_writer__new();
	const struct metrics_label bad[] = { { "bad-key", "v" }, {} };

	assert_int_equal(metrics__counter(w, "no_suffix", "h", NULL, 1), -EINVAL);
	metrics_writer__free(w);
	w = metrics_writer__new();
	assert_int_equal(metrics__gauge(w, "ok", "h", bad, 1), -EINVAL);
	metrics_writer__free(w);
	w = metrics_writer__new();
	assert_int_equal(metrics__gauge(w, "9starts_with_digit", "h", NULL, 1), -EINVAL);
	metrics_writer__free(w);
	/* One name, two types; the error fails the whole rendering. */
	w = metrics_writer__new();
	assert_int_equal(metrics__gauge(w, "a_total", "h", NULL, 1), 0);
	assert_int_equal(metrics__counter(w, "a_total", "h", NULL, 1), -EINVAL);
	assert_null(metrics_writer__render(w, NULL));
	assert_int_equal(errno, EINVAL);
}

struct agent {
	int scrapes;
	struct export_stats st;
};

static void fill(struct metrics_writer *w, void *arg)
{
	struct agent *a = arg;
	const struct metrics_label user[] = { { "mode", "user" }, {} };
	const struct metrics_label kernel[] = { { "mode", "kernel" }, {} };

	a->scrapes++;
	metrics__counter(w, "bpfprof_samples_total", "Samples taken.", user, 1000 + a->scrapes);
	metrics__counter(w, "bpfprof_samples_total", "Samples taken.", kernel, 20);
	metrics__counter(w, "bpfprof_lost_samples_total", "Samples lost (ringbuf full).", NULL, 3);
	metrics__gauge(w, "bpfprof_unwind_root_ratio", "Share of stacks unwound to the root.",
		       NULL, 0.975);
	export_stats__metrics(&a->st, "pyroscope", w);
	export_stats__metrics(&a->st, "dir", w);
}

/* Burns about ms of CPU time on this thread. */
static void burn(int ms)
{
	struct timespec t0, t;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* The value of the sample line starting with prefix (name and labels), or NAN. */
static double sample_value(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return NAN;
}

static void test_endpoint_scrape(void **state)
{
	struct agent a = { .st = { .sent = 5, .retries = 2, .dropped = 1, .queue_depth = 3,
				   .bytes_sent = 4096,
				   .last_error_time_ns = 1700000000500000000ll } };
	struct metrics *m;
	char *body, *ct;
	int port;

	burn(200);
	m = metrics__start("127.0.0.1:0", fill, NULL, &a);
	assert_non_null(m);
	port = metrics__port(m);
	assert_true(port > 0);

	assert_int_equal(http_get(port, "/metrics", false, &body, &ct), 200);
	assert_string_equal(ct, "text/plain; version=0.0.4; charset=utf-8");
	assert_true(check_exposition(body) >= 20);
	assert_int_equal(a.scrapes, 1);
	assert_true(sample_value(body, "bpfprof_samples_total{mode=\"user\"}") == 1001);
	assert_true(sample_value(body, "bpfprof_samples_total{mode=\"kernel\"}") == 20);
	assert_true(sample_value(body, "bpfprof_unwind_root_ratio") == 0.975);
	assert_true(sample_value(body, "bpfprof_export_profiles_sent_total"
				       "{exporter=\"pyroscope\"}") == 5);
	assert_true(sample_value(body, "bpfprof_export_retries_total{exporter=\"dir\"}") == 2);
	assert_true(sample_value(body, "bpfprof_export_queue_depth{exporter=\"pyroscope\"}") == 3);
	assert_true(sample_value(body, "bpfprof_export_bytes_sent_total{exporter=\"pyroscope\"}") ==
		    4096);
	assert_true(sample_value(body, "bpfprof_export_last_error_timestamp_seconds"
				       "{exporter=\"pyroscope\"}") == 1700000000.5);
	assert_true(sample_value(body, "bpfprof_export_dir_bytes{exporter=\"dir\"}") == 0);
	/* Process metrics from /proc/self: the CPU burnt above, some resident memory. */
	assert_true(sample_value(body, "process_cpu_seconds_total") >= 0.19);
	assert_true(sample_value(body, "process_resident_memory_bytes") > 1 << 20);
	assert_true(sample_value(body, "process_open_fds") >= 3);
	assert_true(fabs(sample_value(body, "process_start_time_seconds") - time(NULL)) < 600);
	free(body);
	free(ct);

	/* Every scrape calls fill again. */
	assert_int_equal(http_get(port, "/metrics", false, &body, NULL), 200);
	assert_true(sample_value(body, "bpfprof_samples_total{mode=\"user\"}") == 1002);
	free(body);
	metrics__stop(m);
}

/* What the health callback of test_endpoint_healthz answers. */
struct health {
	bool ok;
	const char *reason;
	int calls;
};

static bool health(char *reason, size_t sz, void *arg)
{
	struct health *h = arg;

	h->calls++;
	if (!h->ok)
		snprintf(reason, sz, "%s", h->reason);
	return h->ok;
}

static void test_endpoint_healthz(void **state)
{
	struct health h = { .ok = true };
	struct metrics *m = metrics__start("127.0.0.1:0", NULL, health, &h);
	char *body;
	int port;

	assert_non_null(m);
	port = metrics__port(m);
	assert_int_equal(http_get(port, "/healthz", false, &body, NULL), 200);
	assert_string_equal(body, "ok\n");
	free(body);
	/* Asked at every request. */
	h = (struct health){ .ok = false, .reason = "no samples for 120 s" };
	assert_int_equal(http_get(port, "/healthz", false, &body, NULL), 503);
	assert_string_equal(body, "no samples for 120 s\n");
	assert_int_equal(h.calls, 1);
	free(body);
	h.ok = true;
	assert_int_equal(http_get(port, "/healthz", false, NULL, NULL), 200);
	assert_int_equal(http_get(port, "/nope", false, NULL, NULL), 404);
	assert_int_equal(http_get(port, "/metrics", true, NULL, NULL), 405);
	/* Without fill: the process metrics alone. */
	assert_int_equal(http_get(port, "/metrics", false, &body, NULL), 200);
	assert_true(check_exposition(body) >= 4);
	free(body);
	metrics__stop(m);
	/* Without a health callback: always healthy. */
	m = metrics__start("127.0.0.1:0", NULL, NULL, NULL);
	assert_non_null(m);
	assert_int_equal(http_get(metrics__port(m), "/healthz", false, NULL, NULL), 200);
	metrics__stop(m);
	metrics__stop(NULL);
}

/* A TCP connection from the loopback address from to 127.0.0.1:port that sends nothing. */
static int idle_connection(const char *from, int port)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, from, &src.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
	return fd;
}

/* How many of fds[0..n) the server closed (EOF or reset) within timeout_ms. */
static int closed_by_server(const int *fds, int n, int timeout_ms)
{
	struct pollfd pfd[64];
	int i, closed = 0;
	char c;

	assert_true(n <= 64);
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	poll(pfd, n, timeout_ms);
	for (i = 0; i < n; i++)
		closed += pfd[i].revents && recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0;
	return closed;
}

/*
 * Idle connections cannot lock the endpoint: 40 of them (more than the 32 it keeps open), from
 * another address or from the prober's own, and /healthz is still answered at once; the idle
 * ones shut to make room are the oldest of the address holding the most.
 */
static void test_endpoint_idle_connections(void **state)
{
	struct metrics *m = metrics__start("127.0.0.1:0", NULL, NULL, NULL);
	static const char *const from[] = { "127.0.0.2", "127.0.0.1" };
	int fds[40], port, i, k, shut;
	uint64_t t0, took_ms;
	char *body;

	assert_non_null(m);
	port = metrics__port(m);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 40; i++)
			fds[i] = idle_connection(from[k], port);
		t0 = now_ns();
		assert_int_equal(http_get(port, "/healthz", false, &body, NULL), 200);
		took_ms = (now_ns() - t0) / 1000000;
		print_message("%d idle connections from %s: /healthz in %llu ms\n", 40, from[k],
			      (unsigned long long)took_ms);
		assert_string_equal(body, "ok\n");
		free(body);
		assert_true(took_ms < 2000);
		/* 32 at most open: the 8 oldest went for the last idle ones, one more for curl. */
		shut = closed_by_server(fds, 9, 1000);
		assert_int_equal(shut, 9);
		/* The newest stay. */
		assert_int_equal(closed_by_server(fds + 9, 31, 0), 0);
		assert_int_equal(http_get(port, "/metrics", false, &body, NULL), 200);
		assert_true(sample_value(body, "bpfprof_http_connections_shut_total") >= 9);
		free(body);
		for (i = 0; i < 40; i++)
			close(fds[i]);
		/* The server sees them go before the next round. */
		usleep(300000);
	}
	metrics__stop(m);
}

static void test_endpoint_errors(void **state)
{
	struct metrics *m;

	assert_null(metrics__start("no-port", NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(metrics__start("127.0.0.1:99999", NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(metrics__start("[::1:80", NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	m = metrics__start("127.0.0.1:0", NULL, NULL, NULL);
	assert_non_null(m);
	{
		char addr[32];
		struct metrics *again;

		snprintf(addr, sizeof(addr), "127.0.0.1:%d", metrics__port(m));
		again = metrics__start(addr, NULL, NULL, NULL);
		assert_null(again);
		assert_int_equal(errno, EADDRINUSE);
	}
	metrics__stop(m);
	/* The port is free again once stopped (the socket was closed). */
	{
		m = metrics__start("127.0.0.1:0", NULL, NULL, NULL);
		char addr[32];
		int port = metrics__port(m);

		metrics__stop(m);
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		m = metrics__start(addr, NULL, NULL, NULL);
		assert_non_null(m);
		assert_int_equal(metrics__port(m), port);
		metrics__stop(m);
	}
}

static int setup(void **state)
{
	unsetenv("http_proxy");
	unsetenv("all_proxy");
	log__set_level(LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return 0;
}

static int teardown(void **state)
{
	curl_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_format),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_endpoint_scrape),
		cmocka_unit_test(test_endpoint_healthz),
		cmocka_unit_test(test_endpoint_idle_connections),
		cmocka_unit_test(test_endpoint_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

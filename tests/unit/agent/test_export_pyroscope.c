// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_export_pyroscope.c: the Pyroscope exporter against tests/mock/pyroscope.py on loopback (query,
 * body, auth headers, the push API's PushRequest, retries on 503 and 429, no retry on 400,
 * drop-oldest when the backend is
 * down, timeouts, flush deadline, a caller that never blocks), and the directory exporter
 * (atomic names, sanitized groups, rotation by size of our own files only).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "agent/export.h"
#include "util/log.h"
#include "push.pb-c.h"
#include "util/util.h"

#ifndef MOCK_PYROSCOPE
#define MOCK_PYROSCOPE "tests/mock/pyroscope.py"
#endif

#define MS 1000000ull

struct mock {
	pid_t pid;
	int port;
	char dir[PATH_MAX];
};

static char tmp_root[] = "/tmp/bpfprof-test-export-XXXXXX";
/* One mock for every test (python3 starts slowly): reset to a new directory by each. */
static struct mock mock;
static unsigned int dir_seq;

/* A fresh directory under the test's temp root. */
static void new_dir(char *out, size_t sz, const char *what)
{
	snprintf(out, sz, "%s/%s-%u", tmp_root, what, dir_seq++);
	assert_int_equal(mkdir(out, 0700), 0);
}

static char *slurp(const char *path, size_t *sz)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	buf[st.st_size] = '\0';
	close(fd);
	if (sz)
		*sz = st.st_size;
	return buf;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Starts the mock on port (0: a free one) saving into a new directory; waits until it listens. */
static void mock_start(struct mock *m, int port)
{
	char port_file[PATH_MAX + 16], port_arg[16], *text;
	uint64_t deadline = now_ns() + 10000 * MS;

	new_dir(m->dir, sizeof(m->dir), "mock");
	snprintf(port_file, sizeof(port_file), "%s/port", m->dir);
	snprintf(port_arg, sizeof(port_arg), "%d", port);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (!m->pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execlp("python3", "python3", "-I", "-S", MOCK_PYROSCOPE, "--dir", m->dir,
		       "--port", port_arg, "--port-file", port_file, (char *)NULL);
		_exit(127);
	}
	while (!(text = slurp(port_file, NULL))) {
		int status;

		if (waitpid(m->pid, &status, WNOHANG) == m->pid)
			fail_msg("mock %s exited with status %#x", MOCK_PYROSCOPE, status);
		if (now_ns() > deadline)
			fail_msg("mock did not listen within 10 s");
		usleep(20000);
	}
	m->port = atoi(text);
	free(text);
	assert_true(m->port > 0);
}

static void mock_stop(struct mock *m)
{
	if (m->pid <= 0)
		return;
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	m->pid = 0;
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	return size * n;
}

static void mock_post(const struct mock *m, const char *path, const char *query)
{
	char url[PATH_MAX + 64];
	long code = 0;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s?%s", m->port, path, query);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	assert_int_equal(code, 200);
	curl_easy_cleanup(c);
}

static void mock_control(const struct mock *m, const char *query)
{
	mock_post(m, "control", query);
}

/* The shared mock (started again if a test stopped it), saving into a new directory. */
static struct mock *mock_get(void)
{
	char q[PATH_MAX + 8];

	if (!mock.pid)
		mock_start(&mock, mock.port);
	new_dir(mock.dir, sizeof(mock.dir), "mock");
	snprintf(q, sizeof(q), "dir=%s", mock.dir);
	mock_post(&mock, "reset", q);
	return &mock;
}

/* Lines of the mock's requests.log: one per /ingest request. */
static int mock_requests(const struct mock *m)
{
	char path[PATH_MAX + 16], *text, *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/requests.log", m->dir);
	text = slurp(path, NULL);
	for (p = text; p && *p; p++)
		n += *p == '\n';
	free(text);
	return n;
}

/* The saved file SEQ.ext of the mock (NULL when absent). */
static char *mock_file(const struct mock *m, int seq, const char *ext, size_t *sz)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%d.%s", m->dir, seq, ext);
	return slurp(path, sz);
}

/* The url-decoded value of key in query string q (malloc'd), or NULL. */
static char *query_get(const char *q, const char *key)
{
	size_t klen = strlen(key);
	const char *p = q;

	while (p && *p) {
		const char *end = strchr(p, '&') ?: p + strlen(p);

		if (!strncmp(p, key, klen) && p[klen] == '=') {
			int n;
			char *v = curl_easy_unescape(NULL, p + klen + 1, end - p - klen - 1, &n);
			char *out = strdup(v);

			curl_free(v);
			return out;
		}
		p = *end ? end + 1 : NULL;
	}
	return NULL;
}

static void assert_query(const char *q, const char *key, const char *want)
{
	char *v = query_get(q, key);

	if (!v || strcmp(v, want))
		fail_msg("query %s: want %s=%s, got %s", q, key, want, v ?: "(none)");
	free(v);
}

/* The value of header name (case-insensitive) in the mock's SEQ.headers, malloc'd, or NULL. */
static char *mock_header(const struct mock *m, int seq, const char *name)
{
	char *text = mock_file(m, seq, "headers", NULL), *out = NULL;
	struct json_object *obj;

	assert_non_null(text);
	obj = json_tokener_parse(text);
	assert_non_null(obj);
	json_object_object_foreach(obj, k, v) {
		if (!strcasecmp(k, name))
			out = strdup(json_object_get_string(v));
	}
	json_object_put(obj);
	free(text);
	return out;
}

#define WAIT_FOR(cond, ms)                                                                     \
	do {                                                                                   \
		uint64_t _end = now_ns() + (ms) * MS;                                          \
		while (!(cond) && now_ns() < _end)                                             \
			usleep(5000);                                                          \
		if (!(cond))                                                                   \
			fail_msg("not within %d ms: %s", (int)(ms), #cond);                  \
	} while (0)

/* Profile i: a body "pprof-<i>" with a NUL and high bytes inside; service "svc", labels. */
static struct export_profile *profile(int i)
{
	struct export_label labels[] = {
		{ "service_name", "svc" },
		{ "node", "node-1" },
		{ "container", "web,1" },
	};
	char body[64];
	int n = snprintf(body, sizeof(body), "pprof-%d", i);
	struct export_profile *p;

	body[n++] = '\0';
	body[n++] = (char)0x8b;
	body[n++] = (char)0xff;
	p = export_profile__new(body, n, labels, ARRAY_SIZE(labels), 1700000000123456789ull,
				1700000060123456789ull, 19);
	assert_non_null(p);
	return p;
}

static struct pyroscope_exporter *exporter(const struct mock *m, int port,
					   struct pyroscope_opts *o)
{
	char url[64];
	struct pyroscope_exporter *e;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", m ? m->port : port);
	o->url = url;
	o->backoff_base_ms = o->backoff_base_ms ?: 20;
	o->backoff_max_ms = o->backoff_max_ms ?: 100;
	o->timeout_ms = o->timeout_ms ?: 5000;
	e = pyroscope_exporter__new(o);
	assert_non_null(e);
	return e;
}

static struct export_stats stats(struct pyroscope_exporter *e)
{
	struct export_stats st;

	pyroscope_exporter__stats(e, &st);
	return st;
}

static void test_ingest_name(void **state)
{
	struct export_label labels[] = {
		{ "service_name", " my app/v1 " },
		{ "k8s.pod", "web-1{a}" },
		{ "empty", "  " },
		{ "__name__", "x" },
		{ "9lives", "a=b, c" },
	};
	struct export_profile *p = export_profile__new("x", 1, labels, ARRAY_SIZE(labels), 0, 0, 1);
	char *name = pyroscope__ingest_name(p);

	assert_string_equal(name, "my_app/v1{k8s_pod=web-1_a_,_9lives=a=b_ c}");
	free(name);
	export_profile__free(p);
}

/* The value of label name in series s, or NULL. */
static const char *series_label(const Push__V1__RawProfileSeries *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_labels; i++) {
		if (!strcmp(s->labels[i]->name, name))
			return s->labels[i]->value;
	}
	return NULL;
}

static bool is_uuid_v4(const char *id)
{
	size_t i;

	if (strlen(id) != 36 || id[14] != '4' || !strchr("89ab", id[19]))
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23 ? id[i] != '-' : !strchr("0123456789abcdef", id[i]))
			return false;
	}
	return true;
}

/* The push body decodes as push.proto's PushRequest: __name__ and __delta__ first, then the
 * profile's labels as Prometheus label names with UTF-8 values, the bytes and the ID. */
static void test_push_body(void **state)
{
	struct export_label labels[] = {
		{ "service_name", "svc" },
		{ "k8s.pod", "web-1" },
		{ "__name__", "not this" },
		{ "empty", "" },
		{ "9lives", "caf\xc3\xa9 \xff\x01" "end" },
	};
	struct export_profile *p = export_profile__new("pp\0of", 6, labels, ARRAY_SIZE(labels),
						       0, 0, 19);
	struct export_profile *d = export_profile__dup(p), *q = export_profile__new(
		"x", 1, labels, 1, 0, 0, 19);
	Push__V1__PushRequest *req;
	Push__V1__RawProfileSeries *s;
	void *body;
	size_t sz;

	assert_true(is_uuid_v4(p->id));
	assert_string_equal(d->id, p->id);	/* a copy is the same profile */
	assert_string_not_equal(q->id, p->id);
	assert_int_equal(pyroscope__push_body((const struct export_profile *const *)&p, 1, &body,
					      &sz), 0);
	req = push__v1__push_request__unpack(NULL, sz, body);
	assert_non_null(req);
	assert_int_equal(req->n_series, 1);
	s = req->series[0];
	assert_int_equal(s->n_labels, 5);
	assert_string_equal(s->labels[0]->name, "__name__");
	assert_string_equal(s->labels[0]->value, "process_cpu");
	assert_string_equal(s->labels[1]->name, "__delta__");
	assert_string_equal(s->labels[1]->value, "false");
	assert_string_equal(series_label(s, "service_name"), "svc");
	assert_string_equal(series_label(s, "k8s_pod"), "web-1");
	assert_null(series_label(s, "empty"));
	/* Valid UTF-8 kept, an invalid byte and a control character replaced. */
	assert_string_equal(series_label(s, "_9lives"), "caf\xc3\xa9 __end");
	assert_int_equal(s->n_samples, 1);
	assert_int_equal(s->samples[0]->raw_profile.len, 6);
	assert_memory_equal(s->samples[0]->raw_profile.data, "pp\0of", 6);
	assert_string_equal(s->samples[0]->id, p->id);
	push__v1__push_request__free_unpacked(req, NULL);
	free(body);
	export_profile__free(p);
	export_profile__free(d);
	export_profile__free(q);
}

/* --pyroscope-api push against the mock, which decodes the request like Pyroscope; a retried
 * profile keeps its ID (the server's deduplication key). */
static void test_push_delivery(void **state)
{
	struct mock m;
	struct pyroscope_opts o = { .api = PYROSCOPE_API_PUSH, .tenant_id = "team-a" };
	struct export_profile *p = profile(1);
	struct pyroscope_exporter *e;
	char *body, *id, *labels, *h;
	size_t sz;

	m = *mock_get();
	mock_control(&m, "mode=503&count=1");
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, export_profile__dup(p)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);
	assert_int_equal(stats(e).retries, 1);

	/* Request 1 got the 503; request 2 is the saved one. */
	body = mock_file(&m, 2, "1.body", &sz);
	assert_non_null(body);
	assert_int_equal(sz, p->size);
	assert_memory_equal(body, p->data, sz);
	id = mock_file(&m, 2, "1.id", NULL);
	assert_string_equal(id ?: "", p->id);
	labels = mock_file(&m, 2, "1.labels", NULL);
	assert_non_null(labels);
	assert_non_null(strstr(labels, "[\"__name__\", \"process_cpu\"]"));
	assert_non_null(strstr(labels, "[\"service_name\", \"svc\"]"));
	assert_non_null(strstr(labels, "[\"container\", \"web,1\"]"));
	h = mock_header(&m, 2, "Content-Type");
	assert_string_equal(h ?: "", "application/proto");
	free(h);
	h = mock_header(&m, 2, "X-Scope-OrgID");
	assert_string_equal(h ?: "", "team-a");
	free(h);
	pyroscope_exporter__free(e);
	free(body);
	free(id);
	free(labels);
	export_profile__free(p);
}

/* Profiles queued one after another go in one PushRequest, one series each, in order. */
static void test_push_batch(void **state)
{
	struct mock m;
	struct pyroscope_opts o = { .api = PYROSCOPE_API_PUSH };
	struct export_profile *p[3] = { profile(1), profile(2), profile(3) };
	struct pyroscope_exporter *e;
	char *body, *id;
	size_t sz;
	size_t one = p[0]->size;	/* p[0] is freed before the last check */
	int i;

	m = *mock_get();
	e = exporter(&m, 0, &o);
	for (i = 0; i < 3; i++)
		assert_int_equal(pyroscope_exporter__enqueue(e, export_profile__dup(p[i])), 0);
	WAIT_FOR(stats(e).sent == 3, 5000);
	assert_int_equal(mock_requests(&m), 1);
	for (i = 0; i < 3; i++) {
		body = mock_file(&m, 1, i == 0 ? "1.body" : i == 1 ? "2.body" : "3.body", &sz);
		assert_non_null(body);
		assert_int_equal(sz, p[i]->size);
		assert_memory_equal(body, p[i]->data, sz);
		id = mock_file(&m, 1, i == 0 ? "1.id" : i == 1 ? "2.id" : "3.id", NULL);
		assert_string_equal(id ?: "", p[i]->id);
		free(body);
		free(id);
		export_profile__free(p[i]);
	}
	assert_int_equal(stats(e).bytes_sent, 3 * one);
	pyroscope_exporter__free(e);
}

/* One profile: the query Pyroscope parses and the same body bytes; auth and extra headers. */
static void test_ingest_query_and_body(void **state)
{
	struct mock m;
	char auth_file[PATH_MAX + 16], *q, *body, *h;
	const char *headers[] = { "X-Extra: yes" };
	struct pyroscope_opts o = { .tenant_id = "team-a", .headers = headers, .headers_cnt = 1 };
	struct export_profile *p = profile(1);
	struct pyroscope_exporter *e;
	struct export_stats st;
	size_t sz;

	m = *mock_get();
	snprintf(auth_file, sizeof(auth_file), "%s/basic", m.dir);
	write_text(auth_file, "user:pa:ss\n");
	o.basic_auth_file = auth_file;
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, export_profile__dup(p)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);

	q = mock_file(&m, 1, "query", NULL);
	assert_non_null(q);
	assert_query(q, "name", "svc{node=node-1,container=web_1}");
	assert_query(q, "from", "1700000000");
	assert_query(q, "until", "1700000061");
	assert_query(q, "format", "pprof");
	assert_query(q, "spyName", "bpfprof");
	assert_query(q, "sampleRate", "19");
	body = mock_file(&m, 1, "body", &sz);
	assert_int_equal(sz, p->size);
	assert_memory_equal(body, p->data, sz);
	h = mock_header(&m, 1, "X-Scope-OrgID");
	assert_string_equal(h ?: "", "team-a");
	free(h);
	h = mock_header(&m, 1, "X-Extra");
	assert_string_equal(h ?: "", "yes");
	free(h);
	/* base64("user:pa:ss"): libcurl splits at the first colon. */
	h = mock_header(&m, 1, "Authorization");
	assert_string_equal(h ?: "", "Basic dXNlcjpwYTpzcw==");
	free(h);

	st = stats(e);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.bytes_sent, p->size);
	assert_int_equal(st.queue_depth, 0);
	pyroscope_exporter__free(e);
	free(q);
	free(body);
	export_profile__free(p);
}

/* A bearer token file is read again when it changes (rotated Kubernetes tokens). */
static void test_bearer_token_rotation(void **state)
{
	struct pyroscope_opts o = {};
	char token_file[PATH_MAX + 16], *h;
	struct pyroscope_exporter *e;
	struct mock m;

	m = *mock_get();
	snprintf(token_file, sizeof(token_file), "%s/token", m.dir);
	write_text(token_file, "first-token\n");
	o.bearer_token_file = token_file;
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(1)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);
	write_text(token_file, "second-token-longer\n");
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(2)), 0);
	WAIT_FOR(stats(e).sent == 2, 5000);
	h = mock_header(&m, 1, "Authorization");
	assert_string_equal(h ?: "", "Bearer first-token");
	free(h);
	h = mock_header(&m, 2, "Authorization");
	assert_string_equal(h ?: "", "Bearer second-token-longer");
	free(h);
	pyroscope_exporter__free(e);

	/* A missing credential file fails at start. */
	o.bearer_token_file = "/nonexistent/token";
	o.url = "http://127.0.0.1:1";
	assert_null(pyroscope_exporter__new(&o));
	assert_int_equal(errno, ENOENT);
}

/* Three 503s, then 200: delivered once, with 3 retries counted. */
static void test_retry_503(void **state)
{
	struct pyroscope_opts o = {};
	struct pyroscope_exporter *e;
	struct export_stats st;
	struct mock m;
	char *body;

	m = *mock_get();
	mock_control(&m, "mode=503&count=3");
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(7)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);
	st = stats(e);
	assert_int_equal(st.retries, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.dropped, 0);
	assert_string_equal(st.last_error, "HTTP 503: unavailable");
	assert_int_equal(mock_requests(&m), 4);
	body = mock_file(&m, 4, "body", NULL);
	assert_string_equal(body, "pprof-7");
	free(body);
	pyroscope_exporter__free(e);
}

/* 429 with Retry-After: 1 s waited although the backoff would retry within 100 ms. */
static void test_retry_after_429(void **state)
{
	struct pyroscope_opts o = { .backoff_max_ms = 5000 };
	struct pyroscope_exporter *e;
	uint64_t t0, took_ms;
	struct mock m;

	m = *mock_get();
	mock_control(&m, "mode=429&count=1&retry_after=1");
	e = exporter(&m, 0, &o);
	t0 = now_ns();
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(1)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);
	took_ms = (now_ns() - t0) / MS;
	if (took_ms < 950 || took_ms > 3000)
		fail_msg("delivered after %llu ms, want about 1000 (Retry-After: 1)",
			 (unsigned long long)took_ms);
	assert_int_equal(stats(e).retries, 1);
	assert_int_equal(mock_requests(&m), 2);
	pyroscope_exporter__free(e);
}

/* 400: counted as failed, never retried; the next profile goes through. */
static void test_400_not_retried(void **state)
{
	struct pyroscope_opts o = {};
	struct pyroscope_exporter *e;
	struct export_stats st;
	struct mock m;

	m = *mock_get();
	mock_control(&m, "mode=400&count=1");
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(1)), 0);
	WAIT_FOR(stats(e).failed == 1, 5000);
	/* Ten backoff periods: a retry would have come. */
	usleep(300000);
	st = stats(e);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.queue_depth, 0);
	assert_string_equal(st.last_error, "HTTP 400: invalid name");
	assert_true(st.last_error_time_ns > 0);
	assert_int_equal(mock_requests(&m), 1);
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(2)), 0);
	WAIT_FOR(stats(e).sent == 1, 5000);
	assert_int_equal(stats(e).failed, 1);
	pyroscope_exporter__free(e);
}

/*
 * Backend down, queue of 4: ten enqueues return at once, six (the oldest) are dropped; when the
 * backend is back, the four newest arrive in order.
 */
static void test_queue_full_drops_oldest(void **state)
{
	struct pyroscope_opts o = { .queue_size = 4, .backoff_base_ms = 50, .backoff_max_ms = 100 };
	struct pyroscope_exporter *e;
	uint64_t t0, worst = 0;
	struct export_stats st;
	struct mock m;
	int i, port;

	m = *mock_get();
	port = m.port;
	mock_stop(&mock);
	e = exporter(NULL, port, &o);
	for (i = 1; i <= 10; i++) {
		struct export_profile *p = profile(i);

		t0 = now_ns();
		assert_int_equal(pyroscope_exporter__enqueue(e, p), 0);
		worst = max_t(uint64_t, worst, now_ns() - t0);
	}
	if (worst > 50 * MS)
		fail_msg("an enqueue took %llu us", (unsigned long long)worst / 1000);
	/* The one in flight when it was dropped is counted when its attempt ends. */
	WAIT_FOR(stats(e).dropped == 6, 5000);
	st = stats(e);
	assert_int_equal(st.queue_depth, 4);
	assert_int_equal(st.sent, 0);
	/* The backend is still tried. */
	WAIT_FOR(stats(e).retries >= 1, 2000);
	assert_non_null(strstr(stats(e).last_error, "onnect"));

	/* Back on the same port, saving from its first request on (no reset in between). */
	mock_start(&mock, port);
	m = mock;
	WAIT_FOR(stats(e).sent == 4, 5000);
	for (i = 1; i <= 4; i++) {
		char *body = mock_file(&m, i, "body", NULL), want[16];

		snprintf(want, sizeof(want), "pprof-%d", i + 6);
		assert_string_equal(body ?: "", want);
		free(body);
	}
	st = stats(e);
	assert_int_equal(st.dropped, 6);
	assert_int_equal(st.queue_depth, 0);
	pyroscope_exporter__free(e);
}

/* The same with the push API: a full queue drops the oldest even from a batch in flight, and
 * the four kept go in one request once the backend is back. */
static void test_push_queue_full(void **state)
{
	struct pyroscope_opts o = { .api = PYROSCOPE_API_PUSH, .queue_size = 4,
				    .backoff_base_ms = 50, .backoff_max_ms = 100 };
	struct pyroscope_exporter *e;
	struct export_stats st;
	char name[16], *body, want[16];
	struct mock m;
	int i, port;

	m = *mock_get();
	port = m.port;
	mock_stop(&mock);
	e = exporter(NULL, port, &o);
	for (i = 1; i <= 10; i++)
		assert_int_equal(pyroscope_exporter__enqueue(e, profile(i)), 0);
	WAIT_FOR(stats(e).dropped == 6, 5000);
	st = stats(e);
	assert_int_equal(st.queue_depth, 4);
	assert_int_equal(st.sent, 0);

	mock_start(&mock, port);
	m = mock;
	WAIT_FOR(stats(e).sent == 4, 5000);
	assert_int_equal(mock_requests(&m), 1);
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "%d.body", i);
		snprintf(want, sizeof(want), "pprof-%d", i + 6);
		body = mock_file(&m, 1, name, NULL);
		assert_string_equal(body ?: "", want);
		free(body);
	}
	st = stats(e);
	assert_int_equal(st.dropped, 6);
	assert_int_equal(st.queue_depth, 0);
	pyroscope_exporter__free(e);
}

/* A stalled server: the request times out and is retried; enqueue meanwhile does not block. */
static void test_stall_timeout(void **state)
{
	struct pyroscope_opts o = { .timeout_ms = 500 };
	struct pyroscope_exporter *e;
	uint64_t t0;
	struct mock m;

	m = *mock_get();
	mock_control(&m, "mode=stall&count=1&seconds=3");
	e = exporter(&m, 0, &o);
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(1)), 0);
	/* Wait until the stalled request is in flight. */
	WAIT_FOR(mock_requests(&m) == 1, 5000);
	t0 = now_ns();
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(2)), 0);
	if (now_ns() - t0 > 50 * MS)
		fail_msg("enqueue during a stalled request took %llu ms",
			 (unsigned long long)(now_ns() - t0) / MS);
	WAIT_FOR(stats(e).sent == 2, 5000);
	assert_int_equal(stats(e).retries, 1);
	assert_non_null(strstr(stats(e).last_error, "imed out"));
	pyroscope_exporter__free(e);
}

/* Shutdown: with a stalled backend the flush keeps its deadline and counts the rest dropped. */
static void test_flush_deadline(void **state)
{
	struct pyroscope_opts o = {};
	struct pyroscope_exporter *e;
	struct export_stats st;
	uint64_t t0, took_ms;
	struct mock m;
	int i;

	m = *mock_get();
	mock_control(&m, "mode=stall&count=-1&seconds=20");
	e = exporter(&m, 0, &o);
	for (i = 0; i < 3; i++)
		assert_int_equal(pyroscope_exporter__enqueue(e, profile(i)), 0);
	WAIT_FOR(mock_requests(&m) == 1, 5000);
	t0 = now_ns();
	assert_int_equal(pyroscope_exporter__flush(e, 500), -ETIMEDOUT);
	took_ms = (now_ns() - t0) / MS;
	/* libcurl's progress callback runs about once a second: the abort lands within that. */
	if (took_ms < 450 || took_ms > 2000)
		fail_msg("flush took %llu ms, want about 500", (unsigned long long)took_ms);
	st = stats(e);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.queue_depth, 0);
	/* After the flush: refused and counted. */
	assert_int_equal(pyroscope_exporter__enqueue(e, profile(9)), -ESHUTDOWN);
	assert_int_equal(stats(e).dropped, 4);
	pyroscope_exporter__free(e);
}

/* Shutdown with a healthy backend: everything queued is delivered. */
static void test_flush_delivers(void **state)
{
	struct pyroscope_opts o = {};
	struct pyroscope_exporter *e;
	struct mock m;
	int i;

	m = *mock_get();
	e = exporter(&m, 0, &o);
	for (i = 0; i < 5; i++)
		assert_int_equal(pyroscope_exporter__enqueue(e, profile(i)), 0);
	assert_int_equal(pyroscope_exporter__flush(e, 5000), 0);
	assert_int_equal(stats(e).sent, 5);
	assert_int_equal(stats(e).dropped, 0);
	assert_int_equal(mock_requests(&m), 5);
	pyroscope_exporter__free(e);
}

static void test_bad_options(void **state)
{
	const char *headers[] = { "no colon here" };
	struct pyroscope_opts o = { .url = "http://127.0.0.1:1" };

	o.headers = headers;
	o.headers_cnt = 1;
	assert_null(pyroscope_exporter__new(&o));
	assert_int_equal(errno, EINVAL);
	o = (struct pyroscope_opts){};
	assert_null(pyroscope_exporter__new(&o));
	assert_int_equal(errno, EINVAL);
}

/* ---- directory exporter ---- */

/* Names in dir (hidden ones too: temp files must not stay), sorted, joined with ' '. */
static char *list_dir(const char *dir)
{
	struct dirent **ents;
	char *out = calloc(1, 4096);
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
			strcat(out, *out ? " " : "");
			strcat(out, ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	return out;
}

static struct export_profile *dir_profile(uint64_t start_s, size_t size, const char *svc)
{
	struct export_label l[] = { { "service_name", svc } };
	char *data = malloc(size);
	struct export_profile *p;

	memset(data, 'a' + start_s % 26, size);
	p = export_profile__new(data, size, l, 1, start_s * 1000000000ull,
				(start_s + 60) * 1000000000ull, 19);
	free(data);
	assert_non_null(p);
	return p;
}

static void test_dir_write(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], *names, *data;
	struct export_profile *p = dir_profile(1700000000, 100, "web");
	struct dir_exporter *d;
	struct export_stats st;
	struct stat sb;
	size_t sz;

	new_dir(dir, sizeof(dir), "out");
	strcat(dir, "/profiles");	/* created by the exporter */
	d = dir_exporter__new(dir, 0);
	assert_non_null(d);
	assert_int_equal(dir_exporter__write(d, p, NULL), 0);
	/* The same second and group again: a new name, never a replaced file. */
	assert_int_equal(dir_exporter__write(d, p, NULL), 0);
	assert_int_equal(dir_exporter__write(d, p, "../../etc/x y"), 0);
	names = list_dir(dir);
	assert_string_equal(names, "20231114T221320Z__._.._etc_x_y.pb.gz "
				   "20231114T221320Z_web.1.pb.gz 20231114T221320Z_web.pb.gz");
	free(names);
	snprintf(path, sizeof(path), "%s/20231114T221320Z_web.pb.gz", dir);
	data = slurp(path, &sz);
	assert_int_equal(sz, p->size);
	assert_memory_equal(data, p->data, sz);
	free(data);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	dir_exporter__stats(d, &st);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.bytes_sent, 300);
	assert_int_equal(st.dir_bytes, 300);
	assert_int_equal(st.failed, 0);
	dir_exporter__free(d);
	export_profile__free(p);
}

/*
 * Rotation: a cap of 1000 bytes with 300-byte files keeps the 3 newest; files not ours (other
 * names, other extensions) stay; our files from a previous run count and go first; a crash's
 * temp file is removed at open.
 */
static void test_dir_rotation(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], old[400], *names;
	struct dir_exporter *d;
	struct export_stats st;
	int i;

	new_dir(dir, sizeof(dir), "rot");
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_text(path, "not ours");
	snprintf(path, sizeof(path), "%s/20000101T000000Z_other.pprof", dir);
	write_text(path, "not ours either");
	snprintf(path, sizeof(path), "%s/.bpfprof-0123456789abcdef", dir);
	write_text(path, "a temp file left by a crash");
	memset(old, 'o', 300);
	old[300] = '\0';
	snprintf(path, sizeof(path), "%s/20000101T000000Z_previous.pb.gz", dir);
	write_text(path, old);

	d = dir_exporter__new(dir, 1000);
	assert_non_null(d);
	dir_exporter__stats(d, &st);
	assert_int_equal(st.dir_bytes, 300);
	for (i = 0; i < 5; i++) {
		struct export_profile *p = dir_profile(1700000000 + 60 * i, 300, "app");

		assert_int_equal(dir_exporter__write(d, p, NULL), 0);
		export_profile__free(p);
	}
	names = list_dir(dir);
	assert_string_equal(names, "20000101T000000Z_other.pprof 20231114T221520Z_app.pb.gz "
				   "20231114T221620Z_app.pb.gz 20231114T221720Z_app.pb.gz "
				   "notes.txt");
	free(names);
	dir_exporter__stats(d, &st);
	assert_int_equal(st.sent, 5);
	assert_int_equal(st.deleted, 3);
	assert_int_equal(st.dir_bytes, 900);

	/* A file larger than the cap is kept (the newest always stays), the rest go. */
	{
		struct export_profile *big = dir_profile(1700001000, 1500, "big");

		assert_int_equal(dir_exporter__write(d, big, NULL), 0);
		export_profile__free(big);
	}
	names = list_dir(dir);
	assert_string_equal(names, "20000101T000000Z_other.pprof 20231114T223000Z_big.pb.gz "
				   "notes.txt");
	free(names);
	dir_exporter__free(d);

	/* A directory that cannot be created. */
	assert_null(dir_exporter__new("/nonexistent/a/b", 0));
	assert_int_equal(errno, ENOENT);
}

static int setup(void **state)
{
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	log__set_level(getenv("V") ? LOG_DEBUG : LOG_WARN);
	assert_non_null(mkdtemp(tmp_root));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	if (!getenv("KEEP"))
		assert_int_equal(system(cmd), 0);
	mock_stop(&mock);
	curl_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_name),
		cmocka_unit_test(test_ingest_query_and_body),
		cmocka_unit_test(test_push_body),
		cmocka_unit_test(test_push_delivery),
		cmocka_unit_test(test_push_batch),
		cmocka_unit_test(test_bearer_token_rotation),
		cmocka_unit_test(test_retry_503),
		cmocka_unit_test(test_retry_after_429),
		cmocka_unit_test(test_400_not_retried),
		cmocka_unit_test(test_queue_full_drops_oldest),
		cmocka_unit_test(test_push_queue_full),
		cmocka_unit_test(test_stall_timeout),
		cmocka_unit_test(test_flush_deadline),
		cmocka_unit_test(test_flush_delivers),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_dir_write),
		cmocka_unit_test(test_dir_rotation),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_kube.c: the pod metadata cache against tests/mock/kube_api.py (a loopback mock API
 * server, python3): lookups after the LIST, after MODIFIED/DELETED/BOOKMARK watch events, after a
 * 410 Gone relist (as HTTP status and as ERROR event), a failed first LIST retried, expiry of
 * replaced ids, a wrong token, and configuration errors. Without python3 the mock tests are
 * skipped, and fail under CI=true.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_util.h"
#include "agent/kube.h"
#include "util/log.h"
#include "util/util.h"

#ifndef KUBE_MOCK
#define KUBE_MOCK "tests/mock/kube_api.py"
#endif

/* The mock's pods (tests/mock/kube_api.py): container ids are a hex pair 32 times. */
#define UID_WEB "5d1c7a0e-3b2f-4c8e-9a61-0f2b7c4d8e11"
#define UID_DB "8f0e4a52-6c1d-4b7a-b3e9-2a5c6d7e8f22"
#define UID_API "c3a9e1f4-7b2d-4e6a-8c5f-1d0b9a8e7f33"
#define UID_OTHER "e7b2c4d6-1a3f-4e5b-9c7d-8f0a2b4c6d44"
#define ID32(p) p p p p p p p p p p p p p p p p p p p p p p p p p p p p p p p p
#define ID_SETUP ID32("0a")	/* web-0's init container */
#define ID_NGINX ID32("1a")	/* web-0's nginx, replaced by ID_NGINX2 (MODIFIED) */
#define ID_SIDECAR ID32("2a")
#define ID_NGINX2 ID32("3a")
#define ID_POSTGRES ID32("4b")	/* db-0 (cri-o), DELETED */
#define ID_API ID32("5c")	/* api-0 (docker): only a relist sees it */
#define ID_OTHER ID32("6d")	/* a pod of another node */
#define TOKEN "test-token-0123"
#define WAIT_MS 10000

struct mock {
	pid_t pid;
	int port;
	char url[64];
	char dir[64];
	char token_file[128];
	char ca_file[128];	/* --tls: the mock's certificate */
};

/* python3 is missing or did not start: a failure under CI=true, else the test is skipped. */
static void no_mock(const char *why)
{
	const char *ci = getenv("CI");

	if (ci && !strcmp(ci, "true"))
		fail_msg("start %s: %s; CI=true makes this a failure", KUBE_MOCK, why);
	print_message("skipped: start %s: %s\n", KUBE_MOCK, why);
	skip();
}

/*
 * Starts the mock on a free loopback port; the token file holds token. tls: HTTPS, its
 * certificate in m->ca_file.
 */
static void mock_start_tls(struct mock *m, const char *gone, int fail_lists, const char *token,
			   bool tls)
{
	const char *python = getenv("PYTHON") ?: "python3";
	char fail_arg[16], line[32] = "";
	char *argv[] = { (char *)python, (char *)KUBE_MOCK, "--token", TOKEN, "--gone",
			 (char *)gone, "--fail-lists", fail_arg, tls ? "--tls" : NULL, m->dir,
			 NULL };
	posix_spawn_file_actions_t fa;
	struct pollfd pfd;
	size_t len = 0;
	int pipefd[2], err;
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(fail_arg, sizeof(fail_arg), "%d", fail_lists);
	snprintf(m->dir, sizeof(m->dir), "/tmp/test_kube.XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	snprintf(m->token_file, sizeof(m->token_file), "%s/token", m->dir);
	snprintf(m->ca_file, sizeof(m->ca_file), "%s/ca.crt", m->dir);
	f = fopen(m->token_file, "w");
	assert_non_null(f);
	/* A trailing newline, as kubelet's projected token files have none but Secrets may. */
	fprintf(f, "%s\n", token);
	fclose(f);

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	err = posix_spawnp(&m->pid, python, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err) {
		close(pipefd[0]);
		m->pid = 0;
		no_mock(strerror(err));
	}
	/* The port, alone on the first line (a pyenv shim takes seconds to start python). */
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	while (len < sizeof(line) - 1 && !strchr(line, '\n') && poll(&pfd, 1, 30000) > 0) {
		ssize_t n = read(pipefd[0], line + len, sizeof(line) - 1 - len);

		if (n <= 0)
			break;
		len += n;
		line[len] = '\0';
	}
	close(pipefd[0]);
	m->port = atoi(line);
	if (m->port <= 0) {
		kill(m->pid, SIGTERM);
		waitpid(m->pid, NULL, 0);
		m->pid = 0;
		no_mock(tls ? "no port on its first line (python3 or openssl missing or failing)" :
			"no port on its first line (python3 missing or failing)");
	}
	snprintf(m->url, sizeof(m->url), "%s://127.0.0.1:%d", tls ? "https" : "http", m->port);
}

static void mock_start(struct mock *m, const char *gone, int fail_lists, const char *token)
{
	mock_start_tls(m, gone, fail_lists, token, false);
}

static void mock_stop(struct mock *m)
{
	if (m->pid > 0) {
		kill(m->pid, SIGTERM);
		waitpid(m->pid, NULL, 0);
	}
	m->pid = 0;
	if (m->dir[0]) {
		char key[sizeof(m->dir) + 16];

		snprintf(key, sizeof(key), "%s/tls.key", m->dir);
		unlink(key);
		unlink(m->ca_file);
		unlink(m->token_file);
		rmdir(m->dir);
	}
	m->dir[0] = '\0';
}

/* What a test started: stopped by teardown() even when an assertion ends the test early. */
struct fixture {
	struct mock m;
	struct kube *k;
};

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	kube__stop(f->k);
	mock_stop(&f->m);
	free(f);
	return 0;
}

static size_t collect(char *p, size_t sz, size_t n, void *arg)
{
	FILE *f = arg;

	return fwrite(p, sz, n, f) * sz;
}

/* A request to the mock's control paths: the response body as JSON (caller puts), or NULL. */
static struct json_object *mock_call(struct mock *m, const char *path, bool post)
{
	struct json_object *o = NULL;
	CURL *c = curl_easy_init();
	char url[128], *body = NULL;
	size_t body_sz = 0;
	FILE *f = open_memstream(&body, &body_sz);

	assert_non_null(c);
	assert_non_null(f);
	snprintf(url, sizeof(url), "%s%s", m->url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (!strncmp(m->url, "https:", 6))
		curl_easy_setopt(c, CURLOPT_CAINFO, m->ca_file);
	if (post)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	if (curl_easy_perform(c) == CURLE_OK) {
		fclose(f);
		o = json_tokener_parse(body);
	} else {
		fclose(f);
	}
	free(body);
	curl_easy_cleanup(c);
	return o;
}

/* The mock's list of strings at key, joined with ',' ("100,105"). */
/* Lets the mock's first watch send its events. */
static void mock_release(struct mock *m)
{
	struct json_object *o = mock_call(m, "/mock/release", true);

	assert_non_null(o);
	json_object_put(o);
}

static void mock_stat_list(struct mock *m, const char *key, char *out, size_t sz)
{
	struct json_object *st = mock_call(m, "/mock/stats", false), *arr;
	size_t i, len = 0;

	out[0] = '\0';
	assert_non_null(st);
	assert_true(json_object_object_get_ex(st, key, &arr));
	for (i = 0; i < json_object_array_length(arr); i++)
		len += snprintf(out + len, sz - min_t(size_t, len, sz), "%s%s", i ? "," : "",
				json_object_get_string(json_object_array_get_idx(arr, i)));
	json_object_put(st);
}

static int mock_stat_int(struct mock *m, const char *key)
{
	struct json_object *st = mock_call(m, "/mock/stats", false), *v;
	int n;

	assert_non_null(st);
	assert_true(json_object_object_get_ex(st, key, &v));
	n = json_object_get_int(v);
	json_object_put(st);
	return n;
}

enum stat_field { ST_LISTS, ST_RELISTS, ST_EVENTS, ST_ERRORS };

static uint64_t stat_of(struct kube *k, enum stat_field f)
{
	struct kube_stats st;

	kube__stats(k, &st);
	switch (f) {
	case ST_LISTS:
		return st.lists;
	case ST_RELISTS:
		return st.relists;
	case ST_EVENTS:
		return st.events;
	case ST_ERRORS:
		return st.errors;
	}
	return 0;
}

/* Polls until the counter reaches min (true) or WAIT_MS pass. */
static bool wait_stat(struct kube *k, enum stat_field f, uint64_t min)
{
	for (int i = 0; i < WAIT_MS / 10; i++) {
		if (stat_of(k, f) >= min)
			return true;
		usleep(10000);
	}
	return false;
}

static bool wait_mock_list(struct mock *m, const char *key, const char *want)
{
	char got[256];

	for (int i = 0; i < WAIT_MS / 50; i++) {
		mock_stat_list(m, key, got, sizeof(got));
		if (!strcmp(got, want))
			return true;
		usleep(50000);
	}
	print_error("mock %s: '%s', want '%s'\n", key, got, want);
	return false;
}

/* kube__lookup(id) finds container name of pod ns/pod (uid) through runtime. */
static void assert_container(struct kube *k, const char *id, const char *ns, const char *pod,
			     const char *uid, const char *name, const char *runtime,
			     const char *app)
{
	struct kube_pod p;
	int err = kube__lookup(k, id, &p);

	if (err)
		fail_msg("lookup %.8s...: %d, want %s/%s %s", id, err, ns, pod, name);
	if (strcmp(p.namespace, ns) || strcmp(p.pod, pod) || strcmp(p.pod_uid, uid) ||
	    strcmp(p.container, name) || strcmp(p.runtime, runtime) || strcmp(p.app, app))
		fail_msg("lookup %.8s...: %s/%s (%s) container %s runtime %s app %s, want "
			 "%s/%s (%s) container %s runtime %s app %s", id, p.namespace, p.pod,
			 p.pod_uid, p.container, p.runtime, p.app, ns, pod, uid, name, runtime,
			 app);
}

static void assert_unknown(struct kube *k, const char *id)
{
	struct kube_pod p;
	int err = kube__lookup(k, id, &p);

	if (err != -ENOENT)
		fail_msg("lookup %.8s...: %d (%s/%s %s), want -ENOENT", id, err,
			 err ? "" : p.namespace, err ? "" : p.pod, err ? "" : p.container);
}

static struct kube *start(struct mock *m, uint32_t ttl_ms)
{
	struct kube_opts o = {
		.api_url = m->url,
		.token_file = m->token_file,
		.ca_file = "",
		.node_name = "node-1",
		.deleted_ttl_ms = ttl_ms,
	};
	struct kube *k = kube__start(&o);

	assert_non_null(k);
	return k;
}

/* The whole sequence: LIST, watch events, 410 Gone (gone: "http" or "event"), relist. */
static void run_list_watch_gone(struct fixture *f, const char *gone)
{
	struct mock *m = &f->m;
	struct kube_stats st;
	struct kube_pod p;
	struct kube *k;
	uint64_t t0;

	mock_start(m, gone, 0, TOKEN);
	k = f->k = start(m, 0);

	/* After the LIST (resourceVersion=0: from the API server's cache). */
	assert_int_equal(kube__wait_synced(k, WAIT_MS), 0);
	assert_container(k, ID_NGINX, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	assert_container(k, ID_SIDECAR, "shop", "web-0", UID_WEB, "sidecar", "containerd", "web");
	assert_container(k, ID_SETUP, "shop", "web-0", UID_WEB, "setup", "containerd", "web");
	assert_container(k, ID_POSTGRES, "data", "db-0", UID_DB, "postgres", "cri-o", "db");
	assert_unknown(k, ID_NGINX2);
	assert_unknown(k, ID_OTHER);
	assert_unknown(k, ID_API);
	assert_int_equal(kube__lookup_pod(k, UID_DB, &p), 0);
	assert_string_equal(p.pod, "db-0");
	assert_string_equal(p.container, "");
	assert_int_equal(kube__lookup_pod(k, UID_OTHER, &p), -ENOENT);
	kube__stats(k, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.pods, 2);
	assert_int_equal(st.containers, 4);
	assert_int_equal(st.events, 0);
	assert_true(wait_mock_list(m, "watch_rvs", "100"));

	/* After MODIFIED (nginx restarted), DELETED (db-0) and BOOKMARK (105). */
	mock_release(m);
	assert_true(wait_stat(k, ST_EVENTS, 3));
	assert_unknown(k, ID_NGINX);
	assert_container(k, ID_NGINX2, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	assert_container(k, ID_SIDECAR, "shop", "web-0", UID_WEB, "sidecar", "containerd", "web");
	assert_unknown(k, ID_POSTGRES);
	assert_int_equal(kube__lookup_pod(k, UID_DB, &p), -ENOENT);

	/* The next watch resumes from the bookmark, gets 410 and lists again, consistently. */
	assert_true(wait_stat(k, ST_LISTS, 2));
	assert_container(k, ID_API, "shop", "api-0", UID_API, "api", "docker", "api");
	assert_container(k, ID_NGINX2, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	assert_unknown(k, ID_POSTGRES);
	assert_true(wait_mock_list(m, "watch_rvs", "100,105,110"));
	assert_true(wait_mock_list(m, "list_rvs", "0,"));
	kube__stats(k, &st);
	assert_int_equal(st.relists, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.pods, 2);
	assert_int_equal(mock_stat_int(m, "unauthorized"), 0);
	assert_int_equal(mock_stat_int(m, "bad_requests"), 0);

	/* Stopping interrupts the watch that is held open. */
	t0 = now_ns();
	kube__stop(k);
	f->k = NULL;
	if (now_ns() - t0 > 2500000000ull)
		fail_msg("kube__stop took %llu ms in a watch, want <= 2500",
			 (unsigned long long)((now_ns() - t0) / 1000000));
}

static void test_gone_http(void **state)
{
	run_list_watch_gone(*state, "http");
}

static void test_gone_event(void **state)
{
	run_list_watch_gone(*state, "event");
}

/* The first LIST fails (500): retried after backoff. Replaced and deleted ids expire later. */
static void test_retry_and_expiry(void **state)
{
	struct fixture *f = *state;
	struct mock *m = &f->m;
	struct kube_stats st;
	struct kube *k;
	uint64_t t0;

	mock_start(m, "none", 1, TOKEN);
	k = f->k = start(m, 1500);
	assert_int_equal(kube__wait_synced(k, WAIT_MS), 0);
	kube__stats(k, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.lists, 1);
	assert_int_equal(mock_stat_int(m, "lists"), 2);

	mock_release(m);
	assert_true(wait_stat(k, ST_EVENTS, 3));
	t0 = now_ns();
	/* Within the TTL: the old ids still answer (samples taken before the event). */
	assert_container(k, ID_NGINX, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	assert_container(k, ID_POSTGRES, "data", "db-0", UID_DB, "postgres", "cri-o", "db");
	assert_container(k, ID_NGINX2, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	kube__stats(k, &st);
	assert_int_equal(st.pods, 1);
	assert_int_equal(st.containers, 5);
	assert_true(now_ns() - t0 < 1000000000ull);
	usleep(1700000);
	assert_unknown(k, ID_NGINX);
	assert_unknown(k, ID_POSTGRES);
	assert_container(k, ID_NGINX2, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
}

/* A wrong token: 401, never synced, retried. */
static void test_unauthorized(void **state)
{
	struct fixture *f = *state;
	struct mock *m = &f->m;
	struct kube_opts o;
	struct kube *k;
	FILE *tf;

	mock_start(m, "none", 0, TOKEN);
	tf = fopen(m->token_file, "w");
	assert_non_null(tf);
	fputs("wrong-token", tf);
	fclose(tf);
	k = f->k = start(m, 0);
	assert_int_equal(kube__wait_synced(k, 1500), -ETIMEDOUT);
	assert_true(stat_of(k, ST_ERRORS) >= 1);
	assert_true(mock_stat_int(m, "unauthorized") >= 1);
	assert_unknown(k, ID_NGINX);
	kube__stop(k);
	f->k = NULL;

	/* A token file that does not exist: every request fails before it is sent. */
	o = (struct kube_opts){ .api_url = m->url, .token_file = "/nonexistent/token",
				.node_name = "node-1" };
	k = f->k = kube__start(&o);
	assert_non_null(k);
	assert_int_equal(kube__wait_synced(k, 800), -ETIMEDOUT);
	assert_true(stat_of(k, ST_ERRORS) >= 1);
}

/* HTTPS with the CA file given (as the service account's ca.crt), then without it. */
static void test_tls(void **state)
{
	struct fixture *f = *state;
	struct mock *m = &f->m;
	struct kube_opts o;
	struct kube *k;

	mock_start_tls(m, "none", 0, TOKEN, true);
	o = (struct kube_opts){ .api_url = m->url, .token_file = m->token_file,
				.ca_file = m->ca_file, .node_name = "node-1" };
	k = f->k = kube__start(&o);
	assert_non_null(k);
	assert_int_equal(kube__wait_synced(k, WAIT_MS), 0);
	assert_container(k, ID_NGINX, "shop", "web-0", UID_WEB, "nginx", "containerd", "web");
	assert_true(wait_mock_list(m, "watch_rvs", "100"));
	assert_int_equal(stat_of(k, ST_ERRORS), 0);
	kube__stop(k);
	f->k = NULL;

	/* The system's CA store does not know the mock's certificate. */
	o.ca_file = "";
	k = f->k = kube__start(&o);
	assert_non_null(k);
	assert_int_equal(kube__wait_synced(k, 1000), -ETIMEDOUT);
	assert_true(stat_of(k, ST_ERRORS) >= 1);
	assert_int_equal(mock_stat_int(m, "lists"), 1);
}

static void test_config_errors(void **state)
{
	struct kube_opts o = { .api_url = "http://127.0.0.1:1" };
	char *saved_node = getenv("NODE_NAME"), *saved_host = getenv("KUBERNETES_SERVICE_HOST");
	struct kube *k;

	saved_node = saved_node ? strdup(saved_node) : NULL;
	saved_host = saved_host ? strdup(saved_host) : NULL;
	unsetenv("NODE_NAME");
	unsetenv("KUBERNETES_SERVICE_HOST");

	errno = 0;
	assert_null(kube__start(&o));
	assert_int_equal(errno, EINVAL);

	o = (struct kube_opts){ .node_name = "node-1" };
	errno = 0;
	assert_null(kube__start(&o));
	assert_int_equal(errno, EINVAL);

	/* NODE_NAME and the in-cluster URL from the environment: nothing listens there. */
	setenv("NODE_NAME", "node-1", 1);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "1", 1);
	o = (struct kube_opts){ .ca_file = "" };
	k = kube__start(&o);
	assert_non_null(k);
	assert_int_equal(kube__wait_synced(k, 300), -ETIMEDOUT);
	assert_true(wait_stat(k, ST_ERRORS, 1));
	kube__stop(k);
	kube__stop(NULL);

	unsetenv("KUBERNETES_SERVICE_PORT");
	if (saved_node)
		setenv("NODE_NAME", saved_node, 1);
	else
		unsetenv("NODE_NAME");
	if (saved_host)
		setenv("KUBERNETES_SERVICE_HOST", saved_host, 1);
	else
		unsetenv("KUBERNETES_SERVICE_HOST");
	free(saved_node);
	free(saved_host);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gone_http, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_and_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unauthorized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
		cmocka_unit_test(test_config_errors),
	};

	/* The module's log lines help read a failure; -v level shows every event. */
	log__set_level(getenv("TEST_KUBE_DEBUG") ? LOG_DEBUG : LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

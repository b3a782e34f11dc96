// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_pyroscope.c: profiles handed to exporters, and delivery to Pyroscope's /ingest or push
 * API (README.md, "Agent") from one background thread with libcurl.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <curl/curl.h>
#include "agent/export.h"
#include "util/log.h"
#include "util/utf8.h"
#include "agent/metrics.h"
#include "push.pb-c.h"
#include "util/util.h"

#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC  1000000000ull

/* ---- export_profile ---- */

/* A random UUID, version 4 (RFC 9562 section 5.4), as 36 characters and a NUL. */
static void uuid_v4(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[16];
	size_t got = 0, i, o = 0;
	ssize_t n;

	while (got < sizeof(b)) {
		n = getrandom(b + got, sizeof(b) - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	for (i = got; i < sizeof(b); i++) /* no entropy source: unique enough per process */
		b[i] = (uint8_t)(now_ns() >> (8 * (i % 8))) ^ (uint8_t)getpid() ^ (uint8_t)i;
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	for (i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
}

struct export_profile *export_profile__new(const void *data, size_t size,
					   const struct export_label *labels, size_t labels_cnt,
					   uint64_t start_ns, uint64_t end_ns, uint32_t freq_hz)
{
	struct export_profile *p;
	size_t i;

	if ((!data && size) || !labels || !labels_cnt) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < labels_cnt; i++) {
		if (!labels[i].key || !labels[i].value) {
			errno = EINVAL;
			return NULL;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->data = malloc(size ?: 1);
	p->labels = calloc(labels_cnt, sizeof(*p->labels));
	if (!p->data || !p->labels)
		goto err_out;
	memcpy(p->data, data, size);
	p->size = size;
	for (i = 0; i < labels_cnt; i++) {
		p->labels[i].key = strdup(labels[i].key);
		p->labels[i].value = strdup(labels[i].value);
		p->labels_cnt = i + 1;
		if (!p->labels[i].key || !p->labels[i].value)
			goto err_out;
	}
	p->start_ns = start_ns;
	p->end_ns = end_ns;
	p->freq_hz = freq_hz;
	p->type = "process_cpu";
	uuid_v4(p->id);
	return p;

err_out:
	export_profile__free(p);
	errno = ENOMEM;
	return NULL;
}

struct export_profile *export_profile__dup(const struct export_profile *p)
{
	struct export_profile *d = export_profile__new(p->data, p->size, p->labels, p->labels_cnt,
						       p->start_ns, p->end_ns, p->freq_hz);

	if (d) {
		memcpy(d->id, p->id, sizeof(d->id));
		d->type = p->type;
	}
	return d;
}

void export_profile__free(struct export_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->labels_cnt; i++) {
		free((char *)p->labels[i].key);
		free((char *)p->labels[i].value);
	}
	free(p->labels);
	free(p->data);
	free(p);
}

/* ---- the /ingest name parameter ---- */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Appends value to out (cap bytes; out holds *len), trimmed and without ParseKey's delimiters. */
static void put_value(char *out, size_t *len, const char *v, bool app_name)
{
	const char *end = v + strlen(v);

	while (*v == ' ' || *v == '\t')
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (; v < end; v++) {
		unsigned char c = *v;
		bool ok;

		if (app_name)
			ok = is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '-';
		else
			ok = c >= 0x20 && c != 0x7f && c != ',' && c != '{' && c != '}';
		out[(*len)++] = ok ? c : '_';
	}
}

char *pyroscope__ingest_name(const struct export_profile *p)
{
	size_t cap = 3, len = 0, i, n0;
	bool first = true;
	char *out;

	for (i = 0; i < p->labels_cnt; i++)
		cap += strlen(p->labels[i].key) + strlen(p->labels[i].value) + 3;
	cap += sizeof("unknown");
	out = malloc(cap);
	if (!out)
		return NULL;
	if (p->labels_cnt)
		put_value(out, &len, p->labels[0].value, true);
	if (!len) {
		memcpy(out, "unknown", 7);
		len = 7;
	}
	out[len++] = '{';
	for (i = 1; i < p->labels_cnt; i++) {
		const char *k = p->labels[i].key, *v = p->labels[i].value;
		size_t start = len;

		/* Reserved ("__name__"...) and empty keys or values: left out. */
		if (!*k || !strncmp(k, "__", 2))
			continue;
		if (!first)
			out[len++] = ',';
		if (*k >= '0' && *k <= '9')
			out[len++] = '_';
		for (; *k; k++)
			out[len++] = is_alnum(*k) ? *k : '_';
		out[len++] = '=';
		n0 = len;
		put_value(out, &len, v, false);
		if (len == n0) {
			len = start;
			continue;
		}
		first = false;
	}
	out[len++] = '}';
	out[len] = '\0';
	return out;
}

/* ---- the push API's body ---- */

/* key as a Prometheus label name: [A-Za-z0-9_], '_' before a leading digit. malloc'd or NULL. */
static char *label_name(const char *k)
{
	char *out = malloc(strlen(k) + 2), *o = out;

	if (!out)
		return NULL;
	if (*k >= '0' && *k <= '9')
		*o++ = '_';
	for (; *k; k++)
		*o++ = is_alnum(*k) ? *k : '_';
	*o = '\0';
	return out;
}

/* v as a label value: proto3 strings must be UTF-8 (the server's decoder rejects the whole
 * request otherwise), so invalid bytes and control characters become '_'. malloc'd or NULL. */
static char *label_value(const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	char *out = malloc(strlen(v) + 1), *o = out;
	size_t n;

	if (!out)
		return NULL;
	while (*s) {
		n = *s < 0x20 || *s == 0x7f ? 0 : utf8__char_len(s);
		if (!n) {
			*o++ = '_';
			s++;
			continue;
		}
		memcpy(o, s, n);
		o += n;
		s += n;
	}
	*o = '\0';
	return out;
}

/* Fills series s with profile p's labels and sample; strings it allocates go to owned[]. */
static int push_series(const struct export_profile *p, Push__V1__RawProfileSeries *s,
		       Push__V1__LabelPair *pairs, Push__V1__LabelPair **pair_list,
		       Push__V1__RawSample *sample, Push__V1__RawSample **sample_list, char **owned)
{
	size_t n = 0, i;

	pairs[n].name = "__name__";
	pairs[n++].value = (char *)p->type;
	pairs[n].name = "__delta__";
	pairs[n++].value = "false";
	for (i = 0; i < p->labels_cnt; i++) {
		const char *k = p->labels[i].key, *v = p->labels[i].value;

		/* Reserved names ("__name__"...) and empty keys or values: left out. */
		if (!*k || !strncmp(k, "__", 2) || !*v)
			continue;
		owned[2 * n] = label_name(k);
		owned[2 * n + 1] = label_value(v);
		if (!owned[2 * n] || !owned[2 * n + 1])
			return -ENOMEM;
		pairs[n].name = owned[2 * n];
		pairs[n].value = owned[2 * n + 1];
		n++;
	}
	for (i = 0; i < n; i++)
		pair_list[i] = &pairs[i];
	sample->raw_profile.data = p->data;
	sample->raw_profile.len = p->size;
	sample->id = (char *)p->id;
	sample_list[0] = sample;
	s->n_labels = n;
	s->labels = pair_list;
	s->n_samples = 1;
	s->samples = sample_list;
	return 0;
}

int pyroscope__push_body(const struct export_profile *const *ps, size_t n, void **body,
			 size_t *size)
{
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	Push__V1__RawProfileSeries *series = NULL, **series_list = NULL;
	Push__V1__RawSample *samples = NULL, **sample_list = NULL;
	Push__V1__LabelPair *pairs = NULL, **pair_list = NULL;
	size_t labels = 0, off = 0, i;
	char **owned = NULL;
	int err = -ENOMEM;

	*body = NULL;
	*size = 0;
	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		labels += ps[i]->labels_cnt + 2;
	series = calloc(n, sizeof(*series));
	series_list = calloc(n, sizeof(*series_list));
	samples = calloc(n, sizeof(*samples));
	sample_list = calloc(n, sizeof(*sample_list));
	pairs = calloc(labels, sizeof(*pairs));
	pair_list = calloc(labels, sizeof(*pair_list));
	owned = calloc(2 * labels, sizeof(*owned));
	if (!series || !series_list || !samples || !sample_list || !pairs || !pair_list || !owned)
		goto out;
	for (i = 0; i < labels; i++)
		pairs[i] = (Push__V1__LabelPair)PUSH__V1__LABEL_PAIR__INIT;
	for (i = 0; i < n; i++) {
		series[i] = (Push__V1__RawProfileSeries)PUSH__V1__RAW_PROFILE_SERIES__INIT;
		samples[i] = (Push__V1__RawSample)PUSH__V1__RAW_SAMPLE__INIT;
		series_list[i] = &series[i];
		if (push_series(ps[i], &series[i], pairs + off, pair_list + off, &samples[i],
				&sample_list[i], owned + 2 * off))
			goto out;
		off += ps[i]->labels_cnt + 2;
	}
	req.n_series = n;
	req.series = series_list;
	*size = push__v1__push_request__get_packed_size(&req);
	*body = malloc(*size ?: 1);
	if (!*body)
		goto out;
	push__v1__push_request__pack(&req, *body);
	err = 0;
out:
	for (i = 0; owned && i < 2 * labels; i++)
		free(owned[i]);
	free(owned);
	free(pair_list);
	free(pairs);
	free(sample_list);
	free(samples);
	free(series_list);
	free(series);
	if (err)
		*size = 0;
	return err;
}

/* ---- the exporter ---- */

/* A credential read from a file, read again when the file changes. */
struct credential {
	char *path;
	char *value;
	struct timespec mtime;
	off_t size;
	ino_t ino;
	bool warned;
};

struct pyroscope_exporter {
	char *url; /* base URL, no trailing '/' */
	enum pyroscope_api api;
	struct credential basic, bearer;
	char **headers; /* static headers: tenant, extras */
	size_t headers_cnt;
	uint64_t connect_timeout_ms, timeout_ms, backoff_base_ms, backoff_max_ms;
	CURL *curl;   /* the worker's only */
	uint64_t rng; /* the worker's only */

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;	   /* everything below */
	pthread_cond_t cond;	   /* wakes the worker: new profile, flush */
	struct export_profile **q; /* ring: q[head] is the oldest; cap slots */
	size_t cap, head, cnt;
	/* The request under way holds the inflight oldest profiles: q[head..) but the first
	 * orphaned, which a full queue dropped during the send (the worker frees those). */
	size_t inflight, orphaned;
	unsigned int failures;	  /* consecutive failed attempts: backoff exponent */
	uint64_t next_attempt_ns; /* CLOCK_MONOTONIC; no attempt before */
	uint64_t linger_until_ns; /* push: first profile into the empty queue + linger */
	bool stopping;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC end of the flush */
	uint64_t shutdown_dropped;
	struct export_stats st;
};

enum attempt_result {
	ATTEMPT_SENT,
	ATTEMPT_RETRY,
	ATTEMPT_FAILED,
};

static void set_last_error(struct pyroscope_exporter *e, const char *msg)
{
	snprintf(e->st.last_error, sizeof(e->st.last_error), "%s", msg);
	e->st.last_error_time_ns = realtime_ns();
}

/* Reads a credential file: its first line, blanks trimmed. 0 or a negative errno. */
static int credential_read(struct credential *c)
{
	char buf[4096], *s, *end;
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	buf[n] = '\0';
	s = buf + strspn(buf, " \t\r\n");
	end = s + strcspn(s, "\r\n");
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	if (!*s) {
		err = -EINVAL;
		goto out;
	}
	s = strdup(s);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	if (c->value) {
		explicit_bzero(c->value, strlen(c->value));
		free(c->value);
	}
	c->value = s;
	c->mtime = st.st_mtim;
	c->size = st.st_size;
	c->ino = st.st_ino;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return err;
}

/* Before each attempt: reread a rotated file; a failure keeps the previous value (logged once). */
static void credential_refresh(struct credential *c)
{
	struct stat st;
	int err;

	if (!c->path)
		return;
	if (!stat(c->path, &st) && st.st_ino == c->ino && st.st_size == c->size &&
	    st.st_mtim.tv_sec == c->mtime.tv_sec && st.st_mtim.tv_nsec == c->mtime.tv_nsec)
		return;
	err = credential_read(c);
	if (err && !c->warned)
		pr_warn("read credential %s: %s; keeping the previous one", c->path,
			strerror(-err));
	c->warned = err != 0;
}

static void credential_free(struct credential *c)
{
	if (c->value) {
		explicit_bzero(c->value, strlen(c->value));
		free(c->value);
	}
	free(c->path);
}

/* Keeps the first bytes of a response body for the log line of a rejected profile. */
struct response {
	char text[200];
	size_t len;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct response *r = arg;
	size_t n = size * nmemb, room = sizeof(r->text) - 1 - r->len;

	memcpy(r->text + r->len, ptr, min_t(size_t, n, room));
	r->len += min_t(size_t, n, room);
	r->text[r->len] = '\0';
	return n;
}

/* xorshift64* (Vigna, "An experiment with xorshift generators"): jitter only. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/*
 * The wait before the next attempt after failures consecutive failures: "full jitter"
 * (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015), uniform in
 * [0, min(max, base * 2^(failures - 1))] ms; Retry-After (s) replaces it, capped at max.
 */
static uint64_t backoff_ms(struct pyroscope_exporter *e, long retry_after_s)
{
	uint64_t cap = e->backoff_base_ms;
	unsigned int i;

	if (retry_after_s > 0)
		return min_t(uint64_t, (uint64_t)retry_after_s * 1000, e->backoff_max_ms);
	for (i = 1; i < e->failures && cap < e->backoff_max_ms; i++)
		cap *= 2;
	cap = min_t(uint64_t, cap, e->backoff_max_ms);
	return next_random(&e->rng) % (cap + 1);
}

/*
 * Ends a request in flight when a flush passes its deadline (libcurl calls this about once a
 * second at least, also while connecting). Read without the lock: flush stores these two
 * atomically, the deadline first.
 */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct pyroscope_exporter *e = arg;

	return __atomic_load_n(&e->stopping, __ATOMIC_ACQUIRE) &&
	       now_ns() >= __atomic_load_n(&e->deadline_ns, __ATOMIC_RELAXED);
}

static bool curl_error_is_permanent(CURLcode rc)
{
	return rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL ||
	       rc == CURLE_NOT_BUILT_IN || rc == CURLE_OUT_OF_MEMORY;
}

/*
 * The URL and body of one POST of ps[0..n): *url (malloc'd), *body (ps[0]'s data, or a
 * PushRequest in *push_body, malloc'd), *content_type. 0 or -ENOMEM.
 */
static int request_body(struct pyroscope_exporter *e, const struct export_profile *const *ps,
			size_t n, char **url, const void **body, size_t *body_size,
			void **push_body, const char **content_type)
{
	const struct export_profile *p = ps[0];
	uint64_t from = p->start_ns / NSEC_PER_SEC;
	uint64_t until = (p->end_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
	char *name, *esc;
	int err = 0;

	*content_type = "Content-Type: application/octet-stream";
	*body = p->data;
	*body_size = p->size;
	if (until <= from)
		until = from + 1;
	if (e->api == PYROSCOPE_API_PUSH) {
		/* Connect unary over HTTP/1.1: the message, its type, a plain status code. */
		*content_type = "Content-Type: application/proto";
		if (pyroscope__push_body(ps, n, push_body, body_size) ||
		    asprintf(url, "%s/push.v1.PusherService/Push", e->url) < 0) {
			*url = NULL;
			return -ENOMEM;
		}
		*body = *push_body;
		return 0;
	}
	name = pyroscope__ingest_name(p);
	esc = name ? curl_easy_escape(e->curl, name, 0) : NULL;
	if (!esc || asprintf(url,
			     "%s/ingest?name=%s&from=%llu&until=%llu&format=pprof"
			     "&spyName=bpfprof&sampleRate=%u",
			     e->url, esc, (unsigned long long)from, (unsigned long long)until,
			     p->freq_hz) < 0) {
		*url = NULL;
		err = -ENOMEM;
	}
	curl_free(esc);
	free(name);
	return err;
}

/*
 * The request's headers into *hdrs (curl_slist_free_all() them), with the bearer token read
 * again; *auth holds the Authorization header (explicit_bzero() and free() it). 0 or -ENOMEM.
 */
static int request_headers(struct pyroscope_exporter *e, const char *content_type,
			   struct curl_slist **hdrs, char **auth)
{
	struct curl_slist *tmp;
	size_t i;

	*auth = NULL;
	/* No "Expect: 100-continue" round trip; the body is opaque bytes, not a form. */
	tmp = curl_slist_append(*hdrs, "Expect:");
	tmp = tmp ? curl_slist_append(*hdrs = tmp, content_type) : NULL;
	if (tmp && e->api == PYROSCOPE_API_PUSH)
		tmp = curl_slist_append(*hdrs = tmp, "Connect-Protocol-Version: 1");
	for (i = 0; tmp && i < e->headers_cnt; i++)
		tmp = curl_slist_append(*hdrs = tmp, e->headers[i]);
	if (tmp && e->bearer.path) {
		credential_refresh(&e->bearer);
		if (asprintf(auth, "Authorization: Bearer %s", e->bearer.value) < 0)
			*auth = NULL;
		tmp = *auth ? curl_slist_append(*hdrs = tmp, *auth) : NULL;
	}
	if (!tmp)
		return -ENOMEM;
	*hdrs = tmp;
	return 0;
}

/* Sets up e->curl for one POST; the handle keeps pointers to all arguments until reset. */
static void request_setup(struct pyroscope_exporter *e, const char *url, const void *body,
			  size_t body_size, struct curl_slist *hdrs, uint64_t timeout_ms,
			  struct response *resp, char *curl_err)
{
	CURL *c = e->curl;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_size);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)min_t(uint64_t, e->connect_timeout_ms, timeout_ms));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "bpfprof/" BPFPROF_VERSION);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, e);
	if (e->basic.path) {
		credential_refresh(&e->basic);
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, e->basic.value);
	}
}

/*
 * One POST of ps[0..n) (n is 1 for /ingest). Runs on the worker without the lock. err gets a
 * one-line reason of a failure; *retry_after_s the server's Retry-After (0 if none).
 */
static enum attempt_result attempt(struct pyroscope_exporter *e,
				   const struct export_profile *const *ps, size_t n,
				   uint64_t timeout_ms, long *retry_after_s, char *err,
				   size_t err_sz)
{
	char curl_err[CURL_ERROR_SIZE] = "", *url = NULL, *auth = NULL;
	const char *content_type;
	const void *body;
	void *push_body = NULL;
	size_t body_size;
	struct curl_slist *hdrs = NULL;
	struct response resp = {};
	enum attempt_result res = ATTEMPT_RETRY;
	curl_off_t retry_after = 0;
	CURL *c = e->curl;
	long code = 0;
	CURLcode rc;

	*retry_after_s = 0;
	if (request_body(e, ps, n, &url, &body, &body_size, &push_body, &content_type) ||
	    request_headers(e, content_type, &hdrs, &auth)) {
		snprintf(err, err_sz, "out of memory");
		goto out;
	}
	request_setup(e, url, body, body_size, hdrs, timeout_ms, &resp, curl_err);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		if (rc == CURLE_ABORTED_BY_CALLBACK)
			snprintf(err, err_sz, "shutdown deadline passed");
		else
			snprintf(err, err_sz, "%s",
				 curl_err[0] ? curl_err : curl_easy_strerror(rc));
		res = curl_error_is_permanent(rc) ? ATTEMPT_FAILED : ATTEMPT_RETRY;
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		res = ATTEMPT_SENT;
		goto out;
	}
	/* Trim the body to one line for the log. */
	resp.text[strcspn(resp.text, "\r\n")] = '\0';
	snprintf(err, err_sz, "HTTP %ld%s%s", code, resp.len ? ": " : "", resp.text);
	if (code == 429 || code == 408 || code >= 500) {
		/* libcurl parses both forms of Retry-After (seconds, HTTP date). */
		if (!curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &retry_after) && retry_after > 0)
			*retry_after_s = retry_after;
		res = ATTEMPT_RETRY;
	} else {
		res = ATTEMPT_FAILED;
	}
out:
	/* The handle keeps pointers to these until the next reset. */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_USERPWD, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	free(url);
	free(push_body);
	return res;
}

static const char *service_of(const struct export_profile *p)
{
	return p->labels_cnt ? p->labels[0].value : "?";
}

/* Removes q[head] (the caller owns it now). */
static struct export_profile *queue_pop(struct pyroscope_exporter *e)
{
	struct export_profile *p = e->q[e->head];

	e->q[e->head] = NULL;
	e->head = (e->head + 1) % e->cap;
	e->cnt--;
	return p;
}

static void timespec_at(struct timespec *ts, uint64_t mono_ns)
{
	ts->tv_sec = mono_ns / NSEC_PER_SEC;
	ts->tv_nsec = mono_ns % NSEC_PER_SEC;
}

/* "profile of SERVICE" or "N profiles (SERVICE, ...)", for the log. */
static void batch_desc(char *buf, size_t sz, struct export_profile *const *b, size_t n)
{
	if (n == 1)
		snprintf(buf, sz, "profile of %s", service_of(b[0]));
	else
		snprintf(buf, sz, "%zu profiles (%s, ...)", n, service_of(b[0]));
}

/*
 * The worker: sends the oldest profiles, one request at a time, in order: the oldest alone to
 * /ingest, up to PYROSCOPE_PUSH_BATCH_MAX of them in one PushRequest. A failed request is
 * retried whole after the backoff, with the profiles still queued then.
 */
static void *worker(void *arg)
{
	struct export_profile *batch[PYROSCOPE_PUSH_BATCH_MAX], *p;
	struct pyroscope_exporter *e = arg;
	enum attempt_result res;
	long retry_after_s;
	uint64_t now, wake, timeout_ms, wait_ms;
	char err[sizeof(e->st.last_error)], desc[128];
	size_t n, i, kept, bytes;
	struct timespec ts;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		now = now_ns();
		if (e->stopping && (!e->cnt || now >= e->deadline_ns))
			break;
		if (!e->cnt) {
			pthread_cond_wait(&e->cond, &e->lock);
			continue;
		}
		wake = e->next_attempt_ns;
		if (e->api == PYROSCOPE_API_PUSH && !e->stopping &&
		    e->cnt < PYROSCOPE_PUSH_BATCH_MAX && e->linger_until_ns > wake)
			wake = e->linger_until_ns;
		if (e->stopping && e->deadline_ns < wake)
			wake = e->deadline_ns;
		if (now < wake) {
			timespec_at(&ts, wake);
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			continue;
		}

		n = bytes = 0;
		do {
			p = e->q[(e->head + n) % e->cap];
			if (n && bytes + p->size > PYROSCOPE_PUSH_BATCH_BYTES)
				break;
			batch[n++] = p;
			bytes += p->size;
		} while (e->api == PYROSCOPE_API_PUSH && n < e->cnt &&
			 n < PYROSCOPE_PUSH_BATCH_MAX);
		e->inflight = n;
		e->orphaned = 0;
		if (e->failures)
			e->st.retries++;
		timeout_ms = e->timeout_ms;
		if (e->stopping)
			timeout_ms = min_t(uint64_t, timeout_ms,
					   (e->deadline_ns - now) / NSEC_PER_MSEC + 1);
		pthread_mutex_unlock(&e->lock);

		err[0] = '\0';
		res = attempt(e, (const struct export_profile *const *)batch, n, timeout_ms,
			      &retry_after_s, err, sizeof(err));
		batch_desc(desc, sizeof(desc), batch, n);

		pthread_mutex_lock(&e->lock);
		/* The first orphaned left the full queue during the send; the rest are still
		 * q[head..). */
		kept = n - e->orphaned;
		e->inflight = 0;
		if (res != ATTEMPT_RETRY) {
			for (i = 0; i < kept; i++)
				queue_pop(e);
		}
		switch (res) {
		case ATTEMPT_SENT:
			e->st.sent += n;
			e->st.bytes_sent += bytes;
			if (e->failures)
				pr_info("send profiles to Pyroscope %s: delivering again after %u "
					"failed attempts",
					e->url, e->failures);
			e->failures = 0;
			e->next_attempt_ns = 0;
			break;
		case ATTEMPT_FAILED:
			/* The backend answered: the next profiles go without waiting. */
			e->failures = 0;
			e->next_attempt_ns = 0;
			e->st.failed += n;
			set_last_error(e, err);
			pr_warn("send %s to Pyroscope %s: %s; dropped", desc, e->url, err);
			break;
		case ATTEMPT_RETRY:
			set_last_error(e, err);
			e->failures++;
			wait_ms = backoff_ms(e, retry_after_s);
			e->next_attempt_ns = now_ns() + wait_ms * NSEC_PER_MSEC;
			if (e->failures == 1)
				pr_warn("send %s to Pyroscope %s: %s; retrying with backoff (%zu "
					"queued)",
					desc, e->url, err, e->cnt);
			else
				pr_debug("send %s to Pyroscope %s: %s; retry %u in %llu ms", desc,
					 e->url, err, e->failures, (unsigned long long)wait_ms);
			/* Only the orphaned are done with: dropped. */
			e->st.dropped += e->orphaned;
			n = e->orphaned;
			break;
		}
		for (i = 0; i < n; i++)
			export_profile__free(batch[i]);
	}
	/* Past the deadline: whatever is left is dropped. */
	while (e->cnt) {
		export_profile__free(queue_pop(e));
		e->st.dropped++;
		e->shutdown_dropped++;
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* e->headers: X-Scope-OrgID for the tenant, then opts' own. 0 or a negative errno. */
static int headers_copy(struct pyroscope_exporter *e, const struct pyroscope_opts *opts)
{
	size_t i;

	e->headers = calloc(opts->headers_cnt + 1, sizeof(*e->headers));
	if (!e->headers)
		return -ENOMEM;
	if (opts->tenant_id && *opts->tenant_id) {
		if (strpbrk(opts->tenant_id, "\r\n"))
			return -EINVAL;
		if (asprintf(&e->headers[e->headers_cnt], "X-Scope-OrgID: %s", opts->tenant_id) < 0)
			return -ENOMEM;
		e->headers_cnt++;
	}
	for (i = 0; i < opts->headers_cnt; i++) {
		e->headers[e->headers_cnt] = strdup(opts->headers[i]);
		if (!e->headers[e->headers_cnt])
			return -ENOMEM;
		e->headers_cnt++;
	}
	return 0;
}

/* Reads the basic auth and bearer token files of opts. 0 or a negative errno (warned). */
static int credentials_read(struct pyroscope_exporter *e, const struct pyroscope_opts *opts)
{
	int err;

	if (opts->basic_auth_file) {
		e->basic.path = strdup(opts->basic_auth_file);
		err = e->basic.path ? credential_read(&e->basic) : -ENOMEM;
		if (!err && !strchr(e->basic.value, ':'))
			err = -EINVAL;
		if (err) {
			pr_warn("read basic auth file %s: %s; want one line 'user:password'",
				opts->basic_auth_file, strerror(-err));
			return err;
		}
	}
	if (opts->bearer_token_file) {
		e->bearer.path = strdup(opts->bearer_token_file);
		err = e->bearer.path ? credential_read(&e->bearer) : -ENOMEM;
		if (err) {
			pr_warn("read bearer token file %s: %s", opts->bearer_token_file,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* libcurl's handle and the worker thread. 0 or a negative errno. */
static int worker_start(struct pyroscope_exporter *e)
{
	sigset_t all, old;
	int err;

	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -EIO;
	e->curl = curl_easy_init();
	if (!e->curl) {
		curl_global_cleanup();
		return -ENOMEM;
	}
	/* Signals stay with the agent's threads (signalfd, sigwait): the worker blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&e->thread, NULL, worker, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		curl_easy_cleanup(e->curl);
		e->curl = NULL;
		curl_global_cleanup();
		return err;
	}
	e->thread_started = true;
	return 0;
}

/* Whether opts can make an exporter: a URL, a known API, headers of the form 'Key: value'. */
static bool opts_valid(const struct pyroscope_opts *opts)
{
	size_t i;

	if (!opts || !opts->url || !*opts->url ||
	    (opts->api != PYROSCOPE_API_INGEST && opts->api != PYROSCOPE_API_PUSH))
		return false;
	for (i = 0; i < opts->headers_cnt; i++) {
		const char *h = opts->headers[i], *colon = h ? strchr(h, ':') : NULL;

		if (!colon || colon == h || strpbrk(h, "\r\n")) {
			pr_warn("parse header '%s': want 'Key: value'", h ?: "");
			return false;
		}
	}
	return true;
}

struct pyroscope_exporter *pyroscope_exporter__new(const struct pyroscope_opts *opts)
{
	struct pyroscope_exporter *e;
	pthread_condattr_t cattr;
	size_t len;
	int err = 0;

	if (!opts_valid(opts)) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &cattr);
	pthread_condattr_destroy(&cattr);

	e->url = strdup(opts->url);
	if (!e->url) {
		err = -ENOMEM;
		goto err_out;
	}
	len = strlen(e->url);
	while (len && e->url[len - 1] == '/')
		e->url[--len] = '\0';
	e->api = opts->api;
	e->connect_timeout_ms = opts->connect_timeout_ms ?: 10000;
	e->timeout_ms = opts->timeout_ms ?: 30000;
	e->backoff_base_ms = opts->backoff_base_ms ?: 1000;
	e->backoff_max_ms = max_t(uint64_t, opts->backoff_max_ms ?: 60000, e->backoff_base_ms);
	e->cap = opts->queue_size ?: 64;
	e->rng = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)e;
	if (!e->rng)
		e->rng = 1;
	e->q = calloc(e->cap, sizeof(*e->q));
	if (!e->q) {
		err = -ENOMEM;
		goto err_out;
	}
	err = headers_copy(e, opts);
	if (!err)
		err = credentials_read(e, opts);
	if (!err)
		err = worker_start(e);
	if (!err)
		return e;
err_out:
	pyroscope_exporter__free(e);
	errno = -err;
	return NULL;
}

int pyroscope_exporter__enqueue(struct pyroscope_exporter *e, struct export_profile *p)
{
	struct export_profile *old;

	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&e->lock);
	if (e->stopping) {
		e->st.dropped++;
		pthread_mutex_unlock(&e->lock);
		export_profile__free(p);
		return -ESHUTDOWN;
	}
	old = NULL;
	if (e->cnt == e->cap) {
		/* Full: the oldest goes, even while it is in flight (the worker then frees it). */
		if (e->inflight > e->orphaned) {
			e->orphaned++;
			queue_pop(e);
		} else {
			old = queue_pop(e);
			e->st.dropped++;
		}
	}
	if (!e->cnt)
		e->linger_until_ns = now_ns() + PYROSCOPE_PUSH_LINGER_MS * NSEC_PER_MSEC;
	e->q[(e->head + e->cnt) % e->cap] = p;
	e->cnt++;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	export_profile__free(old);
	return 0;
}

int pyroscope_exporter__flush(struct pyroscope_exporter *e, uint64_t timeout_ms)
{
	bool first;
	int err;

	pthread_mutex_lock(&e->lock);
	first = !e->stopping;
	if (first) {
		__atomic_store_n(&e->deadline_ns, now_ns() + timeout_ms * NSEC_PER_MSEC,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&e->stopping, true, __ATOMIC_RELEASE);
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	if (!first || !e->thread_started)
		return 0;
	pthread_join(e->thread, NULL);
	e->thread_started = false;
	pthread_mutex_lock(&e->lock);
	err = e->shutdown_dropped ? -ETIMEDOUT : 0;
	if (err)
		pr_warn("send profiles to Pyroscope %s: %llu not delivered within %llu ms at "
			"shutdown; dropped",
			e->url, (unsigned long long)e->shutdown_dropped,
			(unsigned long long)timeout_ms);
	pthread_mutex_unlock(&e->lock);
	return err;
}

void pyroscope_exporter__stats(struct pyroscope_exporter *e, struct export_stats *st)
{
	pthread_mutex_lock(&e->lock);
	*st = e->st;
	st->queue_depth = e->cnt;
	pthread_mutex_unlock(&e->lock);
}

void export_stats__metrics(const struct export_stats *st, const char *exporter,
			   struct metrics_writer *w)
{
	const struct metrics_label l[] = { { "exporter", exporter }, {} };

	metrics__counter(w, "bpfprof_export_profiles_sent_total",
			 "Profiles delivered (HTTP 2xx) or written to files.", l, st->sent);
	metrics__counter(w, "bpfprof_export_retries_total",
			 "Delivery attempts after a connection error, timeout, 429 or 5xx.", l,
			 st->retries);
	metrics__counter(w, "bpfprof_export_profiles_failed_total",
			 "Profiles rejected (HTTP 4xx other than 429) or failed to write.", l,
			 st->failed);
	metrics__counter(w, "bpfprof_export_profiles_dropped_total",
			 "Profiles dropped: queue full (oldest first) or undelivered at exit.", l,
			 st->dropped);
	metrics__counter(w, "bpfprof_export_bytes_sent_total",
			 "Bytes of delivered profiles (gzipped pprof).", l, st->bytes_sent);
	metrics__gauge(w, "bpfprof_export_queue_depth",
		       "Profiles waiting for delivery or in flight.", l, st->queue_depth);
	metrics__gauge(w, "bpfprof_export_last_error_timestamp_seconds",
		       "Unix time of the last delivery error, 0 if none.", l,
		       st->last_error_time_ns / 1e9);
	if (!strcmp(exporter, "dir")) {
		metrics__counter(w, "bpfprof_export_files_deleted_total",
				 "Profile files removed to keep the directory under its cap.", l,
				 st->deleted);
		metrics__gauge(w, "bpfprof_export_dir_bytes",
			       "Bytes in the profile files of the output directory.", l,
			       st->dir_bytes);
	}
}

void pyroscope_exporter__metrics(struct pyroscope_exporter *e, struct metrics_writer *w)
{
	struct export_stats st;

	pyroscope_exporter__stats(e, &st);
	export_stats__metrics(&st, "pyroscope", w);
}

void pyroscope_exporter__free(struct pyroscope_exporter *e)
{
	size_t i;

	if (!e)
		return;
	if (e->thread_started)
		pyroscope_exporter__flush(e, 0);
	if (e->q) {
		while (e->cnt)
			export_profile__free(queue_pop(e));
	}
	if (e->curl) {
		curl_easy_cleanup(e->curl);
		curl_global_cleanup();
	}
	for (i = 0; e->headers && i < e->headers_cnt; i++)
		free(e->headers[i]);
	free(e->headers);
	credential_free(&e->basic);
	credential_free(&e->bearer);
	free(e->q);
	free(e->url);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

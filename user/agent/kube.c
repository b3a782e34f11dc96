// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kube.c: pod metadata by container id, from a list and watch of the node's pods. */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "agent/kube.h"
#include "util/log.h"
#include "util/util.h"

#define KUBE_BACKOFF_MIN_MS 500
#define KUBE_BACKOFF_MAX_MS 30000
#define KUBE_LIST_MAX_SZ    (256u << 20) /* a LIST response, bytes */
#define KUBE_EVENT_MAX_SZ   (16u << 20)	 /* one watch event line, bytes */
#define KUBE_ERROR_BODY_SZ  2048	 /* bytes kept of an error response */
#define KUBE_JSON_DEPTH	    64		 /* managedFields nest deeper than json-c's 32 */
#define KUBE_LIST_TIMEOUT_S 120
#define KUBE_TOKEN_MAX_SZ   65536
/* client-go's reflector: watches of 5 to 10 min, so that API servers' loads even out. */
#define KUBE_WATCH_MIN_S    300
/* A watch that ends sooner than this without events is retried with backoff, not at once. */
#define KUBE_WATCH_QUICK_NS 1000000000ull
#define CONTAINER_ID_LEN    64

/* A container id and its pod's metadata. */
struct kube_container {
	char id[CONTAINER_ID_LEN + 1]; /* the key: lowercase hex */
	struct kube_pod pod;
	uint64_t expires_ns; /* 0: live; else forgotten at this CLOCK_MONOTONIC time */
	uint64_t gen;	     /* the LIST generation that saw it last */
	UT_hash_handle hh;
};

/* A pod by UID (kube__lookup_pod()). */
struct kube_pod_entry {
	char uid[37];	     /* the key */
	struct kube_pod pod; /* container and runtime "" */
	uint64_t expires_ns;
	uint64_t gen;
	UT_hash_handle hh;
};

struct kube {
	pthread_t thread;
	bool thread_started;
	bool curl_inited; /* curl_global_init() to undo */
	pthread_mutex_t lock;
	pthread_cond_t cond;  /* CLOCK_MONOTONIC: backoff waits, synced, stop */
	atomic_bool stopping; /* read by libcurl callbacks without the lock */

	char *api_url;	  /* no trailing '/' */
	char *token_file; /* NULL: no Authorization header */
	char *ca_file;	  /* NULL: libcurl's default CA store */
	char *node_name;
	char *selector; /* "fieldSelector=spec.nodeName%3D<node>", escaped */
	uint64_t ttl_ns;

	/* Under lock. */
	struct kube_container *containers;
	struct kube_pod_entry *pods;
	struct kube_stats stats;

	/* The thread's own. */
	CURL *curl;
	json_tokener *tok;
	uint64_t gen;	   /* LIST generation */
	char rv[128];	   /* resourceVersion to watch from */
	unsigned int seed; /* backoff jitter */
};

/* One request's response, filled by the write callback. */
struct kube_xfer {
	struct kube *k;
	char *buf;
	size_t len, cap, max;
	size_t scanned; /* watch: bytes of buf known to hold no '\n' */
	bool watch;	/* apply each line as an event as it arrives */
	bool gone;	/* 410 Gone: relist */
	long status;	/* HTTP status, read at the first body bytes */
	uint64_t events;
	char err[256]; /* why the callback stopped the transfer */
};

/* --- JSON helpers ------------------------------------------------------------------------- */

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* o[key] when it is a string, else NULL. Borrowed from o. */
static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void copy_str(char *dst, size_t sz, const char *src)
{
	snprintf(dst, sz, "%s", src ?: "");
}

static struct json_object *parse_json(struct kube *k, const char *s, size_t n)
{
	struct json_object *o;

	json_tokener_reset(k->tok);
	o = json_tokener_parse_ex(k->tok, s, n);
	if (json_tokener_get_error(k->tok) != json_tokener_success) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* --- the map (lock held) ------------------------------------------------------------------ */

static void container_expire(struct kube *k, struct kube_container *c, uint64_t now)
{
	if (k->ttl_ns) {
		c->expires_ns = now + k->ttl_ns;
		return;
	}
	HASH_DEL(k->containers, c);
	free(c);
}

static void pod_expire(struct kube *k, struct kube_pod_entry *p, uint64_t now)
{
	if (k->ttl_ns) {
		p->expires_ns = now + k->ttl_ns;
		return;
	}
	HASH_DEL(k->pods, p);
	free(p);
}

/* Forgets what expired. */
static void sweep(struct kube *k, uint64_t now)
{
	struct kube_container *c, *ctmp;
	struct kube_pod_entry *p, *ptmp;

	HASH_ITER(hh, k->containers, c, ctmp) {
		if (c->expires_ns && c->expires_ns <= now) {
			HASH_DEL(k->containers, c);
			free(c);
		}
	}
	HASH_ITER(hh, k->pods, p, ptmp) {
		if (p->expires_ns && p->expires_ns <= now) {
			HASH_DEL(k->pods, p);
			free(p);
		}
	}
}

/*
 * Adds the container of one entry of a pod's status array ({name, containerID}). A container
 * not started yet has no containerID. Returns 1 when added, 0 when skipped, or -ENOMEM.
 */
static int add_container(struct kube *k, const struct kube_pod *pod, struct json_object *st)
{
	const char *name = jstr(st, "name"), *cid = jstr(st, "containerID"), *sep, *id;
	struct kube_container *c;
	char key[CONTAINER_ID_LEN + 1];
	size_t i, scheme_len;

	if (!name || !cid)
		return 0;
	sep = strstr(cid, "://");
	if (!sep)
		return 0;
	scheme_len = sep - cid;
	id = sep + 3;
	if (strlen(id) != CONTAINER_ID_LEN)
		return 0;
	for (i = 0; i < CONTAINER_ID_LEN; i++) {
		if (!isxdigit((unsigned char)id[i]))
			return 0;
		key[i] = tolower((unsigned char)id[i]);
	}
	key[CONTAINER_ID_LEN] = '\0';

	HASH_FIND_STR(k->containers, key, c);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		memcpy(c->id, key, sizeof(key));
		HASH_ADD_STR(k->containers, id, c);
	}
	c->pod = *pod;
	copy_str(c->pod.container, sizeof(c->pod.container), name);
	snprintf(c->pod.runtime, sizeof(c->pod.runtime), "%.*s", (int)scheme_len, cid);
	c->expires_ns = 0;
	c->gen = k->gen;
	return 1;
}

/*
 * Applies one pod object (a LIST item or a watch event's object): its container ids replace the
 * pod's previous ones, which expire; a deleted pod's all expire. Returns the pod's containers
 * now listed, or -ENOMEM.
 */
static int apply_pod(struct kube *k, struct json_object *obj, bool deleted, uint64_t now)
{
	static const char *const arrays[] = {
		"initContainerStatuses",
		"containerStatuses",
		"ephemeralContainerStatuses",
	};
	struct json_object *meta = jget(obj, "metadata"), *status = jget(obj, "status"), *labels;
	const char *uid = jstr(meta, "uid");
	struct kube_container *c, *ctmp;
	struct kube_pod_entry *p;
	size_t i, j, n;
	int cnt = 0, err;

	if (!uid || strlen(uid) != 36)
		return 0;
	HASH_ITER(hh, k->containers, c, ctmp) {
		if (!c->expires_ns && !strcmp(c->pod.pod_uid, uid))
			container_expire(k, c, now);
	}
	HASH_FIND_STR(k->pods, uid, p);
	if (deleted) {
		if (p && !p->expires_ns)
			pod_expire(k, p, now);
		return 0;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		copy_str(p->uid, sizeof(p->uid), uid);
		HASH_ADD_STR(k->pods, uid, p);
	}
	memset(&p->pod, 0, sizeof(p->pod));
	copy_str(p->pod.namespace, sizeof(p->pod.namespace), jstr(meta, "namespace"));
	copy_str(p->pod.pod, sizeof(p->pod.pod), jstr(meta, "name"));
	copy_str(p->pod.pod_uid, sizeof(p->pod.pod_uid), uid);
	labels = jget(meta, "labels");
	copy_str(p->pod.app, sizeof(p->pod.app),
		 jstr(labels, "app.kubernetes.io/name") ?: jstr(labels, "app"));
	p->expires_ns = 0;
	p->gen = k->gen;

	for (i = 0; i < ARRAY_SIZE(arrays); i++) {
		struct json_object *arr = jget(status, arrays[i]);

		if (!arr || !json_object_is_type(arr, json_type_array))
			continue;
		n = json_object_array_length(arr);
		for (j = 0; j < n; j++) {
			err = add_container(k, &p->pod, json_object_array_get_idx(arr, j));
			if (err < 0)
				return err;
			cnt += err;
		}
	}
	return cnt;
}

/* --- HTTP --------------------------------------------------------------------------------- */

static int xfer_append(struct kube_xfer *x, const char *p, size_t n)
{
	if (x->len + n + 1 > x->cap) {
		size_t cap = x->cap ? x->cap : 16384;
		char *tmp;

		while (cap < x->len + n + 1)
			cap *= 2;
		tmp = realloc(x->buf, cap);
		if (!tmp)
			return -ENOMEM;
		x->buf = tmp;
		x->cap = cap;
	}
	memcpy(x->buf + x->len, p, n);
	x->len += n;
	x->buf[x->len] = '\0';
	return 0;
}

static void set_rv(struct kube *k, struct json_object *obj)
{
	const char *rv = jstr(jget(obj, "metadata"), "resourceVersion");

	if (rv && *rv)
		copy_str(k->rv, sizeof(k->rv), rv);
}

/*
 * One watch event line: {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}.
 * Returns 0, or -1 with x->err (x->gone for 410 Gone) to end the watch.
 */
static int handle_event(struct kube_xfer *x, const char *line, size_t n)
{
	struct kube *k = x->k;
	struct json_object *ev, *obj;
	const char *type;
	int ret = 0, cnt = 0;
	bool deleted;

	ev = parse_json(k, line, n);
	type = jstr(ev, "type");
	obj = jget(ev, "object");
	if (!type || !obj) {
		snprintf(x->err, sizeof(x->err), "watch event is not {type, object} JSON: %.60s",
			 line);
		ret = -1;
		goto cleanup;
	}
	if (!strcmp(type, "ERROR")) {
		/* A metav1.Status: 410 when the resourceVersion is too old. */
		struct json_object *code = jget(obj, "code");

		if (code && json_object_get_int(code) == 410)
			x->gone = true;
		snprintf(x->err, sizeof(x->err), "ERROR event: %d %s", json_object_get_int(code),
			 jstr(obj, "message") ?: "");
		ret = -1;
		goto cleanup;
	}
	deleted = !strcmp(type, "DELETED");
	if (deleted || !strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
		struct json_object *meta = jget(obj, "metadata");
		uint64_t now = now_ns();

		pthread_mutex_lock(&k->lock);
		cnt = apply_pod(k, obj, deleted, now);
		sweep(k, now);
		if (cnt >= 0)
			k->stats.events++;
		pthread_mutex_unlock(&k->lock);
		if (cnt < 0) {
			snprintf(x->err, sizeof(x->err), "apply %s event: %s", type,
				 strerror(-cnt));
			ret = -1;
			goto cleanup;
		}
		pr_debug("kubernetes: %s pod %s/%s: %d containers", type,
			 jstr(meta, "namespace") ?: "?", jstr(meta, "name") ?: "?", cnt);
	} else if (!strcmp(type, "BOOKMARK")) {
		pthread_mutex_lock(&k->lock);
		k->stats.events++;
		pthread_mutex_unlock(&k->lock);
	} else {
		pr_debug("kubernetes: ignore watch event of type %s", type);
	}
	set_rv(k, obj);
	x->events++;
cleanup:
	json_object_put(ev);
	return ret;
}

/* libcurl write callback: collects the body; a watch's complete lines are applied at once. */
static size_t on_body(char *p, size_t sz, size_t nmemb, void *arg)
{
	struct kube_xfer *x = arg;
	size_t n = sz * nmemb;
	char *nl;

	if (atomic_load(&x->k->stopping))
		return 0;
	if (!x->status)
		curl_easy_getinfo(x->k->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status != 200) {
		/* Only for the message: a metav1.Status. */
		size_t room = KUBE_ERROR_BODY_SZ - min_t(size_t, x->len, KUBE_ERROR_BODY_SZ);

		n = min_t(size_t, n, room);
		if (n && xfer_append(x, p, n))
			return 0;
		return sz * nmemb;
	}
	if (x->len + n > x->max) {
		snprintf(x->err, sizeof(x->err), "%s larger than %zu bytes",
			 x->watch ? "watch event" : "response", x->max);
		return 0;
	}
	if (xfer_append(x, p, n)) {
		snprintf(x->err, sizeof(x->err), "%s", strerror(ENOMEM));
		return 0;
	}
	if (!x->watch)
		return n;
	while ((nl = memchr(x->buf + x->scanned, '\n', x->len - x->scanned))) {
		size_t line = nl - x->buf;

		if (line && handle_event(x, x->buf, line))
			return 0;
		memmove(x->buf, nl + 1, x->len - line - 1);
		x->len -= line + 1;
		x->buf[x->len] = '\0';
		x->scanned = 0;
	}
	x->scanned = x->len;
	return n;
}

/* libcurl progress callback: called at least once a second, even while nothing arrives. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct kube *k = arg;

	return atomic_load(&k->stopping);
}

/* The bearer token file's content, trimmed, into *token (malloc'd). 0 or a negative errno. */
static int read_token(const char *path, char **token)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n;
	int err = 0;

	*token = NULL;
	if (!f)
		return -errno;
	buf = malloc(KUBE_TOKEN_MAX_SZ);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = fread(buf, 1, KUBE_TOKEN_MAX_SZ - 1, f);
	if (ferror(f)) {
		err = -EIO;
		goto cleanup;
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (!n) {
		err = -ENODATA;
		goto cleanup;
	}
	*token = buf;
	buf = NULL;
cleanup:
	free(buf);
	fclose(f);
	return err;
}

/* The message of an error response: a metav1.Status's "message", else the body's start. */
static void error_message(struct kube *k, struct kube_xfer *x)
{
	struct json_object *o = x->len ? parse_json(k, x->buf, x->len) : NULL;
	const char *msg = jstr(o, "message");
	const char *hint =
		x->status == 401 || x->status == 403 ?
			"; the service account needs get, list and watch on pods (a ClusterRole)" :
			"";

	if (msg)
		snprintf(x->err, sizeof(x->err), "HTTP %ld: %s%s", x->status, msg, hint);
	else
		snprintf(x->err, sizeof(x->err), "HTTP %ld: %.80s%s", x->status,
			 x->len ? x->buf : "(no body)", hint);
	json_object_put(o);
}

/*
 * GET url (the thread's CURL handle: the watch reuses the list's connection). Returns 0 after a
 * 200 response that ended normally, else -1 with x->err (and x->gone for 410 Gone), or
 * -ECANCELED when stopping.
 */
static int kube_get(struct kube *k, const char *url, struct kube_xfer *x, long timeout_s)
{
	struct curl_slist *hdrs = NULL, *tmp;
	char *token = NULL, *auth = NULL, curl_err[CURL_ERROR_SIZE] = "";
	CURLcode res;
	int err;

	x->k = k;
	tmp = curl_slist_append(hdrs, "Accept: application/json");
	if (!tmp)
		goto nomem;
	hdrs = tmp;
	if (k->token_file) {
		err = read_token(k->token_file, &token);
		if (err) {
			snprintf(x->err, sizeof(x->err), "read token %s: %s", k->token_file,
				 strerror(-err));
			goto fail;
		}
		if (asprintf(&auth, "Authorization: Bearer %s", token) < 0) {
			auth = NULL;
			goto nomem;
		}
		tmp = curl_slist_append(hdrs, auth);
		if (!tmp)
			goto nomem;
		hdrs = tmp;
	}

	curl_easy_reset(k->curl);
	curl_easy_setopt(k->curl, CURLOPT_URL, url);
	curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(k->curl, CURLOPT_USERAGENT, "bpfprof/" BPFPROF_VERSION);
	curl_easy_setopt(k->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k->curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(k->curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(k->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(k->curl, CURLOPT_TIMEOUT, timeout_s);
	/* A watch is quiet for minutes: keepalives find a dead peer. */
	curl_easy_setopt(k->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(k->curl, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(k->curl, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(k->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k->curl, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(k->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(k->curl, CURLOPT_XFERINFODATA, k);
	curl_easy_setopt(k->curl, CURLOPT_NOPROGRESS, 0L);
	if (k->ca_file)
		curl_easy_setopt(k->curl, CURLOPT_CAINFO, k->ca_file);

	res = curl_easy_perform(k->curl);
	if (atomic_load(&k->stopping)) {
		err = -ECANCELED;
		goto cleanup;
	}
	if (!x->status)
		curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status && x->status != 200) {
		x->gone = x->status == 410;
		error_message(k, x);
		goto fail;
	}
	if (res != CURLE_OK) {
		if (!x->err[0])
			snprintf(x->err, sizeof(x->err), "%s",
				 curl_err[0] ? curl_err : curl_easy_strerror(res));
		goto fail;
	}
	if (x->err[0])
		goto fail;
	err = 0;
	goto cleanup;
nomem:
	snprintf(x->err, sizeof(x->err), "%s", strerror(ENOMEM));
fail:
	err = -1;
cleanup:
	/* The error buffer is on this stack: libcurl must not keep it. */
	curl_easy_setopt(k->curl, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	free(auth);
	free(token);
	return err;
}

/* --- list and watch ----------------------------------------------------------------------- */

/*
 * LISTs the node's pods and makes them the map's content (pods missing from the list expire).
 * consistent: read from etcd (after 410 Gone); else resourceVersion=0, the API server's cache.
 * Returns 0 or -1 with err (-ECANCELED when stopping).
 */
static int kube_list(struct kube *k, bool consistent, char *errbuf, size_t errsz)
{
	struct kube_xfer x = { .max = KUBE_LIST_MAX_SZ };
	struct json_object *list = NULL, *items;
	struct kube_container *c, *ctmp;
	struct kube_pod_entry *p, *ptmp;
	char *url = NULL;
	uint32_t pods = 0, containers = 0;
	uint64_t now;
	const char *rv;
	size_t i, n;
	int err, cnt;

	if (asprintf(&url, "%s/api/v1/pods?%s%s", k->api_url, k->selector,
		     consistent ? "" : "&resourceVersion=0") < 0) {
		url = NULL;
		snprintf(errbuf, errsz, "%s", strerror(ENOMEM));
		err = -1;
		goto cleanup;
	}
	err = kube_get(k, url, &x, KUBE_LIST_TIMEOUT_S);
	if (err) {
		snprintf(errbuf, errsz, "%s", x.err);
		goto cleanup;
	}
	list = parse_json(k, x.buf ?: "", x.len);
	items = jget(list, "items");
	rv = jstr(jget(list, "metadata"), "resourceVersion");
	if (!items || !json_object_is_type(items, json_type_array) || !rv || !*rv) {
		snprintf(errbuf, errsz, "response is not a PodList with a resourceVersion: %.60s",
			 x.buf ?: "");
		err = -1;
		goto cleanup;
	}

	now = now_ns();
	n = json_object_array_length(items);
	pthread_mutex_lock(&k->lock);
	k->gen++;
	for (i = 0; i < n; i++) {
		cnt = apply_pod(k, json_object_array_get_idx(items, i), false, now);
		if (cnt < 0) {
			pthread_mutex_unlock(&k->lock);
			snprintf(errbuf, errsz, "%s", strerror(-cnt));
			err = -1;
			goto cleanup;
		}
		pods++;
		containers += cnt;
	}
	/* Deleted while no watch ran: not in the list. */
	HASH_ITER(hh, k->containers, c, ctmp) {
		if (!c->expires_ns && c->gen != k->gen)
			container_expire(k, c, now);
	}
	HASH_ITER(hh, k->pods, p, ptmp) {
		if (!p->expires_ns && p->gen != k->gen)
			pod_expire(k, p, now);
	}
	sweep(k, now);
	k->stats.lists++;
	if (consistent)
		k->stats.relists++;
	k->stats.synced = true;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);

	copy_str(k->rv, sizeof(k->rv), rv);
	pr_info("kubernetes: listed %u pods of node %s (%u containers), resourceVersion %s", pods,
		k->node_name, containers, k->rv);
	err = 0;
cleanup:
	json_object_put(list);
	free(x.buf);
	free(url);
	return err;
}

/*
 * WATCHes from k->rv until the server ends the stream. Returns 0 after a normal end, else -1
 * with errbuf (*gone: 410, relist), or -ECANCELED when stopping. *events: events applied.
 */
static int kube_watch(struct kube *k, bool *gone, uint64_t *events, char *errbuf, size_t errsz)
{
	struct kube_xfer x = { .max = KUBE_EVENT_MAX_SZ, .watch = true };
	long timeout_s = KUBE_WATCH_MIN_S + rand_r(&k->seed) % KUBE_WATCH_MIN_S;
	char *url = NULL, *rv;
	int err;

	rv = curl_easy_escape(k->curl, k->rv, 0);
	if (!rv || asprintf(&url,
			    "%s/api/v1/pods?%s&watch=1&resourceVersion=%s"
			    "&allowWatchBookmarks=true&timeoutSeconds=%ld",
			    k->api_url, k->selector, rv, timeout_s) < 0) {
		url = NULL;
		snprintf(errbuf, errsz, "%s", strerror(ENOMEM));
		err = -1;
		goto cleanup;
	}
	/* The server ends the watch at timeoutSeconds: wait a little longer than that. */
	err = kube_get(k, url, &x, timeout_s + 30);
	if (err)
		snprintf(errbuf, errsz, "%s", x.err);
cleanup:
	*gone = x.gone;
	*events = x.events;
	curl_free(rv);
	free(x.buf);
	free(url);
	return err;
}

/* Sleeps ms unless stopping. The lock is not held. */
static void kube_wait(struct kube *k, uint32_t ms)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec + (uint64_t)ms * 1000000ull;
	ts.tv_sec = t / 1000000000ull;
	ts.tv_nsec = t % 1000000000ull;
	pthread_mutex_lock(&k->lock);
	while (!atomic_load(&k->stopping) &&
	       pthread_cond_timedwait(&k->cond, &k->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&k->lock);
}

/* Waits the current backoff (with up to 25% jitter: agents of a fleet spread out), doubles it. */
static void kube_backoff(struct kube *k, uint32_t *backoff_ms)
{
	kube_wait(k, *backoff_ms + rand_r(&k->seed) % (*backoff_ms / 4 + 1));
	*backoff_ms = min_t(uint32_t, *backoff_ms * 2, KUBE_BACKOFF_MAX_MS);
}

static void kube_count_error(struct kube *k)
{
	pthread_mutex_lock(&k->lock);
	k->stats.errors++;
	pthread_mutex_unlock(&k->lock);
}

static void *kube_thread(void *arg)
{
	struct kube *k = arg;
	uint32_t backoff = KUBE_BACKOFF_MIN_MS;
	bool listed = false, consistent = false, gone;
	char err[256];
	uint64_t events, start;

	while (!atomic_load(&k->stopping)) {
		if (!listed) {
			if (kube_list(k, consistent, err, sizeof(err))) {
				if (atomic_load(&k->stopping))
					break;
				kube_count_error(k);
				pr_warn("kubernetes: list pods of node %s from %s: %s; "
					"retrying in %u ms",
					k->node_name, k->api_url, err, backoff);
				kube_backoff(k, &backoff);
				continue;
			}
			listed = true;
			consistent = false;
			backoff = KUBE_BACKOFF_MIN_MS;
		}
		start = now_ns();
		if (kube_watch(k, &gone, &events, err, sizeof(err))) {
			if (atomic_load(&k->stopping))
				break;
			if (gone) {
				/* client-go relists from etcd too: the cache may be as old. */
				pr_info("kubernetes: watch pods from resourceVersion %s: %s; "
					"listing again",
					k->rv, err);
				listed = false;
				consistent = true;
				continue;
			}
			kube_count_error(k);
			pr_warn("kubernetes: watch pods from resourceVersion %s: %s; "
				"retrying in %u ms",
				k->rv, err, backoff);
			kube_backoff(k, &backoff);
			continue;
		}
		pr_debug("kubernetes: watch ended after %llu events; "
			 "resuming from resourceVersion %s",
			 (unsigned long long)events, k->rv);
		if (events || now_ns() - start >= KUBE_WATCH_QUICK_NS)
			backoff = KUBE_BACKOFF_MIN_MS;
		else
			kube_backoff(k, &backoff);
	}
	return NULL;
}

/* --- public ------------------------------------------------------------------------------- */

static bool file_exists(const char *path)
{
	return !access(path, R_OK);
}

/* The in-cluster API URL: https://HOST:PORT, an IPv6 HOST in brackets. NULL + errno. */
static char *in_cluster_url(void)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char *url;

	if (!host || !*host) {
		errno = EINVAL;
		return NULL;
	}
	if (!port || !*port)
		port = "443";
	if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port) <
	    0) {
		errno = ENOMEM;
		return NULL;
	}
	return url;
}

void kube__stop(struct kube *k)
{
	struct kube_container *c, *ctmp;
	struct kube_pod_entry *p, *ptmp;

	if (!k)
		return;
	if (k->thread_started) {
		pthread_mutex_lock(&k->lock);
		atomic_store(&k->stopping, true);
		pthread_cond_broadcast(&k->cond);
		pthread_mutex_unlock(&k->lock);
		pthread_join(k->thread, NULL);
	}
	HASH_ITER(hh, k->containers, c, ctmp) {
		HASH_DEL(k->containers, c);
		free(c);
	}
	HASH_ITER(hh, k->pods, p, ptmp) {
		HASH_DEL(k->pods, p);
		free(p);
	}
	if (k->curl)
		curl_easy_cleanup(k->curl);
	if (k->curl_inited)
		curl_global_cleanup();
	if (k->tok)
		json_tokener_free(k->tok);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k->api_url);
	free(k->token_file);
	free(k->ca_file);
	free(k->node_name);
	free(k->selector);
	free(k);
}

struct kube *kube__start(const struct kube_opts *opts)
{
	const char *node = opts->node_name ?: getenv("NODE_NAME");
	const char *token = opts->token_file, *ca = opts->ca_file;
	pthread_condattr_t cattr;
	sigset_t all, old;
	struct kube *k;
	char *esc = NULL;
	size_t n;
	int err;

	if (!node || !*node) {
		pr_warn("kubernetes: start pod metadata: no node name; "
			"set NODE_NAME from spec.nodeName (downward API)");
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cond, &cattr);
	pthread_condattr_destroy(&cattr);
	k->ttl_ns = (uint64_t)opts->deleted_ttl_ms * 1000000ull;
	k->seed = getpid() ^ (unsigned int)now_ns();

	if (opts->api_url) {
		k->api_url = strdup(opts->api_url);
	} else {
		k->api_url = in_cluster_url();
		if (!k->api_url && errno == EINVAL) {
			pr_warn("kubernetes: start pod metadata: KUBERNETES_SERVICE_HOST is not "
				"set (not in a pod); give the API server's URL");
			err = -EINVAL;
			goto fail;
		}
	}
	if (!k->api_url)
		goto nomem;
	n = strlen(k->api_url);
	while (n && k->api_url[n - 1] == '/')
		k->api_url[--n] = '\0';
	if (!token && file_exists(KUBE_SA_TOKEN))
		token = KUBE_SA_TOKEN;
	if (!ca && file_exists(KUBE_SA_CA))
		ca = KUBE_SA_CA;
	if ((token && *token && !(k->token_file = strdup(token))) ||
	    (ca && *ca && !(k->ca_file = strdup(ca))) || !(k->node_name = strdup(node)))
		goto nomem;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err = -ENOMEM;
		goto fail;
	}
	k->curl_inited = true;
	k->curl = curl_easy_init();
	k->tok = json_tokener_new_ex(KUBE_JSON_DEPTH);
	if (!k->curl || !k->tok)
		goto nomem;
	esc = curl_easy_escape(k->curl, node, 0);
	if (!esc || asprintf(&k->selector, "fieldSelector=spec.nodeName%%3D%s", esc) < 0) {
		k->selector = NULL;
		goto nomem;
	}
	curl_free(esc);
	esc = NULL;

	/* Signals go to the agent's threads, not this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&k->thread, NULL, kube_thread, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	k->thread_started = true;
	return k;

nomem:
	err = -ENOMEM;
fail:
	curl_free(esc);
	kube__stop(k);
	errno = -err;
	return NULL;
}

int kube__lookup(struct kube *k, const char *container_id, struct kube_pod *out)
{
	struct kube_container *c;
	int err = -ENOENT;

	pthread_mutex_lock(&k->lock);
	HASH_FIND_STR(k->containers, container_id, c);
	if (c && (!c->expires_ns || now_ns() < c->expires_ns)) {
		*out = c->pod;
		err = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__lookup_pod(struct kube *k, const char *pod_uid, struct kube_pod *out)
{
	struct kube_pod_entry *p;
	int err = -ENOENT;

	pthread_mutex_lock(&k->lock);
	HASH_FIND_STR(k->pods, pod_uid, p);
	if (p && (!p->expires_ns || now_ns() < p->expires_ns)) {
		*out = p->pod;
		err = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__wait_synced(struct kube *k, uint32_t timeout_ms)
{
	struct timespec ts;
	uint64_t t;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec + (uint64_t)timeout_ms * 1000000ull;
	ts.tv_sec = t / 1000000000ull;
	ts.tv_nsec = t % 1000000000ull;
	pthread_mutex_lock(&k->lock);
	while (!k->stats.synced && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&k->cond, &k->lock, &ts);
	err = k->stats.synced ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&k->lock);
	return err;
}

void kube__stats(struct kube *k, struct kube_stats *out)
{
	struct kube_pod_entry *p, *tmp;

	pthread_mutex_lock(&k->lock);
	*out = k->stats;
	out->pods = 0;
	HASH_ITER(hh, k->pods, p, tmp) {
		if (!p->expires_ns)
			out->pods++;
	}
	out->containers = HASH_COUNT(k->containers);
	pthread_mutex_unlock(&k->lock);
}

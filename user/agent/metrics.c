// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* metrics.c: Prometheus text exposition 0.0.4 and the /metrics, /healthz endpoint. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "util/log.h"
#include "agent/metrics.h"
#include "util/util.h"

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
};

/* A growing text buffer. */
struct strbuf {
	char *s;
	size_t len, cap;
};

/* One metric family: its HELP and TYPE lines are written once, before all its samples. */
struct family {
	char *name;
	char *help;
	enum metric_type type;
	struct strbuf samples;
};

struct metrics_writer {
	struct family *fams;
	size_t fams_cnt, fams_cap;
	int err; /* first error, negative errno */
};

/*
 * Connections: METRICS_CONN_MAX open at most. A new one beyond that shuts the connection idle
 * longest (no request, or none since its last) of the client address holding the most
 * connections, so idle or slow clients cannot lock the kubelet's probe out: it always gets in
 * and is answered at once. libmicrohttpd's own limits cannot do that (its connection and per-IP
 * limits refuse the newcomer, and a node-local user connects from the kubelet's own address);
 * its limit here is a backstop above ours for connections shut but not yet closed.
 */
#define METRICS_CONN_MAX       32
#define METRICS_CONN_BACKSTOP  (2 * METRICS_CONN_MAX)
/* Seconds of inactivity after which libmicrohttpd closes a connection (idle keep-alive ones
 * included: Prometheus reconnects at its next scrape). */
#define METRICS_CONN_TIMEOUT_S 10

/* One open connection, in metrics.conns; its socket_context. Only the server's thread. */
struct conn {
	struct MHD_Connection *mhd; /* NULL: free slot */
	int fd;
	struct sockaddr_storage addr; /* the client's address (port ignored) */
	uint64_t active_ns;	      /* CLOCK_MONOTONIC: accepted, or its last request */
	bool shut;		      /* shut down to make room, not closed yet */
};

struct metrics {
	struct MHD_Daemon *daemon;
	int fd;
	int port;
	metrics_fill_fn fill;
	metrics_health_fn health;
	void *arg;
	struct conn conns[METRICS_CONN_BACKSTOP];
	uint64_t evicted; /* connections shut to make room */
};

static int sb_grow(struct strbuf *b, size_t add)
{
	size_t need = b->len + add + 1;
	size_t cap = b->cap ? b->cap : 256;
	char *tmp;

	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	tmp = realloc(b->s, cap);
	if (!tmp)
		return -ENOMEM;
	b->s = tmp;
	b->cap = cap;
	return 0;
}

static int sb_add(struct strbuf *b, const char *s, size_t n)
{
	if (sb_grow(b, n))
		return -ENOMEM;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

static int sb_puts(struct strbuf *b, const char *s)
{
	return sb_add(b, s, strlen(s));
}

static int __attribute__((format(printf, 2, 3))) sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sb_grow(b, n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
	return 0;
}

/*
 * Exposition escaping: HELP text escapes '\' and newline, label values also '"'.
 */
static int sb_escaped(struct strbuf *b, const char *s, bool quote)
{
	int err = 0;

	for (; *s && !err; s++) {
		if (*s == '\\')
			err = sb_puts(b, "\\\\");
		else if (*s == '\n')
			err = sb_puts(b, "\\n");
		else if (*s == '"' && quote)
			err = sb_puts(b, "\\\"");
		else
			err = sb_add(b, s, 1);
	}
	return err;
}

static bool valid_name(const char *s, bool colon)
{
	const char *p;

	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (p = s; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || (colon && *p == ':')))
			return false;
	}
	return true;
}

/* Go's strconv formatting as Prometheus clients print: integers plainly, NaN and ±Inf named. */
static int sb_value(struct strbuf *b, double v)
{
	char tmp[32];
	int prec;

	if (isnan(v))
		return sb_puts(b, "NaN");
	if (isinf(v))
		return sb_puts(b, v > 0 ? "+Inf" : "-Inf");
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return sb_printf(b, "%.0f", v);
	/* The shortest text that reads back as v (Go's 'g', -1). */
	for (prec = 15; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	return sb_printf(b, "%.*g", prec, v);
}

static struct family *family_get(struct metrics_writer *w, const char *name, const char *help,
				 enum metric_type type)
{
	struct family *f;
	size_t i;

	for (i = 0; i < w->fams_cnt; i++) {
		if (strcmp(w->fams[i].name, name))
			continue;
		if (w->fams[i].type != type) {
			errno = EINVAL;
			return NULL;
		}
		return &w->fams[i];
	}
	if (array_grow((void **)&w->fams, &w->fams_cap, w->fams_cnt + 1, sizeof(*f), 16)) {
		errno = ENOMEM;
		return NULL;
	}
	f = &w->fams[w->fams_cnt];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->help = strdup(help ?: "");
	f->type = type;
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		errno = ENOMEM;
		return NULL;
	}
	w->fams_cnt++;
	return f;
}

static int add_sample(struct metrics_writer *w, enum metric_type type, const char *name,
		      const char *help, const struct metrics_label *labels, double value)
{
	const struct metrics_label *l;
	struct family *f;
	size_t len = strlen(name ?: "");
	struct strbuf *b;
	size_t old_len;
	int err = 0;

	if (w->err)
		return w->err;
	if (!valid_name(name, true) ||
	    (type == METRIC_COUNTER && (len < 6 || strcmp(name + len - 6, "_total")))) {
		err = -EINVAL;
		goto out;
	}
	for (l = labels; l && l->key; l++) {
		if (!valid_name(l->key, false) || !l->value) {
			err = -EINVAL;
			goto out;
		}
	}
	f = family_get(w, name, help, type);
	if (!f) {
		err = -errno;
		goto out;
	}
	b = &f->samples;
	old_len = b->len;
	err = sb_puts(b, name);
	for (l = labels; l && l->key && !err; l++) {
		err = err ?: sb_puts(b, l == labels ? "{" : ",");
		err = err ?: sb_puts(b, l->key);
		err = err ?: sb_puts(b, "=\"");
		err = err ?: sb_escaped(b, l->value, true);
		err = err ?: sb_puts(b, "\"");
	}
	if (labels && labels->key)
		err = err ?: sb_puts(b, "}");
	err = err ?: sb_puts(b, " ");
	err = err ?: sb_value(b, value);
	err = err ?: sb_puts(b, "\n");
	if (err && b->s) {
		b->len = old_len;
		b->s[old_len] = '\0';
	}
out:
	if (err)
		w->err = err;
	return err;
}

int metrics__counter(struct metrics_writer *w, const char *name, const char *help,
		     const struct metrics_label *labels, double value)
{
	return add_sample(w, METRIC_COUNTER, name, help, labels, value);
}

int metrics__gauge(struct metrics_writer *w, const char *name, const char *help,
		   const struct metrics_label *labels, double value)
{
	return add_sample(w, METRIC_GAUGE, name, help, labels, value);
}

/* Seconds since boot of the system boot: btime from /proc/stat. */
static int64_t boot_time_s(void)
{
	char line[256];
	long long bt = -1;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	}
	fclose(f);
	return bt;
}

int metrics__process(struct metrics_writer *w)
{
	unsigned long long utime, stime, starttime, vsize;
	long long rss;
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char buf[1024], *p;
	int64_t btime;
	struct dirent *de;
	ssize_t n;
	int fd, fds = 0, err = 0;
	DIR *dir;

	/* /proc/PID/stat (proc(5)): fields after the ')' that ends comm, which may hold spaces. */
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24) */
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d"
			 " %*d %*d %llu %llu %lld",
			 &utime, &stime, &starttime, &vsize, &rss) != 5)
		return -EINVAL;

	err = err   ?:
		      metrics__counter(w, "process_cpu_seconds_total",
				       "Total user and system CPU time spent in seconds.", NULL,
				       (double)(utime + stime) / ticks);
	err = err   ?:
		      metrics__gauge(w, "process_resident_memory_bytes",
				     "Resident memory size in bytes.", NULL, (double)rss * page);
	err = err   ?:
		      metrics__gauge(w, "process_virtual_memory_bytes",
				     "Virtual memory size in bytes.", NULL, (double)vsize);
	btime = boot_time_s();
	if (btime >= 0)
		err = err   ?:
			      metrics__gauge(w, "process_start_time_seconds",
					     "Start time of the process since unix epoch in "
					     "seconds.",
					     NULL, btime + (double)starttime / ticks);
	dir = opendir("/proc/self/fd");
	if (dir) {
		while ((de = readdir(dir)))
			fds += de->d_name[0] != '.';
		closedir(dir);
		/* Less the descriptor of the listing itself. */
		err = err   ?:
			      metrics__gauge(w, "process_open_fds",
					     "Number of open file descriptors.", NULL, fds - 1);
	}
	return err;
}

struct metrics_writer *metrics_writer__new(void)
{
	return calloc(1, sizeof(struct metrics_writer));
}

void metrics_writer__free(struct metrics_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->fams_cnt; i++) {
		free(w->fams[i].name);
		free(w->fams[i].help);
		free(w->fams[i].samples.s);
	}
	free(w->fams);
	free(w);
}

char *metrics_writer__render(struct metrics_writer *w, size_t *sz)
{
	static const char *const type_names[] = { "counter", "gauge" };
	struct strbuf b = {};
	int err = w->err;
	size_t i;

	for (i = 0; i < w->fams_cnt && !err; i++) {
		struct family *f = &w->fams[i];

		err = sb_printf(&b, "# HELP %s ", f->name);
		err = err ?: sb_escaped(&b, f->help, false);
		err = err ?: sb_printf(&b, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
		err = err ?: sb_add(&b, f->samples.s ?: "", f->samples.len);
	}
	err = err ?: sb_add(&b, "", 0);
	metrics_writer__free(w);
	if (err) {
		free(b.s);
		errno = -err;
		return NULL;
	}
	if (sz)
		*sz = b.len;
	return b.s;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     char *body, size_t len, bool must_free)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(
		len, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	static const char *const text = "text/plain; charset=utf-8";
	struct metrics *m = cls;
	const union MHD_ConnectionInfo *ci;
	struct metrics_writer *w;
	char msg[300];
	size_t len;
	char *body;

	/* A request: the connection is not idle. */
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context)
		((struct conn *)ci->socket_context)->active_ns = now_ns();
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, "method not allowed\n", 19,
			     false);
	/* Bodies of GET requests are ignored; answer at the first call. */
	if (!strcmp(url, "/metrics")) {
		w = metrics_writer__new();
		if (!w)
			return MHD_NO;
		if (m->fill)
			m->fill(w, m->arg);
		metrics__counter(
			w, "bpfprof_http_connections_shut_total",
			"Idle connections to this endpoint shut to make room for new ones.", NULL,
			m->evicted);
		metrics__process(w);
		body = metrics_writer__render(w, &len);
		if (!body) {
			snprintf(msg, sizeof(msg), "metrics: %s\n", strerror(errno));
			pr_warn("serve /metrics: %s", strerror(errno));
			return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text, msg, strlen(msg),
				     false);
		}
		return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body,
			     len, true);
	}
	if (!strcmp(url, "/healthz")) {
		char reason[256] = "unhealthy";
		bool ok = !m->health || m->health(reason, sizeof(reason), m->arg);

		snprintf(msg, sizeof(msg), "%s\n", ok ? "ok" : reason);
		return reply(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, text, msg,
			     strlen(msg), false);
	}
	return reply(conn, MHD_HTTP_NOT_FOUND, text, "not found\n", 10, false);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	pr_debug("metrics endpoint: %s", buf);
}

/* The client's address without its port, to compare two connections' clients. */
static bool same_client(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true;
}

/* MHD_OPTION_NOTIFY_CONNECTION: a slot per open connection (the server's thread only). */
static void on_connection(void *cls, struct MHD_Connection *mhd, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *fd_info, *addr_info;
	struct metrics *m = cls;
	struct conn *c = *socket_context;
	size_t i;
	int fd;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c)
			c->mhd = NULL;
		*socket_context = NULL;
		return;
	}
	for (i = 0; i < ARRAY_SIZE(m->conns) && m->conns[i].mhd; i++)
		;
	/* Read before the next query: libmicrohttpd 1.0 (Debian 13) answers every query in the
	 * same union, so the client address's pointer overwrites the descriptor. */
	fd_info = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
	fd = fd_info ? fd_info->connect_fd : -1;
	addr_info = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	/* Never more than libmicrohttpd's limit, the size of conns. */
	if (i == ARRAY_SIZE(m->conns) || fd < 0)
		return;
	c = &m->conns[i];
	memset(c, 0, sizeof(*c));
	c->mhd = mhd;
	c->fd = fd;
	if (addr_info && addr_info->client_addr) {
		socklen_t len = addr_info->client_addr->sa_family == AF_INET6 ?
					sizeof(struct sockaddr_in6) :
					sizeof(struct sockaddr_in);

		memcpy(&c->addr, addr_info->client_addr, len);
	}
	c->active_ns = now_ns();
	*socket_context = c;
}

/*
 * Makes room for one more connection: shuts (shutdown(2), libmicrohttpd then closes it at once)
 * the connection idle longest of the client with the most open connections.
 */
static void make_room(struct metrics *m)
{
	struct conn *victim = NULL, *c, *o;
	size_t open = 0, most = 0, cnt, i, j;

	for (i = 0; i < ARRAY_SIZE(m->conns); i++)
		open += m->conns[i].mhd && !m->conns[i].shut;
	if (open < METRICS_CONN_MAX)
		return;
	for (i = 0; i < ARRAY_SIZE(m->conns); i++) {
		c = &m->conns[i];
		if (!c->mhd || c->shut)
			continue;
		for (cnt = 0, j = 0; j < ARRAY_SIZE(m->conns); j++) {
			o = &m->conns[j];
			cnt += o->mhd && !o->shut && same_client(&c->addr, &o->addr);
		}
		if (cnt > most || (cnt == most && c->active_ns < victim->active_ns)) {
			most = cnt;
			victim = c;
		}
	}
	if (!victim)
		return;
	shutdown(victim->fd, SHUT_RDWR);
	victim->shut = true;
	m->evicted++;
}

/* MHD_AcceptPolicyCallback: every connection is accepted, after making room for it. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)addr;
	(void)addrlen;
	make_room(cls);
	return MHD_YES;
}

/* Splits "HOST:PORT", "[V6]:PORT", ":PORT" and binds a listening socket. */
static int listen_on(const char *addr, int *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_storage ss;
	socklen_t ss_len = sizeof(ss);
	char host[256], *colon, *end;
	const char *h, *svc;
	int fd = -1, err, one = 1;
	long p;

	if (!addr || strlen(addr) >= sizeof(host))
		return -EINVAL;
	strcpy(host, addr);
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	svc = colon + 1;
	errno = 0;
	p = strtol(svc, &end, 10);
	if (!*svc || *end || errno || p < 0 || p > 65535)
		return -EINVAL;
	h = host;
	if (*h == '[') {
		size_t n = strlen(h);

		if (n < 2 || h[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		h++;
	}
	err = getaddrinfo(*h ? h : NULL, svc, &hints, &res);
	if (err)
		return err == EAI_SYSTEM ? -errno : err == EAI_MEMORY ? -ENOMEM : -EINVAL;
	err = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 16))
			break;
		err = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return err;
	if (getsockname(fd, (struct sockaddr *)&ss, &ss_len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
						 ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

struct metrics *metrics__start(const char *addr, metrics_fill_fn fill, metrics_health_fn health,
			       void *arg)
{
	sigset_t all, old;
	struct metrics *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->fill = fill;
	m->health = health;
	m->arg = arg;
	m->fd = listen_on(addr, &m->port);
	if (m->fd < 0) {
		err = m->fd;
		goto err_out;
	}
	/*
	 * One internal thread serves every connection as events (epoll on Linux: MHD_USE_AUTO;
	 * select() would refuse a socket numbered past FD_SETSIZE, and the agent holds many
	 * descriptors). Requests are answered at once, never blocking: fill and health read
	 * copies. Connections: METRICS_CONN_MAX and the timeout, above.
	 */
	/* The server's thread blocks every signal: they stay with the agent's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	m->daemon = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, on_accept, m, handle_request,
		m, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)m->fd, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)METRICS_CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)METRICS_CONN_BACKSTOP, MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!m->daemon) {
		err = -EIO;
		close(m->fd);
		goto err_out;
	}
	return m;

err_out:
	free(m);
	errno = -err;
	return NULL;
}

int metrics__port(const struct metrics *m)
{
	return m->port;
}

void metrics__stop(struct metrics *m)
{
	if (!m)
		return;
	/* MHD_stop_daemon closes the listening socket it was given. */
	MHD_stop_daemon(m->daemon);
	if (m->evicted)
		pr_debug("metrics endpoint: %llu idle connections shut to make room",
			 (unsigned long long)m->evicted);
	free(m);
}

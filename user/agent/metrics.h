/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* metrics.h: the agent's HTTP endpoint: Prometheus /metrics and /healthz (libmicrohttpd). */
#ifndef BPFPROF_METRICS_H
#define BPFPROF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One label of a metric sample. Arrays of them end with an entry whose key is NULL; a NULL
 * array means no labels. Keys match [a-zA-Z_][a-zA-Z0-9_]*; values are any UTF-8 (escaped).
 */
struct metrics_label {
	const char *key, *value;
};

/*
 * Collects the samples of one scrape and renders them in the Prometheus text exposition format
 * 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/): one "# HELP" and one
 * "# TYPE" line per metric family, then its samples, even when the samples of a family were
 * added apart. Opaque.
 */
struct metrics_writer;

/*
 * Fills one scrape: adds samples with metrics__counter() and metrics__gauge(). Runs on the HTTP
 * server's thread, one scrape at a time, so it reads only what is safe there (atomics, copies
 * taken under the owner's lock). w is valid during the call only.
 */
typedef void (*metrics_fill_fn)(struct metrics_writer *w, void *arg);

/*
 * Adds a sample of counter family name (must end in "_total"; [a-zA-Z_:][a-zA-Z0-9_:]*) with
 * help text help and labels (see struct metrics_label). The first call for a name sets its help
 * and type. Returns 0, -EINVAL (bad name or label key, the name used with the other type) or
 * -ENOMEM; an error is kept in w and fails the scrape (HTTP 500).
 */
int metrics__counter(struct metrics_writer *w, const char *name, const char *help,
		     const struct metrics_label *labels, double value);
/* As metrics__counter(), for a gauge (a value that goes up and down; no "_total"). */
int metrics__gauge(struct metrics_writer *w, const char *name, const char *help,
		   const struct metrics_label *labels, double value);
/*
 * Adds the standard process metrics of the calling process from /proc/self (stat, fd) as
 * Prometheus client libraries name them: process_cpu_seconds_total (user + system),
 * process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
 * process_start_time_seconds (unix s). The endpoint adds them to every scrape after fill.
 * Returns 0 or a negative errno.
 */
int metrics__process(struct metrics_writer *w);

/* A writer outside the endpoint (tests, a one-shot dump). NULL with errno ENOMEM. */
struct metrics_writer *metrics_writer__new(void);
/*
 * Renders w as exposition text, NUL-terminated, its length in *sz (may be NULL), and frees w.
 * Returns malloc'd text the caller frees, or NULL with errno: the first error a metrics__*()
 * call met, or ENOMEM.
 */
char *metrics_writer__render(struct metrics_writer *w, size_t *sz);
/* Frees w without rendering; accepts NULL. */
void metrics_writer__free(struct metrics_writer *w);

struct metrics;

/*
 * Decides what /healthz answers, at each request, on the HTTP server's thread (so it reads only
 * what is safe there): true when healthy, else false with the reason, NUL-terminated, in
 * reason (sz bytes).
 */
typedef bool (*metrics_health_fn)(char *reason, size_t sz, void *arg);

/*
 * Listens on addr ("HOST:PORT", "[IPV6]:PORT" or ":PORT" for every address; port 0 picks a
 * free one, see metrics__port()) and serves, from one thread of libmicrohttpd (epoll):
 *   GET /metrics  200, Content-Type "text/plain; version=0.0.4; charset=utf-8": what fill adds,
 *                 then metrics__process(); 500 when fill hit an error;
 *   GET /healthz  200 "ok\n" when health says so (or is NULL), else 503 "<reason>\n";
 *   anything else 404 (405 for methods other than GET and HEAD).
 * fill and health get arg. At most 32 connections are open: one more shuts the connection idle
 * longest of the client holding the most, so idle clients cannot lock a probe out; a connection
 * idle for 10 s is closed. Returns NULL with errno EINVAL (addr not parsed), the errno of
 * socket/bind/listen (e.g. EADDRINUSE, EACCES), or EIO (libmicrohttpd). Stop with
 * metrics__stop().
 */
struct metrics *metrics__start(const char *addr, metrics_fill_fn fill, metrics_health_fn health,
			       void *arg);
/* The TCP port listened on (host byte order). */
int metrics__port(const struct metrics *m);
/* Stops serving (waits for a scrape in progress), closes the socket, frees m; NULL ok. */
void metrics__stop(struct metrics *m);

#endif /* BPFPROF_METRICS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* export.h: delivery of finished profiles: Pyroscope (/ingest or the push API) over HTTP and a
 * pprof directory. */
#ifndef BPFPROF_EXPORT_H
#define BPFPROF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct metrics_writer;

/* One label of a profile: a key and its value, both NUL-terminated. */
struct export_label {
	const char *key, *value;
};

/*
 * A profile ready for delivery: the bytes of one gzipped pprof (profile.proto), its labels and
 * its time range. Made by export_profile__new(), which copies everything: the profile owns
 * data, labels and their strings; export_profile__free() releases them.
 */
struct export_profile {
	void *data; /* gzipped pprof, size bytes */
	size_t size;
	struct export_label *labels; /* service_name first: the Pyroscope application name */
	size_t labels_cnt;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME ns: the interval the samples cover */
	uint32_t freq_hz;	   /* sampling frequency per CPU */
	/* The profile type, Pyroscope's __name__: "process_cpu" (set by export_profile__new()) or
	 * "off_cpu" (--off-cpu); a static string. */
	const char *type;
	/* A random UUID (RFC 9562 version 4), the same on every attempt and in every copy: the
	 * push API's RawSample.ID, with which a backend drops a retried duplicate. */
	char id[37];
};

/*
 * Copies size bytes of data and labels_cnt labels (service_name first; labels_cnt >= 1, every
 * key and value non-NULL) into a new profile. Returns NULL with errno EINVAL or ENOMEM.
 */
struct export_profile *export_profile__new(const void *data, size_t size,
					   const struct export_label *labels, size_t labels_cnt,
					   uint64_t start_ns, uint64_t end_ns, uint32_t freq_hz);
/* A deep copy of p, id included (to hand the same profile to two exporters). NULL with errno
 * ENOMEM. */
struct export_profile *export_profile__dup(const struct export_profile *p);
/* Frees p, its data and its labels; accepts NULL. */
void export_profile__free(struct export_profile *p);

/* ---- Pyroscope: POST {url}/ingest?name=...&format=pprof, or the push API, from a background
 * thread. ---- */

/* Which of Pyroscope's ingestion APIs a pyroscope_exporter uses (README.md, "Agent"). */
enum pyroscope_api {
	/* POST {url}/ingest?name=SERVICE{labels}&from=&until=&format=pprof, body the gzipped
	 * pprof: Pyroscope 0.37 and later, Grafana Cloud. */
	PYROSCOPE_API_INGEST,
	/* POST {url}/push.v1.PusherService/Push (Connect, application/proto), body a
	 * PushRequest (user/proto/push.proto): labels as Prometheus labels, no name encoding;
	 * Pyroscope 1.0 and later. */
	PYROSCOPE_API_PUSH,
};

/* The push API sends up to this many queued profiles in one request, and at most
 * PYROSCOPE_PUSH_BATCH_BYTES of them (a single larger profile goes alone). */
#define PYROSCOPE_PUSH_BATCH_MAX   32
#define PYROSCOPE_PUSH_BATCH_BYTES (2u << 20)
/* ... after waiting this long (ms) from the first profile into an empty queue, so that the
 * profiles of one interval, queued one after another, go together. */
#define PYROSCOPE_PUSH_LINGER_MS   100

/*
 * Options of pyroscope_exporter__new(). Zero fields take the defaults given. The exporter
 * copies what it keeps; credentials are read from their files at start and again whenever a
 * file changes (rotated Kubernetes tokens), never logged.
 */
struct pyroscope_opts {
	const char *url;	       /* base URL, e.g. http://pyroscope:4040 (required) */
	enum pyroscope_api api;	       /* PYROSCOPE_API_INGEST */
	const char *basic_auth_file;   /* "user:password" (HTTP Basic, Grafana Cloud) */
	const char *bearer_token_file; /* "Authorization: Bearer <token>" */
	const char *tenant_id;	       /* X-Scope-OrgID (multi-tenant Pyroscope) */
	const char *const *headers;    /* extra headers "Key: value", headers_cnt of them */
	size_t headers_cnt;
	size_t queue_size;	     /* profiles held for delivery, in flight included (64) */
	uint64_t connect_timeout_ms; /* TCP + TLS connect (10000) */
	uint64_t timeout_ms;	     /* whole request (30000) */
	/*
	 * After n failed attempts in a row the next waits uniform in [0, min(max, base * 2^(n-1))]
	 * ms ("full jitter"), or Retry-After capped at max; a success or a 4xx resets n.
	 */
	uint64_t backoff_base_ms; /* 1000 */
	uint64_t backoff_max_ms;  /* 60000 */
};

/*
 * Counters of an exporter, for /metrics. A profile ends exactly once as sent, failed or
 * dropped; retries counts the attempts made after a failed one (backoff).
 */
struct export_stats {
	uint64_t sent;		    /* profiles delivered (2xx) or files written */
	uint64_t retries;	    /* attempts after a connection error, timeout, 429, 5xx */
	uint64_t failed;	    /* rejected (4xx but 429) or write failed: logged, gone */
	uint64_t dropped;	    /* queue full (oldest first) or undelivered at shutdown */
	uint64_t queue_depth;	    /* profiles waiting or in flight */
	uint64_t bytes_sent;	    /* body bytes of delivered profiles, or bytes written */
	uint64_t deleted;	    /* directory: our files removed by the size cap */
	uint64_t dir_bytes;	    /* directory: bytes in our files now */
	int64_t last_error_time_ns; /* CLOCK_REALTIME of last_error; 0: none yet */
	char last_error[256];	    /* the last failure, "" if none */
};

struct pyroscope_exporter;

/*
 * Validates opts, reads the credential files, starts the delivery thread. Returns NULL with
 * errno EINVAL (no url, a header without ':'), the error of reading a credential file, or
 * ENOMEM. Free with pyroscope_exporter__free().
 */
struct pyroscope_exporter *pyroscope_exporter__new(const struct pyroscope_opts *opts);
/*
 * Queues p for delivery and takes ownership of it in every case. Never blocks on the network:
 * it only takes the queue lock. When the queue is full, the oldest profile (the one in flight
 * included) is dropped and counted. Returns 0, or -ESHUTDOWN (p freed and counted as
 * dropped) once pyroscope_exporter__flush() has started.
 */
int pyroscope_exporter__enqueue(struct pyroscope_exporter *e, struct export_profile *p);
/*
 * Shutdown: stops accepting profiles, delivers what can be delivered within timeout_ms (each
 * request's timeout is cut to what is left; backoff waits too), then counts the rest as dropped
 * and stops the thread. Blocks up to about timeout_ms. Returns 0 when everything queued was
 * delivered or failed for good, -ETIMEDOUT when some was dropped. Only the first call flushes.
 */
int pyroscope_exporter__flush(struct pyroscope_exporter *e, uint64_t timeout_ms);
/* A consistent copy of the counters. Thread-safe. */
void pyroscope_exporter__stats(struct pyroscope_exporter *e, struct export_stats *st);
/*
 * Appends st as bpfprof_export_* metrics with label exporter="<exporter>": counters
 * profiles_sent, retries, profiles_failed, profiles_dropped, bytes_sent, files_deleted; gauges
 * queue_depth, dir_bytes, last_error_timestamp_seconds.
 */
void export_stats__metrics(const struct export_stats *st, const char *exporter,
			   struct metrics_writer *w);
/* export_stats__metrics() of this exporter's counters, exporter="pyroscope". */
void pyroscope_exporter__metrics(struct pyroscope_exporter *e, struct metrics_writer *w);
/* Stops the thread without waiting for delivery (flush with timeout 0 first), frees; NULL ok. */
void pyroscope_exporter__free(struct pyroscope_exporter *e);

/*
 * The value of /ingest's name parameter for p, not yet URL-encoded: "app{k=v,...}", the
 * format Pyroscope's segment.ParseKey (pkg/og/storage/segment/key.go) reads. It has no
 * escaping, so characters it cannot carry are replaced with '_': the application name
 * (service_name) keeps [A-Za-z0-9._/-], label keys [A-Za-z0-9_] (Prometheus label names: not
 * starting with a digit or "__"), values lose ',', '{', '}' and surrounding blanks; labels with
 * an empty value are left out, as Pyroscope does. Returns a malloc'd string or NULL (ENOMEM).
 */
char *pyroscope__ingest_name(const struct export_profile *p);
/*
 * The push API's body for profiles ps[0..n): a packed PushRequest (user/proto/push.proto) of
 * one series per profile, whose labels are __name__="process_cpu", __delta__="false" (the
 * profile holds its interval only: the server must not subtract a previous one), then the
 * profile's labels (keys made Prometheus label names as for /ingest, values valid UTF-8, empty
 * ones left out), and one RawSample{raw_profile: data, ID: id}. *body is malloc'd (free() it).
 * Returns 0, -EINVAL (n == 0) or -ENOMEM.
 */
int pyroscope__push_body(const struct export_profile *const *ps, size_t n, void **body,
			 size_t *size);

/* ---- Directory: <dir>/<UTC start time>_<group>.pb.gz, rotated by a size cap. ---- */

struct dir_exporter;

/*
 * Opens (creates, mode 0750, if missing: the leaf only) dir for profiles, removes temp files
 * left by a crash, and indexes the files bpfprof wrote there before (names
 * "YYYYMMDDTHHMMSSZ_<group>[.N].pb.gz"; no other file is ever touched). max_bytes caps the
 * sum of their sizes (0: no cap). Returns NULL with errno set (mkdir, open). Free with
 * dir_exporter__free().
 */
struct dir_exporter *dir_exporter__new(const char *dir, uint64_t max_bytes);
/*
 * Writes p's bytes to "<dir>/<UTC time of p->start_ns>_<group>.pb.gz" atomically: a temp
 * file in dir, fsync, rename without replacing (".1", ".2"... before ".pb.gz" when the name is
 * taken), fsync of dir. group (NULL: p's first label value) is sanitized to [A-Za-z0-9._-],
 * 128 bytes at most. Then removes our oldest files (by name: the time comes first) until the
 * total fits max_bytes; the file just written always stays. Blocks on the file system; one
 * thread writes at a time. Returns 0 or a negative errno (counted as failed, temp file
 * removed). p stays the caller's.
 */
int dir_exporter__write(struct dir_exporter *d, const struct export_profile *p, const char *group);
/* A consistent copy of the counters (sent: files written, deleted, dir_bytes). Thread-safe. */
void dir_exporter__stats(struct dir_exporter *d, struct export_stats *st);
/* export_stats__metrics() of this exporter's counters, exporter="dir". */
void dir_exporter__metrics(struct dir_exporter *d, struct metrics_writer *w);
/* Closes the directory; accepts NULL. Files stay. */
void dir_exporter__free(struct dir_exporter *d);

#endif /* BPFPROF_EXPORT_H */

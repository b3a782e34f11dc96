// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* debuginfod.c: debug files fetched by build-id from debuginfod servers, in one background
 * thread. */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "symbols/debuginfod.h"
#include "util/elf_read.h"
#include "util/log.h"
#include "util/util.h"
#include "util/worker.h"

/* Progress lines during one fetch: at most one per this many ns. */
#define PROGRESS_INTERVAL_NS	   5000000000ull
/* At exit, how long a running fetch has to see the stop (libdebuginfod calls the progress
 * callback after each second of curl_multi_wait) before it is left to its thread. */
#define SHUTDOWN_WAIT_NS	   1000000000ull
/* libdebuginfod gives up on a server sending less than 100 KB in DEBUGINFOD_TIMEOUT s (its
 * default, elfutils 0.188: debuginfod-client.c). */
#define DEBUGINFOD_DEFAULT_TIMEOUT "90"

enum fetch_state {
	FETCH_QUEUED,
	FETCH_RUNNING,
	FETCH_DONE,
	FETCH_FAILED,
};

struct fetch {
	uint8_t id[BPFPROF_BUILD_ID_MAX]; /* hash key: id_sz bytes */
	size_t id_sz;
	char id_hex[2 * BPFPROF_BUILD_ID_MAX + 1];
	char *file; /* the ELF file's path, for messages */
	char *path; /* the debug file in the client cache, when FETCH_DONE */
	enum fetch_state state;
	uint64_t start_ns;	   /* CLOCK_MONOTONIC: the fetch began */
	uint64_t last_progress_ns; /* under fetcher.lock: the last progress line */
	bool answered;		   /* under fetcher.lock: a server answers (libdebuginfod's URL) */
	struct worker_job job;	   /* in fetcher.worker's queue */
	UT_hash_handle hh;
};

/* Everything below is under fetcher.lock; the fetches run in fetcher.worker's thread. */
static struct {
	pthread_mutex_t lock;
	struct worker worker;
	struct fetch *all;	   /* every build-id requested */
	uint64_t wait_deadline_ns; /* debuginfod__wait() waits until then; 0: nobody waits */
	bool wait_over;		   /* a wait ran out or was skipped: later ones only poll */
} fetcher = { .lock = PTHREAD_MUTEX_INITIALIZER, .worker = WORKER_INIT };

/* The worker thread's own libdebuginfod client (debuginfod__shutdown() ends it). */
static debuginfod_client *client;

/* Bumped at each finished fetch: files without DWARF look again (read without the lock). */
static unsigned int fetch_gen;

/*
 * The "no answer" line of fetch f, running, when no server answered yet and no progress line
 * came for PROGRESS_INTERVAL_NS; under fetcher.lock. From libdebuginfod's progress callback
 * (elfutils 0.188 calls it each second from the start, with its count of calls as got) and
 * from debuginfod__wait() (0.190 and later call it only once a server answered).
 */
static void fetch_no_answer(struct fetch *f, uint64_t now)
{
	uint64_t deadline = fetcher.wait_deadline_ns;
	const char *env;
	char wait[96];

	if (f->state != FETCH_RUNNING || f->answered ||
	    now - f->last_progress_ns < PROGRESS_INTERVAL_NS)
		return;
	f->last_progress_ns = now;
	if (deadline)
		snprintf(wait, sizeof(wait), "; bpfprof waits %.0f s more, Ctrl-C skips the wait",
			 deadline > now ? (deadline - now) / 1e9 : 0.0);
	else
		wait[0] = '\0';
	env = getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
	pr_info("debuginfod: no answer from %s after %.0f s for %s (build-id %s); "
		"libdebuginfod gives up after %s s without 100 KB (DEBUGINFOD_TIMEOUT)%s",
		getenv(DEBUGINFOD_URLS_ENV_VAR) ?: "", (now - f->start_ns) / 1e9, f->file,
		f->id_hex, env && *env ? env : DEBUGINFOD_DEFAULT_TIMEOUT, wait);
}

/*
 * libdebuginfod's progress callback, after each second of waiting (curl_multi_wait) or any
 * transfer: a line every PROGRESS_INTERVAL_NS; non-zero cancels. Until a server sends the first
 * bytes, libdebuginfod 0.188 passes its count of calls as got: only once
 * debuginfod_get_url() names the server answering are got and total bytes (total 0: unknown).
 */
static int fetch_progress(debuginfod_client *client, long got, long total)
{
	struct fetch *f = debuginfod_get_user_data(client);
	const char *url = debuginfod_get_url(client);
	uint64_t now = now_ns(), deadline;
	char what[96], wait[96];
	bool line;

	if (worker__stopping(&fetcher.worker))
		return 1;
	if (!f)
		return 0;
	pthread_mutex_lock(&fetcher.lock);
	deadline = fetcher.wait_deadline_ns;
	if (!url) {
		fetch_no_answer(f, now);
		pthread_mutex_unlock(&fetcher.lock);
		return 0;
	}
	f->answered = true;
	line = now - f->last_progress_ns >= PROGRESS_INTERVAL_NS;
	if (line)
		f->last_progress_ns = now;
	pthread_mutex_unlock(&fetcher.lock);
	if (!line)
		return 0;
	if (deadline)
		snprintf(wait, sizeof(wait), "; bpfprof waits %.0f s more, Ctrl-C skips the wait",
			 deadline > now ? (deadline - now) / 1e9 : 0.0);
	else
		wait[0] = '\0';
	if (total > 0)
		snprintf(what, sizeof(what), "%ld of %ld bytes", got, total);
	else
		snprintf(what, sizeof(what), "%ld bytes", got);
	pr_info("debuginfod: fetching debug info of %s (build-id %s): %s after %.0f s%s", f->file,
		f->id_hex, what, (now - f->start_ns) / 1e9, wait);
	return 0;
}

/* One fetch, in fetcher.worker's thread; f stays valid: only debuginfod__shutdown() frees, after
 * the worker stopped. */
static void fetch_job(struct worker_job *job, bool cancelled)
{
	struct fetch *f = (void *)((char *)job - offsetof(struct fetch, job));
	char *path = NULL;
	struct stat st;
	int fd;

	if (cancelled)
		return;
	pthread_mutex_lock(&fetcher.lock);
	f->state = FETCH_RUNNING;
	f->start_ns = f->last_progress_ns = now_ns();
	pthread_mutex_unlock(&fetcher.lock);
	if (!client) {
		client = debuginfod_begin();
		if (client)
			debuginfod_set_progressfn(client, fetch_progress);
	}
	pr_info("fetching debug info of %s (build-id %s) from debuginfod", f->file, f->id_hex);
	if (client) {
		debuginfod_set_user_data(client, f);
		fd = debuginfod_find_debuginfo(client, f->id, f->id_sz, &path);
	} else {
		fd = -ENOMEM;
	}
	if (fd >= 0) {
		if (!fstat(fd, &st))
			pr_info("fetched debug info of %s (build-id %s): %lld bytes, %s", f->file,
				f->id_hex, (long long)st.st_size, path);
		close(fd);
	} else {
		pr_info("fetch debug info of %s (build-id %s) from debuginfod: %s", f->file,
			f->id_hex, strerror(-fd));
	}

	pthread_mutex_lock(&fetcher.lock);
	if (fd >= 0 && path) {
		f->path = path;
		f->state = FETCH_DONE;
	} else {
		free(path);
		f->state = FETCH_FAILED;
	}
	__atomic_add_fetch(&fetch_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fetcher.lock);
}

int debuginfod__queue(const uint8_t *id, size_t id_sz, const char *file)
{
	struct fetch *f;
	int err = 0;

	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	if (f)
		goto out;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->file = strdup(file))) {
		free(f);
		err = -ENOMEM;
		goto out;
	}
	memcpy(f->id, id, id_sz);
	f->id_sz = id_sz;
	hex_encode(f->id_hex, id, id_sz);
	f->state = FETCH_QUEUED;
	f->job.run = fetch_job;
	err = worker__queue(&fetcher.worker, &f->job);
	if (err) {
		free(f->file);
		free(f);
		goto out;
	}
	HASH_ADD(hh, fetcher.all, id, id_sz, f);
out:
	pthread_mutex_unlock(&fetcher.lock);
	return err;
}

bool debuginfod__fetched(const uint8_t *id, size_t id_sz)
{
	struct fetch *f;
	bool done;

	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	done = f && f->state == FETCH_DONE;
	pthread_mutex_unlock(&fetcher.lock);
	return done;
}

int debuginfod__fetched_path(const uint8_t *id, size_t id_sz, char *buf, size_t buf_sz)
{
	struct fetch *f;
	int err = -ENOENT;

	if (!id_sz || id_sz > BPFPROF_BUILD_ID_MAX)
		return -ENOENT;
	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	if (f && f->state == FETCH_DONE) {
		if (strlen(f->path) < buf_sz) {
			strcpy(buf, f->path);
			err = 0;
		} else {
			err = -ENAMETOOLONG;
		}
	}
	pthread_mutex_unlock(&fetcher.lock);
	return err;
}

unsigned int debuginfod__wait(uint64_t timeout_ns)
{
	uint64_t deadline = now_ns() + timeout_ns;
	unsigned int pending = worker__pending(&fetcher.worker);
	struct fetch *f, *tmp;
	bool skipped = false;

	pthread_mutex_lock(&fetcher.lock);
	if (fetcher.wait_over)
		timeout_ns = 0;
	if (pending && timeout_ns)
		fetcher.wait_deadline_ns = deadline;
	pthread_mutex_unlock(&fetcher.lock);
	if (pending && timeout_ns) {
		pr_info("debuginfod: waiting up to %.0f s for %u debug file%s (Ctrl-C skips the "
			"wait)",
			timeout_ns / 1e9, pending, pending > 1 ? "s" : "");
		/* Wakes at each finished fetch, every 100 ms to look at signals, and each second
		 * for the fetches still waiting for a server's answer. */
		do {
			pending = worker__wait(&fetcher.worker,
					       min_t(uint64_t, deadline, now_ns() + 1000000000ull),
					       &skipped);
			pthread_mutex_lock(&fetcher.lock);
			HASH_ITER(hh, fetcher.all, f, tmp)
				fetch_no_answer(f, now_ns());
			pthread_mutex_unlock(&fetcher.lock);
		} while (pending && !skipped && now_ns() < deadline);
	}
	pthread_mutex_lock(&fetcher.lock);
	fetcher.wait_deadline_ns = 0;
	/* The limit is for the whole run: a later profile format does not wait again. */
	if (pending && timeout_ns)
		fetcher.wait_over = true;
	pthread_mutex_unlock(&fetcher.lock);
	if (skipped)
		pr_info("debuginfod: wait skipped (Ctrl-C)");
	return pending;
}

void debuginfod__shutdown(void)
{
	struct fetch *f, *tmp;

	/* A transfer in progress sees the stop in its progress callback; libdebuginfod 0.190 and
	 * later call it only once a server answered: a fetch still waiting for one is left to its
	 * thread, with the client and the fetches (the process is exiting). */
	if (!worker__shutdown_until(&fetcher.worker, now_ns() + SHUTDOWN_WAIT_NS)) {
		pr_info("debuginfod: a download still waits for its server; not waited for");
		return;
	}
	if (client)
		debuginfod_end(client);
	client = NULL;
	pthread_mutex_lock(&fetcher.lock);
	HASH_ITER(hh, fetcher.all, f, tmp) {
		HASH_DEL(fetcher.all, f);
		free(f->file);
		free(f->path);
		free(f);
	}
	pthread_mutex_unlock(&fetcher.lock);
}

unsigned int debuginfod__generation(void)
{
	return __atomic_load_n(&fetch_gen, __ATOMIC_ACQUIRE);
}

bool debuginfod__enabled(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls && urls[0];
}

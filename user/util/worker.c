// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* worker.c: one background thread running queued jobs in order. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include "util/util.h"
#include "util/worker.h"

/* Under w->lock. */
static int cond_init(struct worker *w)
{
	pthread_condattr_t attr;
	int err;

	if (w->cond_ready)
		return 0;
	err = pthread_condattr_init(&attr);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return -err;
	w->cond_ready = true;
	return 0;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct worker_job *job;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && !w->head)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		job = w->head;
		w->head = job->next;
		if (!w->head)
			w->tail = NULL;
		job->next = NULL;
		pthread_mutex_unlock(&w->lock);

		job->run(job, false);

		pthread_mutex_lock(&w->lock);
		w->pending--;
		pthread_cond_broadcast(&w->cond);
	}
	w->exited = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Under w->lock. */
static int worker_start(struct worker *w)
{
	sigset_t all, old;
	int err;

	if (w->started)
		return 0;
	err = cond_init(w);
	if (err)
		return err;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, worker_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	w->started = true;
	w->exited = false;
	return 0;
}

int worker__queue(struct worker *w, struct worker_job *job)
{
	int err;

	pthread_mutex_lock(&w->lock);
	err = worker_start(w);
	if (!err) {
		job->next = NULL;
		if (w->tail)
			w->tail->next = job;
		else
			w->head = job;
		w->tail = job;
		w->pending++;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

unsigned int worker__pending(struct worker *w)
{
	unsigned int n;

	pthread_mutex_lock(&w->lock);
	n = w->pending;
	pthread_mutex_unlock(&w->lock);
	return n;
}

bool worker__stopping(struct worker *w)
{
	bool stop;

	pthread_mutex_lock(&w->lock);
	stop = w->stop;
	pthread_mutex_unlock(&w->lock);
	return stop;
}

/* A SIGINT or SIGTERM waits for the main thread (blocked, read from its signalfd). */
static bool stop_signal_pending(void)
{
	sigset_t set;

	return !sigpending(&set) &&
	       (sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1);
}

unsigned int worker__wait(struct worker *w, uint64_t deadline_ns, bool *interrupted)
{
	struct timespec ts;
	unsigned int pending;
	uint64_t slice;

	if (interrupted)
		*interrupted = false;
	pthread_mutex_lock(&w->lock);
	while (w->pending && w->cond_ready && now_ns() < deadline_ns) {
		if (stop_signal_pending()) {
			if (interrupted)
				*interrupted = true;
			break;
		}
		/* Wakes at each finished job, and every 100 ms to look at signals. */
		slice = min_t(uint64_t, deadline_ns, now_ns() + 100000000ull);
		ts.tv_sec = slice / 1000000000ull;
		ts.tv_nsec = slice % 1000000000ull;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	pending = w->pending;
	pthread_mutex_unlock(&w->lock);
	return pending;
}

/* Takes the queued jobs off w (under w->lock): the caller runs them cancelled, without it. */
static struct worker_job *take_queued(struct worker *w)
{
	struct worker_job *job = w->head, *j;

	for (j = job; j; j = j->next)
		w->pending--;
	w->head = w->tail = NULL;
	return job;
}

static void run_cancelled(struct worker_job *job)
{
	struct worker_job *next;

	/* Without the lock: a cancelled job may queue nothing, but may free its object. */
	for (; job; job = next) {
		next = job->next;
		job->run(job, true);
	}
}

bool worker__shutdown_until(struct worker *w, uint64_t deadline_ns)
{
	struct worker_job *job;
	struct timespec ts;
	bool ended = true, started;

	pthread_mutex_lock(&w->lock);
	w->stop = true;
	started = w->started;
	if (started) {
		pthread_cond_broadcast(&w->cond);
		ts.tv_sec = deadline_ns / 1000000000ull;
		ts.tv_nsec = deadline_ns % 1000000000ull;
		while (!w->exited && now_ns() < deadline_ns)
			pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		ended = w->exited;
	}
	job = take_queued(w);
	pthread_mutex_unlock(&w->lock);
	if (started && ended)
		pthread_join(w->thread, NULL);
	else if (started)
		pthread_detach(w->thread);
	pthread_mutex_lock(&w->lock);
	/* Left started and stopping when abandoned: nothing queued runs again. */
	if (ended) {
		w->pending = 0;
		w->started = false;
		w->stop = false;
	}
	pthread_mutex_unlock(&w->lock);
	run_cancelled(job);
	return ended;
}

void worker__shutdown(struct worker *w)
{
	worker__shutdown_until(w, UINT64_MAX);
}

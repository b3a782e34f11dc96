/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * worker.h: one background thread that runs queued jobs in order, off the sampling loop: file
 * reads and downloads that may take long (debuginfod fetches, perf maps) must never hold the
 * loop that drains the ringbuf, nor -d, SIGINT/SIGTERM or the agent's interval.
 */
#ifndef BPFPROF_WORKER_H
#define BPFPROF_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A job, embedded in the caller's object; queued once at a time. */
struct worker_job {
	/*
	 * Runs in the worker's thread, without the worker's lock. cancelled: the worker stops
	 * (worker__shutdown()) before the job ran: it only lets go of what it holds.
	 */
	void (*run)(struct worker_job *job, bool cancelled);
	struct worker_job *next;
};

/* Static storage, set up with WORKER_INIT; every field is the worker's. */
struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC: queue changes, a job ends, stop */
	bool cond_ready;
	pthread_t thread;
	bool started;
	bool exited; /* the thread left its loop (after stop) */
	bool stop;
	struct worker_job *head, *tail;
	unsigned int pending; /* queued or running */
};

#define WORKER_INIT                               \
	{                                         \
		.lock = PTHREAD_MUTEX_INITIALIZER \
	}

/*
 * Queues job (its run set) at the end; starts the thread at the first call (it gets no
 * signals: they are the main thread's business). Never blocks on a running job. Returns 0 or
 * a negative errno when the thread cannot start (the job is not queued).
 */
int worker__queue(struct worker *w, struct worker_job *job);

/* Jobs queued or running. */
unsigned int worker__pending(struct worker *w);

/* Whether worker__shutdown() is stopping w: a long job checks it and ends early. */
bool worker__stopping(struct worker *w);

/*
 * Waits until no job is queued or running, or until CLOCK_MONOTONIC deadline_ns; a SIGINT or
 * SIGTERM pending for the process (blocked: bpfprof reads them from a signalfd) ends the wait
 * at once and sets *interrupted (may be NULL). Returns the jobs still pending.
 */
unsigned int worker__wait(struct worker *w, uint64_t deadline_ns, bool *interrupted);

/* Stops w's thread: the running job finishes (or sees worker__stopping()), the queued ones
 * run cancelled. w can be used again after. */
void worker__shutdown(struct worker *w);
/*
 * worker__shutdown() for a job that may not see worker__stopping() in time (a library call
 * that cannot be interrupted): waits for the thread until CLOCK_MONOTONIC deadline_ns. Past
 * it, the queued jobs run cancelled, the running one is left to end in its detached thread
 * and false is returned: the caller must then leave alone what that job uses (the process is
 * exiting), and w is not used again. True when the thread ended, as worker__shutdown().
 */
bool worker__shutdown_until(struct worker *w, uint64_t deadline_ns);

#endif /* BPFPROF_WORKER_H */

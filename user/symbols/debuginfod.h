/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* debuginfod.h: debug files fetched by build-id from debuginfod servers, in one background
 * thread. */
#ifndef BPFPROF_DEBUGINFOD_H
#define BPFPROF_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether DEBUGINFOD_URLS is set (and not empty): fetches are possible. libdebuginfod reads it
 * at each fetch: it must stay in the environment. */
bool debuginfod__enabled(void);

/*
 * Queues a fetch of the debug file of this build-id (raw bytes, id_sz of them, at most
 * BPFPROF_BUILD_ID_MAX), once per build-id: later calls for it do nothing. file is the ELF
 * file's path, for messages (copied). Never blocks. Fetches run in a background thread
 * (libdebuginfod: debuginfod_find_debuginfo(), its client cache, DEBUGINFOD_* variables), with
 * progress lines on stderr (pr_info, every 5 s): the file, its build-id, bytes received (of the
 * total when the server says it) or that no server answered yet, how long bpfprof still waits
 * (debuginfod__wait()), then done (and the size) or failed (and why). Returns 0, -ENOMEM, or
 * a negative errno when the thread cannot start.
 */
int debuginfod__queue(const uint8_t *id, size_t id_sz, const char *file);

/* Whether a fetch of this build-id finished with a file. Thread-safe. */
bool debuginfod__fetched(const uint8_t *id, size_t id_sz);

/*
 * The path, in libdebuginfod's client cache, of the debug file fetched for this build-id,
 * copied into buf. For debug_file__open(). Returns 0, -ENOENT when no fetch of that build-id
 * finished, or -ENAMETOOLONG. Thread-safe.
 */
int debuginfod__fetched_path(const uint8_t *id, size_t id_sz, char *buf, size_t buf_sz);

/* A counter bumped at each finished fetch (success or not): files that had no debug info look
 * again when it changed. Cheap (an atomic load). */
unsigned int debuginfod__generation(void);

/*
 * Waits until queued fetches finish or timeout_ns passes (the symbolizer calls this before
 * naming a profile; 0 only polls), saying so on stderr; a SIGINT or SIGTERM pending for the
 * process (blocked: bpfprof reads them from a signalfd) ends the wait at once. Once a wait has
 * ended with fetches pending, later calls only poll. Returns the number still pending.
 */
unsigned int debuginfod__wait(uint64_t timeout_ns);

/* Stops the fetch thread (at exit): a transfer in progress is cancelled, queued fetches are
 * dropped, and files fetched so far are forgotten (their copies stay in the client cache). */
void debuginfod__shutdown(void);

#endif /* BPFPROF_DEBUGINFOD_H */

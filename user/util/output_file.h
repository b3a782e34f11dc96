/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output_file.h: every file bpfprof writes for the user (-o, --raw-capture): opened before
 * the run, written at the end, as a new temp file renamed over the target; or written in place
 * when the target is a device, a FIFO or stdout.
 */
#ifndef BPFPROF_OUTPUT_FILE_H
#define BPFPROF_OUTPUT_FILE_H

#include <stdint.h>
#include <stdio.h>

/* What a writer wrote, for its "wrote ..." line. */
struct output_counts {
	uint64_t stacks;  /* stacks written: folded lines, pprof Samples; 0: not counted */
	uint64_t samples; /* the samples they hold */
};

enum output_file_flags {
	OUTPUT_FILE_PRIVATE = 1 << 0, /* mode 0600 at most: it holds process memory */
	OUTPUT_FILE_REGULAR = 1 << 1, /* a regular file only (it is rewritten in place) */
};

struct output_file {
	FILE *fp;	  /* write here; stdout for "-" */
	const char *path; /* as given, for messages; NULL for stdout */
	int fd;		  /* the temp file, or the device or FIFO itself; -1 for stdout */
	int dfd;	  /* the target's directory (O_PATH), -1 when written in place */
	char *target;	  /* the target's path, links followed; NULL when in place */
	const char *name; /* its last component (in target), its name in dfd */
	char *tmp_name;	  /* the temp file's name in dfd, "<name>.tmp.XXXXXX" */
	int err;	  /* the first write error (negative errno), 0 if none */
};

/*
 * Opens path for writing, or stdout when path is "-". Nothing reaches path before
 * output_file__commit(), and whatever stops a write later (a missing directory, a read-only
 * one, a FIFO without reader, an untrusted link) fails here, before the run.
 *
 * - Missing or a regular file: a new temp file "<name>.tmp.XXXXXX" is created beside it
 *   (O_CREAT|O_EXCL|O_NOFOLLOW) and renamed over it at the commit. Its mode is the existing
 *   file's when the caller owns that file (a 0600 profile stays 0600), else 0666 less umask;
 *   at most 0600 with OUTPUT_FILE_PRIVATE.
 * - A symbolic link is followed only when the caller or root owns it (each link of a chain);
 *   a link another user owns is refused (-EPERM) wherever it is, so a link planted in /tmp
 *   never redirects root's write (whatever fs.protected_symlinks says). A link on /proc
 *   (/dev/stdout -> /proc/self/fd/1) names an open file: it is written in place, appended.
 * - A character device or FIFO (/dev/null, a pipe): written in place, opened O_NONBLOCK, so a
 *   FIFO without a reader fails at once (-ENXIO) and a reader that stops reading can be left
 *   with SIGINT or SIGTERM (-EINTR); refused with OUTPUT_FILE_REGULAR (-ESPIPE). Only when the
 *   caller (real or effective uid) or root owns it: a FIFO, socket or device of another user
 *   is refused (-EPERM), as its links are; an open file reached through /proc is the
 *   caller's own descriptor, whoever owns it.
 * - Anything else (a directory, a block device, a socket) is refused.
 * Failures are reported on stderr ("create PATH: reason"). Returns 0 or a negative errno.
 * of must stay where it is until the commit or abort: its stream refers to it.
 */
int output_file__open(struct output_file *of, const char *path, unsigned int flags);

/*
 * Flushes and fsyncs the temp file and renames it over the target, if the target is still a
 * regular file or missing (else the temp file is kept, and named in a message: -EEXIST);
 * readers never see half a file. Returns 0 or a negative errno: the first write error
 * (e.g. -ENOSPC), after which the temp file is removed and the old file stays. Frees of.
 */
int output_file__commit(struct output_file *of);

/*
 * Removes the temp file without touching the target and frees of. Returns the first write
 * error of of's stream when there was one (the real errno, e.g. -ENOSPC, where a writer saw a
 * failed fprintf: -EIO), else err.
 */
int output_file__abort(struct output_file *of, int err);

#endif /* BPFPROF_OUTPUT_FILE_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* output_file.h: an output written to a temp file and renamed into place, or stdout. */
#ifndef BPFPROF_OUTPUT_FILE_H
#define BPFPROF_OUTPUT_FILE_H

#include <stdio.h>
#include <sys/types.h>

struct output_file {
	FILE *fp;		/* write here */
	char *path;		/* final path; NULL for stdout */
	char *tmp_path;		/* "<path>.tmp.XXXXXX" in the same directory; NULL when path
				 * is not a regular file (/dev/null, a FIFO): written in place */
};

/*
 * Opens the temp file next to path (mode 0644 less umask), or stdout when path is NULL or "-".
 * Returns 0 or a negative errno.
 */
int output_file__open(struct output_file *of, const char *path);
/* output_file__open() with the file's final mode (e.g. 0600 for files holding process
 * memory); path must be a file, not stdout. */
int output_file__open_mode(struct output_file *of, const char *path, mode_t mode);

/*
 * Flushes, fsyncs and renames the temp file to the final path: readers never see a half
 * file. On any error (full disk...) the temp file is removed and the old file, if any, stays.
 * Returns 0 or a negative errno. Frees of in every case.
 */
int output_file__commit(struct output_file *of);
/* Removes the temp file without touching path. */
void output_file__abort(struct output_file *of);

#endif /* BPFPROF_OUTPUT_FILE_H */

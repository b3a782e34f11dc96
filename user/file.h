/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* file.h: whole-file reads. */
#ifndef BPFPROF_FILE_H
#define BPFPROF_FILE_H

#include <stddef.h>

/*
 * Reads the whole file at path (a /proc file: st_size is 0) into a malloc'd, NUL-terminated
 * *text of *len bytes. Returns 0 or a negative errno; -ENOENT also when a process went away
 * while its file was read (ESRCH).
 */
int file__read_all(const char *path, char **text, size_t *len);

#endif /* BPFPROF_FILE_H */

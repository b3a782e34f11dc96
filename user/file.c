// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* file.c: whole-file reads of /proc files (maps, kallsyms), whose size stat cannot tell. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "file.h"

int file__read_all(const char *path, char **text, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = NULL, *tmp;
	ssize_t r;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	for (;;) {
		if (!buf || cap - n < 4096) {
			cap *= 2;
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			buf = tmp;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			err = errno == ESRCH ? -ENOENT : -errno;
			break;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

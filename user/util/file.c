// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* file.c: opening files other users control (never block, regular files only), whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "util/file.h"

/* The type check and the reopen of file__open_regular() on pfd, an O_PATH descriptor it closes. */
static int reopen_regular(int pfd, struct stat *st)
{
	char fd_path[32];
	int fd = -1, err = 0;

	if (fstat(pfd, st)) {
		err = -errno;
	} else if (!S_ISREG(st->st_mode)) {
		err = S_ISLNK(st->st_mode) ? -ELOOP : -EINVAL;
	} else {
		/* Reopen the inode O_PATH holds, not the path (it may name another file by now). */
		snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", pfd);
		fd = open(fd_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			err = -errno;
		else if (fstat(fd, st))
			err = -errno;
		if (err && fd >= 0)
			close(fd);
	}
	close(pfd);
	return err ? err : fd;
}

int file__open_regular(const char *path, int flags, struct stat *st)
{
	struct stat tmp;
	int pfd;

	/* O_PATH does not open the file itself: no wait for a FIFO's writer, no device open. */
	pfd = open(path, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));
	if (pfd < 0)
		return -errno;
	return reopen_regular(pfd, st ? st : &tmp);
}

int file__open_regular_in_root(int root_fd, const char *path, int flags, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat tmp;
	int pfd;

	pfd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	return reopen_regular(pfd, st ? st : &tmp);
}

int file__move_high(int fd)
{
	static bool raised;
	struct rlimit rl;
	int high;

	if (!raised) {
		raised = true;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	high = fcntl(fd, F_DUPFD_CLOEXEC, FD_SETSIZE);
	if (high < 0)
		return fd; /* a limit of FD_SETSIZE or less: keep it where it is */
	close(fd);
	return high;
}

int file__read_all(const char *path, char **text, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = NULL, *tmp;
	ssize_t r;
	int fd, err = 0;

	fd = file__open_regular(path, 0, NULL);
	if (fd < 0)
		return fd == -ESRCH ? -ENOENT : fd;
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
		if (r < 0 && errno == EINTR)
			continue;
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

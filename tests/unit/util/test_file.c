// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_file.c: file__open_regular() opens regular files only, never blocking (inside a given
 * root with file__open_regular_in_root()), and whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/file.h"

struct dir {
	char path[64];
	char file[PATH_MAX];	/* a regular file holding "text\n" */
	char fifo[PATH_MAX];
	char link[PATH_MAX];	/* a symlink to file */
	char dev_link[PATH_MAX];/* a symlink to /dev/null */
};

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));
	FILE *f;

	assert_non_null(d);
	strcpy(d->path, "/tmp/test_file.XXXXXX");
	assert_non_null(mkdtemp(d->path));
	snprintf(d->file, sizeof(d->file), "%s/file", d->path);
	snprintf(d->fifo, sizeof(d->fifo), "%s/fifo", d->path);
	snprintf(d->link, sizeof(d->link), "%s/link", d->path);
	snprintf(d->dev_link, sizeof(d->dev_link), "%s/dev", d->path);
	f = fopen(d->file, "w");
	assert_non_null(f);
	assert_true(fputs("text\n", f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(mkfifo(d->fifo, 0600), 0);
	assert_int_equal(symlink(d->file, d->link), 0);
	assert_int_equal(symlink("/dev/null", d->dev_link), 0);
	*state = d;
	return 0;
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;

	unlink(d->file);
	unlink(d->fifo);
	unlink(d->link);
	unlink(d->dev_link);
	rmdir(d->path);
	free(d);
	return 0;
}

static void test_open_regular(void **state)
{
	struct dir *d = *state;
	struct stat st, want;
	char buf[16];
	int fd;

	assert_int_equal(stat(d->file, &want), 0);
	fd = file__open_regular(d->file, O_NOFOLLOW, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	/* Close-on-exec, opened for reading only. */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);

	/* A symlink is followed unless O_NOFOLLOW. */
	fd = file__open_regular(d->link, 0, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, want.st_ino);
	close(fd);
	assert_int_equal(file__open_regular(d->link, O_NOFOLLOW, NULL), -ELOOP);

	/* A FIFO without a writer: refused at once (a plain open would wait for a writer). */
	assert_int_equal(file__open_regular(d->fifo, 0, NULL), -EINVAL);
	/* A device, through a symlink; a directory; nothing. */
	assert_int_equal(file__open_regular(d->dev_link, 0, NULL), -EINVAL);
	assert_int_equal(file__open_regular(d->path, 0, NULL), -EINVAL);
	assert_int_equal(file__open_regular("/nonexistent/file", 0, NULL), -ENOENT);
}

/*
 * file__open_regular_in_root(): the test's directory as the root. A symlink on the way that
 * points outside ("tmp" -> /etc, absolute; "up" -> ../../..) resolves inside it, the way a
 * container's own /tmp/perf-PID.map is opened in its root.
 */
static void test_open_in_root(void **state)
{
	struct dir *d = *state;
	char tmp_link[PATH_MAX], up_link[PATH_MAX];
	struct stat st, want;
	int root, fd;

	root = open(d->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	assert_int_equal(stat(d->file, &want), 0);
	fd = file__open_regular_in_root(root, "file", O_NOFOLLOW, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, want.st_ino);
	close(fd);
	/* "/file" and "../file" are root's file too. */
	fd = file__open_regular_in_root(root, "/file", O_NOFOLLOW, NULL);
	assert_true(fd >= 0);
	close(fd);
	fd = file__open_regular_in_root(root, "../file", O_NOFOLLOW, NULL);
	assert_true(fd >= 0);
	close(fd);

	snprintf(tmp_link, sizeof(tmp_link), "%s/tmp", d->path);
	snprintf(up_link, sizeof(up_link), "%s/up", d->path);
	assert_int_equal(symlink("/etc", tmp_link), 0);
	assert_int_equal(symlink("../../..", up_link), 0);
	assert_int_equal(access("/etc/passwd", F_OK), 0);
	assert_int_equal(file__open_regular_in_root(root, "tmp/passwd", O_NOFOLLOW, NULL), -ENOENT);
	assert_int_equal(file__open_regular_in_root(root, "up/etc/passwd", O_NOFOLLOW, NULL),
			 -ENOENT);
	/* The last component: not followed with O_NOFOLLOW; followed (inside root) without. */
	assert_int_equal(file__open_regular_in_root(root, "link", O_NOFOLLOW, NULL), -ELOOP);
	assert_int_equal(file__open_regular_in_root(root, "fifo", 0, NULL), -EINVAL);
	unlink(tmp_link);
	unlink(up_link);
	close(root);
}

static void test_move_high(void **state)
{
	struct dir *d = *state;
	struct rlimit rl;
	int fd;

	fd = file__open_regular(d->file, 0, NULL);
	assert_true(fd >= 0 && fd < FD_SETSIZE);
	fd = file__move_high(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	/* The soft limit is the hard one now; above FD_SETSIZE when that allows. */
	assert_true(rl.rlim_cur == rl.rlim_max);
	if (rl.rlim_max > FD_SETSIZE)
		assert_true(fd >= FD_SETSIZE);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

static void test_read_all(void **state)
{
	struct dir *d = *state;
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(file__read_all(d->file, &text, &len), 0);
	assert_int_equal(len, 5);
	assert_string_equal(text, "text\n");
	free(text);
	/* A /proc file: st_size 0, read to its end. */
	assert_int_equal(file__read_all("/proc/self/maps", &text, &len), 0);
	assert_true(len > 0 && strlen(text) == len);
	free(text);
	assert_int_equal(file__read_all(d->fifo, &text, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_regular, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_open_in_root, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_move_high, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_read_all, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

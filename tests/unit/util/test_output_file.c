// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_output_file.c: outputs as temp files renamed into place, devices and FIFOs written in
 * place without blocking, planted links refused, modes kept, real errnos. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "util/output_file.h"

/* Each test gets a fresh directory; a test that hangs is killed by the alarm. */
static int setup(void **state)
{
	char *dir = strdup("/tmp/bpfprof-test-of-XXXXXX");

	assert_non_null(mkdtemp(dir));
	*state = dir;
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	assert_int_equal(system(cmd), 0);
	free(*state);
	return 0;
}

static char *path_in(void **state, const char *name)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", (char *)*state, name);
	return path[i];
}

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void assert_content(const char *path, const char *text)
{
	char buf[64] = {};
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_string_equal(buf, text);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void test_atomic(void **state)
{
	char *path = path_in(state, "out");
	struct output_file of;
	struct stat st;

	assert_int_equal(output_file__open(&of, path, 0), 0);
	fputs("new", of.fp);
	/* Nothing at the final path until the commit. */
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(output_file__commit(&of), 0);
	assert_content(path, "new");
	/* An aborted write leaves the old file and no temp file. */
	assert_int_equal(output_file__open(&of, path, 0), 0);
	fputs("half", of.fp);
	assert_int_equal(output_file__abort(&of, -EIO), -EIO);
	assert_content(path, "new");
	assert_int_equal(dir_entries(*state), 1);
}

/* A new file gets 0666 less umask; an existing one of ours keeps its mode; a private output
 * (a raw capture) is 0600 at most. */
static void test_mode(void **state)
{
	char *path = path_in(state, "out");
	struct output_file of;
	mode_t mask = umask(022);

	assert_int_equal(output_file__open(&of, path, 0), 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(mode_of(path), 0644);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(output_file__open(&of, path, 0), 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(mode_of(path), 0600);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(output_file__open(&of, path, 0), 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(mode_of(path), 0640);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(output_file__open(&of, path, OUTPUT_FILE_PRIVATE), 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(mode_of(path), 0600);
	/* Private from the first byte: the temp file too. */
	assert_int_equal(output_file__open(&of, path_in(state, "new"), OUTPUT_FILE_PRIVATE), 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(mode_of(path_in(state, "new")), 0600);
	umask(mask);
}

/* Whatever would make the write fail later fails at the open: before the run. */
static void test_fails_at_open(void **state)
{
	struct output_file of;

	assert_int_equal(output_file__open(&of, path_in(state, "missing/out"), 0), -ENOENT);
	assert_int_equal(output_file__open(&of, "", 0), -ENOENT);
	assert_int_equal(output_file__open(&of, (char *)*state, 0), -EISDIR);
	assert_int_equal(output_file__open(&of, path_in(state, ""), 0), -EISDIR);
	/* A raw capture is rewritten in place: a regular file only. */
	assert_int_equal(output_file__open(&of, "/dev/null", OUTPUT_FILE_REGULAR), -ESPIPE);
	assert_int_equal(output_file__open(&of, "-", OUTPUT_FILE_REGULAR), -ESPIPE);
	assert_int_equal(dir_entries(*state), 0);
}

/* A device is written in place: a rename would replace /dev/null. */
static void test_dev_null(void **state)
{
	struct output_file of;
	struct stat st;

	assert_int_equal(output_file__open(&of, "/dev/null", 0), 0);
	assert_null(of.tmp_name);
	assert_true(fputs("x\n", of.fp) >= 0);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/* A full device: the real errno, where the writer saw only a failed fprintf (-EIO). */
static void test_real_errno(void **state)
{
	static char chunk[100000];
	struct output_file of;

	assert_int_equal(output_file__open(&of, "/dev/full", 0), 0);
	fwrite(chunk, 1, sizeof(chunk), of.fp);
	assert_int_equal(output_file__commit(&of), -ENOSPC);
	assert_int_equal(output_file__open(&of, "/dev/full", 0), 0);
	fwrite(chunk, 1, sizeof(chunk), of.fp);
	assert_int_equal(output_file__abort(&of, -EIO), -ENOSPC);
}

/* A FIFO without a reader fails at once (it used to block in open() for good). */
static void test_fifo_without_reader(void **state)
{
	char *path = path_in(state, "fifo");
	struct output_file of;
	struct stat st;

	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(output_file__open(&of, path, 0), -ENXIO);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(dir_entries(*state), 1);
}

/* A FIFO whose reader stops reading: the write waits, but a SIGTERM (pending while blocked, as
 * bpfprof blocks it for its signalfd) ends it. */
static void test_fifo_stalled_reader(void **state)
{
	static char chunk[1 << 20];
	char *path = path_in(state, "fifo");
	struct output_file of;
	sigset_t set, old;
	int rfd, sig;

	assert_int_equal(mkfifo(path, 0600), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	assert_int_equal(output_file__open(&of, path, 0), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &old), 0);
	assert_int_equal(raise(SIGTERM), 0);
	fwrite(chunk, 1, sizeof(chunk), of.fp);
	assert_int_equal(output_file__commit(&of), -EINTR);
	assert_int_equal(sigwait(&set, &sig), 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	close(rfd);
}

/* A link of ours is followed: the file it names is replaced, the link stays. A dangling one
 * creates the file it names. */
static void test_own_link(void **state)
{
	char *real = path_in(state, "real"), *link = path_in(state, "link");
	struct output_file of;
	struct stat st;

	write_file(real, "old", 0600);
	assert_int_equal(symlink("real", link), 0);
	assert_int_equal(output_file__open(&of, link, 0), 0);
	fputs("new", of.fp);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_content(real, "new");
	assert_int_equal(mode_of(real), 0600);
	assert_int_equal(unlink(real), 0);
	assert_int_equal(output_file__open(&of, link, 0), 0);
	fputs("again", of.fp);
	assert_int_equal(output_file__commit(&of), 0);
	assert_content(real, "again");
	assert_int_equal(dir_entries(*state), 2);
}

/* A link another user owns is never followed, wherever it is (root only: lchown). */
static void test_foreign_link(void **state)
{
	char *victim = path_in(state, "victim"), *link = path_in(state, "link");
	struct output_file of;

	if (geteuid()) {
		skip();
		return;
	}
	write_file(victim, "precious", 0644);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(output_file__open(&of, link, 0), -EPERM);
	assert_int_equal(output_file__open(&of, link, OUTPUT_FILE_PRIVATE), -EPERM);
	assert_content(victim, "precious");
	assert_int_equal(dir_entries(*state), 2);
}

/* A FIFO another user made, its reader waiting, gets nothing; nor does a socket of theirs. A
 * FIFO of ours is written (root only: chown). */
static void test_foreign_fifo(void **state)
{
	char *fifo = path_in(state, "fifo"), *sock = path_in(state, "sock");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct output_file of;
	char buf[8] = {};
	int rfd, sfd;

	if (geteuid()) {
		skip();
		return;
	}
	assert_int_equal(mkfifo(fifo, 0666), 0);
	assert_int_equal(chown(fifo, 65534, 65534), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	assert_int_equal(output_file__open(&of, fifo, 0), -EPERM);
	assert_int_equal(read(rfd, buf, sizeof(buf)), 0); /* no writer ever came */
	/* Ours: written. */
	assert_int_equal(chown(fifo, geteuid(), getegid()), 0);
	assert_int_equal(output_file__open(&of, fifo, 0), 0);
	fputs("abc", of.fp);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(read(rfd, buf, sizeof(buf) - 1), 3);
	assert_string_equal(buf, "abc");
	close(rfd);

	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(sfd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(sfd, 1), 0);
	assert_int_equal(chown(sock, 65534, 65534), 0);
	assert_int_equal(output_file__open(&of, sock, 0), -EPERM);
	close(sfd);
	assert_int_equal(dir_entries(*state), 2);
}

/* /dev/stdout-like links on /proc name an open file: written in place (here a pipe). */
static void test_proc_link(void **state)
{
	struct output_file of;
	char path[64], buf[8] = {};
	int p[2];

	assert_int_equal(pipe(p), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	assert_int_equal(output_file__open(&of, path, 0), 0);
	fputs("abc", of.fp);
	assert_int_equal(output_file__commit(&of), 0);
	assert_int_equal(read(p[0], buf, sizeof(buf) - 1), 3);
	assert_string_equal(buf, "abc");
	close(p[0]);
	close(p[1]);
}

/* The target turned into a FIFO during the run: not replaced; the temp file keeps the output. */
static void test_target_replaced(void **state)
{
	char *path = path_in(state, "out");
	struct output_file of;
	struct stat st;

	write_file(path, "old", 0644);
	assert_int_equal(output_file__open(&of, path, 0), 0);
	fputs("new", of.fp);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(output_file__commit(&of), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(dir_entries(*state), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fails_at_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dev_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_errno, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_without_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_stalled_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_target_replaced, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

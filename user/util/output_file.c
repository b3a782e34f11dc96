// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_file.c: outputs as new temp files renamed into place, or written in place without
 * ever blocking for good. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "util/log.h"
#include "util/output_file.h"

/* Links followed at most in a chain (the kernel's limit). */
#define OUTPUT_MAX_LINKS 40
/* Stdio buffer of an output: writes reach the file in chunks this big. */
#define OUTPUT_BUF_SZ	 (64u << 10)

static void output_file__init(struct output_file *of)
{
	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->dfd = -1;
}

/*
 * Follows path's last component while it is a symbolic link the caller or root owns; refuses
 * one another user owns (-EPERM, reported). *out: the malloc'd path reached (its last
 * component is no link, or is missing, unless *proc: a link on /proc, which names an open
 * file). 0 or a negative errno.
 */
static int follow_links(const char *path, char **out, bool *proc)
{
	char target[PATH_MAX], *p = strdup(path), *next, *slash;
	uid_t me = geteuid();
	struct statfs sfs;
	struct stat st;
	int i, fd, err = -ELOOP;
	ssize_t n;

	*proc = false;
	for (i = 0; p && i <= OUTPUT_MAX_LINKS; i++) {
		fd = open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		/* Missing (a new file), or not reachable: creating it says why. */
		if (fd < 0 || fstat(fd, &st) || !S_ISLNK(st.st_mode))
			goto done;
		if (st.st_uid != me && st.st_uid != 0) {
			pr_warn("create %s: %s%sa symbolic link of user %u: not followed (remove it "
				"or give another name)",
				path, i ? p : "", i ? " is " : "", (unsigned int)st.st_uid);
			err = -EPERM;
			break;
		}
		if (!fstatfs(fd, &sfs) && sfs.f_type == PROC_SUPER_MAGIC) {
			*proc = true;
			goto done;
		}
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		close(fd);
		fd = -1;
		if (n < 0) {
			err = -errno;
			break;
		}
		target[n] = '\0';
		slash = strrchr(p, '/');
		if (target[0] == '/' || !slash)
			next = strdup(target);
		else if (asprintf(&next, "%.*s/%s", (int)(slash - p), p, target) < 0)
			next = NULL;
		free(p);
		p = next;
	}
	if (!p)
		err = -ENOMEM;
	if (err != -EPERM)
		pr_warn("create %s: %s", path, strerror(-err));
	if (fd >= 0)
		close(fd);
	free(p);
	return err;
done:
	if (fd >= 0)
		close(fd);
	*out = p;
	return 0;
}

/* Whether uid may own a file written in place: we (the real or effective uid) or root. */
static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == getuid() || uid == geteuid();
}

static const char *file_kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "FIFO" :
	       S_ISSOCK(mode) ? "socket" :
	       S_ISCHR(mode)  ? "character device" :
	       S_ISBLK(mode)  ? "block device" :
				"special file";
}

/*
 * A FIFO, socket or device of another user (planted in /tmp, with its reader waiting) would get
 * the profile: refused (-EPERM, reported), as its links are. Not for an open file reached
 * through /proc (-o /dev/stdout): the caller's own descriptor, whoever made the pipe.
 */
static int check_owner(const struct output_file *of, const struct stat *st)
{
	if (trusted_owner(st->st_uid))
		return 0;
	pr_warn("create %s: a %s of user %u: not written (remove it or give another name)",
		of->path, file_kind(st->st_mode), (unsigned int)st->st_uid);
	return -EPERM;
}

/* A device, FIFO or /proc link, opened O_NONBLOCK: nothing to wait for at the open. */
static int open_in_place(struct output_file *of, const char *p, bool proc, unsigned int flags)
{
	struct stat st;
	int err;

	if (flags & OUTPUT_FILE_REGULAR) {
		pr_warn("create %s: not a regular file (this output is rewritten in place)",
			of->path);
		return -ESPIPE;
	}
	/* Before the open too: opening a FIFO tells its reader, opening a device may act. */
	if (!proc && !lstat(p, &st)) {
		err = check_owner(of, &st);
		if (err)
			return err;
	}
	/* O_APPEND: an open file reached through /proc (-o /dev/stdout >>log) keeps its data. */
	of->fd = open(p, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				 (proc ? 0 : O_NOFOLLOW));
	if (of->fd < 0) {
		err = -errno;
		if (err == -ENXIO)
			pr_warn("create %s: nothing reads it (a FIFO without a reader?): start "
				"the reader first",
				of->path);
		else
			pr_warn("create %s: %s", of->path, strerror(-err));
		return err;
	}
	if (fstat(of->fd, &st))
		return -errno;
	/* What was opened, in case another file took the name since the lstat(). */
	err = proc ? 0 : check_owner(of, &st);
	if (err)
		return err;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
	    (proc && (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode))))
		return 0;
	pr_warn("create %s: not a regular file, FIFO or character device", of->path);
	return -EINVAL;
}

/* Six random characters for a temp file's name (mkstemp's). */
static void random_suffix(char *s)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char b[6];
	int i;

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != sizeof(b)) {
		uint64_t v = (uint64_t)getpid() * 2654435761u ^ (uint64_t)(uintptr_t)s ^ rand();

		for (i = 0; i < 6; i++, v >>= 8)
			b[i] = v;
	}
	for (i = 0; i < 6; i++)
		s[i] = chars[b[i] % (sizeof(chars) - 1)];
}

/* The temp file beside target p (missing or a regular file), in the directory of_->dfd. */
static int open_temp(struct output_file *of, char *p, unsigned int flags)
{
	char *slash = strrchr(p, '/'), *dir, *suffix;
	mode_t mode, mask;
	struct stat st;
	int i, err;

	of->target = p;
	of->name = slash ? slash + 1 : p;
	if (!*of->name) {
		pr_warn("create %s: %s", of->path, strerror(EISDIR));
		return -EISDIR;
	}
	dir = !slash ? strdup(".") : slash == p ? strdup("/") : strndup(p, slash - p);
	if (!dir)
		return -ENOMEM;
	of->dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = of->dfd < 0 ? -errno : 0;
	if (err)
		pr_warn("create %s: directory %s: %s", of->path, dir, strerror(-err));
	free(dir);
	if (err)
		return err;

	mask = umask(0);
	umask(mask);
	mode = 0666 & ~mask;
	if (!fstatat(of->dfd, of->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISREG(st.st_mode)) { /* replaced since follow_links() looked */
			pr_warn("create %s: no longer a regular file", of->path);
			return -EEXIST;
		}
		/* A file of another user (planted?) does not choose who reads the profile. */
		if (st.st_uid == geteuid())
			mode = st.st_mode & 0777;
	} else if (errno != ENOENT) {
		err = -errno;
		pr_warn("create %s: %s", of->path, strerror(-err));
		return err;
	}
	if (flags & OUTPUT_FILE_PRIVATE)
		mode &= 0600;

	if (asprintf(&of->tmp_name, "%s.tmp.XXXXXX", of->name) < 0) {
		of->tmp_name = NULL;
		return -ENOMEM;
	}
	suffix = of->tmp_name + strlen(of->tmp_name) - 6;
	for (i = 0; i < 100; i++) {
		random_suffix(suffix);
		of->fd = openat(of->dfd, of->tmp_name,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (of->fd >= 0 || errno != EEXIST)
			break;
	}
	if (of->fd < 0) {
		err = -errno;
		free(of->tmp_name);
		of->tmp_name = NULL;
		pr_warn("create %s: %s", of->path, strerror(-err));
		return err;
	}
	/* Exactly mode: open()'s mode argument is masked by umask, a kept mode must not be. */
	if (fchmod(of->fd, mode))
		return -errno;
	return 0;
}

/*
 * Waits until fd (O_NONBLOCK) takes more bytes, for as long as its reader reads, however
 * slowly, but not past a SIGINT or SIGTERM: bpfprof blocks them (for its signalfd), so they
 * wait as pending signals. 0 or -EINTR.
 */
static int wait_writable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	sigset_t pending;

	for (;;) {
		/* Ready, or an error or hang-up that the next write() reports. */
		if (poll(&pfd, 1, 200) > 0)
			return 0;
		if (!sigpending(&pending) &&
		    (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM)))
			return -EINTR;
	}
}

/* The stream's write: keeps the first error's errno (stdio keeps only a flag). */
static ssize_t stream_write(void *cookie, const char *buf, size_t sz)
{
	struct output_file *of = cookie;
	size_t done = 0;
	ssize_t n;
	int err;

	while (done < sz) {
		n = write(of->fd, buf + done, sz - done);
		if (n > 0) {
			done += n;
			continue;
		}
		err = n < 0 ? -errno : -EIO;
		if (err == -EINTR)
			continue;
		if (err == -EAGAIN)
			err = wait_writable(of->fd);
		if (!err)
			continue;
		if (!of->err)
			of->err = err;
		errno = -err;
		break; /* fewer bytes than asked: an error for stdio */
	}
	return done;
}

static int stream_seek(void *cookie, off64_t *off, int whence)
{
	struct output_file *of = cookie;
	off_t r = lseek(of->fd, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

int output_file__open(struct output_file *of, const char *path, unsigned int flags)
{
	cookie_io_functions_t io = { .write = stream_write, .seek = stream_seek };
	struct stat st;
	bool proc;
	char *p;
	int err;

	output_file__init(of);
	if (!strcmp(path, "-")) {
		if (flags & OUTPUT_FILE_REGULAR) {
			pr_warn("create %s: not a regular file (this output is rewritten in "
				"place)",
				path);
			return -ESPIPE;
		}
		of->fp = stdout;
		return 0;
	}
	of->path = path;
	if (!*path) {
		pr_warn("create '': an empty file name");
		return -ENOENT;
	}
	err = follow_links(path, &p, &proc);
	if (err)
		return err;
	if (proc || (!stat(p, &st) && !S_ISREG(st.st_mode))) {
		err = open_in_place(of, p, proc, flags);
		free(p);
	} else {
		err = open_temp(of, p, flags); /* of owns p */
	}
	if (!err) {
		of->fp = fopencookie(of, "w", io);
		if (!of->fp)
			err = -errno;
		else
			setvbuf(of->fp, NULL, _IOFBF, OUTPUT_BUF_SZ);
	}
	if (err)
		output_file__abort(of, err);
	return err;
}

int output_file__abort(struct output_file *of, int err)
{
	if (of->err)
		err = of->err;
	if (of->fp && of->fp != stdout) {
		__fpurge(of->fp); /* nothing more is written */
		fclose(of->fp);
	}
	if (of->fd >= 0)
		close(of->fd);
	if (of->tmp_name)
		unlinkat(of->dfd, of->tmp_name, 0);
	if (of->dfd >= 0)
		close(of->dfd);
	free(of->tmp_name);
	free(of->target);
	output_file__init(of);
	return err;
}

int output_file__commit(struct output_file *of)
{
	struct stat st;
	int err = 0;

	if (of->fp == stdout) {
		if (fflush(stdout) || ferror(stdout))
			err = errno ? -errno : -EIO;
		output_file__init(of);
		return err;
	}
	if ((fflush(of->fp) || ferror(of->fp)) && !of->err)
		of->err = -EIO;
	if (of->err)
		return output_file__abort(of, of->err);
	if (of->dfd < 0) /* written in place */
		return output_file__abort(of, 0);
	if (fsync(of->fd))
		return output_file__abort(of, -errno);
	/* rename() replaces whatever the name is now: only a regular file, as at the open. */
	if (!fstatat(of->dfd, of->name, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
		pr_warn("write %s: no longer a regular file, not replaced; the output is in "
			"%.*s%s",
			of->path, (int)(of->name - of->target), of->target, of->tmp_name);
		free(of->tmp_name); /* kept */
		of->tmp_name = NULL;
		return output_file__abort(of, -EEXIST);
	}
	if (renameat(of->dfd, of->tmp_name, of->dfd, of->name))
		return output_file__abort(of, -errno);
	free(of->tmp_name);
	of->tmp_name = NULL;
	return output_file__abort(of, 0);
}

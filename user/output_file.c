// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_file.c: temp file + rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "output_file.h"

int output_file__open(struct output_file *of, const char *path)
{
	mode_t mask;

	if (!path || !strcmp(path, "-")) {
		memset(of, 0, sizeof(*of));
		of->fp = stdout;
		return 0;
	}
	/* The mode a plain open() would give. */
	mask = umask(0);
	umask(mask);
	return output_file__open_mode(of, path, 0666 & ~mask);
}

int output_file__open_mode(struct output_file *of, const char *path, mode_t mode)
{
	struct stat st;
	int fd, err;

	memset(of, 0, sizeof(*of));
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* /dev/null, a FIFO, a terminal: write to it; a rename would replace it. */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
		of->fp = fdopen(fd, "w");
		if (!of->fp) {
			err = -errno;
			close(fd);
			return err;
		}
		return 0;
	}
	of->path = strdup(path);
	if (!of->path || asprintf(&of->tmp_path, "%s.tmp.XXXXXX", path) < 0) {
		of->tmp_path = NULL;
		err = -ENOMEM;
		goto fail;
	}
	fd = mkostemp(of->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(of->tmp_path);
		of->tmp_path = NULL;
		goto fail;
	}
	/* mkstemp creates 0600. */
	if (mode != 0600)
		fchmod(fd, mode);
	of->fp = fdopen(fd, "w");
	if (!of->fp) {
		err = -errno;
		close(fd);
		goto fail;
	}
	return 0;
fail:
	output_file__abort(of);
	return err;
}

void output_file__abort(struct output_file *of)
{
	if (of->fp && of->fp != stdout)
		fclose(of->fp);
	if (of->tmp_path)
		unlink(of->tmp_path);
	free(of->tmp_path);
	free(of->path);
	memset(of, 0, sizeof(*of));
}

int output_file__commit(struct output_file *of)
{
	int err = 0;

	if (of->fp == stdout) {
		if (fflush(stdout) || ferror(stdout))
			err = -EIO;
		memset(of, 0, sizeof(*of));
		return err;
	}
	if (!of->tmp_path) {	/* not a regular file: written in place */
		if (fflush(of->fp) || ferror(of->fp))
			err = errno ? -errno : -EIO;
		if (fclose(of->fp) && !err)
			err = -errno;
		memset(of, 0, sizeof(*of));
		return err;
	}
	if (fflush(of->fp) || ferror(of->fp) || fsync(fileno(of->fp)))
		err = errno ? -errno : -EIO;
	if (fclose(of->fp) && !err)
		err = -errno;
	of->fp = NULL;
	if (!err && rename(of->tmp_path, of->path))
		err = -errno;
	if (!err) {
		free(of->tmp_path);
		of->tmp_path = NULL;
	}
	output_file__abort(of);
	return err;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* export_dir.c: gzipped pprof files in a directory, written atomically, rotated by size. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "agent/export.h"
#include "util/log.h"
#include "util/util.h"

#define TMP_PREFIX ".bpfprof-"
#define SUFFIX	   ".pb.gz"
#define TIME_LEN   16 /* YYYYMMDDTHHMMSSZ */
#define GROUP_MAX  128

/* One of our files in the directory. */
struct dir_file {
	char *name;
	uint64_t size; /* st_size, bytes */
};

struct dir_exporter {
	char *path;
	int dfd;
	uint64_t max_bytes;	/* 0: no cap */
	struct dir_file *files; /* sorted by name: oldest first */
	size_t files_cnt, files_cap;
	pthread_mutex_t lock; /* st */
	struct export_stats st;
};

/* "YYYYMMDDTHHMMSSZ_<anything>.pb.gz": a name this exporter writes. */
static bool is_own_name(const char *name)
{
	size_t len = strlen(name), i;

	if (len < TIME_LEN + 1 + 1 + strlen(SUFFIX) || strcmp(name + len - strlen(SUFFIX), SUFFIX))
		return false;
	for (i = 0; i < TIME_LEN; i++) {
		char want = i == 8 ? 'T' : i == 15 ? 'Z' : 0;

		if (want ? name[i] != want : (name[i] < '0' || name[i] > '9'))
			return false;
	}
	return name[TIME_LEN] == '_';
}

/* Adds name to the index at its sorted place. 0 or -ENOMEM. */
static int index_add(struct dir_exporter *d, const char *name, uint64_t size)
{
	size_t lo = 0, hi = d->files_cnt, mid;
	char *copy = strdup(name);

	if (!copy || array_grow((void **)&d->files, &d->files_cap, d->files_cnt + 1,
				sizeof(*d->files), 64)) {
		free(copy);
		return -ENOMEM;
	}
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (strcmp(d->files[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&d->files[lo + 1], &d->files[lo], (d->files_cnt - lo) * sizeof(*d->files));
	d->files[lo] = (struct dir_file){ copy, size };
	d->files_cnt++;
	return 0;
}

static void index_remove(struct dir_exporter *d, size_t i)
{
	free(d->files[i].name);
	memmove(&d->files[i], &d->files[i + 1], (d->files_cnt - i - 1) * sizeof(*d->files));
	d->files_cnt--;
}

/* Reads the directory: indexes our files, removes our temp files left by a crash. */
static int scan(struct dir_exporter *d)
{
	struct dirent *de;
	struct stat st;
	int fd, err = 0;
	DIR *dir;

	fd = openat(d->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	while (!err && (de = readdir(dir))) {
		bool tmp = !strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX));

		if (!tmp && !is_own_name(de->d_name))
			continue;
		if (fstatat(d->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (tmp)
			unlinkat(d->dfd, de->d_name, 0);
		else
			err = index_add(d, de->d_name, st.st_size);
	}
	closedir(dir);
	return err;
}

struct dir_exporter *dir_exporter__new(const char *path, uint64_t max_bytes)
{
	struct dir_exporter *d;
	size_t i;
	int err;

	if (!path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dfd = -1;
	pthread_mutex_init(&d->lock, NULL);
	d->max_bytes = max_bytes;
	d->path = strdup(path);
	if (!d->path) {
		err = -ENOMEM;
		goto err_out;
	}
	if (mkdir(path, 0750) && errno != EEXIST) {
		err = -errno;
		pr_warn("create profile directory %s: %s", path, strerror(-err));
		goto err_out;
	}
	d->dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dfd < 0) {
		err = -errno;
		pr_warn("open profile directory %s: %s", path, strerror(-err));
		goto err_out;
	}
	err = scan(d);
	if (err) {
		pr_warn("read profile directory %s: %s", path, strerror(-err));
		goto err_out;
	}
	for (i = 0; i < d->files_cnt; i++)
		d->st.dir_bytes += d->files[i].size;
	return d;

err_out:
	dir_exporter__free(d);
	errno = -err;
	return NULL;
}

static void sanitize_group(char *out, const char *group)
{
	size_t n = 0;

	for (; *group && n < GROUP_MAX; group++) {
		char c = *group;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || (c == '.' && n);

		out[n++] = ok ? c : '_';
	}
	if (!n)
		n = sprintf(out, "unknown");
	out[n] = '\0';
}

/* Writes all of buf to fd. 0 or a negative errno. */
static int write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;
	ssize_t n;

	while (size) {
		n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		size -= n;
	}
	return 0;
}

/* Renames tmp to name unless name exists: RENAME_NOREPLACE, else link + unlink. */
static int rename_noreplace(int dfd, const char *tmp, const char *name)
{
	if (!renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A file system without RENAME_NOREPLACE: link(2) fails with EEXIST too. */
	if (linkat(dfd, tmp, dfd, name, 0))
		return -errno;
	unlinkat(dfd, tmp, 0);
	return 0;
}

/* Removes our oldest files, never keep (the file just written), until the total fits. */
static void rotate(struct dir_exporter *d, const char *keep)
{
	uint64_t deleted = 0, deleted_bytes = 0;
	size_t i = 0;

	while (d->max_bytes && d->st.dir_bytes - deleted_bytes > d->max_bytes && i < d->files_cnt) {
		uint64_t size = d->files[i].size;

		if (!strcmp(d->files[i].name, keep)) {
			i++;
			continue;
		}
		if (unlinkat(d->dfd, d->files[i].name, 0) && errno != ENOENT) {
			pr_warn("remove old profile %s/%s: %s", d->path, d->files[i].name,
				strerror(errno));
			break;
		}
		index_remove(d, i);
		deleted++;
		deleted_bytes += size;
	}
	pthread_mutex_lock(&d->lock);
	d->st.deleted += deleted;
	d->st.dir_bytes -= deleted_bytes;
	pthread_mutex_unlock(&d->lock);
}

int dir_exporter__write(struct dir_exporter *d, const struct export_profile *p, const char *group)
{
	char tmp[64], name[TIME_LEN + 1 + GROUP_MAX + 8 + sizeof(SUFFIX)], g[GROUP_MAX + 1];
	char stamp[TIME_LEN + 1];
	time_t t = p->start_ns / 1000000000ull;
	bool linked = false;
	unsigned int n;
	struct tm tm;
	int fd = -1, err;

	sanitize_group(g, group ?: (p->labels_cnt ? p->labels[0].value : ""));
	if (!gmtime_r(&t, &tm) ||
	    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) != TIME_LEN) {
		err = -EINVAL;
		goto out;
	}
	/* The temp file: a fresh name in the directory (O_EXCL), hidden, ours by its prefix. */
	for (n = 0; n < 100; n++) {
		snprintf(tmp, sizeof(tmp), TMP_PREFIX "%016llx",
			 (unsigned long long)hash_bytes(&n, sizeof(n), now_ns() ^ getpid()));
		fd = openat(d->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	linked = true;
	/* Not the umask's choice: readers in the group (a log shipper) get the files. */
	err = fchmod(fd, 0640) ? -errno : 0;
	err = err ?: write_all(fd, p->data, p->size);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err)
		goto out;
	for (n = 0; n < 1000; n++) {
		if (n)
			snprintf(name, sizeof(name), "%s_%s.%u" SUFFIX, stamp, g, n);
		else
			snprintf(name, sizeof(name), "%s_%s" SUFFIX, stamp, g);
		err = rename_noreplace(d->dfd, tmp, name);
		if (err != -EEXIST)
			break;
	}
	if (err)
		goto out;
	linked = false;
	/* The rename itself is durable only once the directory is synced. */
	if (fsync(d->dfd))
		pr_debug("fsync %s: %s", d->path, strerror(errno));
	err = index_add(d, name, p->size);
	pthread_mutex_lock(&d->lock);
	d->st.sent++;
	d->st.bytes_sent += p->size;
	d->st.dir_bytes += p->size;
	pthread_mutex_unlock(&d->lock);
	if (!err)
		rotate(d, name);
	/* Not indexed (ENOMEM): written, but never rotated away. */
	err = 0;
out:
	if (linked)
		unlinkat(d->dfd, tmp, 0);
	if (err) {
		pthread_mutex_lock(&d->lock);
		d->st.failed++;
		snprintf(d->st.last_error, sizeof(d->st.last_error), "write %s: %s", g,
			 strerror(-err));
		d->st.last_error_time_ns = realtime_ns();
		pthread_mutex_unlock(&d->lock);
		pr_warn("write profile %s to %s: %s", g, d->path, strerror(-err));
	}
	return err;
}

void dir_exporter__stats(struct dir_exporter *d, struct export_stats *st)
{
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	pthread_mutex_unlock(&d->lock);
}

void dir_exporter__metrics(struct dir_exporter *d, struct metrics_writer *w)
{
	struct export_stats st;

	dir_exporter__stats(d, &st);
	export_stats__metrics(&st, "dir", w);
}

void dir_exporter__free(struct dir_exporter *d)
{
	if (!d)
		return;
	while (d->files_cnt)
		index_remove(d, d->files_cnt - 1);
	free(d->files);
	if (d->dfd >= 0)
		close(d->dfd);
	pthread_mutex_destroy(&d->lock);
	free(d->path);
	free(d);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_maps.c: /proc/PID/maps parser (proc(5)). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "util/util.h"
#include "process/proc_maps.h"

#define DELETED_SUFFIX " (deleted)"

static int parse_dec(const char **p, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int d = *s - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*val = v;
	*p = s;
	return 0;
}

static int expect_char(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int parse_perms(const char **p, uint32_t *prot)
{
	const char *s = *p;
	uint32_t v = 0;

	if (s[0] == 'r')
		v |= PROC_MAPPING_R;
	else if (s[0] != '-')
		return -EINVAL;
	if (s[1] == 'w')
		v |= PROC_MAPPING_W;
	else if (s[1] != '-')
		return -EINVAL;
	if (s[2] == 'x')
		v |= PROC_MAPPING_X;
	else if (s[2] != '-')
		return -EINVAL;
	if (s[3] == 's')
		v |= PROC_MAPPING_SHARED;
	else if (s[3] != 'p')
		return -EINVAL;
	*prot = v;
	*p = s + 4;
	return 0;
}

int proc_mapping__parse(const char *line, struct proc_mapping *m)
{
	struct proc_mapping tmp = {};
	const char *p = line, *path;
	uint64_t major, minor;
	size_t len;

	if (!line || !m)
		return -EINVAL;
	if (hex_parse(&p, NULL, &tmp.start) || expect_char(&p, '-') ||
	    hex_parse(&p, NULL, &tmp.end) || expect_char(&p, ' ') || parse_perms(&p, &tmp.prot) ||
	    expect_char(&p, ' ') || hex_parse(&p, NULL, &tmp.pgoff) || expect_char(&p, ' ') ||
	    hex_parse(&p, NULL, &major) || expect_char(&p, ':') || hex_parse(&p, NULL, &minor) ||
	    expect_char(&p, ' ') || parse_dec(&p, &tmp.inode))
		return -EINVAL;
	if (tmp.start >= tmp.end || major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	/* The kernel ends the inode column with a space even when no path follows. */
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	tmp.dev_major = major;
	tmp.dev_minor = minor;

	while (*p == ' ' || *p == '\t')
		p++;
	path = p;
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		len--;
	if (len > strlen(DELETED_SUFFIX) &&
	    !memcmp(path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		tmp.deleted = true;
		len -= strlen(DELETED_SUFFIX);
	}
	if (len) {
		tmp.path = strndup(path, len);
		if (!tmp.path)
			return -ENOMEM;
	}
	*m = tmp;
	return 0;
}

void proc_mapping__clear(struct proc_mapping *m)
{
	if (!m)
		return;
	free(m->path);
	m->path = NULL;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct proc_mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int read_stream(FILE *f, bool exec_only, struct proc_mapping **mappings, size_t *cnt);

int proc_maps__read(const char *path, bool exec_only, struct proc_mapping **mappings, size_t *cnt)
{
	FILE *f;
	int err;

	if (!path || !mappings || !cnt)
		return -EINVAL;
	*mappings = NULL;
	*cnt = 0;
	f = fopen(path, "re");
	if (!f)
		/* ESRCH: the process exited between the lookup and the open. */
		return errno == ESRCH ? -ENOENT : -errno;
	err = read_stream(f, exec_only, mappings, cnt);
	fclose(f);
	return err;
}

int proc_maps__parse_text(const char *text, size_t len, bool exec_only,
			  struct proc_mapping **mappings, size_t *cnt)
{
	FILE *f;
	int err;

	if (!text || !mappings || !cnt)
		return -EINVAL;
	*mappings = NULL;
	*cnt = 0;
	if (!len)
		return 0;
	f = fmemopen((void *)text, len, "r");
	if (!f)
		return -errno;
	err = read_stream(f, exec_only, mappings, cnt);
	fclose(f);
	return err;
}

static int read_stream(FILE *f, bool exec_only, struct proc_mapping **mappings, size_t *cnt)
{
	struct proc_mapping *arr = NULL, *tmp, m;
	size_t n = 0, cap = 0, linecap = 0, i;
	char *line = NULL;
	bool sorted = true;
	int err = 0;

	errno = 0;
	while (getline(&line, &linecap, f) >= 0) {
		err = proc_mapping__parse(line, &m);
		if (err == -EINVAL) {
			err = 0;
			continue;
		}
		if (err)
			goto cleanup;
		if (exec_only && !(m.prot & PROC_MAPPING_X)) {
			proc_mapping__clear(&m);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(arr, cap * sizeof(*arr));
			if (!tmp) {
				proc_mapping__clear(&m);
				err = -ENOMEM;
				goto cleanup;
			}
			arr = tmp;
		}
		if (n && arr[n - 1].start > m.start)
			sorted = false;
		arr[n++] = m;
		errno = 0;
	}
	/* A process exiting while its maps are read makes read() fail with ESRCH. */
	if (ferror(f)) {
		err = errno == ESRCH ? -ENOENT : -(errno ? errno : EIO);
		goto cleanup;
	}
	/* The kernel prints in address order: sort only input that is not (a fixture). */
	if (!sorted)
		qsort(arr, n, sizeof(*arr), mapping_cmp);
	*mappings = arr;
	*cnt = n;
	arr = NULL;
	n = 0;

cleanup:
	for (i = 0; i < n; i++)
		proc_mapping__clear(&arr[i]);
	free(arr);
	free(line);
	return err;
}

void proc_maps__free(struct proc_mapping *mappings, size_t cnt)
{
	size_t i;

	if (!mappings)
		return;
	for (i = 0; i < cnt; i++)
		proc_mapping__clear(&mappings[i]);
	free(mappings);
}

/* One line of a mountinfo file (proc(5)): the fields bpfprof uses, unescaped in place. */
struct mountinfo_line {
	unsigned int major, minor;
	char *root;	   /* the directory of the filesystem mounted */
	char *mount_point; /* relative to the reader's root */
};

/* Undoes the kernel's octal escapes (\040 for a space, \012, \134) in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Splits a mountinfo line (modified in place); false for a malformed one. */
static bool mountinfo_parse(char *line, struct mountinfo_line *m)
{
	char *save = NULL, *tok[5];
	int i;

	for (i = 0; i < 5; i++) {
		tok[i] = strtok_r(i ? NULL : line, " \n", &save);
		if (!tok[i])
			return false;
	}
	if (sscanf(tok[2], "%u:%u", &m->major, &m->minor) != 2)
		return false;
	m->root = tok[3];
	m->mount_point = tok[4];
	unescape(m->root);
	unescape(m->mount_point);
	return true;
}

/* The part of path below dir ("" for dir itself), or NULL when path is not under dir. */
static const char *path_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path;
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

static bool same_dir(const char *path, const struct stat *want)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode) && st.st_dev == want->st_dev &&
	       st.st_ino == want->st_ino;
}

/* A mount of the filesystem (major, minor) in bpfprof's namespace that holds fs_dir, and the
 * path of fs_dir there, when it is the directory want is. */
static char *host_path_of(unsigned int major, unsigned int minor, const char *fs_dir,
			  const struct stat *want)
{
	struct mountinfo_line m;
	char *text = NULL, *line, *next, *path = NULL;
	const char *below;
	size_t len;

	if (file__read_all("/proc/self/mountinfo", &text, &len))
		return NULL;
	for (line = text; line && *line && !path; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!mountinfo_parse(line, &m) || m.major != major || m.minor != minor)
			continue;
		below = path_below(fs_dir, m.root);
		if (!below)
			continue;
		if (asprintf(&path, "%s%s",
			     strcmp(m.mount_point, "/") || !*below ? m.mount_point : "",
			     below) < 0) {
			path = NULL;
			break;
		}
		if (!same_dir(path, want)) {
			free(path);
			path = NULL;
		}
	}
	free(text);
	return path;
}

int proc_maps__host_root(uint32_t pid, char **root)
{
	char proc_root[32], link[4096], file[64], *text = NULL, *line, *next, *fs_dir = NULL;
	struct mountinfo_line m;
	struct stat want, self;
	unsigned int major = 0, minor = 0;
	size_t len;
	ssize_t n;
	int err;

	*root = NULL;
	snprintf(proc_root, sizeof(proc_root), "/proc/%u/root", pid);
	if (stat(proc_root, &want))
		return errno == ESRCH ? -ENOENT : -errno;
	if (!stat("/", &self) && self.st_dev == want.st_dev && self.st_ino == want.st_ino)
		return 0; /* bpfprof's own root */
	/* A chroot in this mount namespace: its path from here. */
	n = readlink(proc_root, link, sizeof(link) - 1);
	if (n > 1 && link[0] == '/') {
		link[n] = '\0';
		if (same_dir(link, &want) && !strchr(link, '\n')) {
			*root = strdup(link);
			return *root ? 0 : -ENOMEM;
		}
	}
	/* Another mount namespace: its "/" mount (the last one listed, over any below it). */
	snprintf(file, sizeof(file), "/proc/%u/mountinfo", pid);
	err = file__read_all(file, &text, &len);
	if (err)
		return err;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (mountinfo_parse(line, &m) && !strcmp(m.mount_point, "/")) {
			major = m.major;
			minor = m.minor;
			fs_dir = m.root;
		}
	}
	if (fs_dir)
		*root = host_path_of(major, minor, fs_dir, &want);
	free(text);
	if (*root && strchr(*root, '\n')) {
		free(*root);
		*root = NULL;
	}
	return 0;
}

int proc_maps__text_root(const char *text, size_t len, char **root)
{
	const size_t plen = sizeof(PROC_MAPS_ROOT_LINE) - 1;
	const char *line = text, *end = text + len, *eol;

	*root = NULL;
	for (; line < end; line = eol + 1) {
		eol = memchr(line, '\n', end - line);
		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > plen && !memcmp(line, PROC_MAPS_ROOT_LINE, plen)) {
			*root = strndup(line + plen, eol - line - plen);
			return *root ? 0 : -ENOMEM;
		}
	}
	return 0;
}

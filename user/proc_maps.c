// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_maps.c: /proc/PID/maps parser (proc(5)). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc_maps.h"

#define DELETED_SUFFIX " (deleted)"

/* Hex digits up to a non-hex character; at least one, at most 16 (no overflow). */
static int parse_hex(const char **p, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	for (;; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return -EINVAL;
		v = (v << 4) | d;
	}
	if (!n)
		return -EINVAL;
	*val = v;
	*p = s;
	return 0;
}

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
	if (parse_hex(&p, &tmp.start) || expect_char(&p, '-') || parse_hex(&p, &tmp.end) ||
	    expect_char(&p, ' ') || parse_perms(&p, &tmp.prot) || expect_char(&p, ' ') ||
	    parse_hex(&p, &tmp.pgoff) || expect_char(&p, ' ') || parse_hex(&p, &major) ||
	    expect_char(&p, ':') || parse_hex(&p, &minor) || expect_char(&p, ' ') ||
	    parse_dec(&p, &tmp.inode))
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

int proc_maps__read(const char *path, bool exec_only, struct proc_mapping **mappings,
		    size_t *cnt)
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

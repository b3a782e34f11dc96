// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_map.c: perf map (/tmp/perf-PID.map) parsing, lookups and reloads for JIT frames. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "symbols/perf_map.h"
#include "util/util.h"

/* [start, end) named name; off is counted from base, the START of the entry it comes from. */
struct perf_map_range {
	uint64_t start;
	uint64_t end;
	uint64_t base;
	const char *name; /* in perf_map.text */
};

struct perf_map {
	struct perf_map_range *ranges; /* sorted by start, not overlapping */
	size_t cnt;
	size_t bad_cnt;
	char *text; /* the file's contents, names NUL-terminated in place */

	int refs;

	/* A process's map (perf_map__open_process()) */
	int root_fd;	     /* the process's root (/proc/PID/root, O_PATH); -1 once closed */
	char *path;	     /* tmp/perf-NSPID.map, in root_fd; NULL for other maps */
	uid_t uids[4];	     /* the process's, from /proc/PID/status */
	uint64_t checked_ns; /* last look at the file (CLOCK_MONOTONIC) */
	bool have_id;	     /* the file below was seen (read, or refused) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t load_cnt;
};

/* One well-formed line, before overlaps are resolved. seq: its order among them. */
struct perf_map_entry {
	uint64_t start;
	uint64_t end;
	const char *name;
	size_t seq;
};

static struct perf_map *map_new(void)
{
	struct perf_map *m = calloc(1, sizeof(*m));

	if (m) {
		m->refs = 1;
		m->root_fd = -1;
	}
	return m;
}

struct perf_map *perf_map__get(struct perf_map *m)
{
	m->refs++;
	return m;
}

void perf_map__put(struct perf_map *m)
{
	if (!m || --m->refs > 0)
		return;
	if (m->root_fd >= 0)
		close(m->root_fd);
	free(m->ranges);
	free(m->text);
	free(m->path);
	free(m);
}

size_t perf_map__cnt(const struct perf_map *m)
{
	return m->cnt;
}

size_t perf_map__bad_cnt(const struct perf_map *m)
{
	return m->bad_cnt;
}

uint64_t perf_map__load_cnt(const struct perf_map *m)
{
	return m->load_cnt;
}

const char *perf_map__find(const struct perf_map *m, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = m->cnt, mid;

	/* The last range starting at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->ranges[lo - 1].end)
		return NULL;
	if (off)
		*off = addr - m->ranges[lo - 1].base;
	return m->ranges[lo - 1].name;
}

/* A hex number at *p, "0x" optional; advances *p. False when there is none or it overflows. */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hex_digit(s[2]) >= 0)
		s += 2;
	if (hex_parse(&s, end, v))
		return false;
	*p = s;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Parses line [s, end) (no newline) into e; NUL-terminates the name in place (at end or after
 * its last non-space character). False for a malformed line.
 */
static bool parse_line(char *s, char *end, struct perf_map_entry *e)
{
	const char *p = s;
	uint64_t size;
	char *name, *name_end = end;

	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, &e->start) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, &size) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	name = s + (p - s); /* p is const: the name's end is written below */
	while (name_end > name && (is_blank(name_end[-1]) || name_end[-1] == '\r'))
		name_end--;
	if (name_end == name || !size || size > UINT64_MAX - e->start)
		return false;
	*name_end = '\0';
	e->end = e->start + size;
	e->name = name;
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Max-heap of entry indexes by seq: the latest line among those covering a point on top. */
static void heap_push(size_t *heap, size_t *n, const struct perf_map_entry *e, size_t idx)
{
	size_t i = (*n)++, parent;

	while (i && e[heap[parent = (i - 1) / 2]].seq < e[idx].seq) {
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = idx;
}

static void heap_pop(size_t *heap, size_t *n, const struct perf_map_entry *e)
{
	size_t last = heap[--(*n)], i = 0, child;

	while ((child = 2 * i + 1) < *n) {
		if (child + 1 < *n && e[heap[child + 1]].seq > e[heap[child]].seq)
			child++;
		if (e[heap[child]].seq <= e[last].seq)
			break;
		heap[i] = heap[child];
		i = child;
	}
	if (*n)
		heap[i] = last;
}

static void add_range(struct perf_map_range *r, size_t *cnt, uint64_t start, uint64_t end,
		      const struct perf_map_entry *e)
{
	struct perf_map_range *prev = *cnt ? &r[*cnt - 1] : NULL;

	/* Parts of one entry that nothing separates any more are one range again. */
	if (prev && prev->end == start && prev->name == e->name && prev->base == e->start) {
		prev->end = end;
		return;
	}
	r[(*cnt)++] = (struct perf_map_range){ start, end, e->start, e->name };
}

/*
 * Turns entries e[0..n) (sorted by start, then seq) into non-overlapping ranges, the latest
 * entry winning wherever several cover an address: a sweep over the sorted range boundaries
 * with a heap of the entries covering the current interval. O(n log n). Sets m->ranges/cnt.
 */
static int build_ranges(struct perf_map *m, const struct perf_map_entry *e, size_t n)
{
	uint64_t *bounds = NULL;
	size_t *heap = NULL, nb = 0, nh = 0, i, k, next = 0;
	bool overlap = false;
	int err = 0;

	m->ranges = calloc(n ? 2 * n : 1, sizeof(*m->ranges));
	if (!m->ranges)
		return -ENOMEM;
	m->cnt = 0;
	for (i = 1; i < n && !overlap; i++)
		overlap = e[i].start < e[i - 1].end;
	if (!overlap) {
		/* The usual file: every entry is one range. */
		for (i = 0; i < n; i++)
			add_range(m->ranges, &m->cnt, e[i].start, e[i].end, &e[i]);
		return 0;
	}

	bounds = malloc(2 * n * sizeof(*bounds));
	heap = malloc(n * sizeof(*heap));
	if (!bounds || !heap) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		bounds[nb++] = e[i].start;
		bounds[nb++] = e[i].end;
	}
	qsort(bounds, nb, sizeof(*bounds), cmp_u64);
	for (i = 1, k = 1; i < nb; i++)
		if (bounds[i] != bounds[k - 1])
			bounds[k++] = bounds[i];
	nb = k;

	for (k = 0; k + 1 < nb; k++) {
		while (next < n && e[next].start <= bounds[k])
			heap_push(heap, &nh, e, next++);
		/* Entries that ended before this interval leave once they reach the top. */
		while (nh && e[heap[0]].end <= bounds[k])
			heap_pop(heap, &nh, e);
		if (nh)
			add_range(m->ranges, &m->cnt, bounds[k], bounds[k + 1], &e[heap[0]]);
	}
cleanup:
	free(bounds);
	free(heap);
	return err;
}

/* Parses text (NUL-terminated, owned by m from now on) into m's ranges. */
static int parse_text(struct perf_map *m, char *text, size_t len)
{
	struct perf_map_entry *entries = NULL;
	size_t cnt = 0, cap = 0;
	char *line = text, *nl, *end = text + len;
	int err = 0;

	m->text = text;
	while (line < end && (nl = memchr(line, '\n', end - line))) {
		struct perf_map_entry e;

		if (nl == line || (nl == line + 1 && *line == '\r')) {
			line = nl + 1;
			continue;
		}
		if (!parse_line(line, nl, &e)) {
			m->bad_cnt++;
			line = nl + 1;
			continue;
		}
		err = array_grow((void **)&entries, &cap, cnt + 1, sizeof(*entries), 256);
		if (err)
			goto cleanup;
		e.seq = cnt;
		entries[cnt++] = e;
		line = nl + 1;
	}
	/* Files are appended to while we read them: a last line without '\n' may be partial. */
	if (cnt) /* entries is NULL for an empty map: qsort() must not get it */
		qsort(entries, cnt, sizeof(*entries), cmp_entry);
	err = build_ranges(m, entries, cnt);
cleanup:
	free(entries);
	return err;
}

/* Reads regular file fd (fstat'ed as st) whole into a new map. NULL with errno. */
static struct perf_map *read_fd(int fd, const struct stat *st)
{
	struct perf_map *m = NULL;
	size_t cap, len = 0;
	char *text = NULL, *tmp;
	ssize_t n;
	int err;

	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	if ((uint64_t)st->st_size > BPFPROF_PERF_MAP_MAX_SZ) {
		err = -EFBIG;
		goto cleanup;
	}
	/* Room for what may be appended while we read, so most reads fit. */
	cap = st->st_size + 4096;
	text = malloc(cap + 1);
	m = map_new();
	if (!text || !m) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		if (len == cap) {
			if (cap >= BPFPROF_PERF_MAP_MAX_SZ) {
				err = -EFBIG;
				goto cleanup;
			}
			cap *= 2;
			tmp = realloc(text, cap + 1);
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			text = tmp;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (!n)
			break;
		len += n;
	}
	text[len] = '\0';
	err = parse_text(m, text, len);
	text = NULL; /* m's now */
cleanup:
	free(text);
	if (err) {
		perf_map__put(m);
		errno = -err;
		return NULL;
	}
	return m;
}

struct perf_map *perf_map__parse_file(const char *path)
{
	struct perf_map *m;
	struct stat st;
	int fd, err;

	fd = file__open_regular(path, 0, &st);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	m = read_fd(fd, &st);
	err = errno;
	close(fd);
	errno = err;
	return m;
}

/*
 * The decimal fields (up to max) of the first line of [text, end) that starts with key, into v.
 * Returns how many; sets *bad for a line without fields, a field that is no number >= 0 or
 * more than max fields.
 */
static int status_fields(const char *text, const char *end, const char *key, long long *v, int max,
			 bool *bad)
{
	size_t klen = strlen(key);
	const char *p = text, *eol, *q;
	char *num_end;
	int n = 0;

	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p) ?: end;
		if ((size_t)(eol - p) < klen || memcmp(p, key, klen))
			continue;
		for (q = p + klen; q < eol;) {
			char buf[24];
			size_t l;

			while (q < eol && is_blank(*q))
				q++;
			if (q == eol)
				break;
			for (l = 0; q + l < eol && !is_blank(q[l]); l++)
				;
			if (l >= sizeof(buf) || n == max) {
				*bad = true;
				return n;
			}
			memcpy(buf, q, l);
			buf[l] = '\0';
			errno = 0;
			v[n] = strtoll(buf, &num_end, 10);
			if (errno || *num_end || v[n] < 0) {
				*bad = true;
				return n;
			}
			n++;
			q += l;
		}
		if (!n)
			*bad = true;
		return n;
	}
	return 0;
}

int perf_map__parse_status(const char *text, size_t len, pid_t *nspid, uid_t uids[4])
{
	const char *end = text + len;
	bool bad = false, missing = false;
	long long v[32];
	int n, i;

	/* One field per pid namespace level, outermost first; the kernel allows 32 levels. */
	n = status_fields(text, end, "NSpid:", v, ARRAY_SIZE(v), &bad);
	if (bad)
		return -EINVAL;
	if (n)
		*nspid = (pid_t)v[n - 1];
	else
		missing = true;
	n = status_fields(text, end, "Uid:", v, 4, &bad);
	if (bad || (n && n != 4))
		return -EINVAL;
	for (i = 0; i < n; i++)
		uids[i] = (uid_t)v[i];
	if (!n)
		missing = true;
	return missing ? -ENOENT : 0;
}

/*
 * m->root_fd, m->path and m->uids for process pid: its root directory (O_PATH: still usable
 * after the process exits), the map's path in it and the owners allowed, from
 * /proc/PID/status. 0 or a negative errno (-ESRCH: no such process).
 */
static int locate(struct perf_map *m, pid_t pid)
{
	char proc_path[64], text[8192], *path;
	pid_t nspid = pid;
	ssize_t n;
	int fd, err;

	snprintf(proc_path, sizeof(proc_path), "/proc/%d/status", (int)pid);
	fd = open(proc_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* NSpid and Uid are in the first 2 KiB; a short read is no worry. */
	n = read(fd, text, sizeof(text));
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	m->uids[0] = m->uids[1] = m->uids[2] = m->uids[3] = (uid_t)-1;
	err = perf_map__parse_status(text, n, &nspid, m->uids);
	if (err && err != -ENOENT)
		return err;
	/* Its root, as the process sees "/" (a container's): a magic link, followed on purpose. */
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/root", (int)pid);
	fd = open(proc_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if (asprintf(&path, "tmp/perf-%d.map", (int)nspid) < 0) {
		close(fd);
		return -ENOMEM;
	}
	if (m->root_fd >= 0)
		close(m->root_fd);
	m->root_fd = fd;
	free(m->path);
	m->path = path;
	return 0;
}

static bool owner_ok(const struct perf_map *m, uid_t uid)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(m->uids); i++)
		if (uid == m->uids[i])
			return true;
	return uid == 0;
}

/*
 * Opens m's file (m->path in m->root_fd), checked as perf_map__load() says, into *st. The
 * descriptor or a negative errno.
 */
static int open_checked(const struct perf_map *m, struct stat *st)
{
	char *path;
	int fd;

	fd = file__open_regular_in_root(m->root_fd, m->path, O_NOFOLLOW, st);
	if (fd == -ENOSYS) {
		/* Before Linux 5.6: the path through /proc (the process must be alive). */
		if (asprintf(&path, "/proc/self/fd/%d/%s", m->root_fd, m->path) < 0)
			return -ENOMEM;
		fd = file__open_regular(path, O_NOFOLLOW, st);
		free(path);
	}
	if (fd >= 0 && !owner_ok(m, st->st_uid)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct perf_map *perf_map__load(pid_t pid)
{
	struct perf_map *tmp = map_new(), *m = NULL;
	struct stat st;
	int fd, err;

	if (!tmp)
		return NULL;
	err = locate(tmp, pid);
	fd = err ? err : open_checked(tmp, &st);
	if (fd >= 0) {
		m = read_fd(fd, &st);
		err = m ? 0 : -errno;
		close(fd);
	} else {
		err = fd;
	}
	perf_map__put(tmp);
	if (err)
		errno = -err;
	return m;
}

static void set_id(struct perf_map *m, const struct stat *st)
{
	m->have_id = true;
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->size = st->st_size;
	m->mtime = st->st_mtim;
}

static bool same_id(const struct perf_map *m, const struct stat *st)
{
	return m->have_id && m->dev == st->st_dev && m->ino == st->st_ino &&
	       m->size == st->st_size && m->mtime.tv_sec == st->st_mtim.tv_sec &&
	       m->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

struct perf_map *perf_map__open_process(pid_t pid, uint64_t now_ns)
{
	struct perf_map *m = map_new();

	if (!m)
		return NULL;
	/* A process already gone (or a /proc we cannot read) leaves an empty map. */
	if (!locate(m, pid))
		perf_map__refresh(m, now_ns);
	m->checked_ns = now_ns;
	return m;
}

void perf_map__refresh(struct perf_map *m, uint64_t now_ns)
{
	struct perf_map *n;
	struct stat st;
	int fd;

	m->checked_ns = now_ns;
	if (m->root_fd < 0 || !m->path)
		return;
	fd = open_checked(m, &st);
	if (fd < 0) {
		/* Entries read before stay: a JIT removes its map at exit. A file refused (owner,
		 * type) is remembered by its identity, so it is not read again until it changes. */
		if (fd == -EPERM || fd == -EINVAL)
			set_id(m, &st);
		else
			m->have_id = false;
		return;
	}
	if (same_id(m, &st)) {
		close(fd);
		return;
	}
	n = read_fd(fd, &st);
	close(fd);
	if (!n) {
		if (errno != ENOMEM)
			set_id(m, &st);
		return;
	}
	set_id(m, &st);
	free(m->ranges);
	free(m->text);
	m->ranges = n->ranges;
	m->cnt = n->cnt;
	m->bad_cnt = n->bad_cnt;
	m->text = n->text;
	m->load_cnt++;
	n->ranges = NULL;
	n->text = NULL;
	perf_map__put(n);
}

void perf_map__close(struct perf_map *m, uint64_t now_ns)
{
	if (m->root_fd < 0)
		return;
	perf_map__refresh(m, now_ns);
	close(m->root_fd);
	m->root_fd = -1;
}

bool perf_map__closed(const struct perf_map *m)
{
	return m->root_fd < 0;
}

uint64_t perf_map__checked_ns(const struct perf_map *m)
{
	return m->checked_ns;
}

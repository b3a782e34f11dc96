// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_map.c: perf map (/tmp/perf-PID.map) parsing, lookups and reloads for JIT frames. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "runtime/jit/perf_map.h"
#include "util/util.h"
#include "util/worker.h"

/* Bytes read at a time, and the longest line (a longer one is malformed). */
#define READ_CHUNK    (64 * 1024)
/* A process's map is not read again for new addresses sooner than this after a read, nor
 * sooner than READ_SPACING times that read's length: a live JIT's map costs a few % of a CPU. */
#define REREAD_MIN_NS 1000000000ull
#define READ_SPACING  20
/* Lines kept beyond the wanted addresses' before a read drops the ones no address needs. */
#define COMPACT_SLACK 4096

/* [start, end) named names + name; off is counted from base, the START of its line. */
struct perf_map_range {
	uint64_t start;
	uint64_t end;
	uint64_t base;
	size_t name;
};

/* One read's result: what perf_map__find() looks in. */
struct perf_map_table {
	struct perf_map_range *ranges; /* sorted by start, not overlapping */
	size_t cnt;
	char *names;	/* the ranges' names, NUL-terminated */
	uint64_t *want; /* sorted: the addresses it was read for; NULL: every line kept */
	size_t want_cnt;
	size_t bad_cnt;
	uint64_t not_read; /* bytes past BPFPROF_PERF_MAP_MAX_SZ */
};

struct perf_map {
	struct perf_map_table cur; /* the main thread's: perf_map__find() */
	int refs;		   /* atomic: the reader thread holds one while a read is queued */
	uint64_t checked_ns;	   /* the main thread's: last perf_map__refresh() */

	/* A process's map (perf_map__open_process()): under lock, shared with the reader. */
	pthread_mutex_t lock;
	struct perf_map_table next; /* a read done, not yet taken by perf_map__sync() */
	bool have_next;
	uint64_t *want; /* sorted addresses samples hit (perf_map__want()) */
	size_t want_cnt, want_cap;
	uint64_t want_gen;     /* bumped by each new address */
	uint64_t queued_gen;   /* want_gen when the last read was queued */
	bool queued;	       /* a read queued or running */
	bool again;	       /* read once more when this one ends (perf_map__refresh()) */
	bool closing;	       /* perf_map__close() (or no process): root_fd goes after a read */
	uint64_t next_read_ns; /* perf_map__want() queues no read before then */
	uint64_t load_cnt;
	struct worker_job job;

	/* The reader's once shared; set by locate() before. */
	int root_fd;   /* the process's root (/proc/PID/root, O_PATH); -1 once closed */
	char *path;    /* tmp/perf-NSPID.map, in root_fd */
	uid_t uids[4]; /* the process's, from /proc/PID/status */
	bool have_id;  /* the file below was seen (read, or refused) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t read_gen; /* want_gen the last read covered */
};

/* One well-formed line (or what a compaction kept of one). seq: its order among them. */
struct perf_map_entry {
	uint64_t start;
	uint64_t end;
	uint64_t base;
	size_t name; /* in perf_map_reader.names */
	size_t seq;
};

/* A read in progress: the lines kept so far. */
struct perf_map_reader {
	const uint64_t *want; /* sorted; NULL: keep every line */
	size_t want_cnt;
	struct perf_map_entry *e;
	size_t cnt, cap, seq;
	char *names;
	size_t names_len, names_cap;
	size_t bad_cnt;
};

/* The thread that reads process maps, off the sampling loop. */
static struct worker reader = WORKER_INIT;
static uint64_t max_sz = BPFPROF_PERF_MAP_MAX_SZ;
static struct perf_map_stats stats; /* atomics */

static void stat_max(uint64_t *v, uint64_t x)
{
	uint64_t old = __atomic_load_n(v, __ATOMIC_RELAXED);

	while (x > old &&
	       !__atomic_compare_exchange_n(v, &old, x, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void perf_map__stats(struct perf_map_stats *s)
{
	s->reads = __atomic_load_n(&stats.reads, __ATOMIC_RELAXED);
	s->bytes_read = __atomic_load_n(&stats.bytes_read, __ATOMIC_RELAXED);
	s->capped_reads = __atomic_load_n(&stats.capped_reads, __ATOMIC_RELAXED);
	s->max_not_read = __atomic_load_n(&stats.max_not_read, __ATOMIC_RELAXED);
	s->addrs_dropped = __atomic_load_n(&stats.addrs_dropped, __ATOMIC_RELAXED);
}

void perf_map__set_max_size(uint64_t bytes)
{
	max_sz = bytes ? bytes : BPFPROF_PERF_MAP_MAX_SZ;
}

static void table_free(struct perf_map_table *t)
{
	free(t->ranges);
	free(t->names);
	free(t->want);
	*t = (struct perf_map_table){};
}

static struct perf_map *map_new(void)
{
	struct perf_map *m = calloc(1, sizeof(*m));

	if (m) {
		m->refs = 1;
		m->root_fd = -1;
		pthread_mutex_init(&m->lock, NULL);
	}
	return m;
}

struct perf_map *perf_map__get(struct perf_map *m)
{
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	return m;
}

void perf_map__put(struct perf_map *m)
{
	if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	if (m->root_fd >= 0)
		close(m->root_fd);
	table_free(&m->cur);
	table_free(&m->next);
	pthread_mutex_destroy(&m->lock);
	free(m->want);
	free(m->path);
	free(m);
}

size_t perf_map__cnt(const struct perf_map *m)
{
	return m->cur.cnt;
}

size_t perf_map__bad_cnt(const struct perf_map *m)
{
	return m->cur.bad_cnt;
}

uint64_t perf_map__not_read(const struct perf_map *m)
{
	return m->cur.not_read;
}

uint64_t perf_map__load_cnt(struct perf_map *m)
{
	uint64_t n;

	pthread_mutex_lock(&m->lock);
	n = m->load_cnt;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* The index of the first of a[0..n) (sorted) >= x. */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *perf_map__find(const struct perf_map *m, uint64_t addr, uint64_t *off)
{
	const struct perf_map_table *t = &m->cur;
	size_t lo = 0, hi = t->cnt, mid;

	/* A process's map knows only the lines of the addresses it was read for. */
	if (t->want) {
		mid = lower_bound(t->want, t->want_cnt, addr);
		if (mid == t->want_cnt || t->want[mid] != addr)
			return NULL;
	}
	/* The last range starting at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= t->ranges[lo - 1].end)
		return NULL;
	if (off)
		*off = addr - t->ranges[lo - 1].base;
	return t->names + t->ranges[lo - 1].name;
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
 * Parses line [s, end) (no newline): *start, *end_addr and the name [*name, *name_end) (without
 * trailing blanks). False for a malformed line.
 */
static bool parse_line(const char *s, const char *end, uint64_t *start, uint64_t *end_addr,
		       const char **name, const char **name_end)
{
	const char *p = s, *ne = end;
	uint64_t size;

	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, start) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, &size) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	while (ne > p && (is_blank(ne[-1]) || ne[-1] == '\r'))
		ne--;
	if (ne == p || !size || size > UINT64_MAX - *start)
		return false;
	*end_addr = *start + size;
	*name = p;
	*name_end = ne;
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
	if (prev && prev->end == start && prev->name == e->name && prev->base == e->base) {
		prev->end = end;
		return;
	}
	r[(*cnt)++] = (struct perf_map_range){ start, end, e->base, e->name };
}

/*
 * Turns entries e[0..n) (sorted by start, then seq) into non-overlapping ranges *out (*cnt of
 * them), the latest entry winning wherever several cover an address: a sweep over the sorted
 * range boundaries with a heap of the entries covering the current interval. O(n log n).
 */
static int build_ranges(const struct perf_map_entry *e, size_t n, struct perf_map_range **out,
			size_t *cnt)
{
	struct perf_map_range *r;
	uint64_t *bounds = NULL;
	size_t *heap = NULL, nb = 0, nh = 0, i, k, next = 0;
	bool overlap = false;
	int err = 0;

	r = calloc(n ? 2 * n : 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*out = r;
	*cnt = 0;
	for (i = 1; i < n && !overlap; i++)
		overlap = e[i].start < e[i - 1].end;
	if (!overlap) {
		/* The usual file: every entry is one range. */
		for (i = 0; i < n; i++)
			add_range(r, cnt, e[i].start, e[i].end, &e[i]);
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
			add_range(r, cnt, bounds[k], bounds[k + 1], &e[heap[0]]);
	}
cleanup:
	free(bounds);
	free(heap);
	return err;
}

/* Whether r keeps a line covering [start, end): some wanted address is in it. */
static bool reader_wants(const struct perf_map_reader *r, uint64_t start, uint64_t end)
{
	size_t i;

	if (!r->want)
		return true;
	i = lower_bound(r->want, r->want_cnt, start);
	return i < r->want_cnt && r->want[i] < end;
}

/* Appends name [s, s + len) to r->names; its offset in *off. 0 or -ENOMEM. */
static int reader_name(struct perf_map_reader *r, const char *s, size_t len, size_t *off)
{
	int err = array_grow((void **)&r->names, &r->names_cap, r->names_len + len + 1, 1, 4096);

	if (err)
		return err;
	memcpy(r->names + r->names_len, s, len);
	r->names[r->names_len + len] = '\0';
	*off = r->names_len;
	r->names_len += len + 1;
	return 0;
}

/*
 * The ranges of r's lines into t: sorted, overlaps resolved, only those holding a wanted
 * address (all without r->want), their names copied into t->names. r's lines get sorted.
 */
static int reader_table(struct perf_map_reader *r, struct perf_map_table *t)
{
	struct perf_map_range *ranges = NULL;
	size_t cnt = 0, i, k = 0, len = 0, cap = 0, prev = SIZE_MAX, prev_new = 0;
	char *names = NULL;
	int err;

	if (r->cnt) /* r->e is NULL for an empty map: qsort() must not get it */
		qsort(r->e, r->cnt, sizeof(*r->e), cmp_entry);
	err = build_ranges(r->e, r->cnt, &ranges, &cnt);
	if (err)
		goto cleanup;
	for (i = 0; i < cnt; i++) {
		struct perf_map_range *g = &ranges[i];
		const char *name = r->names + g->name;
		size_t n = strlen(name);

		if (!reader_wants(r, g->start, g->end))
			continue;
		/* The parts of one line share its name. */
		if (g->name != prev) {
			err = array_grow((void **)&names, &cap, len + n + 1, 1, 4096);
			if (err)
				goto cleanup;
			memcpy(names + len, name, n + 1);
			prev = g->name;
			prev_new = len;
			len += n + 1;
		}
		ranges[k] = *g;
		ranges[k++].name = prev_new;
	}
	t->ranges = ranges;
	t->cnt = k;
	t->names = names;
	t->bad_cnt = r->bad_cnt;
	ranges = NULL;
	names = NULL;
cleanup:
	free(ranges);
	free(names);
	return err;
}

/*
 * Drops the lines of r no wanted address needs: what is left are the ranges holding one (as
 * many as the addresses at most), as lines that come before every line still to be read.
 */
static int reader_compact(struct perf_map_reader *r)
{
	struct perf_map_table t = {};
	size_t i;
	int err;

	err = reader_table(r, &t);
	if (err)
		return err;
	for (i = 0; i < t.cnt; i++)
		r->e[i] = (struct perf_map_entry){ t.ranges[i].start, t.ranges[i].end,
						   t.ranges[i].base, t.ranges[i].name, i };
	r->cnt = t.cnt;
	free(r->names);
	r->names = t.names;
	r->names_len = r->names_cap = 0;
	for (i = 0; i < t.cnt; i++)
		r->names_len = max_t(size_t, r->names_len,
				     t.ranges[i].name + strlen(t.names + t.ranges[i].name) + 1);
	r->names_cap = r->names_len;
	t.names = NULL;
	free(t.ranges);
	return 0;
}

/* One line [s, end) (no newline) into r. 0 or -ENOMEM. */
static int reader_line(struct perf_map_reader *r, const char *s, const char *end)
{
	const char *name, *name_end;
	uint64_t start, stop;
	size_t off;
	int err;

	if (end == s || (end == s + 1 && *s == '\r'))
		return 0;
	if (!parse_line(s, end, &start, &stop, &name, &name_end)) {
		r->bad_cnt++;
		return 0;
	}
	if (!reader_wants(r, start, stop))
		return 0;
	if (r->want && r->cnt >= 2 * r->want_cnt + COMPACT_SLACK) {
		err = reader_compact(r);
		if (err)
			return err;
	}
	err = array_grow((void **)&r->e, &r->cap, r->cnt + 1, sizeof(*r->e), 256) ?:
		      reader_name(r, name, name_end - name, &off);
	if (err)
		return err;
	r->e[r->cnt++] = (struct perf_map_entry){ start, stop, start, off, r->seq++ };
	return 0;
}

/*
 * Reads fd's lines into r, at most max bytes (*got: how many), READ_CHUNK at a time: a line
 * longer is malformed; a last line without '\n' is taken as still being written (a JIT appends
 * while we read) and skipped. 0, -ECANCELED (the reader thread stops), or a negative errno.
 */
static int reader_read(struct perf_map_reader *r, int fd, uint64_t max, uint64_t *got)
{
	char *buf, *p, *nl, *end;
	size_t len = 0, room;
	bool skipping = false;
	ssize_t n;
	int err = 0;

	*got = 0;
	buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		room = min_t(uint64_t, READ_CHUNK - len, max - *got);
		if (!room)
			break;
		n = read(fd, buf + len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		*got += n;
		end = buf + len + n;
		for (p = buf; !err && (nl = memchr(p, '\n', end - p)); p = nl + 1) {
			if (!skipping)
				err = reader_line(r, p, nl);
			skipping = false;
		}
		if (err)
			break;
		len = end - p;
		memmove(buf, p, len);
		if (len == READ_CHUNK) {
			/* Longer than a chunk: skipped up to its newline. */
			r->bad_cnt += !skipping;
			skipping = true;
			len = 0;
		}
		if (worker__stopping(&reader)) {
			err = -ECANCELED;
			break;
		}
	}
	free(buf);
	return err;
}

/*
 * Reads regular file fd (fstat'ed as st) into t: the lines covering some address of want[0..n)
 * (sorted), or every line when want is NULL; at most max_sz bytes (t->not_read: the rest).
 * t->want is left to the caller. 0 or a negative errno (-EINVAL: not a regular file).
 */
static int read_fd(int fd, const struct stat *st, const uint64_t *want, size_t want_cnt,
		   struct perf_map_table *t)
{
	struct perf_map_reader r = { .want = want, .want_cnt = want_cnt };
	uint64_t got = 0;
	int err;

	*t = (struct perf_map_table){};
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	err = reader_read(&r, fd, max_sz, &got) ?: reader_table(&r, t);
	__atomic_add_fetch(&stats.reads, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&stats.bytes_read, got, __ATOMIC_RELAXED);
	if (!err && got == max_sz && (uint64_t)st->st_size > max_sz) {
		t->not_read = st->st_size - max_sz;
		__atomic_add_fetch(&stats.capped_reads, 1, __ATOMIC_RELAXED);
		stat_max(&stats.max_not_read, t->not_read);
	}
	free(r.e);
	free(r.names);
	if (err)
		table_free(t);
	return err;
}

/* A map of every line of fd. NULL with errno. */
static struct perf_map *read_all(int fd, const struct stat *st)
{
	struct perf_map *m = map_new();
	int err;

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->closing = true;
	err = read_fd(fd, st, NULL, 0, &m->cur);
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
	m = read_all(fd, &st);
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
		m = read_all(fd, &st);
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

static void read_job(struct worker_job *job, bool cancelled);

/* Under m->lock: hands m to the reader thread, which holds a reference until the read ends. */
static void queue_read(struct perf_map *m)
{
	m->queued = true;
	m->queued_gen = m->want_gen;
	m->job.run = read_job;
	perf_map__get(m);
	if (worker__queue(&reader, &m->job)) {
		m->queued = false;
		/* The caller holds a reference: this is not the last. */
		__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
	}
}

struct perf_map *perf_map__open_process(pid_t pid, uint64_t now_ns)
{
	struct perf_map *m = map_new();

	if (!m)
		return NULL;
	/* A process already gone (or a /proc we cannot read) leaves an empty map. */
	if (locate(m, pid))
		m->closing = true;
	m->checked_ns = now_ns;
	return m;
}

void perf_map__want(struct perf_map *m, uint64_t addr, uint64_t now_ns)
{
	size_t i;

	pthread_mutex_lock(&m->lock);
	if (m->closing)
		goto out;
	i = lower_bound(m->want, m->want_cnt, addr);
	if (i == m->want_cnt || m->want[i] != addr) {
		if (m->want_cnt >= BPFPROF_PERF_MAP_WANT_MAX ||
		    array_grow((void **)&m->want, &m->want_cap, m->want_cnt + 1, sizeof(*m->want),
			       64)) {
			__atomic_add_fetch(&stats.addrs_dropped, 1, __ATOMIC_RELAXED);
			goto out;
		}
		memmove(m->want + i + 1, m->want + i, (m->want_cnt - i) * sizeof(*m->want));
		m->want[i] = addr;
		m->want_cnt++;
		m->want_gen++;
	}
	if (!m->queued && m->want_gen != m->queued_gen && now_ns >= m->next_read_ns)
		queue_read(m);
out:
	pthread_mutex_unlock(&m->lock);
}

/*
 * Reads m's file in the reader thread for want[0..n) (taken by the table made) at want_gen
 * gen: when it changed (identity) or addresses were added since the last read. Entries read
 * before stay when the file is gone or cannot be read (a JIT removes its map at exit); a file
 * refused (owner, type) is remembered by its identity, so it is not read again until it
 * changes. The table, or false (*want freed).
 */
static bool read_process(struct perf_map *m, uint64_t *want, size_t n, uint64_t gen,
			 struct perf_map_table *t)
{
	struct stat st;
	int fd, err;

	fd = open_checked(m, &st);
	if (fd < 0) {
		if (fd == -EPERM || fd == -EINVAL)
			set_id(m, &st);
		else
			m->have_id = false;
		goto fail;
	}
	if (same_id(m, &st) && m->read_gen == gen) {
		close(fd);
		goto fail;
	}
	err = read_fd(fd, &st, want, n, t);
	close(fd);
	if (err) {
		if (err != -ENOMEM && err != -ECANCELED)
			set_id(m, &st);
		goto fail;
	}
	set_id(m, &st);
	m->read_gen = gen;
	t->want = want;
	t->want_cnt = n;
	return true;
fail:
	free(want);
	return false;
}

/* The reader thread's job: reads m (read_process()) for the addresses wanted by now, hands the
 * table to perf_map__sync(), then reads again or lets m's root go (perf_map__close()). */
static void read_job(struct worker_job *job, bool cancelled)
{
	struct perf_map *m = (void *)((char *)job - offsetof(struct perf_map, job));
	struct perf_map_table t = {};
	uint64_t *want = NULL, gen, t0 = now_ns();
	bool final, again, done;
	size_t n;

	pthread_mutex_lock(&m->lock);
	m->again = false;
	final = m->closing;
	n = m->want_cnt;
	gen = m->want_gen;
	if (!cancelled && n && (want = malloc(n * sizeof(*want))))
		memcpy(want, m->want, n * sizeof(*want));
	pthread_mutex_unlock(&m->lock);

	done = want && read_process(m, want, n, gen, &t);

	pthread_mutex_lock(&m->lock);
	if (done) {
		table_free(&m->next);
		m->next = t;
		m->have_next = true;
		m->load_cnt++;
	}
	/* A perf_map__refresh() or perf_map__close() during the read: once more. */
	again = !cancelled && (m->again || (m->closing && !final));
	if (!again) {
		m->queued = false;
		m->next_read_ns =
			now_ns() + max_t(uint64_t, REREAD_MIN_NS, READ_SPACING * (now_ns() - t0));
		if (m->closing && m->root_fd >= 0) {
			close(m->root_fd);
			m->root_fd = -1;
		}
	}
	pthread_mutex_unlock(&m->lock);
	if (again && !worker__queue(&reader, job))
		return;
	if (again) {
		pthread_mutex_lock(&m->lock);
		m->queued = false;
		pthread_mutex_unlock(&m->lock);
	}
	perf_map__put(m);
}

void perf_map__refresh(struct perf_map *m, uint64_t now_ns)
{
	m->checked_ns = now_ns;
	pthread_mutex_lock(&m->lock);
	if (!m->closing && m->want_cnt) {
		if (m->queued)
			m->again = true;
		else
			queue_read(m);
	}
	pthread_mutex_unlock(&m->lock);
}

void perf_map__close(struct perf_map *m, uint64_t now_ns)
{
	m->checked_ns = now_ns;
	pthread_mutex_lock(&m->lock);
	if (m->closing)
		goto out;
	m->closing = true;
	/* A running read sees closing when it ends and reads once more. */
	if (m->queued)
		goto out;
	if (m->want_cnt) {
		queue_read(m);
	} else if (m->root_fd >= 0) {
		/* Nothing to name: no read. */
		close(m->root_fd);
		m->root_fd = -1;
	}
out:
	pthread_mutex_unlock(&m->lock);
}

void perf_map__sync(struct perf_map *m)
{
	pthread_mutex_lock(&m->lock);
	if (m->have_next) {
		table_free(&m->cur);
		m->cur = m->next;
		m->next = (struct perf_map_table){};
		m->have_next = false;
	}
	pthread_mutex_unlock(&m->lock);
}

unsigned int perf_map__wait(uint64_t timeout_ns, bool *interrupted)
{
	return worker__wait(&reader, now_ns() + timeout_ns, interrupted);
}

void perf_map__shutdown(void)
{
	worker__shutdown(&reader);
}

bool perf_map__closed(const struct perf_map *m)
{
	return m->closing;
}

uint64_t perf_map__checked_ns(const struct perf_map *m)
{
	return m->checked_ns;
}

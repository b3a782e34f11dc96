/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h: tiny helpers only. */
#ifndef BPFPROF_UTIL_H
#define BPFPROF_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(). */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* CLOCK_REALTIME, ns since the epoch (timestamps in outputs, not durations). */
static inline int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* FNV-1a over bytes: hash tables keyed by small structs and strings. */
static inline uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	if (!h)
		h = 1469598103934665603ull;
	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

/*
 * Makes room for need elements of elem bytes in *arr (capacity *cap, doubled from first_cap).
 * Returns 0 or -ENOMEM (the array is left as it was).
 */
static inline int array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first_cap)
{
	size_t new_cap = *cap ? *cap : first_cap;
	void *tmp;

	if (need <= *cap)
		return 0;
	while (new_cap < need)
		new_cap *= 2;
	tmp = realloc(*arr, new_cap * elem);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = new_cap;
	return 0;
}

/* The value of hex digit c, or -1. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Reads the hex digits at *p (no "0x"), up to a non-hex character or end (NULL: up to the
 * NUL), into *val and advances *p past them: /proc/PID/maps, kallsyms, perf maps. Returns 0, or
 * -EINVAL when there is no digit or the value overflows 64 bits (*p and *val unchanged).
 */
static inline int hex_parse(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	for (; (!end || s < end) && (d = hex_digit(*s)) >= 0; s++) {
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (s == *p)
		return -EINVAL;
	*val = v;
	*p = s;
	return 0;
}

/* Writes n bytes as 2n lowercase hex digits and a NUL to out (2n + 1 bytes): build-ids. */
static inline void hex_encode(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

#endif /* BPFPROF_UTIL_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h: tiny helpers only. */
#ifndef BPFPROF_UTIL_H
#define BPFPROF_UTIL_H

#include <stdint.h>
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

#endif /* BPFPROF_UTIL_H */

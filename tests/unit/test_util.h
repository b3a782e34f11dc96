/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* test_util.h: helpers shared by the cmocka unit tests (include after cmocka.h). */
#ifndef BPFPROF_TEST_UTIL_H
#define BPFPROF_TEST_UTIL_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

/* The path of fixture file name ($FIXTURES_DIR overrides the build's). Static buffer. */
static inline const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *dir = getenv("FIXTURES_DIR") ?: FIXTURES_DIR;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A lookup gave got+got_off for addr: name+off expected, or no symbol when name is NULL. */
static inline void assert_symbol(uint64_t addr, const char *got, uint64_t got_off,
				 const char *name, uint64_t off)
{
	if (!name) {
		if (got)
			fail_msg("%#llx: want no symbol, got %s+%#llx", (unsigned long long)addr,
				 got, (unsigned long long)got_off);
		return;
	}
	if (!got)
		fail_msg("%#llx: want %s+%#llx, got none", (unsigned long long)addr, name,
			 (unsigned long long)off);
}

#endif /* BPFPROF_TEST_UTIL_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pprof_util.h: helpers of the unit tests that read back a pprof profile (test_output_pprof,
 * test_utf8): an aggregate's string index, and gunzip of the written file. cmocka asserts. */
#ifndef BPFPROF_TEST_PPROF_UTIL_H
#define BPFPROF_TEST_PPROF_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>
#include "profile/aggregate.h"

/* The index of s in agg's string table (asserted). */
static uint32_t str(struct aggregate *agg, const char *s)
{
	int64_t v = aggregate__string(agg, s);

	assert_true(v >= 0);
	return v;
}

/* gunzip (RFC 1952) into a malloc'd buffer. */
static uint8_t *gunzip(const void *gz, size_t gz_sz, size_t *out_sz)
{
	z_stream zs = {};
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (uint8_t *)gz;
	zs.avail_in = gz_sz;
	zs.next_out = out;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*out_sz = zs.total_out;
	inflateEnd(&zs);
	return out;
}

#endif /* BPFPROF_TEST_PPROF_UTIL_H */

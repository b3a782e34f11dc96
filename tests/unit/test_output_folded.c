// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_output_folded.c: aggregation and the folded stacks text, byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "aggregate.h"
#include "output_file.h"
#include "output_folded.h"

static uint32_t id(struct aggregate *agg, const char *name, enum frame_kind kind)
{
	int64_t v = aggregate__intern(agg, name, kind);

	assert_true(v >= 0);
	return v;
}

static char *folded(struct aggregate *agg)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *mem = open_memstream(&buf, &sz);

	assert_int_equal(output_folded__write(agg, mem), 0);
	fclose(mem);
	return buf;
}

static void test_sorted_summed_suffixed(void **state)
{
	struct aggregate *agg = aggregate__new();
	uint32_t a[4], b[3];
	char *text;

	a[0] = id(agg, "my prog", FRAME_COMM);
	a[1] = id(agg, "main", FRAME_USER);
	a[2] = id(agg, "read", FRAME_USER);
	a[3] = id(agg, "vfs_read", FRAME_KERNEL);
	b[0] = a[0];
	b[1] = a[1];
	b[2] = id(agg, "std::map<int, int>::find;x", FRAME_USER);
	/* Interning is stable, and a kernel and a user frame of one name are two names. */
	assert_int_equal(id(agg, "main", FRAME_USER), a[1]);
	assert_int_not_equal(id(agg, "main", FRAME_KERNEL), a[1]);
	assert_int_equal(aggregate__add(agg, a, 4, 2), 0);
	assert_int_equal(aggregate__add(agg, b, 3, 1), 0);
	assert_int_equal(aggregate__add(agg, a, 4, 3), 0);
	assert_int_equal(aggregate__stacks(agg), 2);
	assert_int_equal(aggregate__samples(agg), 6);
	text = folded(agg);
	assert_string_equal(text, "my_prog;main;read;vfs_read_[k] 5\n"
				  "my_prog;main;std::map<int, int>::find:x 1\n");
	free(text);
	aggregate__free(agg);
}

static void test_control_chars(void **state)
{
	struct aggregate *agg = aggregate__new();
	uint32_t s[2];
	char *text;

	s[0] = id(agg, "a\tb", FRAME_COMM);
	s[1] = id(agg, "f\nx", FRAME_USER);
	assert_int_equal(aggregate__add(agg, s, 2, 1), 0);
	text = folded(agg);
	assert_string_equal(text, "a?b;f?x 1\n");
	free(text);
	aggregate__free(agg);
}

static void test_output_file_atomic(void **state)
{
	char dir[] = "/tmp/bpfprof-test-XXXXXX", path[64], buf[16] = {};
	struct output_file of;
	struct stat st;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
	assert_int_equal(output_file__open(&of, path), 0);
	fputs("new", of.fp);
	/* Nothing at the final path until the commit. */
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(output_file__commit(&of), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "new");
	/* An aborted write leaves the old file and no temp file. */
	assert_int_equal(output_file__open(&of, path), 0);
	fputs("half", of.fp);
	output_file__abort(&of);
	f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "new");
	unlink(path);
	assert_int_equal(rmdir(dir), 0);	/* fails if a temp file was left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_summed_suffixed),
		cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_output_file_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

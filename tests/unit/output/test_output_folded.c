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
#include "profile/aggregate.h"
#include "output/output_folded.h"
#include "runtime/jit/jit.h"

static uint32_t str(struct aggregate *agg, const char *s)
{
	int64_t v = aggregate__string(agg, s);

	assert_true(v >= 0);
	return v;
}

/* A location named when added (no symbolizer needed). */
static uint32_t loc(struct aggregate *agg, const char *name, const struct frame_kind *kind)
{
	int64_t v = aggregate__location(agg, kind, NULL, 0, str(agg, name));

	assert_true(v >= 0);
	return v;
}

static char *folded(struct aggregate *agg)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *mem = open_memstream(&buf, &sz);

	assert_int_equal(output_folded__write(agg, mem, NULL), 0);
	fclose(mem);
	return buf;
}

static void test_sorted_summed_suffixed(void **state)
{
	struct aggregate *agg = aggregate__new();
	uint32_t a[3], b[2], comm;
	char *text;

	comm = str(agg, "my prog");
	a[0] = loc(agg, "main", FRAME_USER);
	a[1] = loc(agg, "read", FRAME_USER);
	a[2] = loc(agg, "vfs_read", FRAME_KERNEL);
	b[0] = a[0];
	b[1] = loc(agg, "std::map<int, int>::find;x", FRAME_JIT);
	/* Locations are stable, and a kernel and a user frame of one name are two locations. */
	assert_int_equal(loc(agg, "main", FRAME_USER), a[0]);
	assert_int_not_equal(loc(agg, "main", FRAME_KERNEL), a[0]);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 2 }, a, 3), 0);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 1 }, b, 2), 0);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 3 }, a, 3), 0);
	/* Another thread: its own sample key, but the same folded line. */
	assert_int_equal(
		aggregate__add(agg, 1, 2, comm, SAMPLE_CPU, &(struct sample_weight){ 4 }, a, 3), 0);
	assert_int_equal(aggregate__stacks(agg), 3);
	assert_int_equal(aggregate__samples(agg), 10);
	text = folded(agg);
	assert_string_equal(text, "my_prog;main;read;vfs_read_[k] 9\n"
				  "my_prog;main;std::map<int, int>::find:x_[j] 1\n");
	free(text);
	aggregate__free(agg);
}

/* A location's lines come innermost first; folded shows the real function, then what it
 * inlined, outer to inner. Unnamed locations without a symbolizer become "[unknown]". */
static void test_inline_lines(void **state)
{
	struct aggregate *agg = aggregate__new();
	struct agg_line lines[3];
	uint32_t l[2], comm;
	int64_t v;
	char *text;

	comm = str(agg, "p");
	v = aggregate__location(agg, FRAME_USER, NULL, 0x1000, AGG_NO_NAME);
	assert_true(v >= 0);
	l[0] = v;
	v = aggregate__location(agg, FRAME_USER, NULL, 0x2000, AGG_NO_NAME);
	assert_true(v >= 0);
	l[1] = v;
	lines[0] = (struct agg_line){ .function = str(agg, "leaf"), .line = 3 };
	lines[1] = (struct agg_line){ .function = str(agg, "middle"), .line = 2 };
	lines[2] = (struct agg_line){ .function = str(agg, "outer"), .line = 1 };
	assert_int_equal(aggregate__set_lines(agg, l[1], lines, 3), 0);
	assert_int_equal(
		aggregate__add(agg, 7, 7, comm, SAMPLE_CPU, &(struct sample_weight){ 1 }, l, 2), 0);
	text = folded(agg);
	assert_string_equal(text, "p;[unknown];outer;middle_[i];leaf_[i] 1\n");
	free(text);
	aggregate__free(agg);
}

static void test_control_chars(void **state)
{
	struct aggregate *agg = aggregate__new();
	uint32_t s[1], comm;
	char *text;

	comm = str(agg, "a\tb");
	s[0] = loc(agg, "f\nx", FRAME_USER);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 1 }, s, 1), 0);
	text = folded(agg);
	assert_string_equal(text, "a?b;f?x 1\n");
	free(text);
	aggregate__free(agg);
}

/* What the writer reports is what it wrote: 2 lines holding 10 samples, although the
 * aggregate holds 3 stacks (two threads' stacks fold into one line). */
static void test_counts_lines_written(void **state)
{
	struct aggregate *agg = aggregate__new();
	struct output_counts c = { 0 };
	uint32_t a[2], b[1], comm;
	char *buf = NULL;
	size_t sz = 0, lines = 0;
	FILE *mem = open_memstream(&buf, &sz);

	comm = str(agg, "p");
	a[0] = loc(agg, "main", FRAME_USER);
	a[1] = loc(agg, "work", FRAME_USER);
	b[0] = a[0];
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 3 }, a, 2), 0);
	assert_int_equal(
		aggregate__add(agg, 1, 2, comm, SAMPLE_CPU, &(struct sample_weight){ 6 }, a, 2), 0);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 1 }, b, 1), 0);
	assert_int_equal(aggregate__stacks(agg), 3);
	assert_int_equal(output_folded__write(agg, mem, &c), 0);
	fclose(mem);
	for (size_t i = 0; i < sz; i++)
		lines += buf[i] == '\n';
	assert_int_equal(lines, 2);
	assert_int_equal(c.stacks, lines);
	assert_int_equal(c.samples, 10);
	free(buf);
	aggregate__free(agg);
}

/* Off-CPU stacks count microseconds (rounded), apart from a CPU stack of the same frames; with
 * both kinds a sample counts its period and the off-CPU stacks get [off-cpu]. */
static void test_off_cpu(void **state)
{
	struct aggregate *agg = aggregate__new();
	uint32_t a[2], comm;
	char *text;

	comm = str(agg, "app");
	a[0] = loc(agg, "main", FRAME_USER);
	a[1] = loc(agg, "schedule", FRAME_KERNEL);
	assert_int_equal(aggregate__add(agg, 1, 1, comm, SAMPLE_OFF_CPU,
					&(struct sample_weight){ 3, 1500400 }, a, 2),
			 0);
	assert_int_equal(aggregate__add(agg, 1, 1, comm, SAMPLE_OFF_CPU,
					&(struct sample_weight){ 1, 1100 }, a, 2),
			 0);
	assert_true(aggregate__has_off_cpu(agg));
	assert_false(aggregate__mixed(agg));
	assert_int_equal(aggregate__weight(agg, SAMPLE_OFF_CPU).ns, 1501500);
	assert_int_equal(aggregate__weight(agg, SAMPLE_OFF_CPU).count, 4);
	text = folded(agg);
	assert_string_equal(text, "app;main;schedule_[k] 1502\n");
	free(text);

	/* 2 samples at 1 ms each: 2000 us, a stack of their own. */
	aggregate__set_period(agg, 1000000);
	assert_int_equal(
		aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 2 }, a, 2), 0);
	assert_true(aggregate__mixed(agg));
	assert_int_equal(aggregate__stacks(agg), 2);
	text = folded(agg);
	assert_string_equal(text, "app;[off-cpu];main;schedule_[k] 1502\n"
				  "app;main;schedule_[k] 2000\n");
	free(text);
	aggregate__free(agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_summed_suffixed),
		cmocka_unit_test(test_off_cpu),
		cmocka_unit_test(test_inline_lines),
		cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_counts_lines_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

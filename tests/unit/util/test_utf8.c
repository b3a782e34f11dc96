// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_utf8.c: names with bytes that are not UTF-8 (a corrupted .gopclntab's, a symbol's, a
 * comm) enter the aggregate as valid UTF-8, each such byte U+FFFD, and so reach the pprof
 * string table (proto3 strings must be UTF-8: a decoder refuses the whole profile otherwise);
 * valid UTF-8 (non-ASCII names and file names) passes unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "output/output_pprof.h"
#include "profile/aggregate.h"
#include "util/utf8.h"
#include "profile.pb-c.h"
#include "pprof_util.h"

#define FFFD UTF8_REPLACEMENT

/* Valid UTF-8 of every length, as C++, Rust and Go names and file names carry it. */
static const char *const valid[] = {
	"",
	"main.leafSpin",
	"caf\xc3\xa9::na\xc3\xafve",				/* U+00E9, U+00EF */
	"\xe5\x87\xbd\xe6\x95\xb0",				/* U+51FD U+6570 */
	"fire_\xf0\x9f\x94\xa5",				/* U+1F525 */
	"\xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf",		/* U+D7FF U+E000 U+FFFF */
	"\xf4\x8f\xbf\xbf \xf0\x90\x80\x80 \xe0\xa0\x80 \xc2\x80", /* U+10FFFF, the smallest */
	"/home/jos\xc3\xa9/src/main.go",
};

/* Invalid bytes and what each becomes. */
static const char *const invalid[][2] = {
	{ "bad\xff\xfename", "bad" FFFD FFFD "name" },
	{ "\x80lone", FFFD "lone" },				   /* a continuation byte */
	{ "\xc0\xaf", FFFD FFFD },				   /* overlong '/' */
	{ "\xe0\x80\xaf", FFFD FFFD FFFD },			   /* overlong, 3 bytes */
	{ "\xed\xa0\x80x", FFFD FFFD FFFD "x" },		   /* surrogate U+D800 */
	{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD },		   /* above U+10FFFF */
	{ "\xf8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD },	   /* 5-byte form */
	{ "cut\xe2\x82", "cut" FFFD FFFD },			   /* truncated at the end */
	{ "\xe2\x82(\xc3\xa9", FFFD FFFD "(\xc3\xa9" },		   /* then a valid one */
};

static void test_helper(void **state)
{
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		assert_true(utf8__valid(valid[i]));
		s = utf8__sanitize(valid[i]);
		assert_non_null(s);
		assert_string_equal(s, valid[i]);
		free(s);
	}
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		assert_false(utf8__valid(invalid[i][0]));
		s = utf8__sanitize(invalid[i][0]);
		assert_non_null(s);
		assert_string_equal(s, invalid[i][1]);
		assert_true(utf8__valid(s));
		free(s);
	}
}

/* The aggregate's strings, and the pprof profile's function names and file names. */
static void test_aggregate_pprof(void **state)
{
	struct pprof_opts o = { .freq_hz = 100 };
	struct aggregate *agg = aggregate__new();
	const Perftools__Profiles__Function *f;
	struct agg_line lines[2];
	uint32_t loc, comm;
	size_t gz_sz, sz, i;
	void *gz = NULL;
	uint8_t *raw;
	Perftools__Profiles__Profile *p;
	int64_t v;

	(void)state;
	assert_non_null(agg);
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		assert_string_equal(aggregate__str(agg, str(agg, valid[i])), valid[i]);
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		assert_string_equal(aggregate__str(agg, str(agg, invalid[i][0])), invalid[i][1]);

	/* A comm with a stray byte, an invalid function in an invalid file, inlined into a valid
	 * one in a valid non-ASCII file. */
	comm = str(agg, "w\xfforker");
	v = aggregate__location(agg, FRAME_USER, NULL, 0x10, AGG_NO_NAME);
	assert_true(v >= 0);
	loc = v;
	lines[0] = (struct agg_line){ str(agg, "main.\xc0\xafleaf"), str(agg, "x\xfe.go"), 7 };
	lines[1] = (struct agg_line){ str(agg, valid[2]), str(agg, valid[7]), 20 };
	assert_int_equal(aggregate__set_lines(agg, loc, lines, 2), 0);
	assert_int_equal(aggregate__add(agg, 10, 11, comm, SAMPLE_CPU, &(struct sample_weight){ 3 },
					&loc, 1),
			 0);

	assert_int_equal(output_pprof__encode(agg, &o, &gz, &gz_sz), 0);
	raw = gunzip(gz, gz_sz, &sz);
	p = perftools__profiles__profile__unpack(NULL, sz, raw);
	assert_non_null(p);
	for (i = 0; i < p->n_string_table; i++)
		assert_true(utf8__valid(p->string_table[i]));
	assert_int_equal(p->n_location, 1);
	assert_int_equal(p->location[0]->n_line, 2);
	f = p->function[p->location[0]->line[0]->function_id - 1];
	assert_string_equal(p->string_table[f->name], "main." FFFD FFFD "leaf");
	assert_string_equal(p->string_table[f->filename], "x" FFFD ".go");
	f = p->function[p->location[0]->line[1]->function_id - 1];
	assert_string_equal(p->string_table[f->name], valid[2]);
	assert_string_equal(p->string_table[f->filename], valid[7]);
	for (i = 0; i < p->sample[0]->n_label; i++) {
		if (!strcmp(p->string_table[p->sample[0]->label[i]->key], "comm"))
			assert_string_equal(p->string_table[p->sample[0]->label[i]->str],
					    "w" FFFD "orker");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	aggregate__free(agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helper),
		cmocka_unit_test(test_aggregate_pprof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

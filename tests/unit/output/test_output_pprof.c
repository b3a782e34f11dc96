// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_output_pprof.c: the pprof encoding, decoded back with protobuf-c: sample order (leaf
 * first), values, labels, inline lines (innermost first), functions and their system names,
 * strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "profile/aggregate.h"
#include "output/output_pprof.h"
#include "profile.pb-c.h"
#include "pprof_util.h"

typedef Perftools__Profiles__Profile Profile;

static const char *s_of(const Profile *p, int64_t id)
{
	assert_true(id >= 0 && (size_t)id < p->n_string_table);
	return p->string_table[id];
}

static void test_roundtrip(void **state)
{
	struct pprof_opts o = { .freq_hz = 100, .time_ns = 1234, .duration_ns = 5000000000ll };
	struct aggregate *agg = aggregate__new();
	struct agg_line lines[2];
	uint32_t locs[2], comm;
	size_t gz_sz, sz, i;
	void *gz = NULL;
	uint8_t *raw;
	Profile *p;
	int64_t v;

	comm = str(agg, "worker 1");
	v = aggregate__location(agg, FRAME_USER, NULL, 0, str(agg, "main"));
	assert_true(v >= 0);
	locs[0] = v;
	v = aggregate__location(agg, FRAME_USER, NULL, 0, AGG_NO_NAME);
	assert_true(v >= 0);
	locs[1] = v;
	/* Innermost first: inlined_leaf was inlined into outer at outer.c:20. */
	lines[0] = (struct agg_line){ str(agg, "inlined_leaf"), str(agg, "leaf.h"), 7 };
	lines[1] = (struct agg_line){ str(agg, "outer"), str(agg, "outer.c"), 20 };
	assert_int_equal(aggregate__set_lines(agg, locs[1], lines, 2), 0);
	assert_int_equal(aggregate__add(agg, 10, 11, comm, SAMPLE_CPU, &(struct sample_weight){ 3 },
					locs, 2),
			 0);

	assert_int_equal(output_pprof__encode(agg, &o, &gz, &gz_sz), 0);
	raw = gunzip(gz, gz_sz, &sz);
	p = perftools__profiles__profile__unpack(NULL, sz, raw);
	assert_non_null(p);

	assert_string_equal(s_of(p, 0), "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(s_of(p, p->sample_type[0]->type), "samples");
	assert_string_equal(s_of(p, p->sample_type[0]->unit), "count");
	assert_string_equal(s_of(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(s_of(p, p->sample_type[1]->unit), "nanoseconds");
	assert_int_equal(p->period, 10000000);
	assert_int_equal(p->time_nanos, 1234);
	assert_int_equal(p->duration_nanos, 5000000000ll);

	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->n_value, 2);
	assert_int_equal(p->sample[0]->value[0], 3);
	assert_int_equal(p->sample[0]->value[1], 30000000);
	/* Leaf first: the location with the inline lines, then main. */
	assert_int_equal(p->sample[0]->n_location_id, 2);
	assert_int_equal(p->sample[0]->location_id[0], locs[1] + 1);
	assert_int_equal(p->sample[0]->location_id[1], locs[0] + 1);
	assert_int_equal(p->sample[0]->n_label, 3);
	for (i = 0; i < 3; i++) {
		const char *key = s_of(p, p->sample[0]->label[i]->key);

		if (!strcmp(key, "pid"))
			assert_int_equal(p->sample[0]->label[i]->num, 10);
		else if (!strcmp(key, "tid"))
			assert_int_equal(p->sample[0]->label[i]->num, 11);
		else if (!strcmp(key, "comm"))
			assert_string_equal(s_of(p, p->sample[0]->label[i]->str), "worker 1");
		else
			fail_msg("unexpected label %s", key);
	}

	/* Location ids are 1-based; the inline location has two lines, innermost first, each
	 * naming its function and file. */
	assert_int_equal(p->n_location, 2);
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Function *f;

		assert_int_equal(l->id, i + 1);
		if (l->id != locs[1] + 1)
			continue;
		assert_int_equal(l->n_line, 2);
		assert_int_equal(l->line[0]->line, 7);
		assert_int_equal(l->line[1]->line, 20);
		f = p->function[l->line[0]->function_id - 1];
		assert_int_equal(f->id, l->line[0]->function_id);
		assert_string_equal(s_of(p, f->name), "inlined_leaf");
		assert_string_equal(s_of(p, f->filename), "leaf.h");
		f = p->function[l->line[1]->function_id - 1];
		assert_string_equal(s_of(p, f->name), "outer");
		assert_string_equal(s_of(p, f->filename), "outer.c");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	aggregate__free(agg);
}

/*
 * Function.name is the name the other outputs show, Function.system_name the symbol as the file
 * spells it (mangled): two overloads that share a short name stay two functions, each with its
 * own system_name; a name without one (C) is its own system_name.
 */
static void test_system_name(void **state)
{
	static const char *const mangled[2] = { "_ZN2ns1fEi", "_ZN2ns1fEl" };
	struct pprof_opts o = { .freq_hz = 100 };
	struct aggregate *agg = aggregate__new();
	const Perftools__Profiles__Function *f;
	struct agg_line line;
	uint32_t locs[3], comm;
	size_t gz_sz, sz, i, seen = 0;
	void *gz = NULL;
	uint8_t *raw;
	Profile *p;
	int64_t v;

	comm = str(agg, "x");
	v = aggregate__location(agg, FRAME_USER, NULL, 0, str(agg, "main"));
	assert_true(v >= 0);
	locs[0] = v;
	for (i = 0; i < 2; i++) {
		/* Two locations (kernel ones: no ELF file needed), one name. */
		v = aggregate__location(agg, FRAME_KERNEL, NULL, 0x1000 + i, AGG_NO_NAME);
		assert_true(v >= 0);
		locs[1 + i] = v;
		line = (struct agg_line){ .function = str(agg, "ns::f"),
					  .system_name = str(agg, mangled[i]) };
		assert_int_equal(aggregate__set_lines(agg, v, &line, 1), 0);
	}
	assert_int_equal(aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 1 },
					locs, 2),
			 0);
	locs[1] = locs[2];
	assert_int_equal(aggregate__add(agg, 1, 1, comm, SAMPLE_CPU, &(struct sample_weight){ 1 },
					locs, 2),
			 0);

	assert_int_equal(output_pprof__encode(agg, &o, &gz, &gz_sz), 0);
	raw = gunzip(gz, gz_sz, &sz);
	p = perftools__profiles__profile__unpack(NULL, sz, raw);
	assert_non_null(p);
	assert_int_equal(p->n_function, 3);
	for (i = 0; i < p->n_function; i++) {
		f = p->function[i];
		if (!strcmp(s_of(p, f->name), "main")) {
			assert_string_equal(s_of(p, f->system_name), "main");
			continue;
		}
		assert_string_equal(s_of(p, f->name), "ns::f");
		if (!strcmp(s_of(p, f->system_name), mangled[0]))
			seen |= 1;
		else if (!strcmp(s_of(p, f->system_name), mangled[1]))
			seen |= 2;
		else
			fail_msg("ns::f with system_name %s", s_of(p, f->system_name));
	}
	assert_int_equal(seen, 3);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	aggregate__free(agg);
}

static bool only_pid_10(const struct agg_stack *st, void *arg)
{
	return st->pid == 10;
}

/* keep(): the other process's sample and the location only it uses are left out. */
static void test_keep(void **state)
{
	struct pprof_opts o = { .freq_hz = 99, .keep = only_pid_10 };
	struct aggregate *agg = aggregate__new();
	uint32_t a, b, comm;
	size_t gz_sz, sz;
	void *gz = NULL;
	uint8_t *raw;
	Profile *p;

	comm = str(agg, "x");
	a = aggregate__location(agg, FRAME_USER, NULL, 0, str(agg, "shared"));
	b = aggregate__location(agg, FRAME_USER, NULL, 0, str(agg, "other"));
	assert_int_equal(aggregate__add(agg, 10, 10, comm, SAMPLE_CPU, &(struct sample_weight){ 2 },
					&a, 1),
			 0);
	assert_int_equal(aggregate__add(agg, 20, 20, comm, SAMPLE_CPU, &(struct sample_weight){ 5 },
					&b, 1),
			 0);
	assert_int_equal(output_pprof__encode(agg, &o, &gz, &gz_sz), 0);
	raw = gunzip(gz, gz_sz, &sz);
	p = perftools__profiles__profile__unpack(NULL, sz, raw);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->value[0], 2);
	assert_int_equal(p->n_location, 1);
	assert_int_equal(p->sample[0]->location_id[0], 1);
	assert_string_equal(s_of(p, p->function[p->location[0]->line[0]->function_id - 1]->name),
			    "shared");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	aggregate__free(agg);
}

/* o->labels: a string label of every sample, after pid, tid and comm, and a comment each. */
static void test_profile_labels(void **state)
{
	static const struct pprof_label labels[] = {
		{ "service_name", "web" }, { "pod", "web-7f9c6-x2x4z" }, { "exe", "/usr/bin/web" },
	};
	struct pprof_opts o = { .freq_hz = 99, .comment = "bpfprof agent", .labels = labels,
				.labels_cnt = 3 };
	struct aggregate *agg = aggregate__new();
	uint32_t a, comm;
	size_t gz_sz, sz, i, j;
	void *gz = NULL;
	uint8_t *raw;
	Profile *p;

	comm = str(agg, "web");
	a = aggregate__location(agg, FRAME_USER, NULL, 0, str(agg, "main"));
	assert_int_equal(aggregate__add(agg, 10, 10, comm, SAMPLE_CPU, &(struct sample_weight){ 2 },
					&a, 1),
			 0);
	assert_int_equal(aggregate__add(agg, 10, 12, comm, SAMPLE_CPU, &(struct sample_weight){ 1 },
					&a, 1),
			 0);
	assert_int_equal(output_pprof__encode(agg, &o, &gz, &gz_sz), 0);
	raw = gunzip(gz, gz_sz, &sz);
	p = perftools__profiles__profile__unpack(NULL, sz, raw);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 2);
	for (i = 0; i < p->n_sample; i++) {
		assert_int_equal(p->sample[i]->n_label, 6);
		assert_string_equal(s_of(p, p->sample[i]->label[2]->key), "comm");
		for (j = 0; j < 3; j++) {
			const Perftools__Profiles__Label *l = p->sample[i]->label[3 + j];

			assert_string_equal(s_of(p, l->key), labels[j].key);
			assert_string_equal(s_of(p, l->str), labels[j].value);
			assert_int_equal(l->num, 0);
		}
	}
	assert_int_equal(p->n_comment, 4);
	assert_string_equal(s_of(p, p->comment[0]), "bpfprof agent");
	assert_string_equal(s_of(p, p->comment[1]), "service_name=web");
	assert_string_equal(s_of(p, p->comment[2]), "pod=web-7f9c6-x2x4z");
	assert_string_equal(s_of(p, p->comment[3]), "exe=/usr/bin/web");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	aggregate__free(agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_system_name),
		cmocka_unit_test(test_profile_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

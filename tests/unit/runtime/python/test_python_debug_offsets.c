// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_python_debug_offsets.c: py_debug_offsets__parse() and __from_elf() on _Py_DebugOffsets
 * written here, member by member, from each minor's list of members (CPython 3.13's
 * pycore_runtime.h, 3.14's and 3.15's pycore_debug_offsets.h), with the values Debian's 3.13.18,
 * 3.14.10 and 3.15.2 publish and garbage in every member bpfprof does not use: a good one reads
 * as written, a moved member is read where it was moved to; a bad cookie, a version not known,
 * every cut length, a free-threaded build, every member put past its structure and absurd
 * sizes are refused, with why saying why. Every buffer passed ends at a PROT_NONE page, so a
 * read past its length faults. Then an ELF file written with libelf: .PyRuntime found, read
 * from the _PyRuntime symbol, refused when NOBITS or absent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "runtime/python/python_debug_offsets.h"
#include "util/util.h"

/* Each minor's _Py_DebugOffsets after cookie, version and free_threaded: one string per group,
 * its name then its members', every one a uint64_t, in CPython's order. */
static const char *const v313[] = {
	"runtime_state size finalizing interpreters_head",
	"interpreter_state size id next threads_head gc imports_modules sysdict builtins ceval_gil "
	"gil_runtime_state gil_runtime_state_enabled gil_runtime_state_locked "
	"gil_runtime_state_holder",
	"thread_state size prev next interp current_frame thread_id native_thread_id "
	"datastack_chunk status",
	"interpreter_frame size previous executable instr_ptr localsplus owner",
	"code_object size filename name qualname linetable firstlineno argcount localsplusnames "
	"localspluskinds co_code_adaptive",
	"pyobject size ob_type",
	"type_object size tp_name tp_repr tp_flags",
	"tuple_object size ob_item ob_size",
	"list_object size ob_item ob_size",
	"dict_object size ma_keys ma_values",
	"float_object size ob_fval",
	"long_object size lv_tag ob_digit",
	"bytes_object size ob_size ob_sval",
	"unicode_object size state length asciiobject_size",
	"gc size collecting",
	NULL,
};

static const char *const v314[] = {
	"runtime_state size finalizing interpreters_head",
	"interpreter_state size id next threads_head threads_main gc imports_modules sysdict "
	"builtins ceval_gil gil_runtime_state gil_runtime_state_enabled gil_runtime_state_locked "
	"gil_runtime_state_holder code_object_generation tlbc_generation",
	"thread_state size prev next interp current_frame thread_id native_thread_id "
	"datastack_chunk status",
	"interpreter_frame size previous executable instr_ptr localsplus owner stackpointer "
	"tlbc_index",
	"code_object size filename name qualname linetable firstlineno argcount localsplusnames "
	"localspluskinds co_code_adaptive co_tlbc",
	"pyobject size ob_type",
	"type_object size tp_name tp_repr tp_flags",
	"tuple_object size ob_item ob_size",
	"list_object size ob_item ob_size",
	"set_object size used table mask",
	"dict_object size ma_keys ma_values",
	"float_object size ob_fval",
	"long_object size lv_tag ob_digit",
	"bytes_object size ob_size ob_sval",
	"unicode_object size state length asciiobject_size",
	"gc size collecting",
	"gen_object size gi_name gi_iframe gi_frame_state",
	"llist_node next prev",
	"debugger_support eval_breaker remote_debugger_support remote_debugging_enabled "
	"debugger_pending_call debugger_script_path debugger_script_path_size",
	NULL,
};

static const char *const v315[] = {
	"runtime_state size finalizing interpreters_head",
	"interpreter_state size id next threads_head threads_main gc imports_modules sysdict "
	"builtins ceval_gil gil_runtime_state gil_runtime_state_enabled gil_runtime_state_locked "
	"gil_runtime_state_holder code_object_generation tlbc_generation",
	"thread_state size prev next interp current_frame base_frame last_profiled_frame "
	"last_profiled_frame_seq thread_id native_thread_id datastack_chunk status holds_gil "
	"gil_requested current_exception exc_state",
	"err_stackitem exc_value",
	"interpreter_frame size previous executable instr_ptr localsplus owner stackpointer "
	"tlbc_index",
	"code_object size filename name qualname linetable firstlineno argcount localsplusnames "
	"localspluskinds co_code_adaptive co_tlbc",
	"pyobject size ob_type",
	"type_object size tp_name tp_repr tp_flags tp_basicsize tp_dictoffset",
	"heap_type_object size ht_cached_keys",
	"tuple_object size ob_item ob_size",
	"list_object size ob_item ob_size",
	"set_object size used table mask",
	"dict_object size ma_keys ma_values",
	"float_object size ob_fval",
	"long_object size lv_tag ob_digit",
	"bytes_object size ob_size ob_sval",
	"unicode_object size state length asciiobject_size compactunicodeobject_size",
	"gc size collecting frame generation_stats_size generation_stats",
	"gen_object size gi_name gi_iframe gi_frame_state",
	"llist_node next prev",
	"debugger_support eval_breaker remote_debugger_support remote_debugging_enabled "
	"debugger_pending_call debugger_script_path debugger_script_path_size",
	NULL,
};

#define NONE	  PY_DEBUG_OFF_NONE
#define OUT(g, f) #g "." #f, offsetof(struct py_debug_offsets, g.f)

/* The members read: what Debian's 3.13.18, 3.14.10, 3.15.2 publish (NONE: not that minor's),
 * and where struct py_debug_offsets has them. width: the member's own size. */
static const struct used {
	const char *path;
	size_t out;
	uint64_t v[3];
	unsigned int width; /* 0: a structure's size */
} used[] = {
	{ OUT(runtime_state, size), { 283408, 316616, 346568 }, 0 },
	{ OUT(runtime_state, interpreters_head), { 632, 808, 936 }, 8 },
	{ OUT(interpreter_state, size), { 194984, 225864, 226240 }, 0 },
	{ OUT(interpreter_state, next), { 7264, 7272, 7264 }, 8 },
	{ OUT(interpreter_state, threads_head), { 7344, 7344, 7336 }, 8 },
	{ OUT(interpreter_state, threads_main), { NONE, 7360, 7352 }, 8 },
	{ OUT(thread_state, size), { 312, 832, 888 }, 0 },
	{ OUT(thread_state, next), { 8, 8, 8 }, 8 },
	{ OUT(thread_state, current_frame), { 72, 72, 72 }, 8 },
	{ OUT(thread_state, base_frame), { NONE, NONE, 80 }, 8 },
	{ OUT(thread_state, thread_id), { 152, 152, 176 }, 8 },
	{ OUT(thread_state, native_thread_id), { 160, 160, 184 }, 8 },
	{ OUT(interpreter_frame, size), { 80, 88, 88 }, 0 },
	{ OUT(interpreter_frame, previous), { 8, 8, 8 }, 8 },
	{ OUT(interpreter_frame, executable), { 0, 0, 0 }, 8 },
	{ OUT(interpreter_frame, instr_ptr), { 56, 56, 56 }, 8 },
	{ OUT(interpreter_frame, owner), { 70, 74, 74 }, 1 },
	{ OUT(interpreter_frame, stackpointer), { NONE, 64, 64 }, 8 },
	{ OUT(code_object, size), { 208, 216, 216 }, 0 },
	{ OUT(code_object, filename), { 112, 112, 112 }, 8 },
	{ OUT(code_object, name), { 120, 120, 120 }, 8 },
	{ OUT(code_object, qualname), { 128, 128, 128 }, 8 },
	{ OUT(code_object, linetable), { 136, 136, 136 }, 8 },
	{ OUT(code_object, firstlineno), { 68, 68, 68 }, 4 },
	{ OUT(code_object, co_code_adaptive), { 200, 208, 208 }, 1 },
	{ OUT(pyobject, size), { 16, 16, 16 }, 0 },
	{ OUT(pyobject, ob_type), { 8, 8, 8 }, 8 },
	{ OUT(bytes_object, size), { 40, 40, 40 }, 0 },
	{ OUT(bytes_object, ob_size), { 16, 16, 16 }, 8 },
	{ OUT(bytes_object, ob_sval), { 32, 32, 32 }, 1 },
	{ OUT(unicode_object, size), { 64, 64, 64 }, 0 },
	{ OUT(unicode_object, state), { 32, 32, 32 }, 4 },
	{ OUT(unicode_object, length), { 16, 16, 16 }, 8 },
	{ OUT(unicode_object, asciiobject_size), { 40, 40, 40 }, 0 },
	{ OUT(gen_object, size), { NONE, 160, 160 }, 0 },
	{ OUT(gen_object, gi_iframe), { NONE, 72, 72 }, 0 },
	{ OUT(gen_object, gi_frame_state), { NONE, 67, 67 }, 1 },
};

/* The value of used member path in minors[i]. */
static uint64_t value(const char *path, size_t i)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(used); k++)
		if (!strcmp(used[k].path, path))
			return used[k].v[i];
	fail_msg("%s: not a member used", path);
	return 0;
}

static const unsigned int minors[] = { 13, 14, 15 };
static const char *const *const layouts[] = { v313, v314, v315 };

/* A _Py_DebugOffsets being written. */
struct blob {
	unsigned int minor;
	const char *const *layout;
	size_t len;
	uint8_t b[1024];
};

/* Where member path ("group.member") is in layout; false when that minor has none. */
static bool slot(const char *const *layout, const char *path, size_t *at)
{
	const char *dot = strchr(path, '.'), *g, *p, *e;
	size_t pos = 24, glen = dot - path, n;

	for (; *layout; layout++) {
		g = *layout;
		e = strchr(g, ' ');
		n = e - g;
		p = e + 1;
		for (;;) {
			e = strchr(p, ' ');
			if (!e)
				e = p + strlen(p);
			if (n == glen && !memcmp(g, path, n) &&
			    (size_t)(e - p) == strlen(dot + 1) && !memcmp(p, dot + 1, e - p)) {
				*at = pos;
				return true;
			}
			pos += 8;
			if (!*e)
				break;
			p = e + 1;
		}
	}
	*at = pos; /* the struct's size */
	return false;
}

static void put(struct blob *b, const char *path, uint64_t v)
{
	size_t at;

	assert_true(slot(b->layout, path, &at));
	memcpy(b->b + at, &v, 8);
}

static void put_version(struct blob *b, uint64_t version)
{
	memcpy(b->b + 8, &version, 8);
}

/* The _Py_DebugOffsets of 3.<minors[i]>: Debian's values in the members used, garbage in the
 * others (only the published members are to be read). */
static void blob_make(struct blob *b, size_t i)
{
	size_t k, at;

	memset(b->b, 0xa5, sizeof(b->b));
	b->minor = minors[i];
	b->layout = layouts[i];
	slot(b->layout, "-.-", &b->len);
	memcpy(b->b, "xdebugpy", 8);
	put_version(b, 0x030002f0ull | (uint64_t)b->minor << 16);
	memset(b->b + 16, 0, 8); /* free_threaded */
	for (k = 0; k < ARRAY_SIZE(used); k++) {
		if (used[k].v[i] != NONE)
			put(b, used[k].path, used[k].v[i]);
		else
			assert_false(slot(b->layout, used[k].path, &at));
	}
	/* A GIL build publishes 0 for the thread-local bytecode's members. */
	if (b->minor >= 14) {
		put(b, "interpreter_frame.tlbc_index", 0);
		put(b, "code_object.co_tlbc", 0);
	}
}

/* Two pages, the second PROT_NONE: a copy of len bytes ends where it starts. */
static uint8_t *guard;

static const void *guarded(const void *src, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (!guard) {
		guard = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			     0);
		assert_true(guard != MAP_FAILED);
		assert_int_equal(mprotect(guard + pg, pg, PROT_NONE), 0);
	}
	assert_true(len <= (size_t)pg);
	memcpy(guard + pg - len, src, len);
	return guard + pg - len;
}

static int parse(const struct blob *b, size_t len, struct py_debug_offsets *o, char *why,
		 size_t why_sz)
{
	return py_debug_offsets__parse(guarded(b->b, len), len, o, why, why_sz);
}

static uint64_t get(const struct py_debug_offsets *o, size_t at)
{
	uint64_t v;

	memcpy(&v, (const char *)o + at, 8);
	return v;
}

static void test_good(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i, k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		blob_make(&b, i);
		assert_int_equal(py_debug_offsets__len(b.minor), b.len);
		assert_true(b.len <= PY_DEBUG_OFFSETS_MAX);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
		assert_string_equal(why, "");
		assert_int_equal(o.minor, b.minor);
		assert_int_equal(o.version, 0x030002f0ull | (uint64_t)b.minor << 16);
		assert_false(o.free_threaded);
		for (k = 0; k < ARRAY_SIZE(used); k++)
			assert_int_equal(get(&o, used[k].out), used[k].v[i]);
		assert_int_equal(o.interpreter_frame.tlbc_index, NONE);
		assert_int_equal(o.code_object.co_tlbc, NONE);
		/* What follows the struct (the rest of _PyRuntime) is not its business. */
		assert_int_equal(parse(&b, sizeof(b.b), &o, why, sizeof(why)), 0);
	}
	assert_int_equal(py_debug_offsets__len(15), PY_DEBUG_OFFSETS_MAX);
	assert_int_equal(py_debug_offsets__len(12), 0);
	assert_int_equal(py_debug_offsets__len(16), 0);
}

/* A member published elsewhere is read there: the published offset, never a table. */
static void test_moved(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		blob_make(&b, i);
		put(&b, "code_object.qualname", 160);
		put(&b, "code_object.size", 4000);
		put(&b, "thread_state.native_thread_id", 296);
		put(&b, "interpreter_frame.owner", 79);
		put(&b, "runtime_state.interpreters_head", 900000);
		put(&b, "runtime_state.size", PY_DEBUG_STRUCT_MAX);
		put(&b, "unicode_object.asciiobject_size", 48);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
		assert_int_equal(o.code_object.qualname, 160);
		assert_int_equal(o.code_object.size, 4000);
		assert_int_equal(o.thread_state.native_thread_id, 296);
		assert_int_equal(o.interpreter_frame.owner, 79);
		assert_int_equal(o.runtime_state.interpreters_head, 900000);
		assert_int_equal(o.unicode_object.asciiobject_size, 48);
		assert_int_equal(o.code_object.name, 120);
	}
}

static void test_cookie(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i;

	(void)state;
	blob_make(&b, 1);
	for (i = 0; i < 8; i++) {
		b.b[i] ^= 0x20;
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -EINVAL);
		assert_string_equal(why, "no _Py_DebugOffsets cookie");
		b.b[i] ^= 0x20;
	}
	/* Debian 12's python3.11: a .PyRuntime that starts with _initialized, no offsets */
	memset(b.b, 0, 64);
	assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -EINVAL);
}

static void test_version(void **state)
{
	static const struct {
		uint64_t version;
		const char *says;
	} bad[] = {
		{ 0x031000f0, "CPython 3.16.0 debug offsets: version not known" },
		{ 0x030c07f0, "CPython 3.12.7 debug offsets: version not known" },
		{ 0x040d00f0, "CPython 4.13.0 debug offsets: version not known" },
		{ 0x1000000030d00f0ull, "version 0x1000000030d00f0 not known" },
	};
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		blob_make(&b, 2);
		put_version(&b, bad[i].version);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -EOPNOTSUPP);
		assert_non_null(strstr(why, bad[i].says));
		assert_int_equal(o.version, bad[i].version);
	}
	/* A patch release or pre-release of a known minor is that minor. */
	blob_make(&b, 0);
	put_version(&b, 0x030d12f0);
	assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
	put_version(&b, 0x030d00a1);
	assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
}

/* Every length short of a minor's struct is refused, and nothing past it read. */
static void test_truncated(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i, len;
	int err;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		blob_make(&b, i);
		for (len = 0; len < b.len; len++) {
			err = parse(&b, len, &o, why, sizeof(why));
			assert_int_equal(err, -EINVAL);
			assert_true(why[0]);
		}
		/* 3.15's struct cut at 3.14's length */
		if (b.minor == 15) {
			assert_int_equal(parse(&b, py_debug_offsets__len(14), &o, why, sizeof(why)),
					 -EINVAL);
			assert_non_null(strstr(why, "3.15"));
		}
	}
}

static void test_free_threaded(void **state)
{
	uint64_t one = 1;
	struct py_debug_offsets o;
	struct blob b;
	char why[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		blob_make(&b, i);
		memcpy(b.b + 16, &one, 8);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -EOPNOTSUPP);
		assert_true(o.free_threaded);
		assert_int_equal(o.minor, b.minor);
		assert_non_null(strstr(why, "free-threaded build (--disable-gil)"));
	}
}

/* Each member used, put at its structure's end or so that its last byte is past it. */
static void test_past_structure(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[128], want[160];
	size_t i, k, s, w;
	uint64_t size, v;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		for (k = 0; k < ARRAY_SIZE(used); k++) {
			if (!used[k].width || used[k].v[i] == NONE)
				continue;
			/* its structure's size: the group's "size" entry */
			for (s = 0; s < ARRAY_SIZE(used); s++)
				if (!strncmp(used[s].path, used[k].path,
					     strchr(used[k].path, '.') - used[k].path + 1) &&
				    !strcmp(strchr(used[s].path, '.'), ".size"))
					break;
			assert_true(s < ARRAY_SIZE(used));
			size = used[s].v[i];
			for (w = 0; w < used[k].width; w++) {
				v = size - w;
				blob_make(&b, i);
				put(&b, used[k].path, v);
				assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
				snprintf(want, sizeof(want), "%s %llu + %u past", used[k].path,
					 (unsigned long long)v, used[k].width);
				assert_non_null(strstr(why, want));
			}
			blob_make(&b, i);
			put(&b, used[k].path, UINT64_MAX - 2);
			assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
			/* its last possible place is fine (unless it is in the ASCII header) */
			if (strncmp(used[k].path, "unicode_object", 14)) {
				blob_make(&b, i);
				put(&b, used[k].path, size - used[k].width);
				assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
			}
		}
		blob_make(&b, i);
		put(&b, "code_object.qualname", 4096);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
		snprintf(want, sizeof(want),
			 "code_object.qualname 4096 + 8 past its structure's %llu bytes",
			 (unsigned long long)value("code_object.size", i));
		assert_string_equal(why, want);
		/* string header members past the PyASCIIObject */
		blob_make(&b, i);
		put(&b, "unicode_object.asciiobject_size", 24);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
		assert_non_null(strstr(why, "unicode_object.state"));
		blob_make(&b, i);
		put(&b, "unicode_object.asciiobject_size", 65);
		assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
		assert_non_null(strstr(why, "asciiobject_size"));
		if (b.minor >= 14) {
			/* a generator's frame must hold a whole _PyInterpreterFrame */
			blob_make(&b, i);
			put(&b, "gen_object.gi_iframe", 80);
			assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
			assert_non_null(strstr(why, "gen_object.gi_iframe"));
		}
	}
}

static void test_absurd_size(void **state)
{
	static const uint64_t bad[] = { 0, PY_DEBUG_STRUCT_MAX + 1ull, 1ull << 40, UINT64_MAX - 1 };
	struct py_debug_offsets o;
	struct blob b;
	char why[128], want[64];
	size_t i, k, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(minors); i++)
		for (k = 0; k < ARRAY_SIZE(used); k++) {
			if (used[k].width || used[k].v[i] == NONE || !strstr(used[k].path, ".size"))
				continue;
			for (j = 0; j < ARRAY_SIZE(bad); j++) {
				blob_make(&b, i);
				put(&b, used[k].path, bad[j]);
				assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), -ERANGE);
				snprintf(want, sizeof(want), "%s %llu", used[k].path,
					 (unsigned long long)bad[j]);
				assert_non_null(strstr(why, want));
			}
		}
}

/* why: cut and terminated at any size, or not written at all. */
static void test_why(void **state)
{
	struct py_debug_offsets o;
	struct blob b;
	char why[8];
	size_t sz;

	(void)state;
	blob_make(&b, 0);
	put(&b, "code_object.qualname", 4096);
	for (sz = 1; sz <= sizeof(why); sz++) {
		memset(why, 'x', sizeof(why));
		assert_int_equal(parse(&b, b.len, &o, why, sz), -ERANGE);
		assert_int_equal(strnlen(why, sz), sz - 1);
	}
	assert_int_equal(parse(&b, b.len, &o, NULL, 0), -ERANGE);
	blob_make(&b, 0);
	why[0] = 'x';
	assert_int_equal(parse(&b, b.len, &o, why, sizeof(why)), 0);
	assert_int_equal(why[0], 0);
}

/* An ELF file of .PyRuntime (PROGBITS at vaddr, or NOBITS) holding data, a .symtab with
 * _PyRuntime at sym (none when 0), in memory: written to a temporary file by libelf. */
struct elf_file {
	FILE *f;
	Elf *elf;
};

static void elf_make(struct elf_file *ef, bool section, uint32_t type, uint64_t vaddr,
		     const void *data, size_t len, uint64_t sym, uint64_t sym_size)
{
	static const char shstr[] = "\0.PyRuntime\0.symtab\0.strtab\0.shstrtab\0.data";
	static const char str[] = "\0_PyRuntime";
	Elf64_Sym syms[2] = {};
	Elf_Scn *scn, *rt;
	Elf_Data *d;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf *w;
	size_t rt_idx, str_idx;

	ef->f = tmpfile();
	assert_non_null(ef->f);
	w = elf_begin(fileno(ef->f), ELF_C_WRITE, NULL);
	assert_non_null(w);
	eh = elf64_newehdr(w);
	assert_non_null(eh);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;

	rt = elf_newscn(w);
	d = elf_newdata(rt);
	d->d_buf = (void *)data;
	d->d_size = len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 32;
	sh = elf64_getshdr(rt);
	sh->sh_name = section ? 1 : 38; /* .PyRuntime, else .data */
	sh->sh_type = type;
	sh->sh_flags = SHF_ALLOC | SHF_WRITE;
	sh->sh_addr = vaddr;
	sh->sh_size = len;
	sh->sh_addralign = 32;
	rt_idx = elf_ndxscn(rt);

	scn = elf_newscn(w);
	d = elf_newdata(scn);
	d->d_buf = (void *)str;
	d->d_size = sizeof(str);
	d->d_type = ELF_T_BYTE;
	sh = elf64_getshdr(scn);
	sh->sh_name = 20;
	sh->sh_type = SHT_STRTAB;
	str_idx = elf_ndxscn(scn);

	if (sym) {
		syms[1].st_name = 1;
		syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		syms[1].st_shndx = rt_idx;
		syms[1].st_value = sym;
		syms[1].st_size = sym_size;
		scn = elf_newscn(w);
		d = elf_newdata(scn);
		d->d_buf = syms;
		d->d_size = sizeof(syms);
		d->d_type = ELF_T_SYM;
		sh = elf64_getshdr(scn);
		sh->sh_name = 12;
		sh->sh_type = SHT_SYMTAB;
		sh->sh_link = str_idx;
		sh->sh_info = 1;
		sh->sh_entsize = sizeof(Elf64_Sym);
	}

	scn = elf_newscn(w);
	d = elf_newdata(scn);
	d->d_buf = (void *)shstr;
	d->d_size = sizeof(shstr);
	d->d_type = ELF_T_BYTE;
	sh = elf64_getshdr(scn);
	sh->sh_name = 28;
	sh->sh_type = SHT_STRTAB;
	eh->e_shstrndx = elf_ndxscn(scn);

	assert_true(elf_update(w, ELF_C_WRITE) > 0);
	elf_end(w);
	ef->elf = elf_begin(fileno(ef->f), ELF_C_READ, NULL);
	assert_non_null(ef->elf);
}

static void elf_drop(struct elf_file *ef)
{
	elf_end(ef->elf);
	fclose(ef->f);
}

static void test_from_elf(void **state)
{
	uint8_t data[2048], buf[PY_DEBUG_OFFSETS_MAX];
	struct py_debug_offsets o;
	struct elf_file ef;
	struct blob b;
	char why[128];
	uint64_t vaddr;
	size_t len;

	(void)state;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	blob_make(&b, 2);
	memset(data, 0x5a, sizeof(data));
	memcpy(data, b.b, b.len);

	/* the section and its symbol at its start: read up to cap */
	elf_make(&ef, true, SHT_PROGBITS, 0x400000, data, sizeof(data), 0x400000, sizeof(data));
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 0);
	assert_int_equal(len, sizeof(buf));
	assert_int_equal(vaddr, 0x400000);
	assert_memory_equal(buf, data, len);
	assert_int_equal(py_debug_offsets__parse(buf, len, &o, why, sizeof(why)), 0);
	assert_int_equal(o.thread_state.base_frame, 80);
	elf_drop(&ef);

	/* no symbol: the section's start; a section shorter than cap: all of it */
	elf_make(&ef, true, SHT_PROGBITS, 0x7000, data, 100, 0, 0);
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 0);
	assert_int_equal(len, 100);
	assert_int_equal(vaddr, 0x7000);
	assert_int_equal(py_debug_offsets__parse(buf, len, &o, why, sizeof(why)), -EINVAL);
	elf_drop(&ef);

	/* the symbol inside the section: read from it, bounded by its size */
	elf_make(&ef, true, SHT_PROGBITS, 0x7000, data, sizeof(data), 0x7000 + 1024, 64);
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 0);
	assert_int_equal(len, 64);
	assert_int_equal(vaddr, 0x7000 + 1024);
	assert_memory_equal(buf, data + 1024, 64);
	elf_drop(&ef);

	/* the symbol outside the section */
	elf_make(&ef, true, SHT_PROGBITS, 0x7000, data, sizeof(data), 0x9000, 8);
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "outside"));
	elf_drop(&ef);

	/* NOBITS: no initializer */
	elf_make(&ef, true, SHT_NOBITS, 0x7000, NULL, 0, 0x7000, 0);
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "NOBITS"));
	elf_drop(&ef);

	/* no section of that name: the symbol's section */
	elf_make(&ef, false, SHT_PROGBITS, 0x8000, data, sizeof(data), 0x8000, sizeof(data));
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 0);
	assert_int_equal(vaddr, 0x8000);
	assert_int_equal(py_debug_offsets__parse(buf, len, &o, why, sizeof(why)), 0);
	elf_drop(&ef);

	/* neither */
	elf_make(&ef, false, SHT_PROGBITS, 0x8000, data, sizeof(data), 0, 0);
	assert_int_equal(py_debug_offsets__from_elf(ef.elf, buf, sizeof(buf), &len, &vaddr, why,
						    sizeof(why)),
			 -ENOENT);
	assert_int_equal(len, 0);
	elf_drop(&ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_cookie),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_free_threaded),
		cmocka_unit_test(test_past_structure),
		cmocka_unit_test(test_absurd_size),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_from_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

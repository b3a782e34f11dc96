// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_python.c: Python frames in user space (python/python.c) on Debian's python3 (the
 * versioned binary /usr/bin/python3 links to: 3.11 on Debian 12, 3.13 on Debian 13; stripped,
 * .dynsym only) as a process would map it: the CPython is found by its file, the groups of Python frames of
 * a RECORD_PY_STACK replace the _PyEval_EvalFrameDefault activations root first, code objects
 * are named from their RECORD_PY_CODE (UTF-8 from CPython's 1, 2 and 4-byte strings; lines
 * from the line table), a reused code object address is told apart by its key (the newest
 * code object at an address kept); a CPython found before its first record (python__attach():
 * -- CMD's file in py_binaries, -p's process in py_procs); and random
 * records (what a process changing under the walk could give) never crash it. Its records'
 * layout check (python__record_check()) rejects every count it cannot trust.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "process/addr_space.h"
#include "process/module_cache.h"
#include "process/proc_table.h"
#include "profile/aggregate.h"
#include "runtime/python/python.h"
#include "runtime/python/python_debug_offsets.h"
#include "runtime/python/python_kind.h"
#include "runtime/python/python_versions.h"
#include "runtime/runtime.h"
#include "unwind/unwind.h"

#define DEBIAN_PYTHON "/usr/bin/python3"
#define TGID   0x3ffffff0u /* above pid_max: no /proc entry, the path is opened */
#define TID    (TGID + 1)
#define CPU    1

struct fixture {
	struct module_cache *mc;
	struct addr_space_shared shared;
	struct addr_space *as;
	struct python *py;
	struct aggregate *agg;
	char maps[512];
	uint64_t text_start, text_end; /* the r-x mapping */
	uint64_t text_offset;	       /* its file offset */
	uint64_t eval;		       /* ELF vaddr of _PyEval_EvalFrameDefault */
};

static int maps_text(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	(void)tgid;
	*text = strdup(ctx);
	*len = strlen(ctx);
	return *text ? 0 : -ENOMEM;
}

/* The file DEBIAN_PYTHON links to, as the process's maps name it (setup() resolves it). */
static char python_path[PATH_MAX];

/* The executable segment of the python and the address of sym, from its ELF headers. */
static void elf_facts(struct fixture *f, uint64_t *offset)
{
	int fd = open(python_path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			f->text_start = ph.p_vaddr & ~0xfffull;
			f->text_end = (ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
			*offset = ph.p_offset & ~0xfffull;
			break;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < d->d_size / sizeof(Elf64_Sym); i++)
			if (gelf_getsym(d, i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name),
				    "_PyEval_EvalFrameDefault"))
				f->eval = sym.st_value;
	}
	elf_end(elf);
	close(fd);
	assert_true(f->text_end > f->text_start);
	assert_true(f->eval >= f->text_start && f->eval < f->text_end);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint64_t offset = 0;
	struct stat st;
	int n;

	if (!realpath(DEBIAN_PYTHON, python_path) || stat(python_path, &st)) {
		fprintf(stderr, "test_python: %s is missing (make deps installs python3)\n",
			DEBIAN_PYTHON);
		free(f);
		return -1;
	}
	elf_facts(f, &offset);
	f->text_offset = offset;
	/* Non-PIE: the segment at its ELF address. */
	n = snprintf(f->maps, sizeof(f->maps), "%08llx-%08llx r-xp %08llx %02x:%02x %llu %s\n",
		     (unsigned long long)f->text_start, (unsigned long long)f->text_end,
		     (unsigned long long)offset, major(st.st_dev), minor(st.st_dev),
		     (unsigned long long)st.st_ino, python_path);
	assert_true(n > 0 && (size_t)n < sizeof(f->maps));
	f->mc = module_cache__new();
	f->shared.modules = f->mc;
	f->shared.maps_text = maps_text;
	f->shared.maps_ctx = f->maps;
	f->as = addr_space__new(TGID, &f->shared);
	f->py = python__new(NULL, NULL);
	f->agg = aggregate__new();
	assert_non_null(f->as);
	assert_non_null(f->py);
	assert_non_null(f->agg);
	/* As the unwinder does before the Python frames are placed: reads the maps. */
	assert_non_null(addr_space__mapping(f->as, f->eval));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	aggregate__free(f->agg);
	python__free(f->py);
	addr_space__free(f->as);
	module_cache__free(f->mc);
	free(f);
	return 0;
}

/* A RECORD_PY_CODE for code with key, named name (1-byte ASCII) in file. */
static void code_rec(struct fixture *f, uint64_t code, uint32_t key, const char *name,
		     int firstlineno, const uint8_t *tab, uint32_t tab_len)
{
	struct py_code_record *r = calloc(1, sizeof(*r));

	r->hdr.type = RECORD_PY_CODE;
	r->hdr.sz = sizeof(*r);
	r->tgid = TGID;
	r->code = code;
	r->key = key;
	r->firstlineno = firstlineno;
	r->version_minor = 11;
	r->name_len = strlen(name);
	r->name_kind = 1 | PY_STR_ASCII;
	memcpy(r->name, name, r->name_len);
	r->file_len = strlen("/srv/app.py");
	r->file_kind = 1 | PY_STR_ASCII;
	memcpy(r->file, "/srv/app.py", r->file_len);
	r->linetable_len = tab_len;
	if (tab_len)
		memcpy(r->linetable, tab, tab_len);
	assert_int_equal(python__code(f->py, r), 0);
	free(r);
}

static void stack_rec_to(struct python *py, const struct py_frame *frames, uint16_t cnt,
			 uint64_t time_ns)
{
	struct py_stack_record r = {};

	r.hdr.type = RECORD_PY_STACK;
	r.hdr.sz = offsetof(struct py_stack_record, frames) + cnt * sizeof(frames[0]);
	r.tgid = TGID;
	r.tid = TID;
	r.time_ns = time_ns;
	r.cpu = CPU;
	r.cnt = cnt;
	memcpy(r.frames, frames, cnt * sizeof(frames[0]));
	python__stack(py, &r);
}

static void stack_rec(struct fixture *f, const struct py_frame *frames, uint16_t cnt,
		      uint64_t time_ns)
{
	stack_rec_to(f->py, frames, cnt, time_ns);
}

static struct sample_record *sample_rec(uint64_t time_ns)
{
	struct sample_record *s = calloc(1, sizeof(*s));

	s->hdr.type = RECORD_SAMPLE;
	s->hdr.sz = sizeof(*s);
	s->tgid = TGID;
	s->tid = TID;
	s->cpu = CPU;
	s->time_ns = time_ns;
	return s;
}

/* Function name and line of location id. */
static const char *loc_name(struct fixture *f, uint32_t id, uint32_t *line)
{
	const struct agg_location *l = aggregate__loc(f->agg, id);

	assert_int_equal(l->kind, FRAME_PYTHON);
	assert_int_equal(l->lines_cnt, 1);
	*line = l->lines[0].line;
	return aggregate__str(f->agg, l->lines[0].function);
}

static void test_splice(void **state)
{
	struct fixture *f = *state;
	/* 3.11 location table: one entry, code 11 (line + 1), 8 code units, two column bytes. */
	static const uint8_t tab[] = { 0x80 | 11 << 3 | 7, 0, 5 };
	const struct py_frame frames[] = {
		{ .code = 0x7f0000001000, .instr = 4, .key = 1 },		 /* leaf */
		{ .code = 0x7f0000002000, .instr = 0 | PY_INSTR_ENTRY, .key = 2,
		  .anchor = 0x7ffd1000 }, /* middle */
		{ .code = 0x7f0000003000, .instr = 0 | PY_INSTR_ENTRY, .key = 3,
		  .anchor = 0x7ffd2000 }, /* <module> */
	};
	struct sample_record *s = sample_rec(1000);
	struct unwind_frame uf = {};
	uint32_t locs[8], line;
	int n;

	code_rec(f, 0x7f0000001000, 1, "Worker.leaf", 40, tab, sizeof(tab));
	code_rec(f, 0x7f0000002000, 2, "middle", 30, NULL, 0);
	code_rec(f, 0x7f0000003000, 3, "<module>", 1, NULL, 0);
	stack_rec(f, frames, 3, 1000);
	/* Two groups: [leaf, middle] (one C call of the evaluator), [<module>]. */
	assert_int_equal(python__sample(f->py, f->as, s), 2);
	uf.mapping = addr_space__mapping(f->as, f->eval + 16);
	uf.elf_addr = f->eval + 16;
	assert_true(python__is_eval(f->py, &uf));
	uf.elf_addr = f->text_start;
	assert_false(python__is_eval(f->py, &uf));
	/* Each group's anchor is its root frame's. */
	assert_int_equal(python__group_anchor(f->py, 0), 0x7ffd1000);
	assert_int_equal(python__group_anchor(f->py, 1), 0x7ffd2000);
	assert_int_equal(python__group_anchor(f->py, 2), 0);

	n = python__group(f->py, f->agg, 0, locs, 8);
	assert_int_equal(n, 2);
	assert_string_equal(loc_name(f, locs[0], &line), "middle"); /* root first */
	assert_int_equal(line, 30);				    /* no table: the first line */
	assert_string_equal(loc_name(f, locs[1], &line), "Worker.leaf");
	assert_int_equal(line, 41); /* from the table */
	assert_string_equal(aggregate__str(f->agg, aggregate__loc(f->agg, locs[1])->lines[0].file),
			    "/srv/app.py");
	n = python__group(f->py, f->agg, 1, locs, 8);
	assert_int_equal(n, 1);
	assert_string_equal(loc_name(f, locs[0], &line), "<module>");
	assert_int_equal(python__group(f->py, f->agg, 2, locs, 8), 0);

	/* The same address with another key (a freed code object's memory reused): not the old
	 * name. */
	s->time_ns = 2000;
	stack_rec(f, &(struct py_frame){ .code = 0x7f0000002000, .key = 9, .instr = PY_INSTR_ENTRY },
		  1, 2000);
	assert_int_equal(python__sample(f->py, f->as, s), 1);
	assert_int_equal(python__group(f->py, f->agg, 0, locs, 8), 1);
	assert_string_equal(loc_name(f, locs[0], &line), "[unknown]");
	assert_int_equal(python__stats(f->py)->codes_missing, 1);

	/* A stack record of another thread, or another time, is not this sample's. */
	stack_rec(f, frames, 3, 3000);
	s->time_ns = 3001;
	assert_int_equal(python__sample(f->py, f->as, s), 0);
	assert_int_equal(python__stats(f->py)->unmatched, 1);

	/* Exit: the process's code objects go. */
	python__forget(f->py, TGID);
	stack_rec(f, frames, 3, 4000);
	s->time_ns = 4000;
	assert_int_equal(python__sample(f->py, f->as, s), 2);
	assert_int_equal(python__group(f->py, f->agg, 1, locs, 8), 1);
	assert_string_equal(loc_name(f, locs[0], &line), "[unknown]");
	free(s);
}

/* Code objects made in the memory of freed ones (exec in a loop): the cache keeps the newest
 * at each address, each frame is named after its own (its key), and a frame of a code object
 * whose copy has not come is [unknown], never the name of another one at that address. */
static void test_reused(void **state)
{
	struct fixture *f = *state;
	struct sample_record *s = sample_rec(0);
	uint32_t locs[2], line, i;
	char name[32];

	for (i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "churn_%u", i);
		code_rec(f, 0x7f0000009000, 100 + i, name, 1, NULL, 0);
		stack_rec(f, &(struct py_frame){ .code = 0x7f0000009000, .key = 100 + i,
						 .instr = PY_INSTR_ENTRY }, 1, i);
		s->time_ns = i;
		assert_int_equal(python__sample(f->py, f->as, s), 1);
		assert_int_equal(python__group(f->py, f->agg, 0, locs, 2), 1);
		assert_string_equal(loc_name(f, locs[0], &line), name);
	}
	/* An earlier one's key: its entry gave way to the newer code object's. */
	stack_rec(f, &(struct py_frame){ .code = 0x7f0000009000, .key = 101,
					 .instr = PY_INSTR_ENTRY }, 1, 10);
	s->time_ns = 10;
	assert_int_equal(python__sample(f->py, f->as, s), 1);
	assert_int_equal(python__group(f->py, f->agg, 0, locs, 2), 1);
	assert_string_equal(loc_name(f, locs[0], &line), "[unknown]");
	assert_int_equal(python__stats(f->py)->codes_missing, 1);
	free(s);
}

/* CPython's string kinds to UTF-8 (Include/cpython/unicodeobject.h). */
static void test_strings(void **state)
{
	struct fixture *f = *state;
	struct py_code_record *r = calloc(1, sizeof(*r));
	struct sample_record *s = sample_rec(10);
	const struct py_frame fr = { .code = 0x5000, .key = 7, .instr = PY_INSTR_ENTRY };
	uint32_t locs[2], line;

	r->hdr.type = RECORD_PY_CODE;
	r->hdr.sz = sizeof(*r);
	r->tgid = TGID;
	r->code = 0x5000;
	r->key = 7;
	r->version_minor = 12;
	/* "café": Latin-1, 1 byte a character, not ASCII. */
	memcpy(r->name, "caf\xe9", 4);
	r->name_len = 4;
	r->name_kind = 1;
	/* "\u0436\U0001F600" as UCS-4 (kind 4), little-endian. */
	memcpy(r->file, "\x36\x04\x00\x00\x00\xf6\x01\x00", 8);
	r->file_len = 2;
	r->file_kind = 4;
	assert_int_equal(python__code(f->py, r), 0);
	stack_rec(f, &fr, 1, 10);
	assert_int_equal(python__sample(f->py, f->as, s), 1);
	assert_int_equal(python__group(f->py, f->agg, 0, locs, 2), 1);
	assert_string_equal(loc_name(f, locs[0], &line), "caf\xc3\xa9");
	assert_string_equal(aggregate__str(f->agg, aggregate__loc(f->agg, locs[0])->lines[0].file),
			    "\xd0\xb6\xf0\x9f\x98\x80");
	free(r);
	free(s);
}

/* Valid UTF-8 without NUL, as every output needs. */
static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	while (*p) {
		n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
		    (*p & 0xf8) == 0xf0 ? 3 : -1;
		if (n < 0)
			return false;
		for (p++; n > 0; n--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/* Random records: any lengths, kinds, frame counts and codes; nothing crashes, every name is
 * UTF-8, no group holds more frames than its record. */
static void test_random(void **state)
{
	struct fixture *f = *state;
	struct py_code_record *r = malloc(sizeof(*r));
	struct py_stack_record *st = malloc(sizeof(*st));
	struct sample_record *s = sample_rec(0);
	uint32_t locs[BPFPROF_PY_FRAMES_MAX], line;
	unsigned int seed = 16, i, j;
	size_t g, groups, total;
	int n, k;

	for (i = 0; i < 3000; i++) {
		for (j = 0; j < sizeof(*r); j++)
			((uint8_t *)r)[j] = rand_r(&seed);
		r->hdr.type = RECORD_PY_CODE;
		r->hdr.sz = sizeof(*r);
		r->tgid = TGID;
		r->code = 0x1000 + (rand_r(&seed) % 16) * 0x100;
		r->key = rand_r(&seed) % 4;
		r->version_minor = 10 + rand_r(&seed) % 5;
		assert_int_equal(python__code(f->py, r), 0);

		for (j = 0; j < sizeof(*st); j++)
			((uint8_t *)st)[j] = rand_r(&seed);
		st->hdr.type = RECORD_PY_STACK;
		st->cnt = rand_r(&seed) % (BPFPROF_PY_FRAMES_MAX + 1);
		st->hdr.sz = offsetof(struct py_stack_record, frames) +
			     st->cnt * sizeof(st->frames[0]);
		st->tgid = TGID;
		st->tid = TID;
		st->cpu = CPU;
		st->time_ns = s->time_ns = i;
		for (j = 0; j < st->cnt; j++) {
			st->frames[j].code = 0x1000 + (rand_r(&seed) % 16) * 0x100;
			st->frames[j].key = rand_r(&seed) % 4;
		}
		python__stack(f->py, st);
		groups = python__sample(f->py, f->as, s);
		assert_true(groups <= st->cnt);
		for (g = 0, total = 0; g < groups; g++) {
			n = python__group(f->py, f->agg, g, locs, BPFPROF_PY_FRAMES_MAX);
			assert_true(n >= 1);
			total += n;
			for (k = 0; k < n; k++)
				assert_true(utf8_ok(loc_name(f, locs[k], &line)));
		}
		assert_int_equal(total, st->cnt);
	}
	free(r);
	free(st);
	free(s);
}

/* Every version of the table (3.10-3.12) has its frame fields within the bytes the BPF walk
 * reads of a frame, its code object identity fields within those py_code_ident() reads; 3.12
 * has co_version and its entry frame's owner. */
static void test_versions(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(python_versions_cnt, 3);
	for (i = 0; i < python_versions_cnt; i++) {
		const struct py_offsets *o = &python_versions[i];

		assert_true(o->frame_back + 8 <= BPFPROF_PY_FRAME_READ_SZ);
		assert_true(o->frame_code + 8 <= BPFPROF_PY_FRAME_READ_SZ);
		assert_true(o->frame_instr + 8 <= BPFPROF_PY_FRAME_READ_SZ);
		assert_true(o->frame_owner == PY_OFF_NONE ||
			    o->frame_owner + 1 <= BPFPROF_PY_FRAME_READ_SZ);
		assert_int_equal(o->version_minor, 10 + i);
		assert_true(python__offsets_fit(o));
		if (o->version_minor >= 12)
			assert_true(o->code_serial != PY_OFF_NONE);
		else
			assert_int_equal(o->code_serial, PY_OFF_NONE);
		assert_int_equal(o->frame_owner_entry, o->version_minor >= 12 ? 3 : 0);
		assert_int_equal(o->frame_code_tag, 0);
		assert_int_equal(o->tstate_base_frame, PY_OFF_NONE);
	}
	/* A layout whose fields lie outside the reads is refused. */
	{
		struct py_offsets o = python_versions[0];

		o.code_linetable = o.code_firstlineno + BPFPROF_PY_CODE_READ_SZ;
		assert_false(python__offsets_fit(&o));
		o = python_versions[0];
		o.code_name = o.code_firstlineno - 16;
		assert_false(python__offsets_fit(&o));
		o = python_versions[0];
		o.frame_back = BPFPROF_PY_FRAME_READ_SZ;
		assert_false(python__offsets_fit(&o));
	}
}

/*
 * A parsed _Py_DebugOffsets of CPython 3.<minor> as Debian sid's 3.13.18, 3.14.10 and 3.15.2
 * publish it (their .PyRuntime sections): the members python__offsets_from_debug() reads.
 */
static struct py_debug_offsets debug_of(unsigned int minor)
{
	struct py_debug_offsets d;

	memset(&d, 0xff, sizeof(d)); /* PY_DEBUG_OFF_NONE where not set */
	d.version = 0x030000f0 | minor << 16;
	d.minor = minor;
	d.free_threaded = false;
	d.runtime_state.size = 283408;
	d.runtime_state.interpreters_head = minor == 13 ? 632 : minor == 14 ? 808 : 936;
	d.interpreter_state.size = 194984;
	d.interpreter_state.next = 7264;
	d.interpreter_state.threads_head = 7344;
	d.thread_state.size = minor == 13 ? 312 : 832;
	d.thread_state.next = 8;
	d.thread_state.current_frame = 72;
	d.thread_state.thread_id = minor == 15 ? 176 : 152;
	d.thread_state.native_thread_id = minor == 15 ? 184 : 160;
	if (minor >= 15)
		d.thread_state.base_frame = 80;
	d.interpreter_frame.size = minor == 13 ? 80 : 88;
	d.interpreter_frame.previous = 8;
	d.interpreter_frame.executable = 0;
	d.interpreter_frame.instr_ptr = 56;
	d.interpreter_frame.owner = minor == 13 ? 70 : 74;
	d.code_object.size = minor == 13 ? 208 : 216;
	d.code_object.filename = 112;
	d.code_object.name = 120;
	d.code_object.qualname = 128;
	d.code_object.linetable = 136;
	d.code_object.firstlineno = 68;
	d.code_object.co_code_adaptive = minor == 13 ? 200 : 208;
	d.bytes_object.size = 40;
	d.bytes_object.ob_size = 16;
	d.bytes_object.ob_sval = 32;
	d.unicode_object.size = 64;
	d.unicode_object.state = 32;
	d.unicode_object.length = 16;
	d.unicode_object.asciiobject_size = 40;
	return d;
}

/*
 * 3.13+: struct py_offsets from the published offsets plus the per-minor constants (entry
 * owner, f_executable's tag bits, compact string header, co_version's place, the base frame);
 * refused: a minor without constants, a free-threaded build, a member not published or read
 * where the BPF side does not, a layout whose fields do not fit the BPF reads.
 */
static void test_from_debug(void **state)
{
	struct py_debug_offsets d;
	struct py_offsets o;
	char why[256];
	unsigned int minor;

	(void)state;
	for (minor = 13; minor <= 15; minor++) {
		d = debug_of(minor);
		assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), 0);
		assert_int_equal(o.version_minor, minor);
		assert_int_equal(o.frames, PY_FRAMES_SHIM);
		assert_int_equal(o.runtime_interp_head, d.runtime_state.interpreters_head);
		assert_int_equal(o.interp_tstate_head, d.interpreter_state.threads_head);
		assert_int_equal(o.tstate_frame, d.thread_state.current_frame);
		assert_int_equal(o.tstate_thread_id, d.thread_state.thread_id);
		assert_int_equal(o.frame_owner, d.interpreter_frame.owner);
		assert_int_equal(o.code_name, d.code_object.qualname); /* not co_name */
		assert_int_equal(o.code_bytecode, d.code_object.co_code_adaptive);
		assert_int_equal(o.cframe_frame, PY_OFF_NONE);
		/* Not published: the table's. */
		assert_int_equal(o.frame_owner_entry, 3);
		assert_int_equal(o.frame_code_tag, minor >= 14 ? 3 : 0);
		assert_int_equal(o.unicode_compact_sz, 56);
		assert_int_equal(o.code_serial, 92); /* co_version */
		assert_int_equal(o.tstate_base_frame, minor >= 15 ? 80 : PY_OFF_NONE);
		assert_true(python__offsets_fit(&o));
	}
	/* A patch release that moves a field: followed. */
	d = debug_of(14);
	d.code_object.size += 8;
	d.code_object.qualname = 144;
	d.code_object.linetable = 128;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), 0);
	assert_int_equal(o.code_name, 144);
	assert_int_equal(o.code_linetable, 128);
	/* co_version's place taken by a published field: the strings identify code objects. */
	d = debug_of(14);
	d.code_object.filename = 88;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), 0);
	assert_int_equal(o.code_serial, PY_OFF_NONE);
	/* Refused. */
	d = debug_of(16);
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -EOPNOTSUPP);
	d = debug_of(14);
	d.free_threaded = true;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -EOPNOTSUPP);
	d = debug_of(15);
	d.thread_state.base_frame = PY_DEBUG_OFF_NONE; /* 3.15 must publish it */
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "base_frame"));
	d = debug_of(14);
	d.runtime_state.interpreters_head = PY_OFF_NONE; /* over 16 bits */
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -ERANGE);
	d = debug_of(14);
	d.unicode_object.length = 24;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -ERANGE);
	/* Fields past the BPF reads of a frame and of a code object. */
	d = debug_of(14);
	d.interpreter_frame.size = 512;
	d.interpreter_frame.owner = BPFPROF_PY_FRAME_READ_SZ;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -ERANGE);
	d = debug_of(14);
	d.code_object.size = 512;
	d.code_object.linetable = d.code_object.firstlineno + BPFPROF_PY_CODE_READ_SZ;
	assert_int_equal(python__offsets_from_debug(&d, &o, why, sizeof(why)), -ERANGE);
}

/* The loader's maps as python__attach() writes them: the last entry of each map kept. */
struct stub_maps {
	struct runtime_maps m;
	int binaries, procs, removed; /* update/insert/remove calls per map */
	struct py_binary_key bin_key;
	struct py_binary bin;
	uint32_t proc_key;
	struct py_proc proc;
};

static int stub_update(const struct runtime_maps *m, const char *name, const void *key,
		       const void *value)
{
	struct stub_maps *st = m->ctx;

	if (!strcmp(name, "py_binaries")) {
		st->binaries++;
		memcpy(&st->bin_key, key, sizeof(st->bin_key));
		memcpy(&st->bin, value, sizeof(st->bin));
	} else if (!strcmp(name, "py_procs")) {
		st->procs++;
		memcpy(&st->proc_key, key, sizeof(st->proc_key));
		memcpy(&st->proc, value, sizeof(st->proc));
	}
	return 0;
}

static int stub_remove(const struct runtime_maps *m, const char *name, const void *key)
{
	struct stub_maps *st = m->ctx;

	(void)key;
	if (!strcmp(name, "py_procs"))
		st->removed++;
	return 0;
}

static void stub_init(struct stub_maps *st)
{
	memset(st, 0, sizeof(*st));
	st->m.update = stub_update;
	st->m.insert = stub_update;
	st->m.remove = stub_remove;
	st->m.ctx = st;
}

/* bpfprof -- CMD: the command's CPython file goes in py_binaries before its exec, by the
 * identity BPF sees at the exec (the kernel's s_dev, the inode), with where _PyRuntime lies;
 * a process that maps it later is served from that check (its module taken then); a file that
 * is not a CPython (this test), a replay and a missing file write nothing. */
static void test_attach_exec(void **state)
{
	struct fixture *f = *state;
	struct stub_maps st;
	struct python *py;
	struct stat sb;
	struct unwind_frame uf = {};
	struct sample_record *s = sample_rec(5000);
	const struct py_frame frame = { .code = 0x7f0000001000, .instr = 0, .key = 1 };

	stub_init(&st);
	assert_int_equal(stat(python_path, &sb), 0);
	py = python__new(&st.m, NULL);
	assert_non_null(py);
	/* Not CPythons: this test's own executable, a missing file. */
	assert_int_equal(python__attach(py, TGID, "/proc/self/exe", true), 0);
	assert_int_equal(python__attach(py, TGID, "/nonexistent/python3.11", true), 0);
	assert_int_equal(st.binaries, 0);
	/* Debian's python3 by its symlink, as -- python3 names it. */
	assert_int_equal(python__attach(py, TGID, DEBIAN_PYTHON, true), 0);
	assert_int_equal(st.binaries, 1);
	assert_int_equal(st.bin_key.dev, (uint64_t)major(sb.st_dev) << 20 | minor(sb.st_dev));
	assert_int_equal(st.bin_key.ino, sb.st_ino);
	assert_true(st.bin.runtime_off > 0);
	assert_int_not_equal(st.bin.off.version_minor, 0);
	assert_int_equal(st.procs, 0); /* BPF arms the process at its exec */
	/* Checked once: attached again, nothing new. */
	assert_int_equal(python__attach(py, TGID, python_path, true), 0);
	assert_int_equal(st.binaries, 1);
	/* The process maps it: found from that check, its frames placed. */
	stack_rec_to(py, &frame, 1, 5000);
	assert_int_equal(python__sample(py, f->as, s), 1);
	uf.mapping = addr_space__mapping(f->as, f->eval + 16);
	uf.elf_addr = f->eval + 16;
	assert_true(python__is_eval(py, &uf));
	assert_int_equal(st.binaries, 1);
	python__free(py);
	/* A replay: no maps, nothing armed. */
	py = python__new(NULL, NULL);
	assert_int_equal(python__attach(py, TGID, DEBIAN_PYTHON, true), 0);
	python__free(py);
	free(s);
}

/* bpfprof -p: the process's mappings read through the process table, its CPython armed in
 * py_procs at _PyRuntime's address in it before any record; 3.13+ compares the process's
 * _Py_DebugOffsets first, which a process that is not there (TGID) fails: not armed. */
static void test_attach_pid(void **state)
{
	struct fixture *f = *state;
	struct proc_table_opts o = { .maps_text = maps_text, .maps_ctx = f->maps };
	struct proc_table *pt = proc_table__new(&o);
	struct stub_maps st;
	struct python *py;
	int minor;

	assert_non_null(pt);
	assert_int_equal(sscanf(strrchr(python_path, '/'), "/python3.%d", &minor), 1);
	stub_init(&st);
	py = python__new(&st.m, pt);
	assert_non_null(py);
	assert_int_equal(python__attach(py, TGID, "/proc/self/exe", false), 0);
	assert_int_equal(st.binaries, 1); /* its file, for the processes it forks and execs */
	if (minor < 13) {
		assert_int_equal(st.procs, 1);
		assert_int_equal(st.proc_key, TGID);
		/* Non-PIE: _PyRuntime at its ELF address, runtime_off past the text's p_vaddr -
		 * p_offset. */
		assert_int_equal(st.proc.runtime - st.bin.runtime_off,
				 f->text_start - f->text_offset);
		assert_int_equal(python__stats(py)->processes, 1);
	} else {
		assert_int_equal(st.procs, 0);
		assert_int_equal(st.removed, 1);
	}
	python__free(py);
	/* A replay arms nothing (and reads no process). */
	py = python__new(NULL, pt);
	assert_int_equal(python__attach(py, TGID + 2, "/proc/self/exe", false), 0);
	assert_null(proc_table__find(pt, TGID + 2, false));
	python__free(py);
	proc_table__free(pt);
}

/* A Python stack record may claim no more frames than BPF keeps, nor than its size holds
 * (python__record_check(), moved from sampling/record_decode.c). */
static void test_py_stack_counts(void **state)
{
	struct py_stack_record *r = calloc(1, sizeof(*r) + 4096);

	(void)state;
	r->hdr.type = RECORD_PY_STACK;
	r->cnt = 3;
	r->hdr.sz = offsetof(struct py_stack_record, frames) + 3 * sizeof(struct py_frame);
	assert_int_equal(python__record_check(&r->hdr, r->hdr.sz), 0);
	r->cnt = 4; /* more than its size holds */
	assert_int_equal(python__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->cnt = BPFPROF_PY_FRAMES_MAX + 1; /* a size that would hold them, from a capture */
	r->hdr.sz = offsetof(struct py_stack_record, frames) + r->cnt * sizeof(struct py_frame);
	assert_int_equal(python__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->hdr.type = RECORD_PY_CODE;
	r->hdr.sz = sizeof(struct py_code_record) - 1;
	assert_int_equal(python__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_splice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_from_debug),
		cmocka_unit_test(test_py_stack_counts),
		cmocka_unit_test_setup_teardown(test_attach_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_pid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

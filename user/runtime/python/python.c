// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* python.c: CPython processes found and armed, code objects kept, Python frames spliced. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uthash.h>
#include "process/addr_space.h"
#include "process/module_cache.h"
#include "process/proc_table.h"
#include "profile/aggregate.h"
#include "runtime/python/python.h"
#include "runtime/python/python_debug_offsets.h"
#include "runtime/python/python_kind.h"
#include "runtime/python/python_lines.h"
#include "runtime/python/python_versions.h"
#include "runtime/runtime.h"
#include "unwind/unwind.h"
#include "util/elf_read.h"
#include "util/file.h"
#include "util/log.h"
#include "util/pending.h"
#include "util/util.h"

/* Code objects kept per process at most (RECORD_PY_CODE beyond: counted, dropped). */
#define PY_CODES_MAX 65536
/* A process known to run CPython whose sample came without its Python frames (its py_procs
 * entry evicted or never made) is armed again, at most this often. */
#define PY_REARM_NS 1000000000ull

/* A file named like a CPython (python3.X, libpython3.X.so...), checked once it could be opened:
 * user space's side of a py_binaries entry. */
struct py_file {
	uint64_t dev, ino;	/* the file (mapping dev, user space's makedev form) */
	/* A CPython bpfprof reads; python__attach() checks one before any process maps it. */
	bool ok;
	struct module *module;	/* a reference, once a process maps it; NULL when not ok */
	struct py_offsets off;
	/* 3.13+: the file's _Py_DebugOffsets (the first dbg_len bytes of its _PyRuntime), which a
	 * process's copy must equal before it is armed; dbg_len 0 before 3.13. */
	uint8_t dbg[PY_DEBUG_OFFSETS_MAX];
	size_t dbg_len;
	int minor;
	bool mem_warned; /* a process's _Py_DebugOffsets differed from the file's: said */
	uint64_t runtime;	/* ELF vaddr of _PyRuntime */
	uint64_t runtime_off;	/* py_binary.runtime_off */
	uint64_t eval_start;	/* ELF vaddrs of _PyEval_EvalFrameDefault: [start, end) */
	uint64_t eval_end;
	UT_hash_handle hh;
};

struct py_code;

/* A target process, as far as Python goes: user space's side of a py_procs entry. */
struct py_target {
	uint32_t tgid;
	uint64_t maps_gen;	/* address space generation last looked at */
	struct py_file *file;	/* its CPython, once found */
	bool refused;		/* its _Py_DebugOffsets differ from its file's: not armed */
	uint64_t runtime;	/* address of _PyRuntime in it, with file */
	uint64_t armed_ns;	/* CLOCK_MONOTONIC of the last py_procs update */
	struct py_code *codes;	/* its code objects */
	uint32_t codes_cnt;
	UT_hash_handle hh;
};

/* A code object, from its RECORD_PY_CODE: the newest one copied at its address (the earlier
 * ones there were freed before it was made). */
struct py_code {
	uint64_t code; /* its address: the hash key */
	uint32_t key;  /* py_frame.key: a frame of another key is of another code object */
	char *name; /* co_qualname (3.10: co_name), UTF-8 */
	char *file; /* co_filename, UTF-8 */
	int firstlineno;
	uint8_t minor;
	uint32_t linetable_len;
	uint8_t *linetable;
	UT_hash_handle hh;
};

struct python {
	const struct runtime_maps *maps; /* py_procs, py_binaries; NULL: nothing armed */
	struct proc_table *pt;		 /* python__attach()'s processes; NULL: none */
	struct py_file *files;
	struct py_target *targets;
	struct pending pending; /* RECORD_PY_STACKs waiting for their sample */
	/* The sample being placed. */
	struct py_target *cur;
	const struct py_stack_record *stack;
	uint16_t group_start[BPFPROF_PY_FRAMES_MAX + 1]; /* group g: [start[g], start[g+1]) */
	size_t groups;
	struct python_stats stats;
};

struct python *python__new(const struct runtime_maps *maps, struct proc_table *pt)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->maps = maps;
	py->pt = pt;
	if (pending__init(&py->pending, sizeof(struct py_stack_record))) {
		free(py);
		errno = ENOMEM;
		return NULL;
	}
	return py;
}

static void code_free(struct py_code *c)
{
	free(c->name);
	free(c->file);
	free(c->linetable);
	free(c);
}

static void target_free(struct py_target *t)
{
	struct py_code *c, *tc;

	HASH_ITER(hh, t->codes, c, tc) {
		HASH_DEL(t->codes, c);
		code_free(c);
	}
	free(t);
}

/* NULL is fine (--no-python). */
void python__free(struct python *py)
{
	struct py_file *b, *tb;
	struct py_target *t, *tt;

	if (!py)
		return;
	HASH_ITER(hh, py->files, b, tb) {
		HASH_DEL(py->files, b);
		module__put(b->module);
		free(b);
	}
	HASH_ITER(hh, py->targets, t, tt) {
		HASH_DEL(py->targets, t);
		target_free(t);
	}
	pending__free(&py->pending);
	free(py);
}

const struct python_stats *python__stats(const struct python *py)
{
	return &py->stats;
}

void python__print(const struct python *py, const struct bpf_stats *bpf, FILE *fp)
{
	const struct python_stats *st = &py->stats;
	uint64_t walks = 0;
	size_t i;

	if (!st->processes && !st->codes)
		return;
	for (i = 0; i < ARRAY_SIZE(st->stops); i++)
		walks += st->stops[i];
	fprintf(fp,
		"bpfprof: Python: %llu CPython processes; %llu samples with %llu Python frames; "
		"%llu code objects copied by BPF, decoded in %.1f ms (%llu over a process's cap); "
		"%llu frames of a code object never copied\n",
		(unsigned long long)st->processes, (unsigned long long)st->stacks,
		(unsigned long long)st->frames, (unsigned long long)st->codes, st->code_ns / 1e6,
		(unsigned long long)st->codes_dropped, (unsigned long long)st->codes_missing);
	fprintf(fp,
		"bpfprof: Python walks: %llu; reached the first frame %llu, not a Python thread "
		"%llu, no Python code running %llu, memory read failed %llu, deeper than %d frames "
		"%llu; %llu without their sample; %llu samples placed by anchor, %llu groups at the "
		"root",
		(unsigned long long)walks, (unsigned long long)st->stops[PY_STOP_ROOT],
		(unsigned long long)st->stops[PY_STOP_NO_THREAD],
		(unsigned long long)st->stops[PY_STOP_NO_FRAME],
		(unsigned long long)st->stops[PY_STOP_READ], BPFPROF_PY_FRAMES_MAX,
		(unsigned long long)st->stops[PY_STOP_DEPTH], (unsigned long long)st->unmatched,
		(unsigned long long)st->by_anchor, (unsigned long long)st->groups_at_root);
	if (bpf)
		fprintf(fp, "; %llu Python records lost (ringbuf full)",
			(unsigned long long)bpf->py_lost);
	fprintf(fp, "\n");
}

/* The state of process tgid; created when create, else NULL when there is none. */
static struct py_target *target_get(struct python *py, uint32_t tgid, bool create)
{
	struct py_target *t;

	HASH_FIND(hh, py->targets, &tgid, sizeof(tgid), t);
	if (t || !create)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tgid = tgid;
	t->maps_gen = UINT64_MAX;
	HASH_ADD(hh, py->targets, tgid, sizeof(t->tgid), t);
	return t;
}

void python__forget(struct python *py, uint32_t tgid)
{
	struct py_target *t = target_get(py, tgid, false);

	if (t) {
		HASH_DEL(py->targets, t);
		target_free(t);
	}
	/* Not py_procs: BPF deletes the entry at exec and exit itself, and re-arms it for the new
	 * image before this record is read. */
}

/* UTF-8 of a CPython compact string: n characters of kind bytes each (PyUnicode_1BYTE_KIND is
 * Latin-1, 2 is UCS-2, 4 UCS-4; Include/cpython/unicodeobject.h). */
static char *string_utf8(const uint8_t *data, uint32_t n, uint8_t kind_flags, size_t sz)
{
	uint8_t kind = kind_flags & 7;
	char *out, *o;
	uint32_t i, cp;

	if (kind != 1 && kind != 2 && kind != 4)
		kind = 1, n = 0;
	if ((size_t)n * kind > sz)
		n = sz / kind;
	out = malloc((size_t)n * 4 + 1);
	if (!out)
		return NULL;
	o = out;
	for (i = 0; i < n; i++) {
		if (kind == 1)
			cp = data[i];
		else if (kind == 2)
			cp = data[2 * i] | data[2 * i + 1] << 8;
		else
			cp = data[4 * i] | data[4 * i + 1] << 8 | data[4 * i + 2] << 16 |
			     (uint32_t)data[4 * i + 3] << 24;
		if (cp < 0x80) {
			*o++ = cp ? cp : '?';
		} else if (cp < 0x800) {
			*o++ = 0xc0 | cp >> 6;
			*o++ = 0x80 | (cp & 0x3f);
		} else if (cp < 0x10000) {
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd; /* a lone surrogate: not UTF-8 */
			*o++ = 0xe0 | cp >> 12;
			*o++ = 0x80 | (cp >> 6 & 0x3f);
			*o++ = 0x80 | (cp & 0x3f);
		} else if (cp < 0x110000) {
			*o++ = 0xf0 | cp >> 18;
			*o++ = 0x80 | (cp >> 12 & 0x3f);
			*o++ = 0x80 | (cp >> 6 & 0x3f);
			*o++ = 0x80 | (cp & 0x3f);
		} else {
			*o++ = '?';
		}
	}
	*o = '\0';
	return out;
}

int python__code(struct python *py, const struct py_code_record *r)
{
	struct py_target *t = target_get(py, r->tgid, true);
	uint64_t t0 = now_ns();
	struct py_code *c, *old;

	py->stats.codes++;
	if (!t)
		return -ENOMEM;
	if (t->codes_cnt >= PY_CODES_MAX) {
		py->stats.codes_dropped++;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->code = r->code;
	c->key = r->key;
	c->firstlineno = r->firstlineno;
	c->minor = r->version_minor;
	c->linetable_len = min_t(uint32_t, r->linetable_len, sizeof(r->linetable));
	c->name = string_utf8(r->name, r->name_len, r->name_kind, sizeof(r->name));
	c->file = string_utf8(r->file, r->file_len, r->file_kind, sizeof(r->file));
	c->linetable = malloc(c->linetable_len ? c->linetable_len : 1);
	if (!c->name || !c->file || !c->linetable) {
		code_free(c);
		return -ENOMEM;
	}
	memcpy(c->linetable, r->linetable, c->linetable_len);
	/* Copied again (its py_codes_seen slot was taken), or a code object made in the memory of
	 * a freed one: the newer copy wins, and the cache holds a code object per address. */
	HASH_FIND(hh, t->codes, &c->code, sizeof(c->code), old);
	if (old) {
		HASH_DEL(t->codes, old);
		code_free(old);
		t->codes_cnt--;
	}
	HASH_ADD(hh, t->codes, code, sizeof(c->code), c);
	t->codes_cnt++;
	py->stats.code_ns += now_ns() - t0;
	return 0;
}

int python__record_check(const struct record_header *hdr, size_t len)
{
	const struct py_stack_record *py_stack = (const struct py_stack_record *)hdr;
	size_t sz;

	if (len < sizeof(*hdr) || hdr->sz > len || hdr->sz < sizeof(*hdr))
		return -EINVAL;
	sz = hdr->sz;
	switch (hdr->type) {
	case RECORD_PY_STACK:
		if (sz < offsetof(struct py_stack_record, frames))
			return -EINVAL;
		if (py_stack->cnt > BPFPROF_PY_FRAMES_MAX ||
		    py_stack->cnt > (sz - offsetof(struct py_stack_record, frames)) /
					    sizeof(struct py_frame))
			return -EINVAL;
		return 0;
	case RECORD_PY_CODE:
		if (sz < sizeof(struct py_code_record))
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

void python__stack(struct python *py, const struct py_stack_record *r)
{
	size_t len = min_t(size_t, r->hdr.sz, sizeof(*r));
	struct py_stack_record *p;

	if (r->cpu >= PENDING_CPUS_MAX)
		return;
	if (r->stop < ARRAY_SIZE(py->stats.stops))
		py->stats.stops[r->stop]++;
	/* One kept before it whose sample was lost: counted unmatched. */
	p = pending__put(&py->pending, r->cpu, r->tid, r->time_ns, r, len);
	py->stats.unmatched = py->pending.unmatched;
	if (!p)
		return;
	if (len < offsetof(struct py_stack_record, frames))
		memset((char *)p + len, 0, offsetof(struct py_stack_record, frames) - len);
	/* python__record_check() checked cnt; a caller that did not cannot make it overrun. */
	p->cnt = min_t(size_t, p->cnt,
		       (len - offsetof(struct py_stack_record, frames)) / sizeof(p->frames[0]));
}

/* The CPython minor version a file's name gives: python3.X, libpython3.X.so[.N...]; -1 else. */
static int name_minor(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned minor;
	int end = 0;

	base = base ? base + 1 : path;
	if (sscanf(base, "python3.%u%n", &minor, &end) == 1 && !base[end])
		return minor;
	if (sscanf(base, "libpython3.%u.so%n", &minor, &end) == 1 &&
	    (!base[end] || base[end] == '.'))
		return minor;
	return -1;
}

/* value of symbol name (and its size) from .dynsym, else .symtab; false when absent. */
static bool elf_symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	static const uint32_t types[] = { SHT_DYNSYM, SHT_SYMTAB };
	size_t i, t, n, len = strlen(name);
	Elf_Data *syms, *strs;
	const char *s;
	GElf_Sym sym;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		if (!elf_read__symbols(elf, types[t], &syms, &strs))
			continue;
		n = syms->d_size / sizeof(Elf64_Sym);
		for (i = 1; i < n; i++) {
			if (!gelf_getsym(syms, i, &sym) || !sym.st_value ||
			    sym.st_name >= strs->d_size)
				continue;
			s = (const char *)strs->d_buf + sym.st_name;
			/* The name and its NUL inside the table, whatever the file holds. */
			if (strs->d_size - sym.st_name > len && !memcmp(s, name, len + 1)) {
				*value = sym.st_value;
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

/* Whether every frame field the BPF walk reads lies within its read of a frame, and every code
 * object field py_code_ident() reads within its read of a code object (from co_firstlineno's
 * 8-byte word on) and the string header's 24 bytes from offset 16. */
bool python__offsets_fit(const struct py_offsets *o)
{
	uint16_t end = max_t(uint16_t, o->frame_back, max_t(uint16_t, o->frame_code,
							     o->frame_instr));
	uint16_t start = o->code_firstlineno & ~7u, code_end;

	if (o->frame_owner != PY_OFF_NONE)
		end = max_t(uint16_t, end, o->frame_owner);
	if (end + 8 > BPFPROF_PY_FRAME_READ_SZ)
		return false;
	if (o->code_filename < start || o->code_name < start || o->code_linetable < start ||
	    (o->code_serial != PY_OFF_NONE && o->code_serial < start))
		return false;
	code_end = max_t(uint16_t, o->code_filename, max_t(uint16_t, o->code_name,
							    o->code_linetable));
	if (o->code_serial != PY_OFF_NONE)
		code_end = max_t(uint16_t, code_end, o->code_serial);
	return code_end + 8 - start <= BPFPROF_PY_CODE_READ_SZ && o->unicode_state >= 16 &&
	       o->unicode_state + 4 <= 16 + 24;
}

/*
 * What CPython 3.13+ does not publish in _Py_DebugOffsets and the BPF walk needs, per minor
 * version (the headers of Debian sid's 3.13.18, 3.14.10 and 3.15.2 under Include/internal/ and
 * Include/cpython/; the owner values also as seen in live processes of each).
 */
struct py_unpublished {
	unsigned int minor;
	/* _PyInterpreterFrame.owner of _PyEval_EvalFrameDefault's entry frame (Python/ceval.c):
	 * FRAME_OWNED_BY_CSTACK (3) in 3.13, FRAME_OWNED_BY_INTERPRETER (3) from 3.14 (enum
	 * _frameowner: pycore_frame.h, 3.14+ pycore_interpframe_structs.h). */
	uint8_t owner_entry;
	/* f_executable's tag bits: 0 (a PyObject *, 3.13); Py_TAG_BITS of a default build's
	 * _PyStackRef (pycore_stackref.h: 3 in 3.14 and 3.15). */
	uint8_t code_tag;
	/* sizeof(PyCompactUnicodeObject) - sizeof(PyASCIIObject): utf8_length and utf8
	 * (cpython/unicodeobject.h; 3.15 publishes the size, 3.13 and 3.14 do not). */
	uint8_t compact_extra;
	/* offsetof(PyCodeObject, co_version) - offsetof(PyCodeObject, co_firstlineno): the five
	 * ints co_nlocalsplus, co_framesize, co_nlocals, co_ncellvars, co_nfreevars between
	 * (cpython/code.h, _PyCode_DEF, 3.12 to 3.15); co_version is a uint32_t serial
	 * (init_code(), Objects/codeobject.c). */
	uint8_t serial_after_firstlineno;
	/* PyThreadState.base_frame is published and must be (3.15+). */
	bool base_frame;
};

static const struct py_unpublished py_unpublished[] = {
	{ .minor = 13,
	  .owner_entry = 3,
	  .code_tag = 0,
	  .compact_extra = 16,
	  .serial_after_firstlineno = 24 },
	{ .minor = 14,
	  .owner_entry = 3,
	  .code_tag = 3,
	  .compact_extra = 16,
	  .serial_after_firstlineno = 24 },
	{ .minor = 15,
	  .owner_entry = 3,
	  .code_tag = 3,
	  .compact_extra = 16,
	  .serial_after_firstlineno = 24,
	  .base_frame = true },
};

/* Whether [a, a + an) and [b, b + bn) overlap. */
static bool ranges_meet(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/* A published offset as a py_offsets field: false (why set) when absent or too large. */
static bool off16(uint64_t v, const char *name, uint16_t *out, char *why, size_t why_sz)
{
	if (v == PY_DEBUG_OFF_NONE || v >= PY_OFF_NONE) {
		snprintf(why, why_sz, "%s %s", name,
			 v == PY_DEBUG_OFF_NONE ? "not published" : "too large");
		return false;
	}
	*out = v;
	return true;
}

int python__offsets_from_debug(const struct py_debug_offsets *d, struct py_offsets *o, char *why,
			       size_t why_sz)
{
	const struct py_unpublished *u = NULL;
	uint64_t serial;
	bool ok = true;
	size_t i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < ARRAY_SIZE(py_unpublished); i++)
		if (py_unpublished[i].minor == d->minor)
			u = &py_unpublished[i];
	if (!u) {
		snprintf(why, why_sz, "no table of its frame owners and tag bits");
		return -EOPNOTSUPP;
	}
	if (d->free_threaded) {
		snprintf(why, why_sz, "free-threaded build (--disable-gil)");
		return -EOPNOTSUPP;
	}
#define OFF(field, v) (ok = ok && off16((v), #v, &o->field, why, why_sz))
	OFF(runtime_interp_head, d->runtime_state.interpreters_head);
	OFF(interp_next, d->interpreter_state.next);
	OFF(interp_tstate_head, d->interpreter_state.threads_head);
	OFF(tstate_next, d->thread_state.next);
	OFF(tstate_native_tid, d->thread_state.native_thread_id);
	OFF(tstate_frame, d->thread_state.current_frame);
	OFF(tstate_thread_id, d->thread_state.thread_id);
	OFF(frame_back, d->interpreter_frame.previous);
	OFF(frame_code, d->interpreter_frame.executable);
	OFF(frame_instr, d->interpreter_frame.instr_ptr);
	OFF(frame_owner, d->interpreter_frame.owner);
	OFF(code_bytecode, d->code_object.co_code_adaptive);
	OFF(code_firstlineno, d->code_object.firstlineno);
	OFF(code_filename, d->code_object.filename);
	OFF(code_name, d->code_object.qualname);
	OFF(code_linetable, d->code_object.linetable);
	OFF(unicode_state, d->unicode_object.state);
	OFF(unicode_ascii_sz, d->unicode_object.asciiobject_size);
	OFF(bytes_sval, d->bytes_object.ob_sval);
	if (u->base_frame)
		OFF(tstate_base_frame, d->thread_state.base_frame);
	else
		o->tstate_base_frame = PY_OFF_NONE;
#undef OFF
	if (!ok)
		return -ERANGE;
	/* The BPF side reads a string's length and a bytes object's ob_size at 16 (PyVarObject's
	 * ob_size, PyASCIIObject.length after PyObject_HEAD). */
	if (d->unicode_object.length != 16 || d->bytes_object.ob_size != 16) {
		snprintf(why, why_sz,
			 "unicode_object.length %llu, bytes_object.ob_size %llu: "
			 "bpfprof reads them at 16",
			 (unsigned long long)d->unicode_object.length,
			 (unsigned long long)d->bytes_object.ob_size);
		return -ERANGE;
	}
	o->cframe_frame = PY_OFF_NONE;
	o->cframe_previous = PY_OFF_NONE;
	o->unicode_compact_sz = o->unicode_ascii_sz + u->compact_extra;
	o->frames = PY_FRAMES_SHIM;
	o->version_minor = d->minor;
	o->frame_owner_entry = u->owner_entry;
	o->frame_code_tag = u->code_tag;
	/* co_version where the table says, if it lies in the code object and clear of the fields
	 * read beside it; else the identity reads the strings (PY_OFF_NONE). */
	serial = d->code_object.firstlineno + u->serial_after_firstlineno;
	o->code_serial = PY_OFF_NONE;
	if (serial + 4 <= d->code_object.size && serial < PY_OFF_NONE &&
	    !ranges_meet(serial, 4, d->code_object.firstlineno, 4) &&
	    !ranges_meet(serial, 4, d->code_object.filename, 8) &&
	    !ranges_meet(serial, 4, d->code_object.qualname, 8) &&
	    !ranges_meet(serial, 4, d->code_object.linetable, 8) &&
	    !ranges_meet(serial, 4, d->code_object.co_code_adaptive, 2))
		o->code_serial = serial;
	if (!python__offsets_fit(o)) {
		snprintf(why, why_sz,
			 "its frame and code object fields lie beyond bpfprof's reads "
			 "(%d and %d bytes)",
			 BPFPROF_PY_FRAME_READ_SZ, BPFPROF_PY_CODE_READ_SZ);
		return -ERANGE;
	}
	return 0;
}

/* 3.13+: b's layout from the _Py_DebugOffsets of its file (elf, at path); false when refused
 * (said). */
static bool file_check_debug(struct py_file *b, Elf *elf, const char *path, uint64_t *runtime)
{
	struct py_debug_offsets d = {};
	char why[256] = "";
	size_t len = 0;
	int err;

	err = py_debug_offsets__from_elf(elf, b->dbg, sizeof(b->dbg), &len, runtime, why,
					 sizeof(why));
	if (!err)
		err = py_debug_offsets__parse(b->dbg, len, &d, why, sizeof(why));
	if (err == -EOPNOTSUPP && d.free_threaded) {
		pr_warn("%s: free-threaded CPython 3.%u (--disable-gil): bpfprof reads the frames "
			"of the default build only; native frames",
			path, d.minor);
		return false;
	}
	if (err) {
		if (err != -ENOENT)
			pr_warn("%s: CPython debug offsets refused: %s; native frames", path, why);
		return false;
	}
	err = python__offsets_from_debug(&d, &b->off, why, sizeof(why));
	if (err) {
		pr_warn("%s: CPython 3.%u: %s; native frames", path, d.minor, why);
		return false;
	}
	b->dbg_len = py_debug_offsets__len(d.minor);
	b->minor = d.minor;
	return true;
}

/* The CPython of file elf (at path, minor from its name): its symbols and layout, from the
 * table (3.10-3.12) or the file's _Py_DebugOffsets (3.13+); false when the file is not one
 * bpfprof can walk (said once per file when it is a CPython it does not read). */
static bool file_check(struct py_file *b, Elf *elf, const char *path, int minor)
{
	uint64_t runtime, rt_sz, eval, eval_sz, text = UINT64_MAX;
	bool found = false;
	GElf_Phdr ph;
	size_t i, n;

	if (minor >= 13) {
		if (!file_check_debug(b, elf, path, &runtime))
			return false; /* python3.X linked to libpython3.X.so: the library has it */
	} else {
		if (!elf_symbol(elf, "_PyRuntime", &runtime, &rt_sz))
			return false;
		for (i = 0; i < python_versions_cnt; i++)
			if (python_versions[i].version_minor == minor) {
				b->off = python_versions[i];
				found = true;
			}
		if (!found || !python__offsets_fit(&b->off)) {
			pr_warn("%s: CPython 3.%d: bpfprof reads the frames of 3.10 to 3.15 only; "
				"its processes get native frames only",
				path, minor);
			return false;
		}
		b->minor = minor;
	}
	if (!elf_symbol(elf, "_PyEval_EvalFrameDefault", &eval, &eval_sz) || !eval_sz) {
		pr_warn("%s: no _PyEval_EvalFrameDefault symbol: native frames only", path);
		return false;
	}
	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			text = ph.p_vaddr - ph.p_offset;
			break;
		}
	if (text == UINT64_MAX)
		return false;
	b->runtime = runtime;
	b->runtime_off = runtime - text;
	b->eval_start = eval;
	b->eval_end = eval + eval_sz;
	return true;
}

/* b (ok) in py_binaries: BPF arms each process that maps it from now on. */
static void file_publish(struct python *py, const struct py_file *b)
{
	struct py_binary val = {};
	struct py_binary_key key;
	int err;

	if (!py->maps)
		return;
	key.dev = (uint64_t)major(b->dev) << 20 | minor(b->dev); /* the kernel's s_dev */
	key.ino = b->ino;
	val.runtime_off = b->runtime_off;
	val.off = b->off;
	err = py->maps->update(py->maps, "py_binaries", &key, &val);
	if (err && err != -ENOENT)
		pr_debug("py_binaries: %s", strerror(-err));
}

/* A new struct py_file of file (dev, ino) in py->files, checked (elf at path, minor from its
 * name) and published when ok. NULL: no memory. */
static struct py_file *file_add(struct python *py, uint64_t dev, uint64_t ino, Elf *elf,
				const char *path, int minor)
{
	struct py_file *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->dev = dev;
	b->ino = ino;
	HASH_ADD(hh, py->files, dev, 2 * sizeof(uint64_t), b);
	b->ok = file_check(b, elf, path, minor);
	if (b->ok) {
		pr_debug("%s: CPython 3.%d, _PyRuntime at 0x%llx", path, b->minor,
			 (unsigned long long)b->runtime);
		file_publish(py, b);
	}
	return b;
}

/* The struct py_file of m's file: checked at the first call that can open it (a file that
 * could not be opened is tried again: the next process may reach it), or before by
 * python__attach(). NULL: not a CPython bpfprof reads. */
static struct py_file *file_get(struct python *py, struct addr_space *as, const struct mapping *m,
				int minor)
{
	uint64_t id[2] = { m->dev, m->inode };
	struct py_file *b;

	HASH_FIND(hh, py->files, id, sizeof(id), b);
	if (b && (!b->ok || b->module))
		return b->ok ? b : NULL;
	m = addr_space__mapping(as, m->start); /* opens the file */
	if (!m || !m->entry)
		return NULL;
	if (!b)
		b = file_add(py, id[0], id[1], m->entry->elf, m->path, minor);
	if (!b || !b->ok)
		return NULL;
	b->module = module__get(m->entry); /* the first process mapping it */
	return b;
}

/* py_procs for t: never over an entry BPF made at the mapping (its code objects are sent). */
static void target_arm(struct python *py, struct py_target *t)
{
	struct py_proc val = {};
	int err;

	t->armed_ns = now_ns();
	if (!py->maps)
		return;
	val.runtime = t->runtime;
	val.off = t->file->off;
	val.gen = (uint32_t)t->armed_ns;
	err = py->maps->insert(py->maps, "py_procs", &t->tgid, &val);
	if (err && err != -EEXIST && err != -ENOENT)
		pr_debug("py_procs: %s", strerror(-err));
}

/*
 * Whether process t's _Py_DebugOffsets (its file's, 3.13+) are the file's: the first dbg_len
 * bytes of its _PyRuntime, read as bytes (nothing in them is followed). A process whose copy
 * differs, or cannot be read, is not walked: said once per file (path).
 */
static bool target_debug_same(struct py_target *t, const char *path)
{
	struct py_file *b = t->file;
	uint8_t mem[PY_DEBUG_OFFSETS_MAX];
	struct iovec local = { mem, b->dbg_len },
		     remote = { (void *)(uintptr_t)t->runtime, b->dbg_len };
	ssize_t n;

	if (!b->dbg_len)
		return true;
	n = process_vm_readv(t->tgid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)b->dbg_len && !memcmp(mem, b->dbg, b->dbg_len))
		return true;
	if (n < 0 && errno == ESRCH)
		return false; /* gone */
	if (!b->mem_warned)
		pr_warn("%s: CPython 3.%d: the _Py_DebugOffsets in process %u's memory %s the "
			"file's: native frames",
			path, b->minor, t->tgid,
			n == (ssize_t)b->dbg_len ? "differ from" :
						   "could not be read to compare with");
	b->mem_warned = true;
	return false;
}

/* Looks for the CPython among the mappings of t; arms the BPF walk when found. */
static void target_check(struct python *py, struct py_target *t, struct addr_space *as)
{
	size_t i, n = addr_space__mapping_cnt(as);
	const struct mapping *m;
	struct py_file *b;
	int minor;

	for (i = 0; i < n && !t->file; i++) {
		m = addr_space__mapping_at(as, i);
		if (!m->path || (minor = name_minor(m->path)) < 0)
			continue;
		b = file_get(py, as, m, minor);
		if (!b)
			continue;
		/* Opened: the mapping now has its bias. */
		m = addr_space__mapping(as, m->start);
		if (!m || m->entry != b->module)
			continue;
		t->file = b;
		t->runtime = b->runtime + m->bias;
		/* Live only: a replay's processes are gone (and nothing is armed). */
		if (py->maps && !target_debug_same(t, m->path)) {
			/* BPF may have armed it from py_binaries: not walked. */
			py->maps->remove(py->maps, "py_procs", &t->tgid);
			t->refused = true;
			t->file = NULL;
			return;
		}
		py->stats.processes++;
		target_arm(py, t);
	}
}

/* Splits the pending stack into groups: each ends with a PY_INSTR_ENTRY frame (or the last). */
static void groups_find(struct python *py)
{
	const struct py_stack_record *r = py->stack;
	size_t i;

	py->groups = 0;
	py->group_start[0] = 0;
	for (i = 0; i < r->cnt; i++) {
		if ((r->frames[i].instr & PY_INSTR_ENTRY) || i + 1 == r->cnt)
			py->group_start[++py->groups] = i + 1;
	}
}

/* Looks for t's CPython (target_check()) unless found, refused, or its mappings (as) are the
 * ones last looked at. */
static void target_look(struct python *py, struct py_target *t, struct addr_space *as)
{
	uint64_t gen = addr_space__generation(as);

	if (!t->file && !t->refused && t->maps_gen != gen) {
		t->maps_gen = gen;
		target_check(py, t, as);
	}
}

/*
 * The directories the dynamic loader searches for a library the executable elf needs, in its
 * order (ld.so(8)) without its cache: DT_RPATH (when the file has no DT_RUNPATH),
 * LD_LIBRARY_PATH (the command inherits bpfprof's environment), DT_RUNPATH, then the default
 * directories. $ORIGIN (exe_dir) is expanded; a directory with another dynamic string token
 * ($LIB, $PLATFORM) is skipped. Colon-separated into out (sz bytes); false when it does not
 * fit.
 */
#if defined(__x86_64__)
#define PY_LIB_TRIPLE "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define PY_LIB_TRIPLE "aarch64-linux-gnu"
#else
#define PY_LIB_TRIPLE "unknown"
#endif
static const char py_lib_default_dirs[] = "/lib/" PY_LIB_TRIPLE ":/usr/lib/" PY_LIB_TRIPLE
					  ":/lib64:/usr/lib64:/lib:/usr/lib";

/* Appends the colon-separated dirs to out (used of sz bytes), $ORIGIN as exe_dir. */
static void dirs_append(char *out, size_t sz, size_t *used, const char *dirs, const char *exe_dir)
{
	const char *p, *end, *rest;
	int n;

	for (p = dirs; p && *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		rest = p;
		if (!strncmp(p, "$ORIGIN", 7) || !strncmp(p, "${ORIGIN}", 9)) {
			rest = p + (p[1] == '{' ? 9 : 7);
			if (rest < end && *rest != '/')
				continue;
		}
		/* Only absolute directories: a relative one is the loader's current directory. */
		if (end == p || (rest == p && *p != '/') || memchr(rest, '$', end - rest))
			continue;
		n = snprintf(out + *used, sz - *used, "%s%s%.*s", *used ? ":" : "",
			     rest == p ? "" : exe_dir, (int)(end - rest), rest);
		if (n < 0 || (size_t)n >= sz - *used) {
			out[*used] = '\0';
			return;
		}
		*used += n;
	}
}

/* The first DT_NEEDED of elf named like a libpython3.X.so (its name in need, sz bytes), and the
 * directories to search for it (search, search_sz bytes; lib_dirs()); false when none. */
static bool needed_libpython(Elf *elf, const char *exe_dir, char *need, size_t sz, char *search,
			     size_t search_sz)
{
	const char *rpath = NULL, *runpath = NULL, *name;
	Elf_Data *data, *strs;
	Elf_Scn *scn = NULL, *str_scn;
	bool found = false;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	size_t i, used = 0;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			break;
	if (!scn || !(data = elf_getdata(scn, NULL)) || !(str_scn = elf_getscn(elf, sh.sh_link)) ||
	    !(strs = elf_getdata(str_scn, NULL)) || !strs->d_buf)
		return false;
	for (i = 0; i < data->d_size / sizeof(Elf64_Dyn) && gelf_getdyn(data, i, &dyn); i++) {
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
			continue;
		name = elf_read__name(strs->d_buf, strs->d_size, dyn.d_un.d_val, NULL);
		if (!name)
			continue;
		if (dyn.d_tag == DT_RPATH)
			rpath = name;
		else if (dyn.d_tag == DT_RUNPATH)
			runpath = name;
		else if (!found && !strchr(name, '/') && !strncmp(name, "libpython3.", 11) &&
			 name_minor(name) >= 0 && strlen(name) < sz) {
			strcpy(need, name);
			found = true;
		}
	}
	if (!found)
		return false;
	search[0] = '\0';
	if (!runpath)
		dirs_append(search, search_sz, &used, rpath, exe_dir);
	dirs_append(search, search_sz, &used, getenv("LD_LIBRARY_PATH"), exe_dir);
	dirs_append(search, search_sz, &used, runpath, exe_dir);
	dirs_append(search, search_sz, &used, py_lib_default_dirs, exe_dir);
	return true;
}

/*
 * The struct py_file (*bp) of the regular file open at fd (st its stat, path the name it was
 * opened by, minor from its name), checked and published (file_add()) unless it was before;
 * its Elf in *elf (elf_end() it). 0; -ENOEXEC when it is not an ELF file of machine (0: any),
 * -ENOMEM.
 */
static int attach_file(struct python *py, int fd, const struct stat *st, const char *path,
		       int minor, int machine, struct py_file **bp, Elf **elf)
{
	uint64_t id[2] = { st->st_dev, st->st_ino };
	GElf_Ehdr eh;

	*elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF || !gelf_getehdr(*elf, &eh) ||
	    (machine && eh.e_machine != machine)) {
		elf_end(*elf);
		*elf = NULL;
		return -ENOEXEC;
	}
	HASH_FIND(hh, py->files, id, sizeof(id), *bp);
	if (!*bp)
		*bp = file_add(py, id[0], id[1], *elf, path, minor);
	if (!*bp) {
		elf_end(*elf);
		*elf = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The path the kernel gives the file open at fd (its symlinks resolved), in out (sz bytes). */
static bool fd_path(int fd, char *out, size_t sz)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, sz - 1);
	if (n <= 0 || (size_t)n >= sz - 1)
		return false;
	out[n] = '\0';
	return out[0] == '/';
}

/*
 * bpfprof -- CMD: exe, the file the command's process is about to exec, in py_binaries when it
 * is a CPython bpfprof reads (python3.X with _PyRuntime), else the libpython3.X.so it needs
 * (needed_libpython(), each candidate opened O_NOFOLLOW, as a file another user may control):
 * BPF arms the process at its exec or at the library's mmap.
 */
static int attach_exec(struct python *py, const char *exe)
{
	char path[PATH_MAX], need[256], search[4096], lib[PATH_MAX], *slash;
	int fd, lfd, minor, err;
	struct py_file *b, *lb;
	const char *p, *end;
	Elf *elf, *lelf;
	struct stat st;
	GElf_Ehdr eh;

	/* As Go's attach: exe is the command's file, symlinks followed as its exec will. */
	fd = file__open_regular(exe, 0, &st);
	if (fd < 0)
		return 0;
	if (!fd_path(fd, path, sizeof(path)) || (minor = name_minor(path)) < 0 ||
	    !strncmp(strrchr(path, '/') + 1, "lib", 3)) {
		close(fd);
		return 0;
	}
	err = attach_file(py, fd, &st, path, minor, 0, &b, &elf);
	if (err || b->ok || !gelf_getehdr(elf, &eh))
		goto out;
	/* A python3.X without _PyRuntime: the libpython3.X.so it needs has it. */
	slash = strrchr(path, '/');
	*slash = '\0'; /* path: exe's directory, for $ORIGIN */
	if (!needed_libpython(elf, slash == path ? "/" : path, need, sizeof(need), search,
			      sizeof(search)))
		goto out;
	for (p = search; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(lib, sizeof(lib), "%.*s/%s", (int)(end - p), p, need) >=
		    (int)sizeof(lib))
			continue;
		lfd = file__open_regular(lib, O_NOFOLLOW, &st);
		if (lfd < 0)
			continue;
		err = attach_file(py, lfd, &st, lib, name_minor(need), eh.e_machine, &lb, &lelf);
		elf_end(lelf);
		close(lfd);
		if (err != -ENOEXEC)
			break; /* the loader's choice: the first ELF file of its machine */
	}
out:
	elf_end(elf);
	close(fd);
	return err == -ENOEXEC ? 0 : err;
}

int python__attach(struct python *py, uint32_t tgid, const char *exe, bool next_exec)
{
	struct py_target *t;
	struct addr_space *as;
	struct proc *p;

	if (!py->maps)
		return 0; /* a replay: nothing to arm */
	if (next_exec)
		return attach_exec(py, exe);
	if (!py->pt)
		return 0;
	p = proc_table__find(py->pt, tgid, true);
	t = target_get(py, tgid, true);
	if (!p || !t)
		return -ENOMEM;
	as = proc__addr_space(p);
	if (!addr_space__maps_read(as))
		addr_space__mapping(as, 0); /* reads /proc/PID/maps */
	target_look(py, t, as);
	return 0;
}

size_t python__sample(struct python *py, struct addr_space *as, const struct sample_record *s)
{
	struct py_target *t = target_get(py, s->tgid, true);
	const struct py_stack_record *pend;

	py->cur = NULL;
	py->stack = NULL;
	py->groups = 0;
	if (!t)
		return 0;
	target_look(py, t, as);
	/* Taken, or left for no sample (counted unmatched when it was another's). */
	pend = pending__take(&py->pending, s->cpu, s->tid, s->time_ns);
	py->stats.unmatched = py->pending.unmatched;
	/* A CPython process sampled without its Python frames: its py_procs entry is gone
	 * (evicted) or was never made. */
	if (!pend && t->file && (s->flags & SAMPLE_F_USER_REGS) &&
	    now_ns() - t->armed_ns > PY_REARM_NS)
		target_arm(py, t);
	if (!pend || !t->file || !pend->cnt)
		return 0;
	py->cur = t;
	py->stack = pend;
	groups_find(py);
	py->stats.stacks++;
	return py->groups;
}

uint64_t python__group_anchor(const struct python *py, size_t g)
{
	if (!py->stack || g >= py->groups)
		return 0;
	return py->stack->frames[py->group_start[g + 1] - 1].anchor;
}

void python__placed(struct python *py, bool by_anchor, size_t at_root)
{
	py->stats.by_anchor += by_anchor;
	py->stats.groups_at_root += at_root;
}

int python__is_eval(struct python *py, const struct unwind_frame *f)
{
	const struct py_file *b = py->cur ? py->cur->file : NULL;

	return b && f->mapping && f->mapping->entry == b->module && f->elf_addr >= b->eval_start &&
	       f->elf_addr < b->eval_end;
}

/* The location of one Python frame: (code object's file, line) named by its qualified name. */
static int64_t frame_location(struct python *py, struct aggregate *agg, const struct py_frame *f)
{
	struct agg_line line = {};
	const struct agg_location *loc;
	int64_t name, file, id, sys;
	struct py_code *c;
	int ln;

	HASH_FIND(hh, py->cur->codes, &f->code, sizeof(f->code), c);
	if (c && c->key != f->key)
		c = NULL; /* another code object at that address, whose copy has not come */
	if (!c) {
		py->stats.codes_missing++;
		name = aggregate__string(agg, "[unknown]");
		if (name < 0)
			return name;
		return aggregate__location(agg, FRAME_PYTHON, NULL, 0, name);
	}
	ln = python_line(c->minor, c->linetable, c->linetable_len, c->firstlineno,
			 f->instr & ~PY_INSTR_ENTRY);
	if (ln < 0)
		ln = c->firstlineno;
	name = aggregate__string(agg, c->name);
	file = name < 0 ? name : aggregate__string(agg, c->file);
	if (file < 0)
		return file;
	id = aggregate__location(agg, FRAME_PYTHON, NULL, (uint64_t)file << 32 | (uint32_t)ln,
				 name);
	if (id < 0)
		return id;
	loc = aggregate__loc(agg, id);
	if (loc->lines_cnt == 1 && !loc->lines[0].file) {
		/* pprof's Function.system_name "FILE:QUALNAME", not the name: go tool pprof takes a
		 * system name with <> for C++ and strips them from the name it shows ("<module>",
		 * "<lambda>"), unless the two differ. */
		sys = aggregate__string_fmt(agg, "%s:%s", c->file, c->name);
		if (sys < 0)
			return sys;
		line.function = name;
		line.file = file;
		line.line = ln;
		line.system_name = sys;
		return aggregate__set_lines(agg, id, &line, 1) ?: id;
	}
	return id;
}

int python__group(struct python *py, struct aggregate *agg, size_t g, uint32_t *locs, size_t cap)
{
	size_t i, n = 0;
	int64_t id;

	if (!py->stack || g >= py->groups)
		return 0;
	for (i = py->group_start[g + 1]; i-- > py->group_start[g] && n < cap;) {
		id = frame_location(py, agg, &py->stack->frames[i]);
		if (id < 0)
			return id;
		locs[n++] = id;
	}
	py->stats.frames += n;
	return n;
}

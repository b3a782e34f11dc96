// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* python_debug_offsets.c: CPython's _Py_DebugOffsets, read from a file or a process, checked. */
#include <errno.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "runtime/python/python_debug_offsets.h"
#include "util/elf_read.h"
#include "util/util.h"

#define PY_DEBUG_COOKIE "xdebugpy"

/*
 * The layout of _Py_DebugOffsets in each known minor, member by member as CPython declares it
 * (every member a uint64_t after the 8-byte cookie), written from the headers named in
 * python_debug_offsets.h. Only the positions matter: a member added, removed or moved within
 * a minor's struct moves every one after it.
 */
struct dbg_head {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
};

struct dbg_313 {
	struct dbg_head h;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	uint64_t type_object[4], tuple_object[3], list_object[3], dict_object[3], float_object[2],
		long_object[3];
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
	uint64_t gc[2];
};

/* interpreter_state and what follows thread_state: 3.14 and 3.15 alike (3.15's groups that
 * grew are declared apart). */
#define DBG_314_INTERP                                                                             \
	struct {                                                                                   \
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, \
			builtins, ceval_gil, gil_runtime_state, gil_runtime_state_enabled,         \
			gil_runtime_state_locked, gil_runtime_state_holder,                        \
			code_object_generation, tlbc_generation;                                   \
	} interpreter_state
#define DBG_314_FRAME_CODE                                                                       \
	struct {                                                                                 \
		uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, \
			tlbc_index;                                                              \
	} interpreter_frame;                                                                     \
	struct {                                                                                 \
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,       \
			localsplusnames, localspluskinds, co_code_adaptive, co_tlbc;             \
	} code_object;                                                                           \
	struct {                                                                                 \
		uint64_t size, ob_type;                                                          \
	} pyobject
#define DBG_314_GEN                                                \
	struct {                                                   \
		uint64_t size, gi_name, gi_iframe, gi_frame_state; \
	} gen_object;                                              \
	uint64_t llist_node[2], debugger_support[6]

struct dbg_314 {
	struct dbg_head h;
	DBG_314_INTERP;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	DBG_314_FRAME_CODE;
	uint64_t type_object[4], tuple_object[3], list_object[3], set_object[4], dict_object[3],
		float_object[2], long_object[3];
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
	uint64_t gc[2];
	DBG_314_GEN;
};

struct dbg_315 {
	struct dbg_head h;
	DBG_314_INTERP;
	struct {
		uint64_t size, prev, next, interp, current_frame, base_frame, last_profiled_frame,
			last_profiled_frame_seq, thread_id, native_thread_id, datastack_chunk,
			status, holds_gil, gil_requested, current_exception, exc_state;
	} thread_state;
	uint64_t err_stackitem[1];
	DBG_314_FRAME_CODE;
	uint64_t type_object[6], heap_type_object[2], tuple_object[3], list_object[3],
		set_object[4], dict_object[3], float_object[2], long_object[3];
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size, compactunicodeobject_size;
	} unicode_object;
	uint64_t gc[5];
	DBG_314_GEN;
};

_Static_assert(sizeof(struct dbg_313) == 73 * 8, "3.13: 73 members");
_Static_assert(sizeof(struct dbg_314) == 95 * 8, "3.14: 95 members");
_Static_assert(sizeof(struct dbg_315) == PY_DEBUG_OFFSETS_MAX, "3.15 is the largest");

size_t py_debug_offsets__len(unsigned int minor)
{
	switch (minor) {
	case 13:
		return sizeof(struct dbg_313);
	case 14:
		return sizeof(struct dbg_314);
	case 15:
		return sizeof(struct dbg_315);
	default:
		return 0;
	}
}

/* why (why_sz bytes: none when 0) says what fmt does, NUL-terminated. */
__attribute__((format(printf, 3, 4))) static void fail(char *why, size_t why_sz, const char *fmt,
						       ...)
{
	va_list ap;

	if (why_sz) {
		va_start(ap, fmt);
		vsnprintf(why, why_sz, fmt, ap);
		va_end(ap);
	}
}

/* The members every known minor has, copied from m (a struct dbg_3xx) into o. */
#define COPY_COMMON(o, m)                                                                      \
	do {                                                                                   \
		(o)->runtime_state.size = (m)->h.runtime_state.size;                           \
		(o)->runtime_state.interpreters_head = (m)->h.runtime_state.interpreters_head; \
		(o)->interpreter_state.size = (m)->interpreter_state.size;                     \
		(o)->interpreter_state.next = (m)->interpreter_state.next;                     \
		(o)->interpreter_state.threads_head = (m)->interpreter_state.threads_head;     \
		(o)->thread_state.size = (m)->thread_state.size;                               \
		(o)->thread_state.next = (m)->thread_state.next;                               \
		(o)->thread_state.current_frame = (m)->thread_state.current_frame;             \
		(o)->thread_state.thread_id = (m)->thread_state.thread_id;                     \
		(o)->thread_state.native_thread_id = (m)->thread_state.native_thread_id;       \
		(o)->interpreter_frame.size = (m)->interpreter_frame.size;                     \
		(o)->interpreter_frame.previous = (m)->interpreter_frame.previous;             \
		(o)->interpreter_frame.executable = (m)->interpreter_frame.executable;         \
		(o)->interpreter_frame.instr_ptr = (m)->interpreter_frame.instr_ptr;           \
		(o)->interpreter_frame.owner = (m)->interpreter_frame.owner;                   \
		(o)->code_object.size = (m)->code_object.size;                                 \
		(o)->code_object.filename = (m)->code_object.filename;                         \
		(o)->code_object.name = (m)->code_object.name;                                 \
		(o)->code_object.qualname = (m)->code_object.qualname;                         \
		(o)->code_object.linetable = (m)->code_object.linetable;                       \
		(o)->code_object.firstlineno = (m)->code_object.firstlineno;                   \
		(o)->code_object.co_code_adaptive = (m)->code_object.co_code_adaptive;         \
		(o)->pyobject.size = (m)->pyobject.size;                                       \
		(o)->pyobject.ob_type = (m)->pyobject.ob_type;                                 \
		(o)->bytes_object.size = (m)->bytes_object.size;                               \
		(o)->bytes_object.ob_size = (m)->bytes_object.ob_size;                         \
		(o)->bytes_object.ob_sval = (m)->bytes_object.ob_sval;                         \
		(o)->unicode_object.size = (m)->unicode_object.size;                           \
		(o)->unicode_object.state = (m)->unicode_object.state;                         \
		(o)->unicode_object.length = (m)->unicode_object.length;                       \
		(o)->unicode_object.asciiobject_size = (m)->unicode_object.asciiobject_size;   \
	} while (0)

/* 3.14's additions, in 3.14 and 3.15 alike. */
#define COPY_314(o, m)                                                                     \
	do {                                                                               \
		(o)->interpreter_state.threads_main = (m)->interpreter_state.threads_main; \
		(o)->interpreter_frame.stackpointer = (m)->interpreter_frame.stackpointer; \
		(o)->interpreter_frame.tlbc_index = (m)->interpreter_frame.tlbc_index;     \
		(o)->code_object.co_tlbc = (m)->code_object.co_tlbc;                       \
		(o)->gen_object.size = (m)->gen_object.size;                               \
		(o)->gen_object.gi_iframe = (m)->gen_object.gi_iframe;                     \
		(o)->gen_object.gi_frame_state = (m)->gen_object.gi_frame_state;           \
	} while (0)

/* The size of each structure used: whose (its group's name) and where in struct
 * py_debug_offsets. */
struct dbg_size {
	const char *name;
	size_t at;
};

#define SIZE(g)                                               \
	{                                                     \
#g, offsetof(struct py_debug_offsets, g.size) \
	}
static const struct dbg_size sizes[] = {
	SIZE(runtime_state),	 SIZE(interpreter_state), SIZE(thread_state),
	SIZE(interpreter_frame), SIZE(code_object),	  SIZE(pyobject),
	SIZE(bytes_object),	 SIZE(unicode_object),	  SIZE(gen_object),
};
#undef SIZE

/* A member used: its name, where its offset and its structure's size are in struct
 * py_debug_offsets, and its own size in the target (x86_64, aarch64: 8-byte pointers and longs,
 * 4-byte ints; a char[] at a structure's end counts its first byte, which sizeof includes). */
struct dbg_member {
	const char *name;
	size_t at, size_at;
	unsigned int width;
};

#define MEMBER(g, f, w)                                              \
	{                                                            \
#g "." #f, offsetof(struct py_debug_offsets, g.f),   \
			offsetof(struct py_debug_offsets, g.size), w \
	}
static const struct dbg_member members[] = {
	MEMBER(runtime_state, interpreters_head, 8),
	MEMBER(interpreter_state, next, 8),
	MEMBER(interpreter_state, threads_head, 8),
	MEMBER(interpreter_state, threads_main, 8),
	MEMBER(thread_state, next, 8),
	MEMBER(thread_state, current_frame, 8),
	MEMBER(thread_state, base_frame, 8),
	MEMBER(thread_state, thread_id, 8),
	MEMBER(thread_state, native_thread_id, 8),
	MEMBER(interpreter_frame, previous, 8),
	MEMBER(interpreter_frame, executable, 8),
	MEMBER(interpreter_frame, instr_ptr, 8),
	MEMBER(interpreter_frame, owner, 1),
	MEMBER(interpreter_frame, stackpointer, 8),
	MEMBER(interpreter_frame, tlbc_index, 4),
	MEMBER(code_object, filename, 8),
	MEMBER(code_object, name, 8),
	MEMBER(code_object, qualname, 8),
	MEMBER(code_object, linetable, 8),
	MEMBER(code_object, firstlineno, 4),
	MEMBER(code_object, co_code_adaptive, 1),
	MEMBER(code_object, co_tlbc, 8),
	MEMBER(pyobject, ob_type, 8),
	MEMBER(bytes_object, ob_size, 8),
	MEMBER(bytes_object, ob_sval, 1),
	MEMBER(unicode_object, state, 4),
	MEMBER(unicode_object, length, 8),
	MEMBER(gen_object, gi_frame_state, 1),
};
#undef MEMBER

static uint64_t get(const struct py_debug_offsets *o, size_t at)
{
	uint64_t v;

	memcpy(&v, (const char *)o + at, sizeof(v));
	return v;
}

/* The checks of sizes and members on *o, filled: 0 or -ERANGE. */
static int check(const struct py_debug_offsets *o, char *why, size_t why_sz)
{
	const struct py_unicode_check {
		const char *name;
		uint64_t off;
		unsigned int width;
	} ascii[] = {
		{ "unicode_object.state", o->unicode_object.state, 4 },
		{ "unicode_object.length", o->unicode_object.length, 8 },
	};
	uint64_t v, sz;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		v = get(o, sizes[i].at);
		if (v == PY_DEBUG_OFF_NONE)
			continue; /* a structure this minor does not publish */
		if (!v || v > PY_DEBUG_STRUCT_MAX) {
			fail(why, why_sz, "%s.size %llu: not in 1..%u", sizes[i].name,
			     (unsigned long long)v, PY_DEBUG_STRUCT_MAX);
			return -ERANGE;
		}
	}
	for (i = 0; i < ARRAY_SIZE(members); i++) {
		v = get(o, members[i].at);
		sz = get(o, members[i].size_at);
		if (v == PY_DEBUG_OFF_NONE)
			continue;
		/* sz <= PY_DEBUG_STRUCT_MAX: v + width cannot wrap once v < sz */
		if (v >= sz || v + members[i].width > sz) {
			fail(why, why_sz, "%s %llu + %u past its structure's %llu bytes",
			     members[i].name, (unsigned long long)v, members[i].width,
			     (unsigned long long)sz);
			return -ERANGE;
		}
	}
	/* A compact ASCII string's data follows its PyASCIIObject, which holds state and length. */
	sz = o->unicode_object.asciiobject_size;
	if (!sz || sz > o->unicode_object.size) {
		fail(why, why_sz, "unicode_object.asciiobject_size %llu not in 1..%llu",
		     (unsigned long long)sz, (unsigned long long)o->unicode_object.size);
		return -ERANGE;
	}
	for (i = 0; i < ARRAY_SIZE(ascii); i++)
		if (ascii[i].off + ascii[i].width > sz) {
			fail(why, why_sz, "%s %llu + %u past the asciiobject_size %llu",
			     ascii[i].name, (unsigned long long)ascii[i].off, ascii[i].width,
			     (unsigned long long)sz);
			return -ERANGE;
		}
	/* A generator's frame is embedded, its last member: a whole _PyInterpreterFrame. */
	if (o->gen_object.size != PY_DEBUG_OFF_NONE &&
	    (o->gen_object.gi_iframe >= o->gen_object.size ||
	     o->gen_object.gi_iframe + o->interpreter_frame.size > o->gen_object.size)) {
		fail(why, why_sz,
		     "gen_object.gi_iframe %llu + the frame's %llu past its structure's %llu bytes",
		     (unsigned long long)o->gen_object.gi_iframe,
		     (unsigned long long)o->interpreter_frame.size,
		     (unsigned long long)o->gen_object.size);
		return -ERANGE;
	}
	return 0;
}

int py_debug_offsets__parse(const void *buf, size_t len, struct py_debug_offsets *out, char *why,
			    size_t why_sz)
{
	uint64_t version, free_threaded;
	unsigned int major, minor;
	size_t need;

	memset(out, 0, sizeof(*out));
	fail(why, why_sz, "%s", "");
	if (len < 8 || memcmp(buf, PY_DEBUG_COOKIE, 8)) {
		fail(why, why_sz, "%s", "no _Py_DebugOffsets cookie");
		return -EINVAL;
	}
	if (len < sizeof(struct dbg_head)) {
		fail(why, why_sz, "_Py_DebugOffsets cut at %zu bytes, before its version", len);
		return -EINVAL;
	}
	memcpy(&version, (const char *)buf + offsetof(struct dbg_head, version), 8);
	memcpy(&free_threaded, (const char *)buf + offsetof(struct dbg_head, free_threaded), 8);
	major = (version >> 24) & 0xff;
	minor = (version >> 16) & 0xff;
	need = major == 3 && !(version >> 32) ? py_debug_offsets__len(minor) : 0;
	out->version = version;
	out->minor = minor;
	if (!need) {
		if (version >> 32)
			fail(why, why_sz, "CPython debug offsets: version %#llx not known",
			     (unsigned long long)version);
		else
			fail(why, why_sz, "CPython %u.%u.%u debug offsets: version not known",
			     major, minor, (unsigned int)(version >> 8) & 0xff);
		return -EOPNOTSUPP;
	}
	if (len < need) {
		fail(why, why_sz, "CPython 3.%u debug offsets: %zu bytes, its struct has %zu",
		     minor, len, need);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	if (free_threaded) {
		out->free_threaded = true;
		fail(why, why_sz, "CPython 3.%u: free-threaded build (--disable-gil)", minor);
		return -EOPNOTSUPP;
	}
	/* Absent unless this minor has it. */
	out->interpreter_state.threads_main = PY_DEBUG_OFF_NONE;
	out->thread_state.base_frame = PY_DEBUG_OFF_NONE;
	out->interpreter_frame.stackpointer = PY_DEBUG_OFF_NONE;
	out->interpreter_frame.tlbc_index = PY_DEBUG_OFF_NONE;
	out->code_object.co_tlbc = PY_DEBUG_OFF_NONE;
	out->gen_object.size = PY_DEBUG_OFF_NONE;
	out->gen_object.gi_iframe = PY_DEBUG_OFF_NONE;
	out->gen_object.gi_frame_state = PY_DEBUG_OFF_NONE;
	if (minor == 13) {
		struct dbg_313 m;

		memcpy(&m, buf, sizeof(m));
		COPY_COMMON(out, &m);
	} else if (minor == 14) {
		struct dbg_314 m;

		memcpy(&m, buf, sizeof(m));
		COPY_COMMON(out, &m);
		COPY_314(out, &m);
	} else {
		struct dbg_315 m;

		memcpy(&m, buf, sizeof(m));
		COPY_COMMON(out, &m);
		COPY_314(out, &m);
		out->thread_state.base_frame = m.thread_state.base_frame;
	}
	/* A GIL build publishes 0 for the thread-local bytecode's members: none. */
	out->interpreter_frame.tlbc_index = PY_DEBUG_OFF_NONE;
	out->code_object.co_tlbc = PY_DEBUG_OFF_NONE;
	return check(out, why, why_sz);
}

/* The _PyRuntime symbol of elf (.dynsym, else .symtab): true and *sym when there is one. */
static bool runtime_symbol(Elf *elf, GElf_Sym *sym)
{
	static const uint32_t types[] = { SHT_DYNSYM, SHT_SYMTAB };
	static const char name[] = "_PyRuntime";
	Elf_Data *syms, *strs;
	size_t i, t, n;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		if (!elf_read__symbols(elf, types[t], &syms, &strs))
			continue;
		n = syms->d_size / sizeof(Elf64_Sym);
		for (i = 1; i < n; i++) {
			if (!gelf_getsym(syms, i, sym) || sym->st_shndx == SHN_UNDEF ||
			    sym->st_name >= strs->d_size ||
			    strs->d_size - sym->st_name < sizeof(name))
				continue;
			if (!memcmp((const char *)strs->d_buf + sym->st_name, name, sizeof(name)))
				return true;
		}
	}
	return false;
}

int py_debug_offsets__from_elf(Elf *elf, void *buf, size_t cap, size_t *len, uint64_t *vaddr,
			       char *why, size_t why_sz)
{
	Elf_Scn *scn = elf_read__section(elf, ".PyRuntime");
	bool has_sym;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	uint64_t at, avail;

	*len = 0;
	*vaddr = 0;
	fail(why, why_sz, "%s", "");
	has_sym = runtime_symbol(elf, &sym);
	if (!scn && has_sym) {
		if (sym.st_shndx >= SHN_LORESERVE) {
			fail(why, why_sz, "_PyRuntime in special section %#x", sym.st_shndx);
			return -EINVAL;
		}
		scn = elf_getscn(elf, sym.st_shndx);
	}
	if (!scn) {
		fail(why, why_sz, "%s", "no .PyRuntime section nor _PyRuntime symbol");
		return -ENOENT;
	}
	if (!gelf_getshdr(scn, &sh)) {
		fail(why, why_sz, "%s", "unreadable section header of _PyRuntime");
		return -EINVAL;
	}
	if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_COMPRESSED)) {
		fail(why, why_sz, "_PyRuntime's section is %s: no initializer to read",
		     sh.sh_type == SHT_NOBITS	? "NOBITS" :
		     sh.sh_type != SHT_PROGBITS ? "not PROGBITS" :
						  "compressed");
		return -EINVAL;
	}
	at = 0;
	avail = sh.sh_size;
	if (has_sym) {
		if (sym.st_value < sh.sh_addr || sym.st_value - sh.sh_addr >= sh.sh_size) {
			fail(why, why_sz, "_PyRuntime at %#llx outside its section [%#llx, +%#llx)",
			     (unsigned long long)sym.st_value, (unsigned long long)sh.sh_addr,
			     (unsigned long long)sh.sh_size);
			return -EINVAL;
		}
		at = sym.st_value - sh.sh_addr;
		avail = sh.sh_size - at;
		if (sym.st_size && sym.st_size < avail)
			avail = sym.st_size;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh.sh_size) {
		fail(why, why_sz, "%s", "_PyRuntime's section data unreadable or short");
		return -EINVAL;
	}
	*len = min_t(uint64_t, cap, avail);
	memcpy(buf, (const char *)d->d_buf + at, *len);
	*vaddr = sh.sh_addr + at;
	return 0;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python-offsets.c: prints the struct py_offsets initializer (bpf/record.h) of the CPython whose
 * headers it is compiled against: cc -I<prefix>/include/python3.X tools/python-offsets.c; its
 * argument, if any, names those headers in the entry's comment, after their PY_VERSION.
 * Only offsetof and sizeof: nothing of libpython is linked. tools/python-offsets.sh runs it.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_MINOR_VERSION == 10
#include <frameobject.h>
#endif
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../bpf/record.h"

/* 3.13+ publish their layout (_Py_DebugOffsets), which bpfprof reads from each interpreter:
 * user/runtime/python/python.c, python__offsets_from_debug(). */
#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION < 10 || PY_MINOR_VERSION > 12
#error "the table holds CPython 3.10 to 3.12"
#endif
/* Other layouts of PyObject and PyASCIIObject: the table is of default (release) builds. */
#if defined(Py_TRACE_REFS) || defined(Py_GIL_DISABLED)
#error "headers of a Py_TRACE_REFS or free-threaded build"
#endif

#define NONE		(-1L)
#define MEMBER_SZ(t, m) sizeof(((t *)0)->m)

#if PY_MINOR_VERSION == 10
typedef PyFrameObject frame_t; /* 3.10 chains its frame objects */
#define TSTATE_FRAME	  frame
#define TSTATE_NATIVE_TID NONE /* 3.10 keeps only thread_id, pthread_self() */
#define TSTATE_HEAD	  offsetof(PyInterpreterState, tstate_head)
#define CFRAME_FRAME	  NONE
#define FRAME_BACK	  f_back
#define FRAME_CODE	  f_code
#define FRAME_INSTR	  f_lasti
#define FRAME_OWNER	  NONE
#define CODE_BYTECODE	  NONE
#define CODE_NAME	  co_name
#define FRAMES		  "PY_FRAMES_OBJECTS"
#else
typedef _PyInterpreterFrame frame_t;
#define TSTATE_NATIVE_TID offsetof(PyThreadState, native_thread_id)
#define TSTATE_HEAD	  offsetof(PyInterpreterState, threads.head)
#define FRAME_BACK	  previous
#define CODE_BYTECODE	  offsetof(PyCodeObject, co_code_adaptive)
#define CODE_NAME	  co_qualname
#define TSTATE_FRAME cframe
#define CFRAME_FRAME offsetof(_PyCFrame, current_frame)
#define FRAME_CODE   f_code
#define FRAME_INSTR  prev_instr
#if PY_MINOR_VERSION == 11
#define FRAME_OWNER offsetof(frame_t, is_entry)
#define FRAMES	    "PY_FRAMES_IS_ENTRY"
_Static_assert(MEMBER_SZ(frame_t, is_entry) == 1, "is_entry: one byte");
#else
#define FRAME_OWNER offsetof(frame_t, owner)
#define FRAMES	    "PY_FRAMES_SHIM"
_Static_assert(MEMBER_SZ(frame_t, owner) == 1, "owner: one byte");
_Static_assert(FRAME_OWNED_BY_CSTACK == 3, "FRAME_OWNED_BY_CSTACK");
#endif
_Static_assert(MEMBER_SZ(PyThreadState, native_thread_id) == 8, "native_thread_id: 8 bytes");
#endif

/* The sizes the BPF reads assume. */
_Static_assert(MEMBER_SZ(PyCodeObject, co_firstlineno) == 4, "co_firstlineno: int");
_Static_assert(MEMBER_SZ(frame_t, FRAME_INSTR) == (PY_MINOR_VERSION == 10 ? 4 : 8),
	       "f_lasti: int, else a pointer");
_Static_assert(MEMBER_SZ(PyASCIIObject, state) == 4, "PyASCIIObject.state: one 32-bit word");

/* The state word with one bitfield set, as the BPF program reads it (this host's byte order). */
static uint32_t state_word(unsigned int kind, unsigned int compact, unsigned int ascii)
{
	PyASCIIObject o;
	uint32_t w;

	memset(&o, 0, sizeof(o));
	o.state.kind = kind;
	o.state.compact = compact;
	o.state.ascii = ascii;
	memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), sizeof(w));
	return w;
}

/* Prints the i-th field of struct py_offsets, at bytes into it (F: offsetof checks the name). */
static int field(const char *name, long val, size_t at, size_t i)
{
	if (at != i * sizeof(__u16)) {
		fprintf(stderr, "python-offsets: %s: out of struct py_offsets' order\n", name);
		return 0;
	}
	if (val == NONE) {
		printf("\t\t.%s = PY_OFF_NONE,\n", name);
	} else if (val < 0 || val >= PY_OFF_NONE) {
		fprintf(stderr, "python-offsets: 3.%d: %s: %ld does not fit\n", PY_MINOR_VERSION,
			name, val);
		return 0;
	} else {
		printf("\t\t.%s = %ld,\n", name, val);
	}
	return 1;
}

#define F(n, v) (ok = ok && field(#n, (long)(v), offsetof(struct py_offsets, n), i++))

int main(int argc, char **argv)
{
	const char *src = argc > 1 ? argv[1] : "";
	size_t i = 0;
	int ok = 1;

	if (state_word(7, 0, 0) != 7u << 2 || state_word(0, 1, 0) != 1u << 5 ||
	    state_word(0, 0, 1) != 1u << 6) {
		fprintf(stderr,
			"python-offsets: 3.%d: PyASCIIObject.state: kind 0x%x compact 0x%x ascii 0x%x, "
			"not bits 2-4, 5, 6\n",
			PY_MINOR_VERSION, state_word(7, 0, 0), state_word(0, 1, 0),
			state_word(0, 0, 1));
		return 1;
	}
	printf("\t{\n\t\t/* %s%s%s%s */\n", PY_VERSION, *src ? " (" : "", src, *src ? ")" : "");
	F(runtime_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	F(interp_next, offsetof(PyInterpreterState, next));
	F(interp_tstate_head, TSTATE_HEAD);
	F(tstate_next, offsetof(PyThreadState, next));
	F(tstate_native_tid, TSTATE_NATIVE_TID);
	F(tstate_frame, offsetof(PyThreadState, TSTATE_FRAME));
	F(cframe_frame, CFRAME_FRAME);
	F(frame_back, offsetof(frame_t, FRAME_BACK));
	F(frame_code, offsetof(frame_t, FRAME_CODE));
	F(frame_instr, offsetof(frame_t, FRAME_INSTR));
	F(frame_owner, FRAME_OWNER);
	F(code_bytecode, CODE_BYTECODE);
	F(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	F(code_filename, offsetof(PyCodeObject, co_filename));
	F(code_name, offsetof(PyCodeObject, CODE_NAME));
	F(code_linetable, offsetof(PyCodeObject, co_linetable));
	F(unicode_state, offsetof(PyASCIIObject, state));
	F(unicode_ascii_sz, sizeof(PyASCIIObject));
	F(unicode_compact_sz, sizeof(PyCompactUnicodeObject));
	F(bytes_sval, offsetof(PyBytesObject, ob_sval));
	/* Every __u16 of struct py_offsets printed. */
	if (ok && i * sizeof(__u16) != offsetof(struct py_offsets, frames)) {
		fprintf(stderr, "python-offsets: struct py_offsets has fields not printed here\n");
		ok = 0;
	}
	if (!ok)
		return 1;
	printf("\t\t.frames = %s,\n\t\t.version_minor = %d,\n", FRAMES, PY_MINOR_VERSION);
	printf("\t\t.tstate_thread_id = %zu,\n", offsetof(PyThreadState, thread_id));
#if PY_MINOR_VERSION == 11 || PY_MINOR_VERSION == 12
	printf("\t\t.cframe_previous = %zu,\n", offsetof(_PyCFrame, previous));
#else
	printf("\t\t.cframe_previous = PY_OFF_NONE,\n");
#endif
	/* co_version: a serial number each new code object gets (3.12+, init_code()). */
#if PY_MINOR_VERSION >= 12
	_Static_assert(MEMBER_SZ(PyCodeObject, co_version) == 4, "co_version: a 32-bit serial");
	printf("\t\t.code_serial = %zu,\n", offsetof(PyCodeObject, co_version));
#else
	printf("\t\t.code_serial = PY_OFF_NONE,\n");
#endif
	/* The entry frame's owner (3.12+, _PyEval_EvalFrameDefault: FRAME_OWNED_BY_CSTACK); no
	 * _PyStackRef (3.14+) nor base frame (3.15+) in the versions of the table. */
#if PY_MINOR_VERSION >= 12
	printf("\t\t.frame_owner_entry = %d,\n", FRAME_OWNED_BY_CSTACK);
#else
	printf("\t\t.frame_owner_entry = 0,\n");
#endif
	printf("\t\t.frame_code_tag = 0,\n\t\t.tstate_base_frame = PY_OFF_NONE,\n\t},\n");
	return 0;
}

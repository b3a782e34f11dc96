/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_debug_offsets.h: the layout CPython 3.13+ publishes for out-of-process readers, its
 * _Py_DebugOffsets, read and checked.
 *
 * _Py_DebugOffsets is the first member of _PyRuntime (a _PyRuntimeState), which CPython places
 * in the ELF section .PyRuntime of python3.X (static build) or libpython3.X.so. It starts with
 * the cookie "xdebugpy", PY_VERSION_HEX and free_threaded, then one group per structure: its
 * sizeof and the offsetof of some of its members, as uint64_t. Sources: CPython 3.13's
 * Include/internal/pycore_runtime.h (the struct) and pycore_runtime_init.h (its initializer,
 * in _PyRuntimeState_INIT); 3.14's and 3.15's Include/internal/pycore_debug_offsets.h
 * (struct and _Py_DebugOffsets_INIT), as Debian ships 3.13.18, 3.14.10 and 3.15.2. The
 * struct's own layout is stable within a minor version and changes between minors (3.14 added
 * interpreter_state.threads_main, interpreter_frame.stackpointer, code_object.co_tlbc,
 * set_object, gen_object...; 3.15 thread_state.base_frame, err_stackitem, heap_type_object...):
 * py_debug_offsets__parse() knows each minor's, and refuses other minors.
 *
 * What it does not publish, which bpfprof keeps in a per-minor table elsewhere
 * (python_versions.c): the values of _PyInterpreterFrame.owner (FRAME_OWNED_BY_*), the tag bits
 * of a _PyStackRef (f_executable is one from 3.14), the compact unicode layout beyond
 * asciiobject_size (where a non-ASCII compact string's data starts; 3.15 publishes
 * compactunicodeobject_size, not read here), the state bits' meaning, co_version, and the
 * bytecode's format.
 */
#ifndef BPFPROF_PYTHON_DEBUG_OFFSETS_H
#define BPFPROF_PYTHON_DEBUG_OFFSETS_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An offset this CPython does not publish (a member its minor does not have, or that its build
 * leaves out: co_tlbc and tlbc_index are published only by free-threaded builds). */
#define PY_DEBUG_OFF_NONE UINT64_MAX

/* Bytes of the largest _Py_DebugOffsets known (3.15's): what to read from a file or a process
 * to parse any known minor. */
#define PY_DEBUG_OFFSETS_MAX 888

/*
 * Largest structure size accepted, bytes. The largest structure published is _PyRuntimeState
 * itself: 283,408 bytes in 3.13.18, 316,616 in 3.14.10, 346,568 in 3.15.2; the others are far
 * smaller (PyInterpreterState 194,984 to 226,240 bytes; PyThreadState under 1 KiB; a code
 * object, a frame, a string header, under 256 bytes). 1 MiB leaves room for any patch release
 * of the known minors while refusing garbage, and keeps offset + member size far from
 * overflowing anything.
 */
#define PY_DEBUG_STRUCT_MAX (1u << 20)

/*
 * The members of _Py_DebugOffsets bpfprof uses, named as CPython names them
 * (runtime_state.interpreters_head is _PyRuntimeState.interpreters.head...): each group's size is
 * the sizeof of its structure, every other value an offsetof in it, bytes, or PY_DEBUG_OFF_NONE.
 * Once py_debug_offsets__parse() returned 0, every size is in 1..PY_DEBUG_STRUCT_MAX and every
 * offset other than PY_DEBUG_OFF_NONE leaves its member (of the size CPython gives it) inside
 * its structure.
 */
struct py_debug_offsets {
	uint64_t version;   /* PY_VERSION_HEX: 0x030e0aF0 is 3.14.10 final */
	unsigned int minor; /* 13, 14, 15 */
	bool free_threaded; /* a --disable-gil build (refused) */
	struct {
		uint64_t size;
		uint64_t interpreters_head; /* PyInterpreterState *interpreters.head */
	} runtime_state;		    /* _PyRuntimeState */
	struct {
		uint64_t size;
		uint64_t next;	       /* PyInterpreterState * */
		uint64_t threads_head; /* PyThreadState *threads.head */
		uint64_t threads_main; /* PyThreadState *threads.main: 3.14+ */
	} interpreter_state;	       /* PyInterpreterState */
	struct {
		uint64_t size;
		uint64_t next;		   /* PyThreadState * */
		uint64_t current_frame;	   /* _PyInterpreterFrame * */
		uint64_t base_frame;	   /* _PyInterpreterFrame *: 3.15+ */
		uint64_t thread_id;	   /* unsigned long: pthread_self() */
		uint64_t native_thread_id; /* unsigned long: the tid */
	} thread_state;			   /* PyThreadState */
	struct {
		uint64_t size;
		uint64_t previous;     /* _PyInterpreterFrame * */
		uint64_t executable;   /* f_executable: PyObject * (3.13), _PyStackRef (3.14+) */
		uint64_t instr_ptr;    /* _Py_CODEUNIT * */
		uint64_t owner;	       /* char */
		uint64_t stackpointer; /* _PyStackRef *: 3.14+ */
		uint64_t tlbc_index;   /* int32_t: free-threaded builds only */
	} interpreter_frame;	       /* _PyInterpreterFrame */
	struct {
		uint64_t size;
		uint64_t filename;	   /* co_filename: PyObject * (str) */
		uint64_t name;		   /* co_name */
		uint64_t qualname;	   /* co_qualname */
		uint64_t linetable;	   /* co_linetable: PyObject * (bytes) */
		uint64_t firstlineno;	   /* co_firstlineno: int */
		uint64_t co_code_adaptive; /* the bytecode, char[] at the end */
		uint64_t co_tlbc;	   /* _PyCodeArray *: free-threaded builds only */
	} code_object;			   /* PyCodeObject */
	struct {
		uint64_t size;
		uint64_t ob_type; /* PyTypeObject * */
	} pyobject;		  /* PyObject */
	struct {
		uint64_t size;
		uint64_t ob_size; /* Py_ssize_t */
		uint64_t ob_sval; /* char[] */
	} bytes_object;		  /* PyBytesObject */
	struct {
		uint64_t size;
		uint64_t state;		   /* the bitfields' 32-bit word */
		uint64_t length;	   /* Py_ssize_t */
		uint64_t asciiobject_size; /* sizeof(PyASCIIObject): a compact ASCII string's data */
	} unicode_object;		   /* PyUnicodeObject */
	struct {
		uint64_t size;		 /* PY_DEBUG_OFF_NONE before 3.14, as the others */
		uint64_t gi_iframe;	 /* _PyInterpreterFrame, embedded: the last member */
		uint64_t gi_frame_state; /* int8_t */
	} gen_object;			 /* PyGenObject: 3.14+ */
};

/*
 * Bytes of the _Py_DebugOffsets of CPython 3.<minor>, 0 for a minor not known (known: 13, 14,
 * 15).
 */
size_t py_debug_offsets__len(unsigned int minor);

/*
 * Reads and checks the _Py_DebugOffsets at buf, len bytes: the first bytes of _PyRuntime, from
 * a file's .PyRuntime (py_debug_offsets__from_elf()) or a process's memory (untrusted either
 * way: nothing past len is read, every value is checked before *out has it). Fills *out and
 * returns 0; else a negative errno, and why (why_sz bytes, NUL-terminated whatever happens,
 * may be NULL when why_sz is 0) says why:
 *   -EINVAL: no cookie "xdebugpy", or len shorter than that version's struct;
 *   -EOPNOTSUPP: a version other than 3.13, 3.14, 3.15 (out->version and minor set), or a
 *     free-threaded build (out->version, minor and free_threaded set, nothing else);
 *   -ERANGE: a structure size outside 1..PY_DEBUG_STRUCT_MAX, or a member past its structure's
 *     end (why names it: "code_object.qualname 4096 + 8 past its structure's 208 bytes").
 * *out is left zeroed on -EINVAL and partly filled (not to be used) on -ERANGE.
 */
int py_debug_offsets__parse(const void *buf, size_t len, struct py_debug_offsets *out, char *why,
			    size_t why_sz);

/*
 * The first bytes of _PyRuntime in ELF file elf: the section .PyRuntime, which must be
 * PROGBITS (CPython's initializer is there; NOBITS would mean none), from the _PyRuntime
 * symbol's place in it when the file has that symbol (.dynsym, else .symtab), from its start
 * otherwise; a file with the symbol and no such section (a build that does not name the
 * section): the section the symbol is in. Copies min(cap, bytes of _PyRuntime the file holds)
 * bytes to buf, that count in *len, the ELF vaddr of _PyRuntime in *vaddr. Returns 0, or
 * -ENOENT (no section nor symbol: python3.X linked to libpython3.X.so, or not a CPython),
 * -EINVAL (malformed: NOBITS or compressed section, symbol outside it, unreadable data); why as
 * py_debug_offsets__parse()'s.
 */
int py_debug_offsets__from_elf(Elf *elf, void *buf, size_t cap, size_t *len, uint64_t *vaddr,
			       char *why, size_t why_sz);

#endif /* BPFPROF_PYTHON_DEBUG_OFFSETS_H */

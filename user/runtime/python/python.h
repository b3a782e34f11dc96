/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python.h: Python frames of CPython processes. Finds each target's CPython (python3.X or
 * libpython3.X.so by name, _PyRuntime and _PyEval_EvalFrameDefault by symbol, the layout of its
 * minor version) and hands it to the BPF walk (py_procs, py_binaries in bpf/record.h); keeps
 * the code objects BPF copies (RECORD_PY_CODE) and the Python stack of the next sample of each
 * CPU (RECORD_PY_STACK); splices those frames into the sample's native stack, each group of
 * Python frames in place of the _PyEval_EvalFrameDefault activation that runs it.
 */
#ifndef BPFPROF_PYTHON_H
#define BPFPROF_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/record.h"

struct aggregate;
struct addr_space;
struct proc_table;
struct runtime_maps;
struct unwind_frame;

struct python;

/* Counters for the summary and --stats. */
struct python_stats {
	uint64_t processes;		    /* CPython processes found */
	uint64_t stacks;		    /* samples with Python frames spliced in */
	uint64_t frames;		    /* Python frames spliced in */
	uint64_t stops[PY_STOP_NO_FRAME + 1]; /* RECORD_PY_STACKs by py_stack_record.stop */
	uint64_t codes;			    /* RECORD_PY_CODEs: code objects copied by BPF */
	uint64_t codes_missing;		    /* frames whose code object was never copied */
	uint64_t codes_dropped;		    /* code objects over a process's cap (65536) */
	uint64_t code_ns;		    /* time spent decoding code objects, ns */
	uint64_t unmatched;		    /* RECORD_PY_STACKs without their sample */
	uint64_t by_anchor;		    /* samples whose groups were placed by anchor */
	uint64_t groups_at_root;	    /* groups no native frame ran: put at the root */
};

/*
 * maps: the loader's handle through which processes are armed in py_procs and py_binaries
 * (borrowed, outliving py), or NULL (a replay: nothing to arm); pt: the session's processes,
 * whose mappings python__attach() reads (borrowed, outliving py), or NULL. Returns NULL and sets
 * errno.
 */
struct python *python__new(const struct runtime_maps *maps, struct proc_table *pt);
void python__free(struct python *py);

/*
 * A target found before its first record (runtime_ops.attach), armed now so that its first
 * samples and blocked stacks have Python frames. next_exec false (bpfprof -p): process tgid's
 * mappings are read and its CPython, when found, armed in py_procs (as at its first sample).
 * next_exec (bpfprof -- CMD): exe, the file tgid is about to exec, goes in py_binaries when it
 * is a CPython bpfprof reads (python3.X holding _PyRuntime), else the libpython3.X.so it needs,
 * found as the dynamic loader would without its cache (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH
 * with $ORIGIN, the default directories; each candidate opened O_NOFOLLOW): BPF arms the
 * process at its exec or at the library's mmap. A file refused is said once, as when a
 * process maps it later. Nothing without maps (a replay). 0 or -ENOMEM.
 */
int python__attach(struct python *py, uint32_t tgid, const char *exe, bool next_exec);

/* A process's image is replaced (exec) or gone (exit): forget its state and code objects
 * (user space only: BPF has already forgotten it). */
void python__forget(struct python *py, uint32_t tgid);

/*
 * Checks a RECORD_PY_STACK or RECORD_PY_CODE (len bytes as delivered, hdr->sz of them its own)
 * against its layout: a stack's cnt against BPFPROF_PY_FRAMES_MAX and the frames its size
 * holds, a code record's size. 0, -EINVAL when malformed or of another type
 * (runtime_python_ops.check).
 */
int python__record_check(const struct record_header *hdr, size_t len);
/* RECORD_PY_CODE (python__record_check()ed): keeps what names the code object. 0 or -ENOMEM. */
int python__code(struct python *py, const struct py_code_record *r);
/* RECORD_PY_STACK (python__record_check()ed): kept for the sample of the same cpu, tid and
 * time that follows it. */
void python__stack(struct python *py, const struct py_stack_record *r);

/*
 * Called for each sample of tgid before its frames are placed: looks for the process's
 * CPython when its mappings changed since the last look (as: its address space) and arms the
 * BPF walk for it. Returns the number of groups of Python frames s has (0: none), after which
 * python__is_eval() and python__group() serve that sample.
 */
size_t python__sample(struct python *py, struct addr_space *as, const struct sample_record *s);
/* Whether user frame f of the sample runs _PyEval_EvalFrameDefault of its process's CPython. */
int python__is_eval(struct python *py, const struct unwind_frame *f);
/* Group g's anchor (py_frame.anchor): an address in the stack frame of the native activation
 * that runs it; 0 when unknown (3.10, or a walk that lost step). */
uint64_t python__group_anchor(const struct python *py, size_t g);
/* Counts how the sample's groups were placed: by anchor or by count, and how many went to the
 * root (no native frame found for them). */
void python__placed(struct python *py, bool by_anchor, size_t at_root);
/*
 * Appends to locs (room for cap) the locations of group g of the sample's Python frames
 * (g = 0 the leaf-most group), root first, adding them to agg. Returns how many were appended,
 * or a negative errno.
 */
int python__group(struct python *py, struct aggregate *agg, size_t g, uint32_t *locs, size_t cap);

const struct python_stats *python__stats(const struct python *py);

/* Whether the fields of o that the BPF side reads lie within the bytes it reads at once: of a
 * frame (BPFPROF_PY_FRAME_READ_SZ), of a code object for its identity (BPFPROF_PY_CODE_READ_SZ,
 * from co_firstlineno's 8-byte word) and of a string's header. A CPython whose layout does not
 * fit gets native frames only. */
bool python__offsets_fit(const struct py_offsets *o);

struct py_debug_offsets;
/*
 * The struct py_offsets (*o) of a CPython 3.13+ from its parsed _Py_DebugOffsets (d,
 * py_debug_offsets__parse()d) and what the interpreter does not publish, per minor version
 * (python.c's table: the entry frame's owner, f_executable's tag bits, the compact string
 * header's size, co_version's place). 0; else a negative errno and why (why_sz bytes) says why:
 * -EOPNOTSUPP for a minor not in the table or a free-threaded build, -ERANGE for an offset not
 * published, over 16 bits, or a layout whose fields do not fit the BPF reads
 * (python__offsets_fit()).
 */
int python__offsets_from_debug(const struct py_debug_offsets *d, struct py_offsets *o, char *why,
			       size_t why_sz);

/* "bpfprof: Python: ..." lines on fp when a CPython process was seen: samples with Python
 * frames, frames, why walks stopped, code objects copied and the time spent on them; bpf
 * (the BPF counters) may be NULL (a replay). */
void python__print(const struct python *py, const struct bpf_stats *bpf, FILE *fp);

#endif /* BPFPROF_PYTHON_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * runtime/python.bpf.h: the Python frames of a sampled CPython thread, read at sample time (they
 * change a microsecond later), and the code objects they run, copied the first time they are
 * seen.
 *
 * The thread's PyThreadState is found without stopping the process: from _PyRuntime's
 * interpreters, each interpreter's thread list, the one whose native_thread_id is the sampled
 * tid. Its frames are then followed from the current one to the first: PyFrameObject.f_back
 * (3.10), _PyInterpreterFrame.previous (3.11+). All offsets come from user space (struct
 * py_offsets in record.h: per CPython minor version for 3.10-3.12, from the interpreter's own
 * _Py_DebugOffsets from 3.13).
 */
#ifndef BPFPROF_PYTHON_BPF_H
#define BPFPROF_PYTHON_BPF_H

/*
 * The walks' loops: through bpf_loop() (Linux 5.17+, the programs that need no fallback), whose
 * callback the verifier checks once, where a bounded loop is checked step by step (the Python
 * walk cost the checker 215,000 instructions at each start, 3-5 s under qemu's TCG). The
 * compat programs (kernels before 5.17) get their own copies of the global functions with the
 * bounded loops only (*_compat): a kernel without bpf_loop() refuses a program that merely
 * names its callback, even in code it would never run.
 */

/* Bytes of a frame read at once: every field bpfprof uses lies in them (3.10's PyFrameObject
 * has f_lasti at 96; user space checks each version's offsets). */
#define PY_FRAME_READ_SZ	 BPFPROF_PY_FRAME_READ_SZ
/* Code objects copied per sample at most; the others on a later sample. */
#define PY_CODES_PER_SAMPLE	 16
/* Interpreters a thread's frames are looked for in (each: PyThreadState, current frame). */
#define PY_INTERPS_MAX		 4
/* py_thread_state(): the process has more than one interpreter (bit 0 of the address). */
#define PY_TSTATE_MORE		 1ull
/* Steps of the walk: every frame kept, the entry frames between, each interpreter's start. */
#define PY_WALK_STEPS (BPFPROF_PY_FRAMES_MAX + 8 + 2 * PY_INTERPS_MAX)
/* py_codes_seen slots (a power of two). */
#define PY_CODES_SEEN_SZ	 65536
/* Bytes of a code object read at once for its identity (user space checks the fields fit). */
#define PY_CODE_READ_SZ		 BPFPROF_PY_CODE_READ_SZ
/* Bytes of a string or line table folded into a code object's identity: its first, its last. */
#define PY_IDENT_HEAD		 32
#define PY_IDENT_TAIL		 16

/* A code object of a process already copied (RECORD_PY_CODE). */
struct py_code_seen {
	__u64 code;
	__u32 tgid;
	__u32 key;
	__u32 gen; /* py_proc.gen: a reused tgid's code objects are new */
	__u32 pad;
};

/* Direct-mapped by hash: an array, whose lookups the verifier inlines (no helper call, no lock:
 * cheap enough for every frame of every sample). A slot taken by another code object copies
 * the code object again; two CPUs racing on a slot copy it twice. Both are harmless. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PY_CODES_SEEN_SZ);
	__type(key, __u32);
	__type(value, struct py_code_seen);
} py_codes_seen SEC(".maps");

/* Per-CPU scratch: the record being built, and a frame's first bytes. */
struct py_scratch {
	struct py_stack_record rec;
	__u8 frame[PY_FRAME_READ_SZ + 8];
	/* The walk's state, kept here, not in registers: read back each step, they are unknown
	 * bounded values to the verifier, and the steps' states prune (as path_buf's off). */
	__u64 next; /* the next frame's address */
	__u32 n;    /* frames recorded */
	__u32 rd;   /* bytes of a frame read */
	__u32 emitted; /* code objects copied this sample */
	__u32 interps; /* interpreters whose thread state was looked for */
	/* The thread's states, newest interpreter first (py_thread_state() with skip 0, 1, ...),
	 * found before the walk: 5.10's verifier refuses a call to a function in the walk's
	 * loop ("back-edge" from the call to the instruction after it). */
	__u64 tstates[PY_INTERPS_MAX];
	__u64 cframe;	  /* 3.11: the _PyCFrame of the group being walked, 0 once unsure */
	__u64 base;	  /* 3.15+: the thread's base frame (PyThreadState.base_frame), or 0 */
	__u64 group_leaf; /* the first frame of the group being walked, 0 before it */
	/* py_code_ident()'s: the process's offsets (a global function of 5.10 takes scalars
	 * only), a code object's first bytes, and a string's or line table's. */
	struct py_offsets off;
	__u8 code[PY_CODE_READ_SZ + 8];
	__u64 data[PY_IDENT_HEAD / 8 + 2]; /* + 2: a string header's state read at 16 to 31 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratches SEC(".maps");

/* Whether process tgid is a CPython one bpfprof walks (py_procs). */
static __always_inline bool py_armed(__u32 tgid)
{
	return bpf_map_lookup_elem(&py_procs, &tgid);
}

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* A field of the frame read into buf: off is bounded so the verifier sees the access inside. */
#define PY_FRAME_FIELD(buf, off, type) (*(type *)((buf) + ((off) & (PY_FRAME_READ_SZ - 1))))

/* py_thread_state()'s search: the state in an interpreter's thread list, or the next list. */
struct py_tstate_ctx {
	const struct py_offsets *o;
	__u64 interp; /* the interpreter whose list is walked */
	__u64 tstate; /* the next PyThreadState in it, 0 at its end */
	__u64 fsbase; /* the sampled thread's: thread_id */
	__u64 found;  /* the state found, or 0 */
	__u32 skip;   /* interpreters with a state of the thread still to pass */
};

/* One step: 1 when the search ends (found set, or no interpreter left), else 0. */
static __always_inline long py_tstate_step(struct py_tstate_ctx *c)
{
	if (!c->tstate) {
		c->interp = py_read_ptr(c->interp + c->o->interp_next);
		if (!c->interp)
			return 1;
		c->tstate = py_read_ptr(c->interp + c->o->interp_tstate_head);
		return 0;
	}
	if (py_read_ptr(c->tstate + c->o->tstate_thread_id) == c->fsbase) {
		if (!c->skip) {
			c->found = c->tstate;
			return 1;
		}
		/* This interpreter's is not the one wanted: the next interpreter. */
		c->skip--;
		c->tstate = 0;
		return 0;
	}
	c->tstate = py_read_ptr(c->tstate + c->o->tstate_next);
	return 0;
}

static long py_tstate_cb(__u32 i, void *ctx)
{
	return py_tstate_step(ctx);
}

/*
 * The PyThreadState of the current thread (tid) in the skip-th interpreter that has one: the
 * first whose thread_id, pthread_self() (on x86-64 glibc and musl the thread pointer, the fs
 * base), is the task's fs base, walking each interpreter's thread list from _PyRuntime's
 * newest interpreter, at most BPFPROF_PY_THREADS_MAX thread states in all. Not
 * native_thread_id: that is the tid in the process's PID namespace (a container's). A thread
 * that runs code of a subinterpreter (3.12+: _xxsubinterpreters.run_string) has a thread state
 * in both: the newer interpreter's frames are the leaf-most. fsbase: the task's (the caller
 * reads it as its kernel allows). 0 if none; else the state's address, | PY_TSTATE_MORE when
 * the process has more than one interpreter (a state is 8-byte aligned).
 */
static __always_inline __u64 py_thread_state_find(__u32 tgid, __u32 tid, __u32 skip,
						 __u64 fsbase, const bool compat)
{
	struct py_tstate_ctx c;
	const struct py_offsets *o;
	__u64 interp, *cached, more;
	bool single;
	struct py_proc *pp;
	int i;

	/* A global function, checked once (5.10's take only scalars: pp is looked up again). */
	pp = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!pp)
		return 0;
	o = &pp->off;
	if (!fsbase)
		return 0;
	interp = py_read_ptr(pp->runtime + o->runtime_interp_head);
	if (!interp)
		return 0;
	/* The cache serves a process of one interpreter: with more, a thread may have a state
	 * in a newer one since (a subinterpreter it runs code of now). */
	single = !py_read_ptr(interp + o->interp_next);
	more = single ? 0 : PY_TSTATE_MORE;
	if (!skip && single) {
		cached = bpf_map_lookup_elem(&py_tstates, &tid);
		if (cached && *cached && py_read_ptr(*cached + o->tstate_thread_id) == fsbase)
			return *cached;
	} else if (skip && single) {
		return 0; /* one interpreter: nothing further to look at */
	}
	c.o = o;
	c.interp = interp;
	c.tstate = py_read_ptr(interp + o->interp_tstate_head);
	c.fsbase = fsbase;
	c.skip = skip;
	c.found = 0;
	if (!compat) {
		bpf_loop(BPFPROF_PY_THREADS_MAX, py_tstate_cb, &c, 0);
	} else {
		for (i = 0; i < BPFPROF_PY_THREADS_MAX; i++)
			if (py_tstate_step(&c))
				break;
	}
	if (!c.found)
		return 0;
	if (single)
		bpf_map_update_elem(&py_tstates, &tid, &c.found, BPF_ANY);
	return c.found | more;
}

__noinline __u64 py_thread_state(__u32 tgid, __u32 tid, __u32 skip, __u64 fsbase)
{
	return py_thread_state_find(tgid, tid, skip, fsbase, false);
}

__noinline __u64 py_thread_state_compat(__u32 tgid, __u32 tid, __u32 skip, __u64 fsbase)
{
	return py_thread_state_find(tgid, tid, skip, fsbase, true);
}

/* What one step of the walk needs (bpf_loop()'s callback context: the caller's stack). */
struct py_walk_ctx {
	const struct py_proc *pp;
	struct py_stack_record *rec;
	struct py_scratch *sc;
	__u32 stop; /* PY_STOP_*, when the walk ends */
};

/*
 * One step of py_walk(): the next interpreter's current frame, or one frame recorded. Returns 1
 * when the walk ends (w->stop set, or PY_STOP_DEPTH left), else 0. Its state lives in the
 * scratch, so each step starts from the same registers: the checker's states prune.
 */
static __always_inline long py_walk_step(struct py_walk_ctx *w)
{
	const struct py_offsets *o = &w->pp->off;
	struct py_stack_record *rec = w->rec;
	struct py_scratch *sc = w->sc;
	__u64 tstate, frame, code, instr;
	__u32 n, rd;
	__u8 owner;

	frame = sc->next;
	n = sc->n;
	if (!frame) {
		/* The thread's frames in the next interpreter it has a state in. */
		if (sc->interps >= PY_INTERPS_MAX) {
			w->stop = PY_STOP_ROOT;
			return 1;
		}
		tstate = sc->tstates[sc->interps & (PY_INTERPS_MAX - 1)];
		sc->interps++;
		if (!tstate) {
			w->stop = n ? PY_STOP_ROOT :
				   sc->interps == 1 ? PY_STOP_NO_THREAD : PY_STOP_NO_FRAME;
			return 1;
		}
		frame = py_read_ptr(tstate + o->tstate_frame);
		sc->base = o->tstate_base_frame != PY_OFF_NONE ?
				   py_read_ptr(tstate + o->tstate_base_frame) :
				   0;
		sc->cframe = 0;
		if (o->cframe_frame != PY_OFF_NONE && frame) {
			if (o->frames == PY_FRAMES_IS_ENTRY)
				sc->cframe = frame; /* in the innermost activation */
			frame = py_read_ptr(frame + o->cframe_frame);
		}
		sc->next = frame;
		sc->group_leaf = 0;
		return 0;
	}
	if (n >= BPFPROF_PY_FRAMES_MAX)
		return 1;
	rd = sc->rd;
	if (rd > PY_FRAME_READ_SZ)
		rd = PY_FRAME_READ_SZ;
	if (bpf_probe_read_user(sc->frame, rd, (void *)frame)) {
		w->stop = PY_STOP_READ;
		return 1;
	}
	/* 3.14+: a _PyStackRef, whose tag bits are not the address's. */
	code = PY_FRAME_FIELD(sc->frame, o->frame_code, __u64) & ~(__u64)o->frame_code_tag;
	owner = 0;
	if (o->frame_owner != PY_OFF_NONE)
		owner = PY_FRAME_FIELD(sc->frame, o->frame_owner, __u8);
	sc->next = PY_FRAME_FIELD(sc->frame, o->frame_back, __u64);
	if (o->frames == PY_FRAMES_SHIM && owner >= o->frame_owner_entry) {
		/* The entry frame below a C call's frames, a local of that call: its
		 * caller is their root, and its address their anchor. Not the thread's
		 * base frame (3.15+: in its thread state, the chain's end), nor a frame of
		 * a higher owner: no Python frames, and no C call's. */
		if (n > 0 && owner == o->frame_owner_entry && frame != sc->base) {
			n = (n - 1) & (BPFPROF_PY_FRAMES_MAX - 1);
			rec->frames[n].instr |= PY_INSTR_ENTRY;
			rec->frames[n].anchor = frame;
		}
		sc->group_leaf = 0;
		return 0;
	}
	if (!sc->group_leaf)
		sc->group_leaf = frame;
	if (o->frames == PY_FRAMES_OBJECTS) {
		/* f_lasti: an int, in code units; -1 before the first instruction. */
		instr = PY_FRAME_FIELD(sc->frame, o->frame_instr, __s32);
		instr = (__s64)instr < 0 ? 0 : instr * 2;
	} else {
		instr = PY_FRAME_FIELD(sc->frame, o->frame_instr, __u64);
		instr = instr > code + o->code_bytecode ? instr - code - o->code_bytecode : 0;
	}
	instr &= ~(__u64)PY_INSTR_ENTRY;
	if (o->frames == PY_FRAMES_OBJECTS || (o->frames == PY_FRAMES_IS_ENTRY && owner))
		instr |= PY_INSTR_ENTRY;
	barrier_var(n);
	n &= BPFPROF_PY_FRAMES_MAX - 1;
	rec->frames[n].code = code;
	rec->frames[n].instr = instr;
	rec->frames[n].key = 0; /* py_codes_copy()'s */
	rec->frames[n].anchor = 0;
	sc->n = n + 1;
	if (o->frames == PY_FRAMES_IS_ENTRY && owner) {
		/* 3.11: the group's C call keeps its _PyCFrame in its stack frame, its
		 * current_frame the group's first; the chain goes on with previous. */
		if (sc->cframe &&
		    py_read_ptr(sc->cframe + o->cframe_frame) == sc->group_leaf) {
			rec->frames[n].anchor = sc->cframe;
			sc->cframe = py_read_ptr(sc->cframe + o->cframe_previous);
		} else {
			sc->cframe = 0; /* not in step: no anchors after */
		}
		sc->group_leaf = 0;
	}

	return 0;
}

/* bpf_loop()'s callback (Linux 5.17+): checked once, whatever the number of steps. */
static long py_walk_cb(__u32 i, void *ctx)
{
	return py_walk_step(ctx);
}

/* py_thread_state() of the program's kind (compat: the bounded loop's copy). */
#define PY_THREAD_STATE(tgid, tid, skip, fsbase)                                          \
	(compat ? py_thread_state_compat(tgid, tid, skip, fsbase) :                        \
		  py_thread_state(tgid, tid, skip, fsbase))

/*
 * Walks the Python frames of thread tid (its fs base fsbase) of process pp into rec. Frames
 * are kept leaf first, at most BPFPROF_PY_FRAMES_MAX; the thread's frames in each interpreter it
 * has a state in, newest interpreter first (a subinterpreter's below the main one's).
 * A frame is recorded with its code object, the byte offset of its instruction, and
 * PY_INSTR_ENTRY on the first frame of each C call of the evaluator (the root of the group of
 * frames one native _PyEval_EvalFrameDefault activation runs): user space splices each group
 * where that activation is on the native stack.
 */
static __always_inline void py_walk(const struct py_proc *pp, __u32 tid, __u64 fsbase,
				    struct py_stack_record *rec, struct py_scratch *sc,
				    const bool compat)
{
	struct py_walk_ctx w = { .pp = pp, .rec = rec, .sc = sc, .stop = PY_STOP_DEPTH };
	const struct py_offsets *o = &pp->off;
	__u64 more;
	__u32 n, rd;
	int i;

	rec->cnt = 0;
	/* Read only as far as the last field used: a frame may end a mapped page. */
	rd = o->frame_back;
	if (o->frame_code > rd)
		rd = o->frame_code;
	if (o->frame_instr > rd)
		rd = o->frame_instr;
	if (o->frame_owner != PY_OFF_NONE && o->frame_owner > rd)
		rd = o->frame_owner;
	sc->rd = rd + 8;
	sc->next = 0;
	sc->n = 0;
	sc->interps = 0;
	/* The other interpreters only when there are others (one state each at most). */
	sc->tstates[0] = PY_THREAD_STATE(rec->tgid, tid, 0, fsbase);
	more = sc->tstates[0] & PY_TSTATE_MORE;
	sc->tstates[0] &= ~PY_TSTATE_MORE;
	sc->tstates[1] = more ? PY_THREAD_STATE(rec->tgid, tid, 1, fsbase) & ~PY_TSTATE_MORE : 0;
	sc->tstates[2] = sc->tstates[1] ? PY_THREAD_STATE(rec->tgid, tid, 2, fsbase) &
						  ~PY_TSTATE_MORE :
					  0;
	sc->tstates[3] = sc->tstates[2] ? PY_THREAD_STATE(rec->tgid, tid, 3, fsbase) &
						  ~PY_TSTATE_MORE :
					  0;

	if (!compat) {
		bpf_loop(PY_WALK_STEPS, py_walk_cb, &w, 0);
	} else {
		for (i = 0; i < PY_WALK_STEPS; i++)
			if (py_walk_step(&w))
				break;
	}
	n = sc->n;
	rec->cnt = n > BPFPROF_PY_FRAMES_MAX ? BPFPROF_PY_FRAMES_MAX : n;
	rec->stop = w.stop;
}

/* Copies len characters of kind bytes each of the compact string at str into dst (sz bytes):
 * sets *len_out, *kind_out. */
static __always_inline void py_string_copy(const struct py_offsets *o, __u64 str, __u8 *dst,
					   __u32 sz, __u32 *len_out, __u8 *kind_out)
{
	__u64 len = 0, bytes;
	__u32 state = 0;
	__u8 kind;

	*len_out = 0;
	*kind_out = 0;
	if (!str || bpf_probe_read_user(&len, sizeof(len), (void *)(str + 16)) ||
	    bpf_probe_read_user(&state, sizeof(state), (void *)(str + o->unicode_state)))
		return;
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return; /* not compact: never for code objects' names */
	bytes = len * kind;
	if (bytes > sz)
		bytes = sz;
	bytes &= 0xfff;
	if (bytes > sz)
		bytes = sz;
	str += (state & (1u << 6)) ? o->unicode_ascii_sz : o->unicode_compact_sz;
	if (bytes && bpf_probe_read_user(dst, bytes, (void *)str))
		return;
	*len_out = bytes / kind;
	*kind_out = kind | ((state & (1u << 6)) ? PY_STR_ASCII : 0);
}

/*
 * RECORD_PY_CODE for the code object at code of process tgid. A global function: the verifier
 * checks it once, not once per call site and loop iteration (5.10's take only scalars).
 * Returns 0, or -1 when nothing was submitted.
 */
__noinline int py_code_emit(__u32 tgid, __u64 code, __u32 key)
{
	struct py_code_record *rec;
	struct py_proc *pp;
	struct bpf_stats *st;
	__u64 tab, len = 0;
	__s32 first = 0;

	pp = bpf_map_lookup_elem(&py_procs, &tgid);
	st = stats__get();
	if (!pp || !st)
		return -1;
	rec = bpf_ringbuf_reserve(&ringbuf, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&st->py_lost, 1);
		return -1;
	}
	rec->hdr.type = RECORD_PY_CODE;
	rec->hdr.sz = sizeof(*rec);
	rec->tgid = tgid;
	rec->key = key;
	rec->code = code;
	rec->version_minor = pp->off.version_minor;
	bpf_probe_read_user(&first, sizeof(first), (void *)(code + pp->off.code_firstlineno));
	rec->firstlineno = first;
	py_string_copy(&pp->off, py_read_ptr(code + pp->off.code_name), rec->name,
		       sizeof(rec->name), &rec->name_len, &rec->name_kind);
	py_string_copy(&pp->off, py_read_ptr(code + pp->off.code_filename), rec->file,
		       sizeof(rec->file), &rec->file_len, &rec->file_kind);
	rec->linetable_len = 0;
	tab = py_read_ptr(code + pp->off.code_linetable);
	if (tab && !bpf_probe_read_user(&len, sizeof(len), (void *)(tab + 16))) {
		if (len > sizeof(rec->linetable))
			len = sizeof(rec->linetable);
		len &= sizeof(rec->linetable) * 2 - 1;
		if (len > sizeof(rec->linetable))
			len = sizeof(rec->linetable);
		if (len && !bpf_probe_read_user(rec->linetable, len,
						(void *)(tab + pp->off.bytes_sval)))
			rec->linetable_len = len;
	}
	__sync_fetch_and_add(&st->py_codes, 1);
	bpf_ringbuf_submit(rec, ringbuf_flags());
	return 0;
}

/* h with v folded in (a multiply-xorshift: every bit of v reaches the top half). */
static __always_inline __u64 py_fold(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* h with len and the len bytes at addr folded in: their first PY_IDENT_HEAD, and their last
 * PY_IDENT_TAIL past those (a name's ordinal is often at its end). A part that cannot be read
 * folds as zeros. */
static __always_inline __u64 py_fold_bytes(struct py_scratch *sc, __u64 h, __u64 addr, __u64 len)
{
	__u64 n = len;
	int i;

	h = py_fold(h, len);
	if (n > PY_IDENT_HEAD)
		n = PY_IDENT_HEAD;
	n &= 2 * PY_IDENT_HEAD - 1;
	if (n > PY_IDENT_HEAD)
		n = PY_IDENT_HEAD;
	for (i = 0; i < PY_IDENT_HEAD / 8; i++)
		sc->data[i] = 0;
	if (n)
		bpf_probe_read_user(sc->data, n, (void *)addr); /* zeroes it on failure */
	for (i = 0; i < PY_IDENT_HEAD / 8; i++)
		h = py_fold(h, sc->data[i]);
	if (len <= PY_IDENT_HEAD)
		return h;
	if (bpf_probe_read_user(sc->data, PY_IDENT_TAIL, (void *)(addr + len - PY_IDENT_TAIL)))
		return h;
	for (i = 0; i < PY_IDENT_TAIL / 8; i++)
		h = py_fold(h, sc->data[i]);
	return h;
}

/* A field of the code object's bytes read by py_code_ident() (from start): bounded, so the
 * verifier sees the access inside. */
#define PY_CODE_FIELD(sc, start, off, type)                                                 \
	(*(type *)((sc)->code + (((off) - (start)) & (PY_CODE_READ_SZ - 1))))

/*
 * The identity of the code object at code, for py_frame.key: with its address, it tells the
 * object from an earlier one whose memory it took (a program that makes and drops functions:
 * exec, namedtuple, dataclasses, templates; whose new code object is often at the address of
 * the one just freed, with the same first line, and its name and line table at their
 * predecessors' addresses too). A hash of co_firstlineno, the addresses of co_filename, the
 * name (py_offsets.code_name) and co_linetable, and the version's per-object serial
 * (py_offsets.code_serial) when it has one and it is not 0; else what the code object's
 * record would say (its name's length, kind and characters, its line table's bytes: the
 * first PY_IDENT_HEAD and last PY_IDENT_TAIL bytes of each). Two code objects it does not tell
 * apart are named alike. It reads only offsets of struct py_offsets (this CPU's py_scratch has
 * the process's: a 5.10 global function takes scalars only); user space checks that the
 * fields lie in the bytes read. A global function: checked once, not once per frame. Returns
 * 0 when the code object could not be read.
 */
__noinline __u32 py_code_ident(__u64 code)
{
	const struct py_offsets *o;
	struct py_scratch *sc;
	__u32 zero = 0, start, end, serial = 0, state;
	__u64 h, name, tab, len;
	__u8 kind;

	sc = bpf_map_lookup_elem(&py_scratches, &zero);
	if (!sc || !code)
		return 0;
	o = &sc->off;
	start = o->code_firstlineno & ~7u;
	end = o->code_filename;
	if (o->code_name > end)
		end = o->code_name;
	if (o->code_linetable > end)
		end = o->code_linetable;
	if (o->code_serial != PY_OFF_NONE && o->code_serial > end)
		end = o->code_serial;
	end = end + 8 - start;
	if (end > PY_CODE_READ_SZ)
		end = PY_CODE_READ_SZ;
	end &= 2 * PY_CODE_READ_SZ - 1;
	if (end > PY_CODE_READ_SZ)
		end = PY_CODE_READ_SZ;
	if (!end || bpf_probe_read_user(sc->code, end, (void *)(code + start)))
		return 0;
	name = PY_CODE_FIELD(sc, start, o->code_name, __u64);
	tab = PY_CODE_FIELD(sc, start, o->code_linetable, __u64);
	h = py_fold(0, PY_CODE_FIELD(sc, start, o->code_firstlineno, __u32));
	h = py_fold(h, PY_CODE_FIELD(sc, start, o->code_filename, __u64));
	h = py_fold(h, name);
	h = py_fold(h, tab);
	if (o->code_serial != PY_OFF_NONE)
		serial = PY_CODE_FIELD(sc, start, o->code_serial, __u32);
	if (serial) {
		h = py_fold(h, serial);
		return (__u32)h ^ (__u32)(h >> 32);
	}
	/* The name: PyASCIIObject's length (at 16) and state, then its characters. */
	sc->data[0] = sc->data[1] = sc->data[2] = 0;
	bpf_probe_read_user(sc->data, 24, (void *)(name + 16));
	len = sc->data[0];
	state = *(__u32 *)((__u8 *)sc->data + ((o->unicode_state - 16) & 31));
	kind = (state >> 2) & 7;
	h = py_fold(h, state & 0x7c); /* kind, compact, ascii: not the interned bits */
	if ((state & (1u << 5)) && (kind == 1 || kind == 2 || kind == 4))
		h = py_fold_bytes(sc, h,
				  name + ((state & (1u << 6)) ? o->unicode_ascii_sz :
								o->unicode_compact_sz),
				  len * kind);
	/* The line table: PyBytesObject's ob_size (at 16), then its bytes. */
	len = 0;
	bpf_probe_read_user(&len, sizeof(len), (void *)(tab + 16));
	h = py_fold_bytes(sc, h, tab + o->bytes_sval, len);
	return (__u32)h ^ (__u32)(h >> 32);
}

/* py_codes_emit()'s pass over the frames of the walk. */
struct py_codes_ctx {
	struct py_proc *pp;
	struct py_scratch *sc;
	__u32 tgid;
	__u32 gen;
};

/* Frame i: its key (py_code_ident()), its code object copied unless seen. 1 when the pass
 * ends, else 0. */
static __always_inline long py_codes_step(struct py_codes_ctx *c, __u32 i)
{
	struct py_stack_record *rec = &c->sc->rec;
	struct py_code_seen *seen;
	__u32 slot, key;
	__u64 code;

	if (i >= BPFPROF_PY_FRAMES_MAX || i >= rec->cnt)
		return 1;
	barrier_var(i);
	i &= BPFPROF_PY_FRAMES_MAX - 1;
	code = rec->frames[i].code;
	key = py_code_ident(code);
	rec = &c->sc->rec; /* the call took the registers */
	rec->frames[i].key = key;
	/* Every frame gets its key; the copies stop at their caps. */
	if (c->sc->emitted >= PY_CODES_PER_SAMPLE || c->pp->codes >= BPFPROF_PY_CODES_PER_S)
		return 0;
	slot = (__u32)((code >> 4) * 0x9e3779b97f4a7c15ull >> 40) ^ c->tgid ^ key;
	slot &= PY_CODES_SEEN_SZ - 1;
	seen = bpf_map_lookup_elem(&py_codes_seen, &slot);
	if (!seen)
		return 0;
	if (seen->code == code && seen->tgid == c->tgid && seen->key == key && seen->gen == c->gen)
		return 0;
	if (py_code_emit(c->tgid, code, key)) {
		c->sc->emitted = PY_CODES_PER_SAMPLE; /* the ringbuf is full: no more copies */
		return 0;
	}
	seen->code = code;
	seen->tgid = c->tgid;
	seen->key = key;
	seen->gen = c->gen;
	c->sc->emitted++;
	__sync_fetch_and_add(&c->pp->codes, 1);
	return 0;
}

static long py_codes_cb(__u32 i, void *ctx)
{
	return py_codes_step(ctx, i);
}

/* Sets the keys of this CPU's walk's frames (py_scratches), and copies their code objects not
 * copied before, at most PY_CODES_PER_SAMPLE. A global function, checked once. */
static __always_inline int py_codes_copy(__u32 tgid, __u32 gen, const bool compat)
{
	struct py_codes_ctx c;
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();
	int i;

	c.pp = bpf_map_lookup_elem(&py_procs, &tgid);
	c.sc = bpf_map_lookup_elem(&py_scratches, &zero);
	if (!c.sc || !c.pp)
		return 0;
	if (now - c.pp->codes_window_ns > 1000000000ull) {
		c.pp->codes_window_ns = now;
		c.pp->codes = 0;
	}
	c.tgid = tgid;
	c.gen = gen;
	c.sc->emitted = 0;
	if (!compat) {
		bpf_loop(BPFPROF_PY_FRAMES_MAX, py_codes_cb, &c, 0);
	} else {
		for (i = 0; i < BPFPROF_PY_FRAMES_MAX; i++)
			if (py_codes_step(&c, i))
				break;
	}
	return 0;
}

__noinline int py_codes_emit(__u32 tgid, __u32 gen)
{
	return py_codes_copy(tgid, gen, false);
}

__noinline int py_codes_emit_compat(__u32 tgid, __u32 gen)
{
	return py_codes_copy(tgid, gen, true);
}

/*
 * RECORD_PY_STACK of the current thread, if its process is a CPython one, submitted before its
 * sample is reserved (a RECORD_PY_STACK without a sample after it is dropped by user space).
 * Global functions, checked once each (py_stack_compat() for the compat programs). Return 1
 * when a record was submitted, else 0.
 */
static __always_inline int py_stack_record(__u64 pid_tgid, __u64 time_ns, __u32 cpu,
					   __u64 fsbase, const bool compat)
{
	__u32 tgid = pid_tgid >> 32, zero = 0, cnt;
	struct py_stack_record *rec;
	struct py_scratch *sc;
	struct bpf_stats *st;
	struct py_proc *pp;
	__u64 sz;

	pp = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!pp)
		return 0;
	sc = bpf_map_lookup_elem(&py_scratches, &zero);
	st = stats__get();
	if (!sc || !st)
		return 0;
	rec = &sc->rec;
	rec->hdr.type = RECORD_PY_STACK;
	rec->tgid = tgid;
	rec->tid = (__u32)pid_tgid;
	rec->time_ns = time_ns;
	rec->cpu = cpu;
	sc->off = pp->off; /* py_code_ident()'s */
	py_walk(pp, (__u32)pid_tgid, fsbase, rec, sc, compat);
	if (compat)
		py_codes_emit_compat(tgid, pp->gen);
	else
		py_codes_emit(tgid, pp->gen);
	cnt = rec->cnt;
	if (cnt > BPFPROF_PY_FRAMES_MAX)
		cnt = BPFPROF_PY_FRAMES_MAX;
	/* Only the frames found: the size need not be constant for an output. */
	sz = offsetof(struct py_stack_record, frames) + cnt * sizeof(struct py_frame);
	rec->hdr.sz = sz;
	if (bpf_ringbuf_output(&ringbuf, rec, sz, BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&st->py_lost, 1);
		return 0;
	}
	__sync_fetch_and_add(&st->py_stacks, 1);
	__sync_fetch_and_add(&st->py_frames, cnt);
	return 1;
}

__noinline int py_stack(__u64 pid_tgid, __u64 time_ns, __u32 cpu, __u64 fsbase)
{
	return py_stack_record(pid_tgid, time_ns, cpu, fsbase, false);
}

__noinline int py_stack_compat(__u64 pid_tgid, __u64 time_ns, __u32 cpu, __u64 fsbase)
{
	return py_stack_record(pid_tgid, time_ns, cpu, fsbase, true);
}

#endif /* BPFPROF_PYTHON_BPF_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* unwind.h: DWARF CFI unwinding of one sample (registers + stack slice): per-file CFI row
 * tables (cfi_table.h) on the fast path, libdwfl for everything they cannot express. */
#ifndef BPFPROF_UNWIND_H
#define BPFPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"

struct addr_space;
struct mapping;
struct module;
struct Elf;

/* Why unwinding a sample stopped. */
enum unwind_stop {
	UNWIND_STOP_ROOT,	/* the CFI marks the outermost frame (_start, clone3) */
	UNWIND_STOP_DEPTH,	/* the frame limit was reached */
	UNWIND_STOP_LOOP,	/* the same (pc, sp) twice: garbage or a broken CFI */
	UNWIND_STOP_TRUNCATED,	/* a read past the end of the copied stack slice */
	UNWIND_STOP_OUTSIDE,	/* a read outside the stack (bogus register, e.g. rbp) */
	UNWIND_STOP_NO_MAPPING, /* a pc in no known mapping */
	UNWIND_STOP_NO_REGS,	/* the sample has no user registers (kernel thread) */
	UNWIND_STOP_ERROR,	/* another libdwfl error (no CFI and no frame pointer, ...) */
	UNWIND_STOP_CNT,
};

/* Which unwinder unwind__sample() uses (--unwinder). */
enum unwind_mode {
	UNWIND_MODE_DWFL, /* libdwfl for every frame (the reference) */
	UNWIND_MODE_FAST, /* per-binary CFI row tables, libdwfl for rows they cannot express */
	UNWIND_MODE_DIFF, /* both, frames compared (differential test); result of DWFL */
};

/*
 * Sets the unwinder for every later unwind__sample() call. Without a call, the environment
 * variable BPFPROF_UNWINDER (dwfl, fast or diff) picks it, else it is UNWIND_MODE_FAST. In
 * UNWIND_MODE_DIFF, the first divergent samples are printed (pr_warn) and, at exit, the counts
 * below.
 */
void unwind__set_mode(enum unwind_mode mode);

/* UNWIND_MODE_DIFF: samples unwound both ways, and those whose frames (pc, is_activation) or
 * stop reason differ. */
uint64_t unwind__diff_samples(void);
uint64_t unwind__diff_divergent(void);

/* Names for the summary, indexed by enum unwind_stop. */
extern const char *const unwind_stop_names[UNWIND_STOP_CNT];

/* How a frame was unwound: what found its caller (--stats counts frames per method). */
enum unwind_method {
	UNWIND_BY_CFI_TABLE, /* the fast path's CFI rows (.eh_frame, .debug_frame) */
	UNWIND_BY_STEP,	     /* a registered step (struct unwind_step_ops): a runtime's own
			      * table, as its own traceback */
	UNWIND_BY_DWFL,	     /* libdwfl with the file's CFI (rows the fast path cannot express) */
	UNWIND_BY_FP,	     /* the frame pointer: no CFI covers the frame (JIT code), as
			      * libdwfl's x86-64 guess does it (both unwinders) */
	UNWIND_BY_CNT,
};

/* Names for --stats, indexed by enum unwind_method (UNWIND_BY_STEP: the first registered
 * step's method_name). */
extern const char *unwind_method_names[UNWIND_BY_CNT];

/*
 * Whether unwind__sample() tells libdwfl's frames with CFI from its frame-pointer guesses
 * (UNWIND_BY_FP): one more CFI lookup per frame libdwfl unwinds, for --stats. Off by default.
 */
void unwind__set_methods(bool on);

/* One user frame. */
struct unwind_frame {
	uint64_t pc;	    /* the frame's pc: a return address for callers */
	/* The frame's sp (its caller's is its CFA): it spans [sp, the next frame's sp) of the
	 * stack, its locals in it (Python frames find their evaluator's activation so). */
	uint64_t sp;
	bool is_activation; /* the sampled frame or a signal frame: symbolize pc, else pc - 1 */
	/* The mapping holding the frame's address (pc for an activation, else pc - 1: the call),
	 * NULL when none does; valid until the address space changes (addr_space.h). */
	const struct mapping *mapping;
	uint64_t elf_addr; /* that address in mapping's ELF file (minus its bias), with
			    * mapping->entry; else 0 */
	/* enum unwind_method: how its caller was found (the last frame's: how the walk found it
	 * had none, or what failed); libdwfl's frames are UNWIND_BY_DWFL unless
	 * unwind__set_methods() */
	uint8_t method;
};

/*
 * One process's unwinder: the context libdwfl's thread callbacks read, attached once to each
 * Dwfl of the address space (a second dwfl_attach_state() fails) and refilled for each
 * sample. ref_elf selects libdwfl's architecture backend; as and ref_elf are borrowed and must
 * outlive the unwinder, which must outlive every Dwfl of as (free as first). NULL + errno.
 */
struct unwinder;
struct unwinder *unwinder__new(struct addr_space *as, struct Elf *ref_elf);
void unwinder__free(struct unwinder *uw);

/*
 * Unwinds sample s of uw's process into frames[0..*cnt), innermost first, at most cap frames,
 * with the unwinder unwind__set_mode() chose (all give the same frames and stop reasons; the
 * fast one builds each file's CFI table at the first pc inside it). Each frame carries its
 * mapping and ELF address, looked up once while unwinding.
 * stack_cap is the stack copy size the BPF side was given (to tell a truncated copy).
 * Modules are reported to the process's Dwfl on the first pc inside them. Partial stacks are
 * kept: the return value is the number of frames (>= 0), *stop says why it ended and
 * unwinder__stop_frame() at which frame.
 */
int unwind__sample(struct unwinder *uw, const struct sample_record *s, uint32_t stack_cap,
		   struct unwind_frame *frames, size_t cap, enum unwind_stop *stop);

/*
 * Memory of another stack for the next unwind__sample() of uw only: len bytes at user address
 * addr (data borrowed until then), read where the sample's own copy has nothing (a goroutine's
 * stack its thread switched from: RECORD_GO_STACK, copied around its frame pointer bp).
 */
void unwinder__set_stack2(struct unwinder *uw, uint64_t addr, const uint8_t *data, uint32_t len,
			  uint64_t bp);

/* A word of user memory at addr: the frame-pointer chain past a sample's copy. */
struct stack_word {
	uint64_t addr;
	uint64_t val;
};

/*
 * More memory for the next unwind__sample() of uw only: cnt words sorted by addr (borrowed
 * until then), read where the copies have nothing (a Go stack deeper than the copy:
 * RECORD_FP_CHAIN's frame pointers and return addresses).
 */
void unwinder__set_fp_chain(struct unwinder *uw, const struct stack_word *words, size_t cnt);

/* About the last unwind__sample() of uw: */
/* Whether the registered step ops was used (unwind_step__used(): the process runs that
 * runtime's code). */
struct unwind_step_ops;
bool unwinder__step_used(const struct unwinder *uw, const struct unwind_step_ops *ops);
/* The frame where unwinding ended: the first one in a file without CFI when a frame-pointer
 * guess from there went wrong (UNWIND_STOP_ERROR, "no CFI"), else the last (--stats). */
size_t unwinder__stop_frame(const struct unwinder *uw);
/* The last frame's stack pointer (0 if unknown): how much of the copy was needed. */
uint64_t unwinder__last_sp(const struct unwinder *uw);
/* Whether the walk ended reading past the end of a copy of the full copy size: "stack copy
 * truncated", also when the stop is blamed on a frame-pointer step below it ("no CFI"): a
 * larger copy may go on. */
bool unwinder__copy_short(const struct unwinder *uw);
/* The first frame libdwfl unwound (the fast path handed over there; 0 with UNWIND_MODE_DWFL). */
size_t unwinder__dwfl_from(const struct unwinder *uw);
/* The address space uw unwinds. */
struct addr_space *unwinder__addr_space(const struct unwinder *uw);

/*
 * A step for the frames of files a runtime unwinds its own way where their CFI has no usable
 * row (Go's pcsp table in .gopclntab for a binary linked without CFI): the fast path tries it
 * before the frame-pointer guess and libdwfl. The step sees the walk through struct
 * unwind_step and the unwind_step__*() calls below. The diff mode compares no sample a step
 * unwound a frame of (libdwfl has no such tables).
 */
struct unwind_step;

/* The mapping a step is asked about: [start, end) of a file loaded with bias, and the data
 * module_data() gave for the file. */
struct unwind_step_map {
	uint64_t start;
	uint64_t end;
	uint64_t bias;
	void *data;
};

struct unwind_step_ops {
	const char *method_name; /* its frames' method in --stats ("Go pcsp") */
	/* The step's data for file e (a runtime's table kept on the module), or NULL: the step
	 * knows none of its frames. Called once per mapping a walk uses. */
	void *(*module_data)(struct module *e);
	/*
	 * The frame at pc (addr: where its row is looked up, pc for the sampled frame (initial),
	 * else pc - 1) in map. Returns -1 when the step does not know the frame (the walk goes
	 * on without it), 0 at a root frame or when the return address is past the memory
	 * copied, a non-zero return of unwind_step__frame() (the walk ends), or 2 when the
	 * caller's registers are set (unwind_step__set_reg()).
	 */
	int (*step)(struct unwind_step *st, const struct unwind_step_map *map, uint64_t pc,
		    uint64_t addr, bool initial);
};

/* Registers ops for every later unwind (borrowed: static). Registering ops again is a no-op.
 * 0, or -ENOSPC past the steps kept (4). */
int unwind__add_step(const struct unwind_step_ops *ops);

/* DWARF x86-64 registers a step reads and sets. */
#define UNWIND_REG_BP 6
#define UNWIND_REG_SP 7
#define UNWIND_REG_PC 16

/* The walk's register reg (DWARF number) of the frame being stepped, into *val: false when it
 * is unknown. */
bool unwind_step__reg(const struct unwind_step *st, unsigned int reg, uint64_t *val);
/* Sets the caller's register reg, known from now on. */
void unwind_step__set_reg(struct unwind_step *st, unsigned int reg, uint64_t val);
/* Forgets every register but those of mask (bit n: DWARF register n). */
void unwind_step__keep_regs(struct unwind_step *st, uint32_t mask);
/*
 * The word of user memory at addr, into *val: from the sample's copy, else the extra memory
 * of unwinder__set_stack2() and unwinder__set_fp_chain(). false when none has it (the first
 * such address is kept as the read that may end the walk: "stack copy truncated").
 */
bool unwind_step__read(struct unwind_step *st, uint64_t addr, uint64_t *val);
/* The failed reads so far explain nothing (the step found its frame). */
void unwind_step__reads_ok(struct unwind_step *st);
/* Whether addr is inside the sample's own copy of its stack. */
bool unwind_step__in_copy(const struct unwind_step *st, uint64_t addr);
/* The frame pointer unwinder__set_stack2()'s memory was copied around, or 0 without it. */
uint64_t unwind_step__stack2_bp(const struct unwind_step *st);
/* The walk used the step's table (unwinder__step_used() says so after it). */
void unwind_step__used(struct unwind_step *st);
/* Appends the frame (pc, sp, activation) of the step's mapping, unwound by the step
 * (UNWIND_BY_STEP). 0, or non-zero when the walk ends there (a loop, the frame limit). */
int unwind_step__frame(struct unwind_step *st, uint64_t pc, uint64_t sp, bool activation);

#endif /* BPFPROF_UNWIND_H */

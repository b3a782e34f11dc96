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
	UNWIND_BY_GO,	     /* Go's pcsp table (.gopclntab), as Go's own traceback */
	UNWIND_BY_DWFL,	     /* libdwfl with the file's CFI (rows the fast path cannot express) */
	UNWIND_BY_FP,	     /* the frame pointer: no CFI covers the frame (JIT code), as
			      * libdwfl's x86-64 guess does it (both unwinders) */
	UNWIND_BY_CNT,
};

/* Names for --stats, indexed by enum unwind_method. */
extern const char *const unwind_method_names[UNWIND_BY_CNT];

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
/* Whether a Go function table unwound a frame (the process runs Go code). */
bool unwinder__go_frames(const struct unwinder *uw);
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

#endif /* BPFPROF_UNWIND_H */

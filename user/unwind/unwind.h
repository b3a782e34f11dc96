/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* unwind.h: DWARF CFI unwinding of one sample (registers + stack slice): per-file CFI row
 * tables (cfi_table.h) on the fast path, libdwfl for everything they cannot express. */
#ifndef BPFPROF_UNWIND_H
#define BPFPROF_UNWIND_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include "bpf/record.h"
#include "unwind/regs.h"

struct proc;

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

/* One user frame. */
struct unwind_frame {
	uint64_t pc;	    /* the frame's pc: a return address for callers */
	bool is_activation; /* the sampled frame or a signal frame: symbolize pc, else pc - 1 */
};

/*
 * The per-process context libdwfl's thread callbacks read: attached once with the Dwfl
 * (a second dwfl_attach_state() fails), refilled by unwind__sample() for each sample. Its
 * contents are valid only during unwind__sample().
 */
struct unwind_ctx {
	struct proc *proc;
	pid_t tid;
	uint64_t regs[REGS_DWARF_MAX]; /* DWARF order */
	size_t regs_cnt;
	uint32_t regs_mask;   /* bit n: regs[n] is known (the rest are undefined) */
	const uint8_t *stack; /* the sample's copy of user memory */
	uint64_t stack_addr;  /* its user address */
	uint32_t stack_sz;    /* its valid bytes */
	bool stack_full;      /* the copy used the whole --stack-size */
	uint64_t bad_read;    /* the first address memory_read refused, or 0 */
	struct unwind_frame *frames;
	size_t frames_cap;
	size_t frames_cnt;
	uint64_t last_sp;
	bool no_mapping;
	size_t stop_frame; /* the frame where unwinding ended (--stats) */
	/* Fast path (UNWIND_MODE_FAST) handing the rest of the stack to libdwfl at a frame that
	 * is not the sampled one: libdwfl starts there as at a sampled frame from pc - 1 (the
	 * call, where the caller's CFI row is looked up), and the frame is reported as it is. */
	size_t dwfl_from;     /* the first frame libdwfl unwound */
	bool handover;	      /* the next frame libdwfl reports is that frame: */
	bool handover_signal; /* its CFI is a signal frame's ('S') */
	uint64_t handover_pc; /* its pc (a return address) */
};

/*
 * Attaches libdwfl's thread callbacks to dwfl for process tgid. ref_elf selects the
 * architecture backend and must outlive dwfl. Call once per Dwfl.
 * Returns 0 or -EINVAL (dwfl_errmsg(-1) says why).
 */
int unwind__attach(Dwfl *dwfl, Elf *ref_elf, pid_t tgid, struct unwind_ctx *ctx);

/*
 * Unwinds sample s of process p into frames[0..*cnt), innermost first, at most cap frames,
 * with the unwinder unwind__set_mode() chose (all give the same frames and stop reasons; the
 * fast one builds each file's CFI table at the first pc inside it).
 * stack_cap is the stack copy size the BPF side was given (to tell a truncated copy).
 * Modules are reported to p's Dwfl on the first pc inside them. Partial stacks are kept: the
 * return value is the number of frames (>= 0), *stop says why it ended and p->ctx.stop_frame
 * at which frame: the first one in a file without CFI when a frame-pointer guess from there
 * went wrong (UNWIND_STOP_ERROR, "no CFI"), else the last.
 */
int unwind__sample(struct proc *p, const struct sample_record *s, uint32_t stack_cap,
		   struct unwind_frame *frames, size_t cap, enum unwind_stop *stop);

#endif /* BPFPROF_UNWIND_H */

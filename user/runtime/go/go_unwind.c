// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * go_unwind.c: Go frames without CFI unwound as Go's own traceback does, from the pcsp tables of
 * .gopclntab, and across Go's stack switches (g0 to the goroutine stack) with the memory of
 * RECORD_GO_STACK: the unwinder's step for Go files (unwind.h, struct unwind_step_ops).
 */
#include <stdlib.h>
#include <string.h>
#include "bpf/record.h"
#include "runtime/go/go.h"
#include "runtime/go/gopclntab.h"
#include "unwind/unwind.h"

static void *go_step_data(struct module *e)
{
	return go_module_table(e);
}

static inline const struct gopclntab *go_table(const struct unwind_step_map *fm)
{
	return fm->data;
}

/*
 * The frame of the function that called runtime.systemstack or triggered runtime.morestack, on
 * the goroutine stack the thread switched from, whose frame pointer bp is (Go's g0 frames keep
 * the goroutine's rbp: the first one saves it). Go's frames are [sp, bp + 16): the function's
 * frame pointer bp = sp + size - 8 (runtime/stack.go), the return address into it, pushed by
 * its call, at sp - 8 = bp - size. So the return address is the word at bp - d, d = 8, 16, ...
 * that is a pc of this file whose pcsp value (size) is d. Sets *ret_at (its address) and *ret;
 * false when none is found in the memory read (RECORD_GO_STACK copies
 * BPFPROF_GO_STACK_BELOW bytes below bp).
 */
static bool go_switched_frame(struct unwind_step *st, const struct unwind_step_map *fm, uint64_t bp,
			      uint64_t *ret_at, uint64_t *ret)
{
	struct go_frame gf;
	uint64_t d, w;

	for (d = 8; d < BPFPROF_GO_STACK_BELOW && d < bp; d += 8) {
		if (!unwind_step__read(st, bp - d, &w))
			return false;
		if (w - 1 < fm->start || w - 1 >= fm->end ||
		    gopclntab__frame(go_table(fm), w - 1 - fm->bias, &gf) ||
		    gf.sp_delta != (int32_t)d)
			continue;
		*ret_at = bp - d;
		*ret = w;
		return true;
	}
	return false;
}

/*
 * The caller X of a switching function sw that keeps a frame pointer: Go 1.21+'s assembler
 * gives each $0 frame that makes calls (systemstack, mcall, asmcgocall) a push of rbp at its
 * entry, so rbp is sw's own (the g0 frames keep it) and sw's frame on the stack it switched
 * from is [bp, bp + 16): X's rbp, then the return address into X. Checked: that address is in
 * a Go function and, when X has a frame, the saved rbp is X's (bp + 16 + its size - 8). Sets
 * *ret_at, *ret and *caller_bp; false when bp is no such frame.
 */
static bool go_switched_own_frame(struct unwind_step *st, const struct unwind_step_map *fm,
				  uint64_t bp, uint64_t *ret_at, uint64_t *ret, uint64_t *caller_bp)
{
	struct go_frame gf;
	uint64_t w, saved;

	if (bp > UINT64_MAX - 16 || !unwind_step__read(st, bp + 8, &w) ||
	    !unwind_step__read(st, bp, &saved) || w - 1 < fm->start || w - 1 >= fm->end ||
	    gopclntab__frame(go_table(fm), w - 1 - fm->bias, &gf) || gf.sp_delta < 0 ||
	    (gf.sp_delta >= 16 && saved != bp + 16 + gf.sp_delta - 8))
		return false;
	*ret_at = bp + 8;
	*ret = w;
	*caller_bp = saved;
	return true;
}

/* go_switched_frame() or, when sw keeps a frame pointer (own), go_switched_own_frame() from
 * bp when bp can be the frame pointer of the stack switched from: another stack (in the heap,
 * it may follow the g0 stack within the sample's copy); a stale rbp below sp in the copy is no
 * caller's. *caller_bp: X's rbp. */
static bool go_switch_bp(struct unwind_step *st, const struct unwind_step_map *fm, uint64_t bp,
			 bool own, uint64_t *ret_at, uint64_t *ret, uint64_t *caller_bp)
{
	uint64_t sp = 0;

	unwind_step__reg(st, UNWIND_REG_SP, &sp); /* known: go_step() checked */
	if (!bp || (bp & 7) || (unwind_step__in_copy(st, bp) && bp <= sp))
		return false;
	if (own)
		return go_switched_own_frame(st, fm, bp, ret_at, ret, caller_bp);
	*caller_bp = bp;
	return go_switched_frame(st, fm, bp, ret_at, ret);
}

/*
 * A Go function that switches stacks (funcFlag_SPWRITE), reached from the g0 stack it switched
 * to: the walk goes on on the goroutine stack, as Go's traceback does (runtime/traceback.go,
 * _TraceJumpStack), with the memory of RECORD_GO_STACK (unwinder__set_stack2()):
 * - runtime.systemstack, runtime.mcall (gopark, gosched: the scheduler runs on g0 for the
 *   goroutine that stops), runtime.asmcgocall (a cgo call: the C function runs on g0, the
 *   thread's own stack; rbp, callee-saved, is X's again once its frames are unwound by their
 *   CFI): its caller X, whose frame go_switched_frame() finds from rbp (X's); from Go 1.21,
 *   these push rbp first (pcsp 8 from their second byte): rbp is theirs, and
 *   go_switched_own_frame() reads X's return address and rbp above it;
 * - runtime.morestack (from morestack_noctxt): the function f whose prologue found its stack
 *   too small and called it, before making its frame (pcsp 0 there), just below the return
 *   address into f's caller Y, found the same way from rbp (Y's).
 * Returns -1 for any other function, or when the frame is not found (libdwfl then tries, and
 * fails its way); else as go_step().
 */
static int go_switch(struct unwind_step *st, const struct unwind_step_map *fm, uint64_t pc,
		     const struct go_frame *sw)
{
	uint64_t bp, ret_at, ret, f_ret, caller_bp, sp = 0;
	struct go_frame gf;
	bool more, own;
	int err;

	if (!sw->name)
		return -1;
	more = !strcmp(sw->name, "runtime.morestack");
	if (!more && strcmp(sw->name, "runtime.systemstack") && strcmp(sw->name, "runtime.mcall") &&
	    strcmp(sw->name, "runtime.asmcgocall"))
		return -1;
	own = !more && !gopclntab__frame(go_table(fm), sw->start + 1, &gf) && gf.sp_delta == 8;
	/* rbp as the g0 frames left it; else the frame pointer BPF found leaving the sample's
	 * copy (a g0 function that does not keep rbp leaves a stale one). */
	if (!unwind_step__reg(st, UNWIND_REG_BP, &bp))
		bp = 0;
	if (!go_switch_bp(st, fm, bp, own, &ret_at, &ret, &caller_bp)) {
		bp = unwind_step__stack2_bp(st);
		if (!go_switch_bp(st, fm, bp, own, &ret_at, &ret, &caller_bp))
			return -1;
	}
	if (more && (!unwind_step__read(st, ret_at - 8, &f_ret) || f_ret - 1 < fm->start ||
		     f_ret - 1 >= fm->end ||
		     gopclntab__frame(go_table(fm), f_ret - 1 - fm->bias, &gf) || gf.sp_delta))
		return -1;
	unwind_step__reads_ok(st);
	unwind_step__reg(st, UNWIND_REG_SP, &sp);
	err = unwind_step__frame(st, pc, sp, false);
	if (err)
		return err;
	/* The caller's registers: its sp above the return address into it. */
	unwind_step__keep_regs(st, 0);
	unwind_step__set_reg(st, UNWIND_REG_SP, more ? ret_at : ret_at + 8);
	unwind_step__set_reg(st, UNWIND_REG_PC, more ? f_ret : ret);
	unwind_step__set_reg(st, UNWIND_REG_BP, caller_bp);
	return 2;
}

/*
 * A Go frame without CFI (a binary linked -s -w has none): unwound as Go's own traceback does,
 * from the function's pcsp table (the return address sp_delta bytes above sp). Returns -1 when
 * the Go table does not know the frame (libdwfl then tries), 0 at a goroutine's or thread's
 * first frame (the root) or when the return address is past the memory copied (the failed read
 * kept), unwind_step__frame()'s non-zero return, 2 when the caller's registers are set
 * (unwind_step_ops.step).
 */
static int go_step(struct unwind_step *st, const struct unwind_step_map *fm, uint64_t pc,
		   uint64_t addr, bool initial)
{
	struct go_frame gf;
	uint64_t sp, ra = 0, bp, old_bp;
	int err;

	if (!unwind_step__reg(st, UNWIND_REG_SP, &sp) ||
	    gopclntab__frame(go_table(fm), addr - fm->bias, &gf) || gf.sp_delta < 0)
		return -1;
	if (gf.sp_write)
		return initial ? -1 : go_switch(st, fm, pc, &gf);
	unwind_step__used(st);
	if (!gf.top && !unwind_step__read(st, sp + gf.sp_delta, &ra)) {
		/* The frame is known, its caller is past the memory copied: say so (a copy too
		 * short is raised for the next samples), no frame-pointer guess. */
		return unwind_step__frame(st, pc, sp, initial);
	}
	unwind_step__reads_ok(st);
	err = unwind_step__frame(st, pc, sp, initial);
	if (err || gf.top)
		return err;
	/* A Go function with a frame keeps its caller's rbp just below the return address. */
	if (gf.sp_delta >= 16 && unwind_step__read(st, sp + gf.sp_delta - 8, &bp))
		if (unwind_step__reg(st, UNWIND_REG_BP, &old_bp)) /* an unknown one stays so */
			unwind_step__set_reg(st, UNWIND_REG_BP, bp);
	unwind_step__set_reg(st, UNWIND_REG_SP, sp + gf.sp_delta + 8);
	unwind_step__set_reg(st, UNWIND_REG_PC, ra);
	return 2;
}

static const struct unwind_step_ops go_step_ops = {
	.method_name = "Go pcsp",
	.module_data = go_step_data,
	.step = go_step,
};

int go_unwind__register(void)
{
	return unwind__add_step(&go_step_ops);
}

bool go_unwind__used(const struct unwinder *uw)
{
	return unwinder__step_used(uw, &go_step_ops);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unwind.c: libdwfl thread callbacks serving one sample's registers and stack slice only. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "log.h"
#include <stdlib.h>
#include "proc_table.h"
#include "unwind.h"

const char *const unwind_stop_names[UNWIND_STOP_CNT] = {
	[UNWIND_STOP_ROOT] = "root",
	[UNWIND_STOP_DEPTH] = "depth limit",
	[UNWIND_STOP_LOOP] = "loop",
	[UNWIND_STOP_TRUNCATED] = "stack copy truncated",
	[UNWIND_STOP_OUTSIDE] = "read outside the copied stack",
	[UNWIND_STOP_NO_MAPPING] = "unknown mapping",
	[UNWIND_STOP_NO_REGS] = "no user registers",
	[UNWIND_STOP_ERROR] = "no CFI",
};

static enum unwind_mode unwind_mode = UNWIND_MODE_DWFL;

void unwind__set_mode(enum unwind_mode mode)
{
	unwind_mode = mode;
}

/* Threads are only ever asked for by tid (get_thread): there is nothing to enumerate. */
static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	struct unwind_ctx *ctx = dwfl_arg;

	if (tid != ctx->tid)
		return false;
	*thread_argp = ctx;
	return true;
}

/* Only the copied stack is served: reading the live process or the ELF file would follow
 * bogus registers into confident garbage (docs/design.md, "Unwinding"). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwind_ctx *ctx = dwfl_arg;
	uint64_t off;

	if (addr < ctx->stack_addr || addr - ctx->stack_addr > ctx->stack_sz ||
	    ctx->stack_sz - (addr - ctx->stack_addr) < sizeof(*result)) {
		/* Keep the first: after a failed CFI step libdwfl tries a frame-pointer step,
		 * whose reads through a bogus rbp say nothing about why the CFI step failed. */
		if (!ctx->bad_read)
			ctx->bad_read = addr ? addr : 1;
		return false;
	}
	off = addr - ctx->stack_addr;
	memcpy(result, ctx->stack + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_ctx *ctx = thread_arg;

	return dwfl_thread_state_registers(thread, 0, ctx->regs_cnt, ctx->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

int unwind__attach(Dwfl *dwfl, Elf *ref_elf, pid_t tgid, struct unwind_ctx *ctx)
{
	return dwfl_attach_state(dwfl, ref_elf, tgid, &thread_callbacks, ctx) ? 0 : -EINVAL;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_ctx *ctx = arg;
	struct unwind_frame *f;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool activation;

	/* Only a failed read while unwinding the last frame explains why unwinding ended. */
	ctx->bad_read = 0;
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	/* Report the module before asking isactivation: that unwinds the caller, which needs
	 * this frame's CFI. */
	if (!proc__mapping(ctx->proc, pc))
		ctx->no_mapping = true;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	dwfl_frame_reg(state, 7 /* rsp */, &sp);
	if (ctx->frames_cnt && pc == ctx->frames[ctx->frames_cnt - 1].pc && sp == ctx->last_sp)
		return DWARF_CB_ABORT;	/* loop; the caller tells it from depth */
	ctx->last_sp = sp;
	f = &ctx->frames[ctx->frames_cnt++];
	f->pc = pc;
	f->is_activation = activation;
	return ctx->frames_cnt < ctx->frames_cap ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether CFI (.eh_frame, else .debug_frame) describes pc in dwfl. */
static bool has_cfi(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	int i;

	if (!mod)
		return false;
	for (i = 0; i < 2; i++) {
		cfi = i ? dwfl_module_dwarf_cfi(mod, &bias) : dwfl_module_eh_cfi(mod, &bias);
		if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
			free(frame);
			return true;
		}
	}
	return false;
}

/*
 * Where no CFI covers a frame's pc, libdwfl goes on with a frame-pointer guess, and whatever
 * fails after it (a bogus pc, a read outside the stack) is only a symptom: blame the first
 * frame without CFI. Only on stacks that did not reach the root.
 */
static void blame_missing_cfi(struct unwind_ctx *ctx, Dwfl *dwfl, enum unwind_stop *stop)
{
	const struct unwind_frame *f;
	size_t i;

	for (i = 0; i < ctx->frames_cnt; i++) {
		f = &ctx->frames[i];
		if (has_cfi(dwfl, f->is_activation ? f->pc : f->pc - 1))
			continue;
		*stop = UNWIND_STOP_ERROR;
		ctx->stop_frame = i;
		return;
	}
}

int unwind__sample(struct proc *p, const struct sample_record *s, uint32_t stack_cap,
		   struct unwind_frame *frames, size_t cap, enum unwind_stop *stop)
{
	struct unwind_ctx *ctx = &p->ctx;
	Dwfl *dwfl;
	size_t prev;
	int ret;

	*stop = UNWIND_STOP_NO_REGS;
	if (regs__to_dwarf(s, ctx->regs, REGS_DWARF_MAX, &ctx->regs_cnt) || !cap)
		return 0;
	*stop = UNWIND_STOP_ERROR;
	dwfl = proc__dwfl(p);
	if (!dwfl)
		return 0;
	ctx->tid = s->tid;
	ctx->stack = s->stack;
	ctx->stack_addr = s->stack_addr;
	ctx->stack_sz = s->stack_sz;
	ctx->stack_full = s->stack_sz >= stack_cap;
	ctx->bad_read = 0;
	ctx->frames = frames;
	ctx->frames_cap = cap;
	ctx->frames_cnt = 0;
	ctx->last_sp = 0;
	ctx->no_mapping = false;

	p->in_unwind = true;
	ret = dwfl_getthread_frames(dwfl, s->tid, frame_cb, ctx);

	if (ret == 0 && !ctx->bad_read) {
		/* libdwfl ends with 0 when the return address is undefined: the CFI of
		 * _start and clone3 says so (DW_CFA_undefined rip). */
		*stop = UNWIND_STOP_ROOT;
	} else if (ret == DWARF_CB_ABORT) {
		*stop = ctx->frames_cnt >= cap ? UNWIND_STOP_DEPTH : UNWIND_STOP_LOOP;
	} else if (ctx->bad_read) {
		/* libdwfl also ends with 0 when it cannot read the return address. Past the
		 * copy's end: the copy was too short; elsewhere: a bogus register. */
		prev = ctx->stack_addr + ctx->stack_sz;
		*stop = ctx->bad_read >= prev && ctx->stack_full ? UNWIND_STOP_TRUNCATED
								   : UNWIND_STOP_OUTSIDE;
	} else if (ctx->no_mapping) {
		*stop = UNWIND_STOP_NO_MAPPING;
	}
	ctx->stop_frame = ctx->frames_cnt ? ctx->frames_cnt - 1 : 0;
	if (*stop != UNWIND_STOP_ROOT && *stop != UNWIND_STOP_DEPTH)
		blame_missing_cfi(ctx, dwfl, stop);
	/* Last use of dwfl: a mapping change seen while unwinding may drop it now. */
	proc__unwind_end(p);
	if (*stop != UNWIND_STOP_ROOT && log__enabled(LOG_DEBUG))
		pr_debug("unwind %u/%u: %s after %zu frames (%s; read at 0x%" PRIx64
			 ", copy 0x%" PRIx64 "+%u)", s->tgid, s->tid, unwind_stop_names[*stop],
			 ctx->frames_cnt, ret < 0 ? dwfl_errmsg(-1) : "-", ctx->bad_read,
			 ctx->stack_addr, ctx->stack_sz);
	ctx->frames = NULL;
	ctx->stack = NULL;
	return ctx->frames_cnt;
}

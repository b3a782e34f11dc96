// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unwind.c: one sample's registers and stack slice -> frames: CFI row tables on the fast path,
 * libdwfl (thread callbacks serving the copied slice only) for the rest and as the reference. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "process/addr_space.h"
#include "runtime/go/gopclntab.h"
#include "symbols/module_symbols.h"
#include "unwind/cfi_table.h"
#include "unwind/regs.h"
#include "unwind/unwind.h"
#include "util/log.h"

#define RAX_REG 0
#define SP_REG	REGS_DWARF_X86_64_SP
#define PC_REG	REGS_DWARF_X86_64_PC
#define BP_REG	6 /* DWARF x86-64: rbp */

/*
 * The per-process context libdwfl's thread callbacks read (the Dwfl's dwfl_arg): attached
 * once to each Dwfl of the address space, refilled by unwind__sample() for each sample. Its
 * sample fields are valid only during unwind__sample().
 */
struct unwinder {
	struct addr_space *as;
	Elf *ref_elf; /* libdwfl's backend (borrowed) */
	pid_t tid;
	uint64_t regs[REGS_DWARF_MAX]; /* DWARF order */
	size_t regs_cnt;
	uint32_t regs_mask;   /* bit n: regs[n] is known (the rest are undefined) */
	const uint8_t *stack; /* the sample's copy of user memory */
	uint64_t stack_addr;  /* its user address */
	uint32_t stack_len;   /* its valid bytes */
	bool stack_full;      /* the copy used the whole --stack-size */
	const uint8_t *stack2; /* unwinder__set_stack2()'s memory, for one sample; or NULL */
	uint64_t stack2_addr;
	uint32_t stack2_len;
	uint64_t stack2_bp; /* the frame pointer it was copied around */
	const struct stack_word *words; /* unwinder__set_fp_chain()'s, for one sample; or NULL */
	size_t words_cnt;
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
	bool go_frames;	      /* a frame was unwound by a Go function table (go_step()) */
	bool handover;	      /* the next frame libdwfl reports is that frame: */
	bool handover_signal; /* its CFI is a signal frame's ('S') */
	uint64_t handover_pc; /* its pc (a return address) */
};

/* Divergent samples UNWIND_MODE_DIFF prints. */
#define DIFF_PRINT_MAX 5

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

/* The fast path gives libdwfl's frames and stop reasons (UNWIND_MODE_DIFF over the
 * integration tests), 20 times faster. */
static enum unwind_mode unwind_mode = UNWIND_MODE_FAST;
static bool mode_chosen; /* by unwind__set_mode() or BPFPROF_UNWINDER */
static bool methods_on;	 /* unwind__set_methods() */

const char *const unwind_method_names[UNWIND_BY_CNT] = {
	[UNWIND_BY_CFI_TABLE] = "CFI",
	[UNWIND_BY_GO] = "Go pcsp",
	[UNWIND_BY_DWFL] = "libdwfl CFI",
	[UNWIND_BY_FP] = "frame pointer",
};

void unwind__set_methods(bool on)
{
	methods_on = on;
}
static uint64_t diff_samples, diff_divergent;
static struct unwind_frame *diff_frames; /* the fast path's frames in UNWIND_MODE_DIFF */
static size_t diff_frames_cap;

uint64_t unwind__diff_samples(void)
{
	return diff_samples;
}

uint64_t unwind__diff_divergent(void)
{
	return diff_divergent;
}

/* At exit (atexit(), registered with UNWIND_MODE_DIFF): the counts, for the integration
 * tests' replays (tests/lib.sh) whatever main() prints. */
static void diff_summary(void)
{
	log__print(diff_divergent ? LOG_WARN : LOG_INFO,
		   "unwinder diff: %" PRIu64 " samples unwound both ways, %" PRIu64 " divergent",
		   diff_samples, diff_divergent);
	free(diff_frames);
	diff_frames = NULL;
}

void unwind__set_mode(enum unwind_mode mode)
{
	static bool summary_registered;

	unwind_mode = mode;
	mode_chosen = true;
	if (mode == UNWIND_MODE_DIFF && !summary_registered)
		summary_registered = !atexit(diff_summary);
}

static enum unwind_mode current_mode(void)
{
	const char *env;

	if (mode_chosen)
		return unwind_mode;
	env = getenv("BPFPROF_UNWINDER");
	if (env && !strcmp(env, "dwfl"))
		unwind__set_mode(UNWIND_MODE_DWFL);
	else if (env && !strcmp(env, "fast"))
		unwind__set_mode(UNWIND_MODE_FAST);
	else if (env && !strcmp(env, "diff"))
		unwind__set_mode(UNWIND_MODE_DIFF);
	else
		unwind__set_mode(unwind_mode);
	if (env && *env && strcmp(env, "dwfl") && strcmp(env, "fast") && strcmp(env, "diff"))
		pr_warn("ignore BPFPROF_UNWINDER=%s: not dwfl, fast or diff", env);
	return unwind_mode;
}

/* Threads are only ever asked for by tid (get_thread): there is nothing to enumerate. */
static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	struct unwinder *ctx = dwfl_arg;

	if (tid != ctx->tid)
		return false;
	*thread_argp = ctx;
	return true;
}

/* The word at addr among words[0..cnt) (sorted), into *val. */
static bool stack_word_find(const struct stack_word *words, size_t cnt, uint64_t addr,
			    uint64_t *val)
{
	size_t lo = 0, hi = cnt, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (words[mid].addr < addr) {
			lo = mid + 1;
		} else if (words[mid].addr > addr) {
			hi = mid;
		} else {
			*val = words[mid].val;
			return true;
		}
	}
	return false;
}

/* Only the copied stack is served: reading the live process or the ELF file would follow
 * bogus registers into confident garbage (docs/design.md, "Unwinding"). The fast path reads
 * through here too, so both fail the same reads. */
static inline bool stack_read(struct unwinder *ctx, uint64_t addr, uint64_t *result)
{
	uint64_t off;

	if (addr >= ctx->stack_addr && addr - ctx->stack_addr <= ctx->stack_len &&
	    ctx->stack_len - (addr - ctx->stack_addr) >= sizeof(*result)) {
		off = addr - ctx->stack_addr;
		memcpy(result, ctx->stack + off, sizeof(*result));
		return true;
	}
	if (ctx->stack2 && addr >= ctx->stack2_addr && addr - ctx->stack2_addr <= ctx->stack2_len &&
	    ctx->stack2_len - (addr - ctx->stack2_addr) >= sizeof(*result)) {
		off = addr - ctx->stack2_addr;
		memcpy(result, ctx->stack2 + off, sizeof(*result));
		return true;
	}
	if (ctx->words && stack_word_find(ctx->words, ctx->words_cnt, addr, result))
		return true;
	/* Keep the first: after a failed CFI step libdwfl tries a frame-pointer step, whose
	 * reads through a bogus rbp say nothing about why the CFI step failed. */
	if (!ctx->bad_read)
		ctx->bad_read = addr ? addr : 1;
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	return stack_read(dwfl_arg, addr, result);
}

/* The registers known at the first frame: all of the sample's, or those the fast path knew
 * where it handed over (the others stay undefined, as they would be in libdwfl's own walk). */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwinder *ctx = thread_arg;
	size_t i;

	if (ctx->regs_mask == (1u << ctx->regs_cnt) - 1)
		return dwfl_thread_state_registers(thread, 0, ctx->regs_cnt, ctx->regs);
	for (i = 0; i < ctx->regs_cnt; i++)
		if ((ctx->regs_mask & 1u << i) &&
		    !dwfl_thread_state_registers(thread, i, 1, &ctx->regs[i]))
			return false;
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct unwinder *unwinder__new(struct addr_space *as, struct Elf *ref_elf)
{
	struct unwinder *uw = calloc(1, sizeof(*uw));

	if (!uw)
		return NULL;
	uw->as = as;
	uw->ref_elf = ref_elf;
	return uw;
}

void unwinder__free(struct unwinder *uw)
{
	free(uw);
}

size_t unwinder__stop_frame(const struct unwinder *uw)
{
	return uw->stop_frame;
}

uint64_t unwinder__last_sp(const struct unwinder *uw)
{
	return uw->last_sp;
}

bool unwinder__copy_short(const struct unwinder *uw)
{
	return uw->bad_read && uw->bad_read >= uw->stack_addr + uw->stack_len && uw->stack_full;
}

size_t unwinder__dwfl_from(const struct unwinder *uw)
{
	return uw->dwfl_from;
}

struct addr_space *unwinder__addr_space(const struct unwinder *uw)
{
	return uw->as;
}

/* Sets f's mapping and ELF address; m is the mapping holding f->pc or the frame's address
 * (pc, or pc - 1 for a return address), or NULL when none holds pc: looked up only when the
 * address is not in m (a return address at the start of a mapping, or a miss). */
static inline void frame_locate(struct unwinder *ctx, struct unwind_frame *f,
				const struct mapping *m)
{
	uint64_t addr = f->is_activation ? f->pc : f->pc - 1;

	if (m ? addr < m->start || addr >= m->end : addr != f->pc)
		m = addr_space__mapping(ctx->as, addr);
	f->mapping = m;
	f->elf_addr = m && m->entry ? addr - m->bias : 0;
}

/* Appends frame (pc, activation) with sp unless it repeats the last one (a loop) or fills the
 * array: the frame callback's rules, shared by both unwinders. m is the mapping holding pc;
 * method, how the frame will be unwound. */
static int frame_add(struct unwinder *ctx, uint64_t pc, uint64_t sp, bool activation,
		     const struct mapping *m, enum unwind_method method)
{
	struct unwind_frame *f;

	if (ctx->frames_cnt && pc == ctx->frames[ctx->frames_cnt - 1].pc && sp == ctx->last_sp)
		return DWARF_CB_ABORT; /* loop; the caller tells it from depth */
	ctx->last_sp = sp;
	f = &ctx->frames[ctx->frames_cnt++];
	f->pc = pc;
	f->sp = sp;
	f->is_activation = activation;
	f->method = method;
	frame_locate(ctx, f, m);
	return ctx->frames_cnt < ctx->frames_cap ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *ctx = arg;
	const struct mapping *m;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool activation, handover = ctx->handover;

	/* Only a failed read while unwinding the last frame explains why unwinding ended. */
	ctx->bad_read = 0;
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (handover)
		pc = ctx->handover_pc; /* libdwfl started from pc - 1 */
	/* Report the module before asking isactivation: that unwinds the caller, which needs
	 * this frame's CFI. */
	m = addr_space__mapping(ctx->as, pc);
	if (!m)
		ctx->no_mapping = true;
	if (handover) {
		/* A caller is an activation only as a signal frame that unwinds (frame_unwind.c):
		 * corrected at the end when it did not. */
		activation = ctx->handover_signal;
		ctx->handover = false;
	} else if (!dwfl_frame_pc(state, &pc, &activation)) {
		return DWARF_CB_ABORT;
	}
	dwfl_frame_reg(state, SP_REG, &sp);
	return frame_add(ctx, pc, sp, activation, m, UNWIND_BY_DWFL);
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
 * frame without CFI. Only on stacks that did not reach the root. Frames before dwfl_from
 * were unwound with a CFI table row: they have CFI.
 */
static void blame_missing_cfi(struct unwinder *ctx, Dwfl *dwfl, enum unwind_stop *stop)
{
	const struct unwind_frame *f;
	size_t i;

	for (i = ctx->dwfl_from; i < ctx->frames_cnt; i++) {
		f = &ctx->frames[i];
		if (has_cfi(dwfl, f->is_activation ? f->pc : f->pc - 1))
			continue;
		*stop = UNWIND_STOP_ERROR;
		ctx->stop_frame = i;
		return;
	}
}

/* Frames from first on that libdwfl unwound by its frame-pointer guess (no CFI covers them). */
static void mark_frame_pointer_steps(struct unwinder *ctx, Dwfl *dwfl, size_t first)
{
	struct unwind_frame *f;
	size_t i;

	for (i = first; i < ctx->frames_cnt; i++) {
		f = &ctx->frames[i];
		if (!has_cfi(dwfl, f->is_activation ? f->pc : f->pc - 1))
			f->method = UNWIND_BY_FP;
	}
}

/* Why the walk ended, from its result ret (dwfl_getthread_frames()'s: 0 when the return
 * address was undefined, DWARF_CB_ABORT from the frame callback, -1 on an error). */
static enum unwind_stop stop_reason(const struct unwinder *ctx, int ret)
{
	if (ret == 0 && !ctx->bad_read) {
		/* libdwfl ends with 0 when the return address is undefined: the CFI of
		 * _start and clone3 says so (DW_CFA_undefined rip). */
		return UNWIND_STOP_ROOT;
	} else if (ret == DWARF_CB_ABORT) {
		return ctx->frames_cnt >= ctx->frames_cap ? UNWIND_STOP_DEPTH : UNWIND_STOP_LOOP;
	} else if (ctx->bad_read) {
		/* libdwfl also ends with 0 when it cannot read the return address. Past the
		 * copy's end: the copy was too short; elsewhere: a bogus register. */
		return ctx->bad_read >= ctx->stack_addr + ctx->stack_len && ctx->stack_full ?
			       UNWIND_STOP_TRUNCATED :
			       UNWIND_STOP_OUTSIDE;
	} else if (ctx->no_mapping) {
		return UNWIND_STOP_NO_MAPPING;
	}
	return UNWIND_STOP_ERROR;
}

/* Fills ctx for sample s; -EINVAL without usable user registers. */
static int ctx__init(struct unwinder *ctx, const struct sample_record *s, uint32_t stack_cap,
		     struct unwind_frame *frames, size_t cap)
{
	if (regs__to_dwarf(s, ctx->regs, REGS_DWARF_MAX, &ctx->regs_cnt) || !cap)
		return -EINVAL;
	ctx->regs_mask = (1u << ctx->regs_cnt) - 1;
	ctx->tid = s->tid;
	ctx->stack = s->stack;
	ctx->stack_addr = s->stack_addr;
	ctx->stack_len = s->stack_len;
	ctx->stack_full = s->stack_len >= stack_cap;
	ctx->bad_read = 0;
	ctx->frames = frames;
	ctx->frames_cap = cap;
	ctx->frames_cnt = 0;
	ctx->last_sp = 0;
	ctx->no_mapping = false;
	ctx->stop_frame = 0;
	ctx->dwfl_from = 0;
	ctx->handover = false;
	ctx->handover_signal = false;
	ctx->go_frames = false;
	return 0;
}

/*
 * libdwfl from the registers in ctx, frames appended to ctx->frames; sets *stop. Returns
 * dwfl_getthread_frames()'s result, or -ENOMEM without a Dwfl (*stop UNWIND_STOP_ERROR).
 */
static int dwfl_walk(struct unwinder *ctx, enum unwind_stop *stop)
{
	size_t first = ctx->frames_cnt;
	bool created;
	Dwfl *dwfl;
	int ret;

	*stop = UNWIND_STOP_ERROR;
	dwfl = addr_space__dwfl_begin(ctx->as, &created);
	if (!dwfl)
		return -ENOMEM;
	if (created && !dwfl_attach_state(dwfl, ctx->ref_elf, addr_space__tgid(ctx->as),
					  &thread_callbacks, ctx)) {
		pr_debug("attach unwinder to %u: %s", addr_space__tgid(ctx->as), dwfl_errmsg(-1));
		addr_space__dwfl_end(ctx->as, true);
		return -ENOMEM;
	}
	ctx->dwfl_from = first;
	ret = dwfl_getthread_frames(dwfl, ctx->tid, frame_cb, ctx);
	ctx->handover = false;
	/* A signal frame handed over is an activation only if libdwfl unwound past it. */
	if (first && ctx->handover_signal && ctx->frames_cnt == first + 1 &&
	    ret != DWARF_CB_ABORT) {
		ctx->frames[first].is_activation = false;
		frame_locate(ctx, &ctx->frames[first], ctx->frames[first].mapping);
	}

	*stop = stop_reason(ctx, ret);
	ctx->stop_frame = ctx->frames_cnt ? ctx->frames_cnt - 1 : 0;
	if (*stop != UNWIND_STOP_ROOT && *stop != UNWIND_STOP_DEPTH)
		blame_missing_cfi(ctx, dwfl, stop);
	if (methods_on)
		mark_frame_pointer_steps(ctx, dwfl, first);
	/* Last use of dwfl: a mapping change seen while unwinding may drop it now. */
	addr_space__dwfl_end(ctx->as, false);
	if (*stop != UNWIND_STOP_ROOT && log__enabled(LOG_DEBUG))
		pr_debug("unwind %u/%u: %s after %zu frames (%s; read at 0x%" PRIx64
			 ", copy 0x%" PRIx64 "+%u)",
			 addr_space__tgid(ctx->as), ctx->tid, unwind_stop_names[*stop],
			 ctx->frames_cnt, ret < 0 ? dwfl_errmsg(-1) : "-", ctx->bad_read,
			 ctx->stack_addr, ctx->stack_len);
	return ret;
}

/* The fast path's view of a mapping it used: [start, end) with its file's table. */
struct fast_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t bias;
	struct cfi_table *table;
	struct gopclntab *go; /* a Go file's function table, or NULL */
	const struct mapping *m; /* the mapping itself, for the frames */
};

/* The last mappings one walk used: a stack goes back and forth between a few files. */
#define FAST_MAPPINGS 4

struct fast_mappings {
	struct fast_mapping m[FAST_MAPPINGS];
	unsigned int cnt;  /* m[0..cnt) are filled */
	unsigned int next; /* the one to replace */
};

/* The mapping for pc (a frame's pc) and addr (pc or pc - 1, where its row is looked up);
 * NULL when libdwfl must handle the frame (no mapping, no file, no table). */
static const struct fast_mapping *fast_mapping(struct addr_space *as, struct fast_mappings *fms,
					       uint64_t pc, uint64_t addr)
{
	const struct mapping *m;
	struct fast_mapping *fm;
	uint64_t generation;
	unsigned int i;

	for (i = 0; i < fms->cnt; i++) {
		fm = &fms->m[i];
		if ((fm->table || fm->go) && pc >= fm->start && pc < fm->end &&
		    addr >= fm->start && addr < fm->end)
			return fm;
	}
	generation = addr_space__generation(as);
	m = addr_space__mapping(as, pc);
	if (m && (addr < m->start || addr >= m->end))
		m = addr_space__mapping(as, addr);
	/* The maps were read again (a miss): the mappings kept here may be gone. */
	if (addr_space__generation(as) != generation)
		fms->cnt = fms->next = 0;
	if (!m || !m->entry)
		return NULL;
	fm = &fms->m[fms->next++ % FAST_MAPPINGS];
	if (fms->cnt < FAST_MAPPINGS)
		fms->cnt++;
	fm->start = m->start;
	fm->end = m->end;
	fm->bias = m->bias;
	fm->table = cfi_table__get(m->entry);
	fm->go = module_symbols__go(m->entry);
	fm->m = m;
	return fm->table || fm->go ? fm : NULL;
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
static bool go_switched_frame(struct unwinder *ctx, const struct fast_mapping *fm, uint64_t bp,
			      uint64_t *ret_at, uint64_t *ret)
{
	struct go_frame gf;
	uint64_t d, w;

	for (d = 8; d < BPFPROF_GO_STACK_BELOW && d < bp; d += 8) {
		if (!stack_read(ctx, bp - d, &w))
			return false;
		if (w - 1 < fm->start || w - 1 >= fm->end ||
		    gopclntab__frame(fm->go, w - 1 - fm->bias, &gf) || gf.sp_delta != (int32_t)d)
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
static bool go_switched_own_frame(struct unwinder *ctx, const struct fast_mapping *fm,
				  uint64_t bp, uint64_t *ret_at, uint64_t *ret, uint64_t *caller_bp)
{
	struct go_frame gf;
	uint64_t w, saved;

	if (bp > UINT64_MAX - 16 || !stack_read(ctx, bp + 8, &w) || !stack_read(ctx, bp, &saved) ||
	    w - 1 < fm->start || w - 1 >= fm->end ||
	    gopclntab__frame(fm->go, w - 1 - fm->bias, &gf) || gf.sp_delta < 0 ||
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
static bool go_switch_bp(struct unwinder *ctx, const struct fast_mapping *fm, uint64_t bp,
			 bool own, uint64_t *ret_at, uint64_t *ret, uint64_t *caller_bp)
{
	if (!bp || (bp & 7) ||
	    (bp >= ctx->stack_addr && bp - ctx->stack_addr < ctx->stack_len &&
	     bp <= ctx->regs[SP_REG]))
		return false;
	if (own)
		return go_switched_own_frame(ctx, fm, bp, ret_at, ret, caller_bp);
	*caller_bp = bp;
	return go_switched_frame(ctx, fm, bp, ret_at, ret);
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
static int go_switch(struct unwinder *ctx, const struct fast_mapping *fm, uint64_t pc,
		     const struct go_frame *sw)
{
	uint64_t bp, ret_at, ret, f_ret, caller_bp;
	struct go_frame gf;
	bool more, own;
	int err;

	if (!sw->name)
		return -1;
	more = !strcmp(sw->name, "runtime.morestack");
	if (!more && strcmp(sw->name, "runtime.systemstack") && strcmp(sw->name, "runtime.mcall") &&
	    strcmp(sw->name, "runtime.asmcgocall"))
		return -1;
	own = !more && !gopclntab__frame(fm->go, sw->start + 1, &gf) && gf.sp_delta == 8;
	/* rbp as the g0 frames left it; else the frame pointer BPF found leaving the sample's
	 * copy (a g0 function that does not keep rbp leaves a stale one). */
	bp = ctx->regs_mask & 1u << BP_REG ? ctx->regs[BP_REG] : 0;
	if (!go_switch_bp(ctx, fm, bp, own, &ret_at, &ret, &caller_bp)) {
		bp = ctx->stack2 ? ctx->stack2_bp : 0;
		if (!go_switch_bp(ctx, fm, bp, own, &ret_at, &ret, &caller_bp))
			return -1;
	}
	if (more && (!stack_read(ctx, ret_at - 8, &f_ret) || f_ret - 1 < fm->start ||
		     f_ret - 1 >= fm->end || gopclntab__frame(fm->go, f_ret - 1 - fm->bias, &gf) ||
		     gf.sp_delta))
		return -1;
	ctx->bad_read = 0;
	err = frame_add(ctx, pc, ctx->regs[SP_REG], false, fm->m, UNWIND_BY_GO);
	if (err)
		return err;
	/* The caller's registers: its sp above the return address into it. */
	ctx->regs[SP_REG] = more ? ret_at : ret_at + 8;
	ctx->regs[PC_REG] = more ? f_ret : ret;
	ctx->regs[BP_REG] = caller_bp;
	ctx->regs_mask = 1u << SP_REG | 1u << PC_REG | 1u << BP_REG;
	return 2;
}

/*
 * A Go frame without CFI (a binary linked -s -w has none): unwound as Go's own traceback does,
 * from the function's pcsp table (the return address sp_delta bytes above sp). Returns -1 when
 * the Go table does not know the frame (libdwfl then tries), 0 at a goroutine's or thread's
 * first frame (the root) or when the return address is past the memory copied (bad_read set),
 * DWARF_CB_ABORT as frame_add(), 2 when the caller's registers are set.
 */
static int go_step(struct unwinder *ctx, const struct fast_mapping *fm, uint64_t pc, uint64_t addr,
		   bool initial)
{
	struct go_frame gf;
	uint64_t sp, ra = 0, bp;
	int err;

	if (!(ctx->regs_mask & 1u << SP_REG) ||
	    gopclntab__frame(fm->go, addr - fm->bias, &gf) || gf.sp_delta < 0)
		return -1;
	if (gf.sp_write)
		return initial ? -1 : go_switch(ctx, fm, pc, &gf);
	sp = ctx->regs[SP_REG];
	ctx->go_frames = true;
	if (!gf.top && !stack_read(ctx, sp + gf.sp_delta, &ra)) {
		/* The frame is known, its caller is past the memory copied: say so (a copy too
		 * short is raised for the next samples), no frame-pointer guess. */
		ra = ctx->bad_read;
		err = frame_add(ctx, pc, sp, initial, fm->m, UNWIND_BY_GO);
		ctx->bad_read = ra;
		return err;
	}
	ctx->bad_read = 0;
	err = frame_add(ctx, pc, sp, initial, fm->m, UNWIND_BY_GO);
	if (err || gf.top)
		return err;
	/* A Go function with a frame keeps its caller's rbp just below the return address. */
	if (gf.sp_delta >= 16 && stack_read(ctx, sp + gf.sp_delta - 8, &bp))
		ctx->regs[BP_REG] = bp;
	ctx->regs[SP_REG] = sp + gf.sp_delta + 8;
	ctx->regs[PC_REG] = ra;
	ctx->regs_mask |= 1u << SP_REG | 1u << PC_REG;
	return 2;
}

/*
 * A frame no CFI covers, in anonymous memory (JIT code) or in a file whose CFI has no FDE for
 * it (node's embedded builtins; in_file), on the fast path: stepped out of as libdwfl's x86-64
 * frame-pointer guess does (elfutils backends/x86_64_unwind.c), so both unwinders agree: the
 * return address at [rbp + 8], the caller's rbp at [rbp] (0 when unreadable), its sp rbp + 16,
 * its other registers unknown. The walk then goes on with CFI where the caller has it, instead
 * of leaving the rest of the stack to libdwfl. Returns -1 when the frame is not such a frame or
 * the guess cannot be made (rbp unknown or 0, the return address unreadable or 0, or the
 * caller's sp rbp + 16 not above this frame's sp: rbp is no frame pointer there): libdwfl takes
 * the frame and ends the walk its way. Else as go_step().
 */
static int fp_step(struct unwinder *ctx, uint64_t pc, uint64_t addr, bool initial,
		   const struct mapping *in_file)
{
	const struct mapping *m = in_file ? in_file : addr_space__mapping(ctx->as, addr);
	uint64_t fp, prev, ra;
	int err;

	if (!m || (!in_file && (m->entry || m->path)) || !(ctx->regs_mask & 1u << BP_REG))
		return -1;
	fp = ctx->regs[BP_REG];
	if (!fp || !stack_read(ctx, fp + 8, &ra) || !ra)
		return -1;
	/* libdwfl's test, as there (sp 0 when unknown, unsigned): a frame moves toward the
	 * stack's end. */
	if ((ctx->regs_mask & 1u << SP_REG ? ctx->regs[SP_REG] : 0) >= fp + 16)
		return -1;
	if (!stack_read(ctx, fp, &prev))
		prev = 0;
	ctx->bad_read = 0;
	err = frame_add(ctx, pc, ctx->regs_mask & 1u << SP_REG ? ctx->regs[SP_REG] : 0, initial,
			m, UNWIND_BY_FP);
	if (err)
		return err;
	ctx->regs[BP_REG] = prev;
	ctx->regs[SP_REG] = fp + 16;
	ctx->regs[PC_REG] = ra;
	ctx->regs_mask = 1u << BP_REG | 1u << SP_REG | 1u << PC_REG;
	return 2;
}

/*
 * The fast path: walks the frames with the CFI table rows over the copied stack slice,
 * evaluating each row as libdwfl's handle_cfi() evaluates libdw's (frame_unwind.c): registers
 * in DWARF order, an undefined or unreadable return address or a zero one ends the walk, a
 * register whose rule cannot be evaluated becomes undefined. Returns 0 or DWARF_CB_ABORT as
 * dwfl_getthread_frames() would, or 1 when a frame needs libdwfl: ctx then holds that frame's
 * registers (regs_mask: those known) and, for a caller, the handover fields.
 */
static int fast_walk(struct unwinder *ctx)
{
	struct fast_mappings fms;
	const struct fast_mapping *fm;
	const struct cfi_row *row;
	uint64_t pc, addr, cfa;
	uint32_t mask, bit;
	bool initial = true, cfa_ok;
	int k, reg, err;

	fms.cnt = fms.next = 0;
	for (;;) {
		pc = ctx->regs[PC_REG];
		addr = initial ? pc : pc - 1;
		fm = fast_mapping(ctx->as, &fms, pc, addr);
		row = fm && fm->table ? cfi_table__lookup(fm->table, addr - fm->bias, NULL, NULL) :
					NULL;
		if ((!row || cfi_row__kind(row) != CFI_ROW_OK) && fm && fm->go) {
			err = go_step(ctx, fm, pc, addr, initial);
			if (err == 2) {
				if (!ctx->regs[PC_REG])
					return 0;
				initial = false;
				continue;
			}
			if (err >= 0 || err == DWARF_CB_ABORT)
				return err;
		}
		if (!row && (!fm || fm->table)) {
			err = fp_step(ctx, pc, addr, initial, fm ? fm->m : NULL);
			if (err == 2) {
				initial = false;
				continue;
			}
			if (err >= 0 || err == DWARF_CB_ABORT)
				return err;
		}
		if (!row || cfi_row__kind(row) != CFI_ROW_OK) {
			if (initial)
				return 1;
			ctx->handover = true;
			ctx->handover_pc = pc;
			ctx->handover_signal = row && (row->info & CFI_ROW_F_SIGNAL);
			ctx->regs[PC_REG] = addr;
			return 1;
		}
		/* The frame callback's part. */
		ctx->bad_read = 0;
		err = frame_add(ctx, pc, ctx->regs_mask & 1u << SP_REG ? ctx->regs[SP_REG] : 0,
				initial, fm->m, UNWIND_BY_CFI_TABLE);
		if (err)
			return err;
		/* Unwind it: the CFA from this frame's registers, then the caller's registers in
		 * place (no rule reads a register but the CFA's, computed first). */
		reg = cfi_row__cfa_reg(row);
		cfa_ok = ctx->regs_mask & 1u << reg;
		cfa = ctx->regs[reg] + row->cfa_off;
		mask = row->info & CFI_ROW_F_RAX_SAME ? ctx->regs_mask & 1u << RAX_REG : 0;
		for (k = 0; k < CFI_REG_CNT; k++) {
			bit = 1u << cfi_reg_dwarf[k];
			if (row->rules[k] == CFI_RULE_UNDEFINED)
				continue;
			if (row->rules[k] == CFI_RULE_SAME)
				mask |= ctx->regs_mask & bit;
			else if (cfa_ok && stack_read(ctx, cfa + 8 * (int64_t)row->rules[k],
						      &ctx->regs[cfi_reg_dwarf[k]]))
				mask |= bit;
		}
		if (cfa_ok) {
			ctx->regs[SP_REG] = cfa;
			mask |= 1u << SP_REG;
		}
		ctx->regs_mask = mask;
		/* An undefined return address is the outermost frame; so is a zero one. */
		if (!(mask & 1u << PC_REG) || !ctx->regs[PC_REG])
			return 0;
		initial = false;
	}
}

/*
 * A walk that did not reach the root after a frame-pointer step among frames [0, end) of the
 * fast path: blamed on that frame's missing CFI (the guess may have been wrong), as
 * blame_missing_cfi() blames libdwfl's, so both unwinders give one stop reason.
 */
static void blame_fp_steps(struct unwinder *ctx, size_t end, enum unwind_stop *stop)
{
	size_t i;

	if (*stop == UNWIND_STOP_ROOT || *stop == UNWIND_STOP_DEPTH)
		return;
	for (i = 0; i < end && i < ctx->frames_cnt; i++) {
		if (ctx->frames[i].method != UNWIND_BY_FP)
			continue;
		*stop = UNWIND_STOP_ERROR;
		ctx->stop_frame = i;
		return;
	}
}

/* UNWIND_MODE_FAST: the fast path, libdwfl from the first frame it cannot unwind. */
static int unwind_fast(struct unwinder *ctx, enum unwind_stop *stop)
{
	int ret;

	ret = fast_walk(ctx);
	if (ret == 1) {
		dwfl_walk(ctx, stop);
		blame_fp_steps(ctx, ctx->dwfl_from, stop);
		return ctx->frames_cnt;
	}
	*stop = stop_reason(ctx, ret);
	ctx->stop_frame = ctx->frames_cnt ? ctx->frames_cnt - 1 : 0;
	blame_fp_steps(ctx, ctx->frames_cnt, stop);
	if (*stop != UNWIND_STOP_ROOT && log__enabled(LOG_DEBUG))
		pr_debug("unwind %u/%u: %s after %zu frames (CFI table; read at 0x%" PRIx64
			 ", copy 0x%" PRIx64 "+%u)",
			 addr_space__tgid(ctx->as), ctx->tid, unwind_stop_names[*stop],
			 ctx->frames_cnt, ctx->bad_read, ctx->stack_addr, ctx->stack_len);
	return ctx->frames_cnt;
}

/* A frame for the diff report: "0xPC (module+0xOFF, return address)". */
static void diff_frame_str(struct addr_space *as, const struct unwind_frame *f, size_t cnt,
			   size_t i, char *buf, size_t sz)
{
	const struct mapping *m;

	if (i >= cnt) {
		snprintf(buf, sz, "none");
		return;
	}
	m = addr_space__mapping(as, f[i].pc);
	if (m && m->entry)
		snprintf(buf, sz, "0x%" PRIx64 " (%s+0x%" PRIx64 ", %s)", f[i].pc, m->entry->name,
			 f[i].pc - m->bias, f[i].is_activation ? "activation" : "return address");
	else
		snprintf(buf, sz, "0x%" PRIx64 " (%s)", f[i].pc,
			 f[i].is_activation ? "activation" : "return address");
}

/* UNWIND_MODE_DIFF: counts the sample, and a divergence between the fast path's frames and
 * libdwfl's (ref); the first DIFF_PRINT_MAX divergent samples are printed. */
static void diff_compare(struct addr_space *as, const struct sample_record *s,
			 const struct unwind_frame *fast, size_t fast_cnt,
			 enum unwind_stop fast_stop, const struct unwind_frame *ref, size_t ref_cnt,
			 enum unwind_stop ref_stop)
{
	char a[160], b[160];
	size_t i;

	diff_samples++;
	for (i = 0; i < fast_cnt && i < ref_cnt; i++)
		if (fast[i].pc != ref[i].pc || fast[i].is_activation != ref[i].is_activation)
			break;
	if (i == fast_cnt && i == ref_cnt && fast_stop == ref_stop)
		return;
	if (++diff_divergent > DIFF_PRINT_MAX)
		return;
	diff_frame_str(as, ref, ref_cnt, i, a, sizeof(a));
	diff_frame_str(as, fast, fast_cnt, i, b, sizeof(b));
	pr_warn("unwinder diff: sample %" PRIu64 " of %u/%u (%.16s) at time %" PRIu64
		": frame %zu: dwfl %s, fast %s; dwfl: %zu frames, %s; fast: %zu frames, %s",
		diff_samples, s->tgid, s->tid, s->comm, (uint64_t)s->time_ns, i, a, b, ref_cnt,
		unwind_stop_names[ref_stop], fast_cnt, unwind_stop_names[fast_stop]);
}

/* The maps were read again during the unwind (a miss): the frames' mappings, looked up
 * before, are looked up again in the new ones. */
static void frames_relocate(struct unwinder *ctx)
{
	struct unwind_frame *f;
	size_t i;

	for (i = 0; i < ctx->frames_cnt; i++) {
		f = &ctx->frames[i];
		frame_locate(ctx, f,
			     addr_space__mapping(ctx->as, f->is_activation ? f->pc : f->pc - 1));
	}
}

int unwind__sample(struct unwinder *ctx, const struct sample_record *s, uint32_t stack_cap,
		   struct unwind_frame *frames, size_t cap, enum unwind_stop *stop)
{
	enum unwind_mode mode = current_mode();
	enum unwind_stop fast_stop = UNWIND_STOP_ERROR;
	uint64_t generation = addr_space__generation(ctx->as);
	size_t fast_cnt = 0;
	bool fast_go = false;
	void *tmp;

	*stop = UNWIND_STOP_NO_REGS;
	addr_space__set_sample_time(ctx->as, s->time_ns);
	if (mode == UNWIND_MODE_DIFF && diff_frames_cap < cap) {
		tmp = realloc(diff_frames, cap * sizeof(*diff_frames));
		if (tmp) {
			diff_frames = tmp;
			diff_frames_cap = cap;
		}
	}
	if (mode == UNWIND_MODE_DIFF && diff_frames_cap >= cap &&
	    !ctx__init(ctx, s, stack_cap, diff_frames, cap)) {
		fast_cnt = unwind_fast(ctx, &fast_stop);
		/* libdwfl has no Go function tables (it walks rbp): nothing to compare. */
		fast_go = ctx->go_frames;
	}
	if (ctx__init(ctx, s, stack_cap, frames, cap)) {
		ctx->stack2 = NULL;
		ctx->words = NULL;
		return 0;
	}
	if (mode == UNWIND_MODE_FAST)
		unwind_fast(ctx, stop);
	else
		dwfl_walk(ctx, stop);
	if (addr_space__generation(ctx->as) != generation)
		frames_relocate(ctx);
	if (mode == UNWIND_MODE_DIFF && diff_frames_cap >= cap && !fast_go)
		diff_compare(ctx->as, s, diff_frames, fast_cnt, fast_stop, frames, ctx->frames_cnt,
			     *stop);
	ctx->frames = NULL;
	ctx->stack = NULL;
	ctx->stack2 = NULL;
	ctx->words = NULL;
	ctx->go_frames |= fast_go;
	return ctx->frames_cnt;
}

void unwinder__set_stack2(struct unwinder *uw, uint64_t addr, const uint8_t *data, uint32_t len,
			  uint64_t bp)
{
	uw->stack2 = data;
	uw->stack2_addr = addr;
	uw->stack2_len = len;
	uw->stack2_bp = bp;
}

void unwinder__set_fp_chain(struct unwinder *uw, const struct stack_word *words, size_t cnt)
{
	uw->words = words;
	uw->words_cnt = cnt;
}

bool unwinder__go_frames(const struct unwinder *uw)
{
	return uw->go_frames;
}

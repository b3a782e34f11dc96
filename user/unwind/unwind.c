// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unwind.c: one sample's registers and stack slice -> frames: CFI row tables on the fast path,
 * libdwfl (thread callbacks serving the copied slice only) for the rest and as the reference. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "process/addr_space.h"
#include "unwind/cfi_table.h"
#include "unwind/regs.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/util.h"

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
	uint32_t regs_mask;    /* bit n: regs[n] is known (the rest are undefined) */
	const uint8_t *stack;  /* the sample's copy of user memory */
	uint64_t stack_addr;   /* its user address */
	uint32_t stack_len;    /* its valid bytes */
	bool stack_full;       /* the copy used the whole --stack-size */
	const uint8_t *stack2; /* unwinder__set_stack2()'s memory, for one sample; or NULL */
	uint64_t stack2_addr;
	uint32_t stack2_len;
	uint64_t stack2_bp;		/* the frame pointer it was copied around */
	const struct stack_word *words; /* unwinder__set_fp_chain()'s, for one sample; or NULL */
	size_t words_cnt;
	uint64_t bad_read; /* the first address memory_read refused, or 0 */
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
	uint32_t steps_used;  /* bit i: registered step i was used (unwind__add_step()) */
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

const char *unwind_method_names[UNWIND_BY_CNT] = {
	[UNWIND_BY_CFI_TABLE] = "CFI",
	[UNWIND_BY_STEP] = "runtime step", /* the first step's method_name */
	[UNWIND_BY_DWFL] = "libdwfl CFI",
	[UNWIND_BY_FP] = "frame pointer",
};

/* The registered steps (unwind__add_step()), tried in this order. */
static const struct unwind_step_ops *steps[4];
static size_t steps_cnt;

/* What a step sees of the walk (unwind.h): the unwinder and the mapping of the frame. */
struct unwind_step {
	struct unwinder *ctx;
	const struct mapping *m;
	unsigned int step; /* its index in steps[] */
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
	ctx->steps_used = 0;
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
	const struct unwind_step_ops *step; /* a registered step knowing the file, or NULL */
	unsigned int step_i;		    /* its index in steps[] */
	void *step_data;		    /* its module_data() */
	const struct mapping *m;	    /* the mapping itself, for the frames */
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
		if ((fm->table || fm->step) && pc >= fm->start && pc < fm->end &&
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
	fm->step = NULL;
	fm->step_data = NULL;
	for (i = 0; i < steps_cnt && !fm->step; i++) {
		fm->step_data = steps[i]->module_data(m->entry);
		if (fm->step_data) {
			fm->step = steps[i];
			fm->step_i = i;
		}
	}
	fm->m = m;
	return fm->table || fm->step ? fm : NULL;
}

/* A registered step on the frame at pc of fm's file: as unwind_step_ops.step(). */
static int step_run(struct unwinder *ctx, const struct fast_mapping *fm, uint64_t pc, uint64_t addr,
		    bool initial)
{
	struct unwind_step st = { .ctx = ctx, .m = fm->m, .step = fm->step_i };
	struct unwind_step_map map = {
		.start = fm->start, .end = fm->end, .bias = fm->bias, .data = fm->step_data
	};

	return fm->step->step(&st, &map, pc, addr, initial);
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
 * the frame and ends the walk its way. Else as unwind_step_ops.step().
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
	err = frame_add(ctx, pc, ctx->regs_mask & 1u << SP_REG ? ctx->regs[SP_REG] : 0, initial, m,
			UNWIND_BY_FP);
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
static inline __attribute__((always_inline)) int fast_walk(struct unwinder *ctx)
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
		if ((!row || cfi_row__kind(row) != CFI_ROW_OK) && fm && fm->step) {
			err = step_run(ctx, fm, pc, addr, initial);
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
	uint32_t fast_steps = 0;
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
		/* libdwfl has no runtime's tables (it walks rbp): nothing to compare. */
		fast_steps = ctx->steps_used;
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
	if (mode == UNWIND_MODE_DIFF && diff_frames_cap >= cap && !fast_steps)
		diff_compare(ctx->as, s, diff_frames, fast_cnt, fast_stop, frames, ctx->frames_cnt,
			     *stop);
	ctx->frames = NULL;
	ctx->stack = NULL;
	ctx->stack2 = NULL;
	ctx->words = NULL;
	ctx->steps_used |= fast_steps;
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

bool unwinder__step_used(const struct unwinder *uw, const struct unwind_step_ops *ops)
{
	size_t i;

	for (i = 0; i < steps_cnt; i++)
		if (steps[i] == ops)
			return uw->steps_used & 1u << i;
	return false;
}

int unwind__add_step(const struct unwind_step_ops *ops)
{
	size_t i;

	for (i = 0; i < steps_cnt; i++)
		if (steps[i] == ops)
			return 0;
	if (steps_cnt >= ARRAY_SIZE(steps))
		return -ENOSPC;
	if (!steps_cnt)
		unwind_method_names[UNWIND_BY_STEP] = ops->method_name;
	steps[steps_cnt++] = ops;
	return 0;
}

bool unwind_step__reg(const struct unwind_step *st, unsigned int reg, uint64_t *val)
{
	if (reg >= REGS_DWARF_MAX || !(st->ctx->regs_mask & 1u << reg))
		return false;
	*val = st->ctx->regs[reg];
	return true;
}

void unwind_step__set_reg(struct unwind_step *st, unsigned int reg, uint64_t val)
{
	if (reg >= REGS_DWARF_MAX)
		return;
	st->ctx->regs[reg] = val;
	st->ctx->regs_mask |= 1u << reg;
}

void unwind_step__keep_regs(struct unwind_step *st, uint32_t mask)
{
	st->ctx->regs_mask &= mask;
}

bool unwind_step__read(struct unwind_step *st, uint64_t addr, uint64_t *val)
{
	return stack_read(st->ctx, addr, val);
}

void unwind_step__reads_ok(struct unwind_step *st)
{
	st->ctx->bad_read = 0;
}

bool unwind_step__in_copy(const struct unwind_step *st, uint64_t addr)
{
	return addr >= st->ctx->stack_addr && addr - st->ctx->stack_addr < st->ctx->stack_len;
}

uint64_t unwind_step__stack2_bp(const struct unwind_step *st)
{
	return st->ctx->stack2 ? st->ctx->stack2_bp : 0;
}

void unwind_step__used(struct unwind_step *st)
{
	st->ctx->steps_used |= 1u << st->step;
}

int unwind_step__frame(struct unwind_step *st, uint64_t pc, uint64_t sp, bool activation)
{
	return frame_add(st->ctx, pc, sp, activation, st->m, UNWIND_BY_STEP);
}

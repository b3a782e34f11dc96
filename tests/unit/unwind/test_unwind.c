// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_unwind.c: the user-space path (process table, unwinding, symbols, folded text) on a
 * sample of this very process, built like the BPF side builds one; garbage stacks; the fast
 * path (CFI tables) against libdwfl on the same samples: own stack, truncated copies, a
 * realigned frame and a signal frame (handed to libdwfl), the vdso, garbage. */
#include <alloca.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <asm/perf_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "profile/aggregate.h"
#include "unwind/cfi_table.h"
#include "util/util.h"
#include "output/output_folded.h"
#include "process/proc_maps.h"
#include "process/proc_table.h"
#include "pipeline/sample.h"
#include "pipeline/symbolizer.h"
#include "unwind/proc_unwind.h"

#define STACK_CAP 16384

static struct sample_record *sample;

/* The top of this thread's stack, from /proc/self/maps. */
static uint64_t stack_end(uint64_t sp)
{
	struct proc_mapping *m = NULL;
	size_t cnt = 0, i;
	uint64_t end = 0;

	assert_int_equal(proc_maps__read("/proc/self/maps", false, &m, &cnt), 0);
	for (i = 0; i < cnt; i++)
		if (sp >= m[i].start && sp < m[i].end)
			end = m[i].end;
	proc_maps__free(m, cnt);
	return end;
}

/* Copies len bytes of this thread's stack from src, as bpf_probe_read_user would: through
 * ASan's poisoned redzones of a SANITIZE=1 build too (no instrumentation, no memcpy, whose
 * interceptor checks them). */
static __attribute__((noinline, no_sanitize_address)) void copy_stack(void *dst, uint64_t src,
								       uint64_t len)
{
	const volatile uint8_t *s = (const volatile uint8_t *)src;
	uint8_t *d = dst;

	while (len--)
		*d++ = *s++;
}

/* What handle_perf_event records: user registers in perf_regs order, and the stack from
 * sp - 128 up to the end of its mapping or STACK_CAP. */
static __attribute__((noinline)) void take_sample(void)
{
	ucontext_t uc;
	greg_t *g = uc.uc_mcontext.gregs;
	uint64_t sp, len;

	getcontext(&uc);
	sample->regs[PERF_REG_X86_AX] = g[REG_RAX];
	sample->regs[PERF_REG_X86_BX] = g[REG_RBX];
	sample->regs[PERF_REG_X86_CX] = g[REG_RCX];
	sample->regs[PERF_REG_X86_DX] = g[REG_RDX];
	sample->regs[PERF_REG_X86_SI] = g[REG_RSI];
	sample->regs[PERF_REG_X86_DI] = g[REG_RDI];
	sample->regs[PERF_REG_X86_BP] = g[REG_RBP];
	sample->regs[PERF_REG_X86_SP] = g[REG_RSP];
	sample->regs[PERF_REG_X86_IP] = g[REG_RIP];
	sample->regs[PERF_REG_X86_R8] = g[REG_R8];
	sample->regs[PERF_REG_X86_R9] = g[REG_R9];
	sample->regs[PERF_REG_X86_R10] = g[REG_R10];
	sample->regs[PERF_REG_X86_R11] = g[REG_R11];
	sample->regs[PERF_REG_X86_R12] = g[REG_R12];
	sample->regs[PERF_REG_X86_R13] = g[REG_R13];
	sample->regs[PERF_REG_X86_R14] = g[REG_R14];
	sample->regs[PERF_REG_X86_R15] = g[REG_R15];
	sample->regs_cnt = PERF_REG_X86_64_MAX;
	sample->regs_arch = BPFPROF_ARCH_X86_64;
	sample->flags = SAMPLE_F_USER_REGS;
	sp = g[REG_RSP];
	len = stack_end(sp) - (sp - 128);
	if (len > STACK_CAP)
		len = STACK_CAP;
	sample->stack_addr = sp - 128;
	sample->stack_len = len;
	/* getcontext's caller (this function) is the sampled frame: its own locals below
	 * REG_RSP are not used by the unwind of its callers. */
	copy_stack(sample->stack, sp - 128, len);
	__asm__ volatile("" ::: "memory");
}

/* A chain the unwinder must see whole; noipa and work after each call keep every frame. */
static __attribute__((noipa)) int chain_c(int x)
{
	take_sample();
	return x + 1;
}

static __attribute__((noipa)) int chain_b(int x)
{
	return chain_c(x * 3) + 2;
}

static __attribute__((noipa)) int chain_a(int x)
{
	return chain_b(x + 5) * 2;
}

/* A frame whose CFI a table cannot express: stack realignment with alloca makes GCC keep the
 * CFA in r10 then in an expression (DW_CFA_def_cfa_expression, "DRAP"). */
static __attribute__((noipa)) void touch(volatile char *p)
{
	p[0]++;
}

static __attribute__((noipa)) int chain_drap(int x)
{
	char buf[64] __attribute__((aligned(64)));
	char *p = alloca(x + 1);

	buf[0] = x;
	p[0] = x;
	touch(buf);
	touch(p);
	return chain_c(p[0]) + buf[0];
}

static __attribute__((noipa)) int chain_realigned(int x)
{
	return chain_drap(x + 1) * 3;
}

/* A sample taken in a signal handler: the stack crosses the kernel's signal frame
 * (__restore_rt: 'S' augmentation and expressions), then the interrupted code. */
static volatile int signal_sink;

static void on_signal(int sig)
{
	signal_sink = chain_c(sig) + 1;	/* not a tail call: on_signal keeps its frame */
}

static __attribute__((noipa)) int chain_signal(int x)
{
	raise(SIGUSR1);
	return x + 1;
}

struct pipeline {
	struct proc_table *pt;
	struct aggregate *agg;
	struct sample_handler *sh;
};

static void pipeline__init(struct pipeline *pl)
{
	struct proc_table_opts pto = { .rescan_interval_ns = 0 };
	struct sample_handler_opts sho = { .stack_cap = STACK_CAP, .max_frames = 64 };

	pl->pt = proc_table__new(&pto);
	pl->agg = aggregate__new();
	assert_non_null(pl->pt);
	assert_non_null(pl->agg);
	pl->sh = sample_handler__new(pl->pt, pl->agg, &sho);
	assert_non_null(pl->sh);
}

static void pipeline__fini(struct pipeline *pl)
{
	sample_handler__free(pl->sh);
	aggregate__free(pl->agg);
	proc_table__free(pl->pt);
}

static char *folded(struct aggregate *agg)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *mem = open_memstream(&buf, &sz);
	struct symbolizer_opts so = { 0 };
	struct symbolizer *sym = symbolizer__new(NULL, &so);

	/* The session's step before any output: names for the locations. */
	symbolizer__run(sym, agg);
	symbolizer__free(sym);
	assert_int_equal(output_folded__write(agg, mem, NULL), 0);
	fclose(mem);
	return buf;
}

static void fill_header(void)
{
	memset(sample, 0, sizeof(*sample));
	sample->hdr.type = RECORD_SAMPLE;
	sample->hdr.sz = sizeof(*sample) + STACK_CAP;
	sample->tgid = getpid();
	sample->tid = getpid();
	strcpy(sample->comm, "test_unwind");
}

static void test_own_stack(void **state)
{
	struct pipeline pl;
	struct proc *p;
	char *text;

	fill_header();
	assert_int_equal(chain_a(1), 42);
	pipeline__init(&pl);
	assert_int_equal(sample_handler__handle(pl.sh, sample), 0);
	text = folded(pl.agg);
	/* Root to leaf, whole: the libc start code, main, cmocka, our chain. */
	assert_non_null(strstr(text, "test_unwind;_start;__libc_start_main;"));
	assert_non_null(strstr(text, ";main;"));
	assert_non_null(strstr(text, ";chain_a;chain_b;chain_c;take_sample 1\n"));
	p = proc_table__find(pl.pt, getpid(), false);
	assert_non_null(p);
	assert_int_equal(proc_unwind__stats(p)->root, 1);
	free(text);

	/* The same sample again: same stack, served from the caches. */
	assert_int_equal(sample_handler__handle(pl.sh, sample), 0);
	assert_int_equal(aggregate__stacks(pl.agg), 1);
	assert_int_equal(aggregate__samples(pl.agg), 2);
	pipeline__fini(&pl);
}

static void test_truncated_stack(void **state)
{
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	struct pipeline pl;
	struct unwinder *p;
	int n;

	fill_header();
	chain_a(1);
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	/* Only 256 bytes copied, as if the copy was that short: a partial stack, the
	 * truncation named. */
	sample->stack_len = 256;
	n = unwind__sample(p, sample, 256, frames, 64, &stop);
	assert_true(n >= 1);
	assert_true(n < 8);
	assert_int_equal(stop, UNWIND_STOP_TRUNCATED);
	/* No copy at all: still the sampled frame. */
	sample->stack_len = 0;
	n = unwind__sample(p, sample, STACK_CAP, frames, 64, &stop);
	assert_int_equal(n >= 1, 1);
	assert_int_not_equal(stop, UNWIND_STOP_ROOT);
	pipeline__fini(&pl);
}

static void test_garbage(void **state)
{
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	struct pipeline pl;
	unsigned int seed = 1, i, j, roots = 0;
	uint64_t ip, sp;
	struct unwinder *p;
	int n;

	fill_header();
	chain_a(1);
	ip = sample->regs[PERF_REG_X86_IP];
	sp = sample->regs[PERF_REG_X86_SP];
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	for (i = 0; i < 2000; i++) {
		/* Random stack bytes and registers, sometimes a real pc and sp over them. */
		for (j = 0; j < STACK_CAP; j++)
			sample->stack[j] = rand_r(&seed);
		for (j = 0; j < PERF_REG_X86_64_MAX; j++)
			sample->regs[j] = ((uint64_t)rand_r(&seed) << 32) | rand_r(&seed);
		if (i % 2) {
			sample->regs[PERF_REG_X86_IP] = ip + rand_r(&seed) % 64;
			sample->regs[PERF_REG_X86_SP] = sp;
		}
		sample->stack_addr = sample->regs[PERF_REG_X86_SP] - 128;
		sample->stack_len = rand_r(&seed) % (STACK_CAP + 1);
		n = unwind__sample(p, sample, STACK_CAP, frames, 64, &stop);
		assert_true(n >= 0 && n <= 64);
		assert_true(stop < UNWIND_STOP_CNT);
		roots += stop == UNWIND_STOP_ROOT;
		/* The whole pipeline too: names for garbage pcs, never a crash. */
		assert_int_equal(sample_handler__handle(pl.sh, sample), 0);
	}
	/* Garbage must not look like a complete stack. */
	assert_true(roots < 20);
	pipeline__fini(&pl);
}

/* Unwinds the sample with mode into frames; returns the count. */
static int unwind_mode(struct unwinder *p, enum unwind_mode mode, struct unwind_frame *frames,
		       size_t cap, uint32_t stack_cap, enum unwind_stop *stop)
{
	unwind__set_mode(mode);
	return unwind__sample(p, sample, stack_cap, frames, cap, stop);
}

/* The fast path gives exactly libdwfl's frames and stop reason for the current sample;
 * returns the frame count. what names the case in a failure. */
static int assert_same_unwind(struct unwinder *p, uint32_t stack_cap, size_t cap,
			      const char *what)
{
	struct unwind_frame ref[128], fast[128];
	enum unwind_stop ref_stop, fast_stop;
	int n_ref, n_fast, i;

	assert_true(cap <= 128);
	n_ref = unwind_mode(p, UNWIND_MODE_DWFL, ref, cap, stack_cap, &ref_stop);
	n_fast = unwind_mode(p, UNWIND_MODE_FAST, fast, cap, stack_cap, &fast_stop);
	for (i = 0; i < n_ref && i < n_fast; i++)
		if (ref[i].pc != fast[i].pc || ref[i].is_activation != fast[i].is_activation)
			break;
	if (i < n_ref || i < n_fast || ref_stop != fast_stop)
		fail_msg("%s: frame %d: dwfl %#llx%s, fast %#llx%s; dwfl %d frames (%s), fast %d "
			 "(%s)", what, i, i < n_ref ? (unsigned long long)ref[i].pc : 0ull,
			 i < n_ref && ref[i].is_activation ? " (activation)" : "",
			 i < n_fast ? (unsigned long long)fast[i].pc : 0ull,
			 i < n_fast && fast[i].is_activation ? " (activation)" : "", n_ref,
			 unwind_stop_names[ref_stop], n_fast, unwind_stop_names[fast_stop]);
	return n_ref;
}

/* Frames of the current sample, unwound fast, as folded text (symbols included). */
static char *fast_folded(void)
{
	struct pipeline pl;
	char *text;

	unwind__set_mode(UNWIND_MODE_FAST);
	pipeline__init(&pl);
	assert_int_equal(sample_handler__handle(pl.sh, sample), 0);
	text = folded(pl.agg);
	pipeline__fini(&pl);
	return text;
}

static void test_fast_own_stack(void **state)
{
	struct pipeline pl;
	struct unwinder *p;
	char *text;
	int n;

	fill_header();
	chain_a(1);
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	n = assert_same_unwind(p, STACK_CAP, 64, "own stack");
	assert_true(n >= 8);
	/* Fewer frames allowed than the stack has: the depth limit, in both. */
	assert_same_unwind(p, STACK_CAP, 3, "own stack, 3 frames");
	assert_same_unwind(p, STACK_CAP, 1, "own stack, 1 frame");
	pipeline__fini(&pl);

	text = fast_folded();
	assert_non_null(strstr(text, "test_unwind;_start;__libc_start_main;"));
	assert_non_null(strstr(text, ";chain_a;chain_b;chain_c;take_sample 1\n"));
	free(text);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

/* Every length of the copy, as a full or a short copy: the same truncation in both. */
static void test_fast_truncated(void **state)
{
	struct pipeline pl;
	struct unwinder *p;
	uint32_t full, sz;
	char what[64];

	fill_header();
	chain_a(1);
	full = sample->stack_len;
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	for (sz = 0; sz <= full; sz += sz < 1024 ? 4 : 60) {
		sample->stack_len = sz;
		snprintf(what, sizeof(what), "copy of %u bytes, full", sz);
		assert_same_unwind(p, sz, 64, what);
		snprintf(what, sizeof(what), "copy of %u bytes, short", sz);
		assert_same_unwind(p, STACK_CAP + 1, 64, what);
	}
	pipeline__fini(&pl);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

/* The table row of the return address into chain_realigned is a CFA expression: the fast
 * path hands the rest to libdwfl there, and the stack stays whole. */
static void test_fast_handover(void **state)
{
	const struct mapping *m;
	const struct cfi_row *row;
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	struct pipeline pl;
	struct unwinder *p;
	char *text;
	int n, i, unsupported = 0;

	fill_header();
	assert_int_equal(chain_realigned(1) > 0, 1);
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	assert_same_unwind(p, STACK_CAP, 64, "realigned frame");
	n = unwind_mode(p, UNWIND_MODE_FAST, frames, 64, STACK_CAP, &stop);
	assert_int_equal(stop, UNWIND_STOP_ROOT);
	for (i = 1; i < n; i++) {
		m = addr_space__mapping(unwinder__addr_space(p), frames[i].pc);
		assert_non_null(m);
		row = cfi_table__lookup(cfi_table__get(m->entry), frames[i].pc - 1 - m->bias, NULL,
					NULL);
		unsupported += row && cfi_row__kind(row) == CFI_ROW_UNSUPPORTED;
	}
	assert_true(unsupported >= 1);
	/* The frames libdwfl unwound are not the first. */
	assert_true(unwinder__dwfl_from(p) > 1);
	pipeline__fini(&pl);

	text = fast_folded();
	assert_non_null(strstr(text, ";chain_realigned;chain_drap;chain_c;take_sample 1\n"));
	assert_non_null(strstr(text, "test_unwind;_start;__libc_start_main;"));
	free(text);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

static void test_fast_signal_frame(void **state)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	struct pipeline pl;
	struct unwinder *p;
	char *text;
	int n, i, activations = 0;

	fill_header();
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	chain_signal(1);
	sigaction(SIGUSR1, &old, NULL);
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	assert_same_unwind(p, STACK_CAP, 64, "signal frame");
	n = unwind_mode(p, UNWIND_MODE_FAST, frames, 64, STACK_CAP, &stop);
	assert_int_equal(stop, UNWIND_STOP_ROOT);
	/* The signal frame and the interrupted frame are activations besides the first. */
	for (i = 1; i < n; i++)
		activations += frames[i].is_activation;
	assert_true(activations >= 1);
	pipeline__fini(&pl);

	text = fast_folded();
	assert_non_null(strstr(text, ";chain_signal;"));
	assert_non_null(strstr(text, ";on_signal;chain_c;take_sample 1\n"));
	assert_non_null(strstr(text, "test_unwind;_start;__libc_start_main;"));
	free(text);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

/*
 * A sample at the entry of a vdso function called from take_sample: the sample's frame pushed
 * one return address down. The vdso's CFI comes from bpfprof's own copy of it.
 */
static void test_fast_vdso(void **state)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR), pc = 0, sp, ip, start, end;
	const struct mapping *m;
	const struct cfi_row *row;
	struct cfi_table *t;
	struct pipeline pl;
	struct unwinder *p;
	size_t i;
	int n;

	assert_true(vdso != 0);
	fill_header();
	chain_a(1);
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	m = addr_space__mapping(unwinder__addr_space(p), vdso);
	assert_non_null(m);
	assert_non_null(m->entry);
	assert_string_equal(m->entry->path, "[vdso]");
	t = cfi_table__get(m->entry);
	assert_non_null(t);
	/* A function's first instruction: CFA rsp+8, return address at CFA-8. */
	for (i = 0; !pc && !cfi_table__fde(t, i, &start, &end); i++) {
		row = cfi_table__lookup(t, start, NULL, NULL);
		if (row && cfi_row__kind(row) == CFI_ROW_OK && cfi_row__cfa_reg(row) == 7 &&
		    row->cfa_off == 8 && row->rules[CFI_REG_RA] == -1)
			pc = start + m->bias;
	}
	assert_true(pc != 0);
	ip = sample->regs[PERF_REG_X86_IP];
	sp = sample->regs[PERF_REG_X86_SP] - 8;
	sample->regs[PERF_REG_X86_IP] = pc;
	sample->regs[PERF_REG_X86_SP] = sp;
	memcpy(sample->stack + (sp - sample->stack_addr), &ip, 8);
	n = assert_same_unwind(p, STACK_CAP, 64, "vdso");
	assert_true(n >= 8);
	pipeline__fini(&pl);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

/*
 * A frame in anonymous executable memory (JIT code: no CFI) under the sampled chain: the fast
 * path steps out of it by frame pointer, as libdwfl's guess does; cut short, both blame the
 * frame without CFI, not the copy's end (a 6.12 CI run saw that divergence in bash).
 */
static void test_fast_jit_frame(void **state)
{
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	uint64_t ip, sp, bp, full, sz;
	struct pipeline pl;
	struct unwinder *p;
	char what[64];
	void *code;
	int n;

	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	fill_header();
	chain_a(1);
	ip = sample->regs[PERF_REG_X86_IP];
	sp = sample->regs[PERF_REG_X86_SP];
	bp = sample->regs[PERF_REG_X86_BP];
	/* The JIT frame: pushed rbp at sp - 16, its return address (into take_sample) above. */
	memcpy(sample->stack + (sp - 16 - sample->stack_addr), &bp, 8);
	memcpy(sample->stack + (sp - 8 - sample->stack_addr), &ip, 8);
	sample->regs[PERF_REG_X86_IP] = (uint64_t)code + 64;
	sample->regs[PERF_REG_X86_SP] = sp - 32;
	sample->regs[PERF_REG_X86_BP] = sp - 16;
	full = sample->stack_len;
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	n = assert_same_unwind(p, STACK_CAP, 64, "JIT frame");
	assert_true(n >= 9);
	for (sz = 128; sz <= full; sz += 40) {
		sample->stack_len = sz;
		snprintf(what, sizeof(what), "JIT frame, copy of %u bytes", (unsigned int)sz);
		assert_same_unwind(p, sz, 64, what);
	}
	/* Blamed on the JIT frame, but the copy was short: a larger one is asked for. */
	sample->stack_len = 256;
	unwind_mode(p, UNWIND_MODE_FAST, frames, 64, 256, &stop);
	assert_int_equal(stop, UNWIND_STOP_ERROR);
	assert_true(unwinder__copy_short(p));
	sample->stack_len = full;
	unwind_mode(p, UNWIND_MODE_FAST, frames, 64, STACK_CAP, &stop);
	assert_int_equal(stop, UNWIND_STOP_ROOT);
	assert_false(unwinder__copy_short(p));
	/* rbp below sp there, with a frame's worth of words at it (rbp is no frame pointer in
	 * that code): libdwfl refuses a guess whose sp would not move up, and so must the fast
	 * path (a CI run saw it step out of a cgo program's C frame that way). */
	sample->regs[PERF_REG_X86_BP] = sp - 64;
	memcpy(sample->stack + (sp - 64 - sample->stack_addr), &bp, 8);
	memcpy(sample->stack + (sp - 56 - sample->stack_addr), &ip, 8);
	n = assert_same_unwind(p, STACK_CAP, 64, "JIT frame, rbp below sp");
	assert_int_equal(n, 1);
	pipeline__fini(&pl);
	unwind__set_mode(UNWIND_MODE_DWFL);
	munmap(code, 4096);
}

/*
 * Memory past a short copy given as words (what a RECORD_FP_CHAIN gives for a Go stack deeper
 * than the copy): both unwinders read them as stack, and reach the root again; without them
 * the copy is short.
 */
static void test_fp_chain_words(void **state)
{
	struct unwind_frame frames_scratch[64];
	struct stack_word *words;
	enum unwind_stop stop;
	struct pipeline pl;
	struct unwinder *p;
	uint32_t full, cut = 256, i, cnt;
	int n_full, n;

	fill_header();
	chain_a(1);
	full = sample->stack_len;
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));
	n_full = assert_same_unwind(p, STACK_CAP, 64, "whole copy");
	assert_true(n_full >= 8);

	cnt = (full - cut) / 8;
	words = calloc(cnt, sizeof(*words));
	assert_non_null(words);
	for (i = 0; i < cnt; i++) {
		words[i].addr = sample->stack_addr + cut + 8 * i;
		memcpy(&words[i].val, sample->stack + cut + 8 * i, 8);
	}
	sample->stack_len = cut;
	unwind_mode(p, UNWIND_MODE_FAST, frames_scratch, 64, cut, &stop);
	assert_int_equal(stop, UNWIND_STOP_TRUNCATED);
	for (i = 0; i < 2; i++) {
		unwinder__set_fp_chain(p, words, cnt);
		n = unwind_mode(p, i ? UNWIND_MODE_DWFL : UNWIND_MODE_FAST, frames_scratch, 64, cut,
				&stop);
		assert_int_equal(stop, UNWIND_STOP_ROOT);
		assert_int_equal(n, n_full);
	}
	/* Set for one unwind only. */
	unwind_mode(p, UNWIND_MODE_FAST, frames_scratch, 64, cut, &stop);
	assert_int_equal(stop, UNWIND_STOP_TRUNCATED);
	free(words);
	pipeline__fini(&pl);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

/* UNWIND_MODE_DIFF on garbage: no divergence; and one row changed on purpose is found. */
static void test_diff_mode(void **state)
{
	struct unwind_frame frames[64];
	enum unwind_stop stop;
	struct pipeline pl;
	unsigned int seed = 7, i, j;
	uint64_t ip, sp, samples, divergent;
	const struct mapping *m;
	struct cfi_row *row = NULL, saved;
	struct unwinder *p;
	int n;

	fill_header();
	chain_a(1);
	ip = sample->regs[PERF_REG_X86_IP];
	sp = sample->regs[PERF_REG_X86_SP];
	pipeline__init(&pl);
	p = proc_unwind__unwinder(proc_table__find(pl.pt, getpid(), true));

	unwind__set_mode(UNWIND_MODE_DIFF);
	samples = unwind__diff_samples();
	divergent = unwind__diff_divergent();
	n = unwind__sample(p, sample, STACK_CAP, frames, 64, &stop);
	assert_true(n >= 8);
	assert_int_equal(unwind__diff_samples(), samples + 1);
	assert_int_equal(unwind__diff_divergent(), divergent);

	/* The row of chain_a's call to chain_b now puts the return address 8 bytes higher. */
	for (i = 0; i < (unsigned int)n; i++) {
		m = addr_space__mapping(unwinder__addr_space(p), frames[i].pc);
		if (!m || !strstr(m->entry->path, "test_unwind"))
			continue;
		row = (struct cfi_row *)cfi_table__lookup(cfi_table__get(m->entry),
							  frames[i].pc - 1 - m->bias, NULL, NULL);
		if (i >= 3 && row && cfi_row__kind(row) == CFI_ROW_OK)
			break;
	}
	assert_true(i < (unsigned int)n);
	saved = *row;
	row->rules[CFI_REG_RA]--;
	n = unwind__sample(p, sample, STACK_CAP, frames, 64, &stop);
	*row = saved;
	assert_int_equal(unwind__diff_divergent(), divergent + 1);
	/* The result is libdwfl's, whole. */
	assert_int_equal(stop, UNWIND_STOP_ROOT);

	/* Garbage: random stacks and registers, sometimes a real pc and sp. */
	samples = unwind__diff_samples();
	for (i = 0; i < 1000; i++) {
		for (j = 0; j < STACK_CAP; j++)
			sample->stack[j] = rand_r(&seed);
		for (j = 0; j < PERF_REG_X86_64_MAX; j++)
			sample->regs[j] = ((uint64_t)rand_r(&seed) << 32) | rand_r(&seed);
		if (i % 2) {
			sample->regs[PERF_REG_X86_IP] = ip + rand_r(&seed) % 64;
			sample->regs[PERF_REG_X86_SP] = sp;
		}
		sample->stack_addr = sample->regs[PERF_REG_X86_SP] - 128;
		sample->stack_len = rand_r(&seed) % (STACK_CAP + 1);
		n = unwind__sample(p, sample, STACK_CAP, frames, 64, &stop);
		assert_true(n >= 0 && n <= 64);
	}
	assert_int_equal(unwind__diff_samples(), samples + 1000);
	assert_int_equal(unwind__diff_divergent(), divergent + 1);
	pipeline__fini(&pl);
	unwind__set_mode(UNWIND_MODE_DWFL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_stack),
		cmocka_unit_test(test_truncated_stack),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_fast_own_stack),
		cmocka_unit_test(test_fast_truncated),
		cmocka_unit_test(test_fast_handover),
		cmocka_unit_test(test_fast_signal_frame),
		cmocka_unit_test(test_fast_vdso),
		cmocka_unit_test(test_fast_jit_frame),
		cmocka_unit_test(test_fp_chain_words),
		cmocka_unit_test(test_diff_mode),
	};
	int ret;

	sample = calloc(1, sizeof(*sample) + STACK_CAP);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(sample);
	return ret;
}

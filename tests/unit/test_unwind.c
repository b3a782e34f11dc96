// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_unwind.c: the user-space path (process table, libdwfl unwinding, symbols, folded text)
 * on a sample of this very process, built like the BPF side builds one; and garbage stacks. */
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
#include <unistd.h>
#include "aggregate.h"
#include "output_folded.h"
#include "proc_maps.h"
#include "proc_table.h"
#include "sample.h"

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
	sample->stack_sz = len;
	/* getcontext's caller (this function) is the sampled frame: its own locals below
	 * REG_RSP are not used by the unwind of its callers. */
	memcpy(sample->stack, (void *)(sp - 128), len);
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
	pl->sh = sample_handler__new(pl->pt, NULL, pl->agg, &sho);
	assert_non_null(pl->sh);
}

static void pipeline__fini(struct pipeline *pl)
{
	sample_handler__free(pl->sh);
	proc_table__free(pl->pt);
	aggregate__free(pl->agg);
}

static char *folded(struct aggregate *agg)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *mem = open_memstream(&buf, &sz);

	assert_int_equal(output_folded__write(agg, mem), 0);
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
	assert_int_equal(p->stats.root, 1);
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
	struct proc *p;
	int n;

	fill_header();
	chain_a(1);
	pipeline__init(&pl);
	p = proc_table__find(pl.pt, getpid(), true);
	/* Only 256 bytes copied, as if the copy was that short: a partial stack, the
	 * truncation named. */
	sample->stack_sz = 256;
	n = unwind__sample(p, sample, 256, frames, 64, &stop);
	assert_true(n >= 1);
	assert_true(n < 8);
	assert_int_equal(stop, UNWIND_STOP_TRUNCATED);
	/* No copy at all: still the sampled frame. */
	sample->stack_sz = 0;
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
	struct proc *p;
	int n;

	fill_header();
	chain_a(1);
	ip = sample->regs[PERF_REG_X86_IP];
	sp = sample->regs[PERF_REG_X86_SP];
	pipeline__init(&pl);
	p = proc_table__find(pl.pt, getpid(), true);
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
		sample->stack_sz = rand_r(&seed) % (STACK_CAP + 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_stack),
		cmocka_unit_test(test_truncated_stack),
		cmocka_unit_test(test_garbage),
	};
	int ret;

	sample = calloc(1, sizeof(*sample) + STACK_CAP);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(sample);
	return ret;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_wakers.c: waker stacks kept by the thread they woke, and joined as offwaketime does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/output_folded.h"
#include "profile/aggregate.h"
#include "signal/wakers.h"
#include "symbols/ksyms.h"

/* A kernel with a BPF program, the tracepoint's frames, the wakeup path and an interrupt. */
static const char kallsyms[] = "ffffffff81000000 T __traceiter_sched_waking\n"
			       "ffffffff81000100 T bpf_trace_run1\n"
			       "ffffffff81000200 T try_to_wake_up\n"
			       "ffffffff81000300 T futex_wake\n"
			       "ffffffff81000400 T do_syscall_64\n"
			       "ffffffff81000500 T hrtimer_wakeup\n"
			       "ffffffff81000600 T asm_sysvec_apic_timer_interrupt\n"
			       "ffffffff81000700 T default_idle\n"
			       "ffffffff81000800 T schedule\n"
			       "ffffffffc0000000 t bpf_prog_0123456789abcdef_handle_sched_waking\t[bpf]\n";

struct fixture {
	struct ksyms *ks;
	struct aggregate *agg;
	struct wakers *w;
	uint32_t comm_holder, comm_waiter;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->ks = ksyms__load_text(kallsyms, strlen(kallsyms));
	f->agg = aggregate__new();
	f->w = wakers__new(f->ks);
	assert_non_null(f->ks);
	assert_non_null(f->w);
	f->comm_holder = aggregate__string(f->agg, "holder");
	f->comm_waiter = aggregate__string(f->agg, "waiter");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	wakers__free(f->w);
	aggregate__free(f->agg);
	ksyms__free(f->ks);
	free(f);
	return 0;
}

static uint32_t named(struct aggregate *agg, const char *name)
{
	int64_t id = aggregate__location(agg, FRAME_USER, NULL, 0, aggregate__string(agg, name));

	assert_true(id >= 0);
	return id;
}

/* A waker sample of tid 20 at time t, kernel stack kstack (leaf first). */
static void waker(struct fixture *f, uint32_t wakee, uint64_t t, const uint64_t *kstack,
		  uint32_t kcnt, const uint32_t *user, size_t n_user)
{
	struct waker_record r = { .tgid = 20, .tid = 20, .time_ns = t, .wakee_tid = wakee,
				  .wakee_tgid = 10 };
	struct sample_record *s = calloc(1, sizeof(*s));

	s->tgid = 20;
	s->tid = 20;
	s->time_ns = t;
	s->kstack_cnt = kcnt;
	memcpy(s->kstack, kstack, kcnt * sizeof(*kstack));
	assert_int_equal(wakers__put(f->w, f->agg, &r, s, user, n_user, f->comm_holder), 0);
	free(s);
}

/* The blocked stack with what wakers__take() gave, as a folded line. */
static char *joined(struct fixture *f, uint32_t tid, uint64_t t)
{
	uint32_t locs[64], n = 0;
	const uint32_t *extra;
	char *buf = NULL;
	size_t sz = 0, m, i;
	FILE *mem;

	locs[n++] = named(f->agg, "wait_leaf_lock");
	extra = wakers__take(f->w, tid, 20, t, &m);
	for (i = 0; extra && i < m; i++)
		locs[n++] = extra[i];
	assert_int_equal(aggregate__add(f->agg, 10, tid, f->comm_waiter, SAMPLE_OFF_CPU,
					&(struct sample_weight){ 1, 7000 }, locs, n),
			 0);
	mem = open_memstream(&buf, &sz);
	assert_int_equal(output_folded__write(f->agg, mem, NULL), 0);
	fclose(mem);
	return buf;
}

/* A syscall wakeup: the tracing frames above try_to_wake_up go, the user frames come leaf
 * first after the kernel's, then the comm. Taken once only. */
static void test_syscall_waker(void **state)
{
	struct fixture *f = *state;
	const uint64_t k[] = { 0xffffffffc0000010ull, 0xffffffff81000110ull, 0xffffffff81000010ull,
			       0xffffffff81000210ull, 0xffffffff81000310ull, 0xffffffff81000410ull };
	uint32_t user[2];
	struct wakers_stats st;
	char *text;
	size_t n;

	user[0] = named(f->agg, "hold_entry");
	user[1] = named(f->agg, "hold_leaf_work");
	waker(f, 11, 1000, k, 6, user, 2);
	/* Not this waker's time: nothing. */
	assert_null(wakers__take(f->w, 11, 20, 999, &n));
	text = joined(f, 11, 1000);
	/* Names as the symbolizer would give them: kernel locations are not named yet. */
	assert_non_null(strstr(text, "waiter;wait_leaf_lock;--;"));
	assert_non_null(strstr(text, ";hold_leaf_work;hold_entry;holder 7\n"));
	/* 3 kernel frames kept: try_to_wake_up, futex_wake, do_syscall_64. */
	assert_non_null(strstr(text, ";--;[unknown]_[k];[unknown]_[k];[unknown]_[k];hold_leaf_work"));
	free(text);
	assert_null(wakers__take(f->w, 11, 20, 1000, &n));
	wakers__stats(f->w, &st);
	assert_int_equal(st.kept, 1);
	assert_int_equal(st.paired, 1);
}

/* A timer's wakeup: the frames past the interrupt's entry and the user stack are the
 * interrupted task's; [interrupt] instead. */
static void test_interrupt_waker(void **state)
{
	struct fixture *f = *state;
	const uint64_t k[] = { 0xffffffff81000210ull, 0xffffffff81000510ull, 0xffffffff81000610ull,
			       0xffffffff81000710ull };
	uint32_t user[1];
	char *text;

	user[0] = named(f->agg, "unrelated");
	waker(f, 12, 2000, k, 4, user, 1);
	text = joined(f, 12, 2000);
	assert_non_null(strstr(text, ";--;[unknown]_[k];[unknown]_[k];[unknown]_[k];[interrupt] 7\n"));
	assert_null(strstr(text, "unrelated"));
	free(text);
}

/* A newer waker replaces the older one; a process's exit forgets its threads' wakers. */
static void test_replace_forget(void **state)
{
	struct fixture *f = *state;
	const uint64_t k[] = { 0xffffffff81000210ull };
	struct wakers_stats st;
	size_t n;

	waker(f, 13, 3000, k, 1, NULL, 0);
	waker(f, 13, 3100, k, 1, NULL, 0);
	assert_null(wakers__take(f->w, 13, 20, 3000, &n));
	assert_non_null(wakers__take(f->w, 13, 20, 3100, &n));
	waker(f, 13, 3200, k, 1, NULL, 0);
	wakers__forget(f->w, 10);
	assert_null(wakers__take(f->w, 13, 20, 3200, &n));
	wakers__stats(f->w, &st);
	assert_int_equal(st.kept, 3);
	assert_int_equal(st.paired, 1);
	assert_int_equal(st.unpaired, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_syscall_waker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupt_waker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_forget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_go.c: the Go runtime's records (go__record_check(), runtime/go/go.c) reject every length
 * and count they cannot trust: a Go stack's bytes, an FP chain's frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include "bpf/record.h"
#include "runtime/go/go.h"

/* A Go stack record's bytes: no more than BPF copies, than its size holds, nor wrapping. */
static void test_go_stack_lengths(void **state)
{
	struct go_stack_record *r = calloc(1, sizeof(*r) + 8);

	r->hdr.type = RECORD_GO_STACK;
	r->len = 64;
	r->addr = 0xc000034000;
	r->hdr.sz = offsetof(struct go_stack_record, data) + 64;
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), 0);
	r->len = 72; /* more than its size holds */
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->len = BPFPROF_GO_STACK_SZ + 8; /* a size that would hold them, from a capture */
	r->hdr.sz = offsetof(struct go_stack_record, data) + r->len;
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->len = 64;
	r->hdr.sz = offsetof(struct go_stack_record, data) + 64;
	r->addr = UINT64_MAX - 8; /* wraps around the address space */
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->hdr.sz = offsetof(struct go_stack_record, data) - 1;
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	free(r);
}

/* An FP chain record's frames: at least one, no more than BPF writes, nor than its size holds. */
static void test_fp_chain_counts(void **state)
{
	size_t frames = offsetof(struct fp_chain_record, frames);
	struct fp_chain_record *r = calloc(1, sizeof(*r));

	r->hdr.type = RECORD_FP_CHAIN;
	r->cnt = 4;
	r->hdr.sz = frames + 4 * sizeof(struct fp_chain_frame);
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), 0);
	r->cnt = 5; /* more than its size holds */
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->cnt = 0;
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->cnt = BPFPROF_FP_CHAIN_MAX + 1; /* a size that would hold them, from a capture */
	r->hdr.sz = frames + r->cnt * sizeof(struct fp_chain_frame);
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	r->hdr.sz = frames - 1;
	assert_int_equal(go__record_check(&r->hdr, r->hdr.sz), -EINVAL);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_stack_lengths),
		cmocka_unit_test(test_fp_chain_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_runtime.c: the table's record check (runtimes__check(), runtime/runtime.c) gives a record
 * to the runtime whose type it is, enabled or not, and tells a type no runtime takes
 * (-ENOENT, the consumer's "Operation not supported") from a malformed record (-EINVAL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include "bpf/record.h"
#include "runtime/runtime.h"

static void test_check_by_type(void **state)
{
	struct py_stack_record *py = calloc(1, sizeof(*py));
	struct go_stack_record *go = calloc(1, sizeof(*go) + 64);
	struct record_header h = { 99, sizeof(h) };

	assert_int_equal(runtimes__check(&h, sizeof(h)), -ENOENT); /* an unknown type */
	py->hdr.type = RECORD_PY_STACK;
	py->cnt = 1;
	py->hdr.sz = offsetof(struct py_stack_record, frames) + sizeof(struct py_frame);
	assert_int_equal(runtimes__check(&py->hdr, py->hdr.sz), 0);
	py->cnt = 2; /* more than its size holds */
	assert_int_equal(runtimes__check(&py->hdr, py->hdr.sz), -EINVAL);
	go->hdr.type = RECORD_GO_STACK;
	go->len = 64;
	go->hdr.sz = offsetof(struct go_stack_record, data) + 64;
	assert_int_equal(runtimes__check(&go->hdr, go->hdr.sz), 0);
	go->len = 72;
	assert_int_equal(runtimes__check(&go->hdr, go->hdr.sz), -EINVAL);
	free(go);
	free(py);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_by_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

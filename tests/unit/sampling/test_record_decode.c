// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_record_decode.c: ringbuf record decoding rejects every length it cannot trust. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/record_decode.h"

#define STACK_CAP 4096

static struct sample_record *new_sample(size_t *sz)
{
	struct sample_record *s;

	*sz = sizeof(*s) + STACK_CAP;
	s = calloc(1, *sz);
	s->hdr.type = RECORD_SAMPLE;
	s->hdr.sz = *sz;
	s->tgid = 10;
	s->tid = 11;
	s->regs_cnt = 24;
	s->stack_addr = 0x7ffd0000;
	s->stack_len = STACK_CAP;
	s->kstack_cnt = 3;
	return s;
}

static void test_sample_ok(void **state)
{
	struct record_view v;
	size_t sz;
	struct sample_record *s = new_sample(&sz);

	assert_int_equal(record__decode(s, sz, &v), 0);
	assert_int_equal(v.type, RECORD_SAMPLE);
	assert_ptr_equal(v.sample, s);
	/* libbpf hands out the 8-byte-rounded size: more than hdr.sz is fine. */
	assert_int_equal(record__decode(s, sz + 8, &v), 0);
	free(s);
}

static void test_sample_bad_lengths(void **state)
{
	struct record_view v;
	size_t sz;
	struct sample_record *s = new_sample(&sz);

	s->stack_len = STACK_CAP + 1;	/* past the record */
	assert_int_equal(record__decode(s, sz, &v), -EINVAL);
	s->stack_len = STACK_CAP;
	s->regs_cnt = BPFPROF_REGS_MAX + 1;
	assert_int_equal(record__decode(s, sz, &v), -EINVAL);
	s->regs_cnt = 24;
	s->kstack_cnt = BPFPROF_KSTACK_MAX + 1;
	assert_int_equal(record__decode(s, sz, &v), -EINVAL);
	s->kstack_cnt = 0;
	s->stack_addr = UINT64_MAX - 16;	/* slice wraps around */
	assert_int_equal(record__decode(s, sz, &v), -EINVAL);
	s->stack_addr = 0x1000;
	/* Header larger than what the ringbuf delivered. */
	assert_int_equal(record__decode(s, sz - 1, &v), -EINVAL);
	/* Truncated before the fixed part ends. */
	s->hdr.sz = sizeof(*s) - 8;
	assert_int_equal(record__decode(s, sz, &v), -EINVAL);
	free(s);
}

static void test_task_and_unknown(void **state)
{
	struct task_record t = { .hdr = { RECORD_EXIT, sizeof(t) }, .tgid = 5, .cpu_ns = 7 };
	struct record_header h = { 99, sizeof(h) };
	struct record_view v;

	assert_int_equal(record__decode(&t, sizeof(t), &v), 0);
	assert_int_equal(v.type, RECORD_EXIT);
	assert_int_equal(v.task->tgid, 5);
	assert_int_equal(v.task_cpu_ns, 7);
	t.hdr.sz = sizeof(t) - 1;
	assert_int_equal(record__decode(&t, sizeof(t), &v), -EINVAL);
	/* An older capture's task record, without cpu_ns: read, the CPU time unknown. */
	t.hdr.sz = offsetof(struct task_record, cpu_ns);
	assert_int_equal(record__decode(&t, t.hdr.sz, &v), 0);
	assert_int_equal(v.task->tgid, 5);
	assert_int_equal(v.task_cpu_ns, -1);
	t.hdr.sz -= 8;
	assert_int_equal(record__decode(&t, t.hdr.sz, &v), -EINVAL);
	/* A type of no generic record: its header checked alone, the rest left to its runtime
	 * (runtimes__check(), tests/unit/runtime/test_runtime.c). */
	assert_int_equal(record__decode(&h, sizeof(h), &v), 0);
	assert_int_equal(v.type, 99);
	assert_ptr_equal(v.raw, &h);
	assert_int_equal(record__decode(&h, 4, &v), -EINVAL);
	assert_int_equal(record__decode(NULL, 0, &v), -EINVAL);
	h.sz = 0;
	assert_int_equal(record__decode(&h, sizeof(h), &v), -EINVAL);
}

static void test_comm_unterminated(void **state)
{
	char comm[BPFPROF_COMM_LEN], buf[BPFPROF_COMM_LEN + 1];

	memset(comm, 'x', sizeof(comm));
	assert_int_equal(strlen(record__comm(comm, buf)), BPFPROF_COMM_LEN);
}

static void test_mmap_path(void **state)
{
	static const char comps[] = "libc.so.6\0x86_64-linux-gnu\0lib\0usr";
	struct mmap_record m = { .hdr = { RECORD_MMAP, sizeof(m) } };
	struct record_view v;
	char buf[64];

	memcpy(m.path, comps, sizeof(comps));
	m.path_sz = sizeof(comps);	/* the last NUL included */
	assert_int_equal(record__decode(&m, sizeof(m), &v), 0);
	assert_string_equal(record__mmap_path(&m, buf, sizeof(buf)),
			    "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* Too small a buffer: no path rather than a cut one. */
	assert_null(record__mmap_path(&m, buf, 10));
	/* A root-end component cut short would name another file: no path. */
	m.path_sz = sizeof(comps) - 1;
	assert_null(record__mmap_path(&m, buf, sizeof(buf)));
	/* BPF gave up walking: the path is not trusted. */
	m.path_sz = sizeof(comps);
	m.prot = MMAP_F_PATH_TRUNC;
	assert_null(record__mmap_path(&m, buf, sizeof(buf)));
	/* path_sz beyond the array is a bad record. */
	m.path_sz = sizeof(m.path) + 1;
	assert_int_equal(record__decode(&m, sizeof(m), &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_ok),
		cmocka_unit_test(test_sample_bad_lengths),
		cmocka_unit_test(test_task_and_unknown),
		cmocka_unit_test(test_comm_unterminated),
		cmocka_unit_test(test_mmap_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

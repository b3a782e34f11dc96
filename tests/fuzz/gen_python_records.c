// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gen_python_records.c: writes fuzz_python_records's seeds into OUT_DIR: streams of
 * RECORD_PY_CODE, RECORD_PY_STACK and RECORD_EXIT records in the layout of bpf/record.h (built
 * against it, so the seeds follow it), as a CPython 3.10 to 3.13 process gives them: code
 * objects with names in each string kind, real line tables (tests/fuzz/seeds/python_lines,
 * LINES_DIR), stacks of groups of frames, a code object's address reused, a process that exits.
 *
 *   gen_python_records OUT_DIR LINES_DIR
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/record.h"

#define TGID 0x3ffffff0u
#define TID  (TGID + 1)

static FILE *out;

/* A record, padded to 8 bytes as the ringbuf delivers it. */
static void put(const void *rec, size_t sz)
{
	static const uint8_t zero[8];

	fwrite(rec, 1, sz, out);
	fwrite(zero, 1, (8 - sz % 8) % 8, out);
}

/* co_linetable of a seed of fuzz_python_lines (its 7-byte header skipped). */
static size_t linetable(const char *dir, const char *name, uint8_t *buf, size_t cap)
{
	char path[4096];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return 0;
	if (fseek(f, 7, SEEK_SET) == 0)
		n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* A string of n characters of kind bytes each (1: Latin-1, 2: UCS-2, 4: UCS-4). */
static uint32_t str(uint8_t *dst, size_t cap, const uint32_t *cps, uint32_t n, uint8_t kind)
{
	uint32_t i;

	for (i = 0; i < n && (i + 1) * kind <= cap; i++)
		memcpy(dst + i * kind, &cps[i], kind); /* little-endian */
	return i;
}

static void code(uint64_t addr, uint32_t key, int minor, const char *name, const char *file,
		 int first, const char *dir, const char *table)
{
	struct py_code_record *r = calloc(1, sizeof(*r));

	r->hdr.type = RECORD_PY_CODE;
	r->hdr.sz = sizeof(*r);
	r->tgid = TGID;
	r->key = key;
	r->code = addr;
	r->firstlineno = first;
	r->version_minor = minor;
	r->name_len = strlen(name);
	r->name_kind = 1 | PY_STR_ASCII;
	memcpy(r->name, name, r->name_len);
	r->file_len = strlen(file);
	r->file_kind = 1 | PY_STR_ASCII;
	memcpy(r->file, file, r->file_len);
	if (table)
		r->linetable_len = linetable(dir, table, r->linetable, sizeof(r->linetable));
	put(r, sizeof(*r));
	free(r);
}

/* A code object named in kind-byte characters (non-ASCII). */
static void code_wide(uint64_t addr, uint32_t key, uint8_t kind, const uint32_t *cps, uint32_t n)
{
	struct py_code_record *r = calloc(1, sizeof(*r));

	r->hdr.type = RECORD_PY_CODE;
	r->hdr.sz = sizeof(*r);
	r->tgid = TGID;
	r->key = key;
	r->code = addr;
	r->firstlineno = 7;
	r->version_minor = 12;
	r->name_kind = kind;
	r->name_len = str(r->name, sizeof(r->name), cps, n, kind);
	r->file_kind = kind;
	r->file_len = str(r->file, sizeof(r->file), cps, n, kind);
	put(r, sizeof(*r));
	free(r);
}

static void stack(const struct py_frame *frames, uint16_t cnt, uint64_t time_ns, uint16_t stop)
{
	struct py_stack_record r = {};

	r.hdr.type = RECORD_PY_STACK;
	r.hdr.sz = offsetof(struct py_stack_record, frames) + cnt * sizeof(frames[0]);
	r.tgid = TGID;
	r.tid = TID;
	r.time_ns = time_ns;
	r.cpu = 1;
	r.cnt = cnt;
	r.stop = stop;
	memcpy(r.frames, frames, cnt * sizeof(frames[0]));
	put(&r, r.hdr.sz);
}

static void task(uint32_t type)
{
	struct task_record r = {};

	r.hdr.type = type;
	r.hdr.sz = sizeof(r);
	r.tgid = TGID;
	r.tid = TGID;
	memcpy(r.comm, "python3", 7);
	put(&r, sizeof(r));
}

static int open_seed(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "wb");
	if (!out)
		perror(path);
	return out ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const uint32_t latin1[] = { 'c', 'a', 'f', 0xe9 };
	static const uint32_t ucs2[] = { 'n', 'a', 0xef, 'v', 0x436, 0xd800 };
	static const uint32_t ucs4[] = { 'f', 0x1f600, 0x10ffff, 0x110000, 0 };
	struct py_frame f[BPFPROF_PY_FRAMES_MAX];
	const char *lines;
	int minor, i;
	char name[32];

	if (argc != 3) {
		fprintf(stderr, "usage: gen_python_records OUT_DIR LINES_DIR\n");
		return 1;
	}
	lines = argv[2];
	/* Per version: three code objects, a stack of two groups, one of an unknown code. */
	for (minor = 10; minor <= 13; minor++) {
		char t1[64], t2[64];

		snprintf(name, sizeof(name), "stack-3.%d", minor);
		if (open_seed(argv[1], name))
			return 1;
		snprintf(t1, sizeof(t1), "3.%d-loops-cols", minor);
		snprintf(t2, sizeof(t2), "3.%d-handlers-cols", minor);
		code(0x7f0000001000, 4, minor, "loops", "/srv/app.py", 4, lines, t1);
		code(0x7f0000002000, 948, minor, "Worker.handlers", "/srv/app.py", 948, lines, t2);
		code(0x7f0000003000, 1, minor, "<module>", "/srv/app.py", 1, lines, NULL);
		f[0] = (struct py_frame){ .code = 0x7f0000001000, .key = 4, .instr = 40 };
		f[1] = (struct py_frame){ .code = 0x7f0000002000, .key = 948,
					  .instr = 12 | PY_INSTR_ENTRY, .anchor = 0x7ffd1000 };
		f[2] = (struct py_frame){ .code = 0x7f0000003000, .key = 1,
					  .instr = 0 | PY_INSTR_ENTRY, .anchor = 0x7ffd2000 };
		f[3] = (struct py_frame){ .code = 0x7f0000009000, .key = 5, .instr = 2 };
		stack(f, 3, 1000, PY_STOP_ROOT);
		stack(f + 1, 3, 2000, PY_STOP_READ);
		fclose(out);
	}
	/* Names in each string kind; a code object's address reused with another key. */
	if (open_seed(argv[1], "kinds"))
		return 1;
	code_wide(0x7f0000001000, 1, 1, latin1, 4);
	code_wide(0x7f0000002000, 2, 2, ucs2, 6);
	code_wide(0x7f0000003000, 3, 4, ucs4, 5);
	code(0x7f0000003000, 9, 12, "reused", "/srv/new.py", 3, lines, "3.12-gaps-cols");
	for (i = 0; i < 4; i++)
		f[i] = (struct py_frame){ .code = 0x7f0000001000 + 0x1000 * (i % 3), .key = 1 + i,
					  .instr = 2 * i | (i % 2 ? PY_INSTR_ENTRY : 0) };
	f[3].key = 9;
	stack(f, 4, 3000, PY_STOP_ROOT);
	fclose(out);
	/* The deepest stack kept, then the process exits and its stack comes late. */
	if (open_seed(argv[1], "deep-exit"))
		return 1;
	code(0x7f0000005000, 5000, 13, "late", "/srv/deep.py", 5000, lines, "3.13-late-cols");
	for (i = 0; i < BPFPROF_PY_FRAMES_MAX; i++)
		f[i] = (struct py_frame){ .code = 0x7f0000005000, .key = 5000, .instr = 2 * i,
					  .anchor = i % 8 == 7 ? 0x7ffd0000 + i : 0 };
	for (i = 7; i < BPFPROF_PY_FRAMES_MAX; i += 8)
		f[i].instr |= PY_INSTR_ENTRY;
	stack(f, BPFPROF_PY_FRAMES_MAX, 4000, PY_STOP_DEPTH);
	task(RECORD_EXIT);
	stack(f, 2, 5000, PY_STOP_ROOT);
	fclose(out);
	return 0;
}

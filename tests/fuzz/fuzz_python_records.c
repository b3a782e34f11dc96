// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_python_records.c: libFuzzer target of the Python records as user space takes them from
 * the ringbuf (pipeline/consumer.c): each checked by record__decode(), a Python one then by
 * python__record_check() (runtimes__check()); RECORD_PY_CODE kept by python__code()
 * (CPython's 1, 2 and 4-byte strings to UTF-8, the line table), a RECORD_PY_STACK by
 * python__stack() and placed by its sample (python__sample(), made here
 * with the record's cpu, tid and time), each group of frames named (python__group(): code
 * objects looked up, lines from their tables), RECORD_EXEC and RECORD_EXIT forget the
 * process (python__forget()); the counters printed at the end (python__print()).
 *
 * The process is this machine's CPython (FUZZ_PYTHON, else /usr/bin/python3 resolved: a
 * python3.X) mapped as in tests/unit/runtime/python/test_python.c, so the stack records' frames are spliced;
 * without one, code and stack records are still read. Records carry a tgid: the harness makes
 * it that process's (tgid & 1: a second process).
 *
 * Input: records one after the other, each hdr.sz bytes rounded up to 8 (as the ringbuf
 * delivers them), the last one cut where the input ends. Seeds: written at build time by
 * tests/fuzz/gen_python_records.c (the layout of bpf/record.h), in build-fuzz/seeds.
 */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "process/addr_space.h"
#include "process/module_cache.h"
#include "profile/aggregate.h"
#include "runtime/python/python.h"
#include "sampling/record_decode.h"

#define TGID 0x3ffffff0u /* above pid_max: no /proc entry, the maps are ours */

static struct module_cache *mc;
static struct addr_space_shared shared;
static struct addr_space *as;
static char maps[PATH_MAX + 128];
static FILE *devnull;

static int maps_text(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	*text = strdup(maps);
	*len = strlen(maps);
	return *text ? 0 : -1;
}

/* maps: the executable segment of path (a CPython) as a process maps it; its start in *pc. */
static int python_maps(const char *path, uint64_t *pc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	uint64_t start, end, off;
	struct stat st;
	size_t i, n;
	GElf_Phdr ph;
	Elf *elf;

	if (fd < 0 || fstat(fd, &st))
		goto out;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (i = 0; elf && !elf_getphdrnum(elf, &n) && i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		/* Non-PIE (Debian's): at its ELF address; a PIE one at a bias. */
		start = (ph.p_vaddr & ~0xfffull) + (ph.p_vaddr < 0x400000 ? 0x555555554000 : 0);
		end = start + ((ph.p_vaddr & 0xfff) + ph.p_memsz + 0xfff) / 0x1000 * 0x1000;
		off = ph.p_offset & ~0xfffull;
		snprintf(maps, sizeof(maps), "%llx-%llx r-xp %08llx %02x:%02x %llu %s\n",
			 (unsigned long long)start, (unsigned long long)end,
			 (unsigned long long)off, major(st.st_dev), minor(st.st_dev),
			 (unsigned long long)st.st_ino, path);
		*pc = start;
		ret = 0;
		break;
	}
	elf_end(elf);
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("FUZZ_PYTHON");
	char path[PATH_MAX];
	uint64_t pc = 0;

	elf_version(EV_CURRENT);
	/* FUZZ_PRINT=1: python__print() of each input on stderr (what a seed reaches). */
	devnull = getenv("FUZZ_PRINT") ? stderr : fopen("/dev/null", "w");
	mc = module_cache__new();
	shared.modules = mc;
	shared.maps_text = maps_text;
	as = mc ? addr_space__new(TGID, &shared) : NULL;
	if (!devnull || !as) {
		fprintf(stderr, "fuzz_python_records: no memory\n");
		exit(1);
	}
	if (!realpath(env ? env : "/usr/bin/python3", path) || python_maps(path, &pc)) {
		fprintf(stderr, "fuzz_python_records: no CPython (%s): frames are not spliced\n",
			env ? env : "/usr/bin/python3");
		return 0;
	}
	/* As the unwinder does before the Python frames are placed: reads the maps. */
	addr_space__mapping(as, pc);
	return 0;
}

/* The sample of stack record r, placed and its groups named. */
static void sample(struct python *py, struct aggregate *agg, const struct py_stack_record *r)
{
	struct sample_record s = {
		.hdr = { .type = RECORD_SAMPLE, .sz = sizeof(s) },
		.tgid = r->tgid,
		.tid = r->tid,
		.cpu = r->cpu,
		.time_ns = r->time_ns,
		.flags = SAMPLE_F_USER_REGS,
	};
	uint32_t locs[BPFPROF_PY_FRAMES_MAX];
	const struct agg_location *l;
	size_t groups, g, i;
	int n;

	groups = python__sample(py, as, &s);
	for (g = 0; g <= groups; g++) {
		python__group_anchor(py, g);
		n = python__group(py, agg, g, locs, BPFPROF_PY_FRAMES_MAX);
		for (i = 0; n > 0 && i < (size_t)n; i++) {
			l = aggregate__loc(agg, locs[i]);
			/* Names and files read whole: ASan sees one not terminated. */
			if (l && l->lines_cnt && strlen(aggregate__str(agg, l->lines[0].function)) +
			    strlen(aggregate__str(agg, l->lines[0].file)) == SIZE_MAX)
				abort();
		}
	}
}

/* One record of sz bytes (its own allocation: ASan sees a read past it). */
static void record(struct python *py, struct aggregate *agg, uint8_t *rec, size_t sz)
{
	struct record_header *hdr = (struct record_header *)rec;
	struct record_view v;

	/* The tgid, after the header in each of these records: ours, or a second process. */
	if (sz >= 12 && (hdr->type == RECORD_PY_CODE || hdr->type == RECORD_PY_STACK ||
			 hdr->type == RECORD_EXEC || hdr->type == RECORD_EXIT)) {
		uint32_t tgid;

		memcpy(&tgid, rec + 8, 4);
		tgid = TGID + (tgid & 1);
		memcpy(rec + 8, &tgid, 4);
	}
	if (record__decode(rec, sz, &v))
		return;
	switch (v.type) {
	case RECORD_PY_CODE:
		if (!python__record_check(v.raw, sz))
			python__code(py, (const struct py_code_record *)v.raw);
		break;
	case RECORD_PY_STACK:
		if (python__record_check(v.raw, sz))
			break;
		python__stack(py, (const struct py_stack_record *)v.raw);
		sample(py, agg, (const struct py_stack_record *)v.raw);
		break;
	case RECORD_EXEC:
	case RECORD_EXIT:
		python__forget(py, v.task->tgid);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t sz)
{
	struct python *py = python__new(NULL, NULL);
	struct aggregate *agg = aggregate__new();
	struct record_header hdr;
	size_t at = 0, len;
	uint8_t *rec;

	while (py && agg && sz - at >= sizeof(hdr)) {
		memcpy(&hdr, in + at, sizeof(hdr));
		len = ((size_t)hdr.sz + 7) & ~(size_t)7;
		if (len < sizeof(hdr) || len > sz - at)
			len = len < sizeof(hdr) ? sizeof(hdr) : sz - at;
		rec = malloc(len);
		if (!rec)
			break;
		memcpy(rec, in + at, len);
		record(py, agg, rec, len);
		free(rec);
		at += len;
	}
	if (py)
		python__print(py, NULL, devnull);
	python__free(py);
	aggregate__free(agg);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_perf_map.c: libFuzzer target of runtime/jit/perf_map.c: a perf map (/tmp/perf-PID.map, any
 * process writes its own) parsed from its file (perf_map__parse_file()), then the START of each
 * of its first lines, one byte before and the byte after, looked up (perf_map__find()); and
 * the same bytes as /proc/PID/status (perf_map__parse_status(): NSpid, Uid), which locates a
 * process's map.
 *
 * Input: the file's text, written to a memfd (the parser takes a regular file by path:
 * /proc/self/fd/N; a file on disk would cost a flush per input). Seeds: tests/fuzz/seeds/perf_map (V8, the JVM's agent, CPython's -X perf,
 * LuaJIT, and a status file).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "runtime/jit/perf_map.h"

/* Lines whose START is looked up, at most. */
#define LINES_MAX 64

static char path[64];
static int fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("perf-map", MFD_CLOEXEC);
	if (fd < 0) {
		perror("fuzz_perf_map: memfd_create");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

static void lookup(const struct perf_map *m, uint64_t addr)
{
	const char *name;
	uint64_t off;

	name = perf_map__find(m, addr, &off);
	/* Read whole: ASan sees a name not terminated. */
	if (name && (strlen(name) == SIZE_MAX || off == UINT64_MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t sz)
{
	const char *line = (const char *)in, *end = line + sz, *nl;
	struct perf_map *m;
	char hex[24], *text;
	uid_t uids[4];
	pid_t nspid;
	size_t i, n;

	if (ftruncate(fd, 0) || pwrite(fd, in, sz, 0) != (ssize_t)sz)
		abort();
	m = perf_map__parse_file(path);
	for (i = 0; m && i < LINES_MAX && line < end; i++, line = nl + 1) {
		uint64_t start;

		nl = memchr(line, '\n', end - line);
		if (!nl)
			break;
		n = (size_t)(nl - line) < sizeof(hex) - 1 ? (size_t)(nl - line) : sizeof(hex) - 1;
		memcpy(hex, line, n);
		hex[n] = '\0';
		start = strtoull(hex, NULL, 16);
		lookup(m, start);
		lookup(m, start - 1);
		lookup(m, start + 1);
	}
	perf_map__put(m);
	/* perf_map__parse_status() takes text that need not be terminated: an exact copy. */
	text = malloc(sz ? sz : 1);
	if (text) {
		memcpy(text, in, sz);
		perf_map__parse_status(text, sz, &nspid, uids);
		free(text);
	}
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* log.c: stderr messages, one line each. */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

static enum log_level max_level = LOG_INFO;

void log__set_level(enum log_level level)
{
	max_level = level;
}

bool log__enabled(enum log_level level)
{
	return level <= max_level;
}

void log__print(enum log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!log__enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line, so lines of concurrent writers do not interleave. */
	fprintf(stderr, "bpfprof: %s\n", buf);
}

int log__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!log__enabled(LOG_DEBUG))
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, args);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* log.c: stderr messages, one line each. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include "util/log.h"

static enum log_level max_level = LOG_INFO;
static bool json;

void log__set_json(bool on)
{
	json = on;
}

/* One JSON line: time, level, msg (RFC 8259 string escapes). */
static void print_json(enum log_level level, const char *msg)
{
	static const char *const names[] = { "warn", "info", "debug" };
	char out[2048], ts[40];
	struct timespec now;
	struct tm tm;
	size_t n = 0;
	const char *c;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	for (c = msg; *c && n < sizeof(out) - 8; c++) {
		if (*c == '"' || *c == '\\') {
			out[n++] = '\\';
			out[n++] = *c;
		} else if ((unsigned char)*c < 0x20) {
			n += snprintf(out + n, sizeof(out) - n, "\\u%04x", (unsigned char)*c);
		} else {
			out[n++] = *c;
		}
	}
	out[n] = '\0';
	fprintf(stderr, "{\"time\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"%s\"}\n", ts,
		now.tv_nsec / 1000000, names[level], out);
}

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
	if (json)
		print_json(level, buf);
	else
		fprintf(stderr, "bpfprof: %s\n", buf);
}

int log__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!log__enabled(LOG_DEBUG))
		return 0;
	/* libbpf's messages carry their own "libbpf: " prefix. */
	return vfprintf(stderr, fmt, args);
}

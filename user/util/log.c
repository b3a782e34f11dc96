// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* log.c: stderr messages, one line each. */
#include <json-c/json.h>
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

/* One JSON line: time (RFC 3339, UTC, milliseconds), level, msg; json-c escapes msg (RFC 8259)
 * and, with NOSLASHESCAPE, leaves '/' as is. */
static void print_json(enum log_level level, const char *msg)
{
	static const char *const names[] = { "warn", "info", "debug" };
	struct json_object *line;
	const char *text;
	char ts[40], stamp[64];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp, sizeof(stamp), "%s.%03ldZ", ts, now.tv_nsec / 1000000);
	line = json_object_new_object();
	if (!line || json_object_object_add(line, "time", json_object_new_string(stamp)) ||
	    json_object_object_add(line, "level", json_object_new_string(names[level])) ||
	    json_object_object_add(line, "msg", json_object_new_string(msg)))
		text = NULL;
	else
		text = json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	/* Out of memory: the message still reaches stderr. */
	if (text)
		fprintf(stderr, "%s\n", text);
	else
		fprintf(stderr, "bpfprof: %s\n", msg);
	json_object_put(line);
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

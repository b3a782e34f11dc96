/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* log.h: the one message reporter: "bpfprof: <action> <object>: <reason>[; <hint>]". */
#ifndef BPFPROF_LOG_H
#define BPFPROF_LOG_H

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdbool.h>

enum log_level {
	LOG_WARN,  /* always printed */
	LOG_INFO,  /* progress and summary: printed unless --quiet */
	LOG_DEBUG, /* -v */
};

/* Messages at or below this level are printed (default LOG_INFO). */
void log__set_level(enum log_level level);
bool log__enabled(enum log_level level);
/* JSON lines instead of text: {"time":"RFC 3339","level":"info","msg":"..."} (the agent's
 * --log-format json). */
void log__set_json(bool on);

/* Prints "bpfprof: " + the formatted text + "\n" to stderr. */
void log__print(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* libbpf print hook: libbpf's warnings with -v only (the caller reports failures itself). */
int log__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args);

#define pr_warn(...)  log__print(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log__print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log__print(LOG_DEBUG, __VA_ARGS__)

#endif /* BPFPROF_LOG_H */

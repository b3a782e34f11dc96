/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * utf8.h: UTF-8 (RFC 3629) checks of the names bpfprof reads from files and processes that
 * another user controls (ELF symbols, .gopclntab, comm), for the outputs that require it:
 * proto3 string fields (pprof), XML (the flame graph).
 */
#ifndef BPFPROF_UTF8_H
#define BPFPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* UTF-8 of U+FFFD, what utf8__sanitize() puts for each invalid byte. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * The length (1..4) of the UTF-8 sequence at s if it is one character: shortest form, no
 * UTF-16 surrogate, at most U+10FFFF; else 0. Any ASCII byte is one (control characters
 * too: callers that refuse them check). s is NUL-terminated: never read past its NUL.
 */
size_t utf8__char_len(const unsigned char *s);

/* Whether the NUL-terminated s is all UTF-8. */
bool utf8__valid(const char *s);

/*
 * A malloc'd copy of s (the caller frees it) with each byte that starts no UTF-8 character
 * replaced by U+FFFD; valid UTF-8 is copied unchanged. NULL with errno ENOMEM.
 */
char *utf8__sanitize(const char *s);

#endif /* BPFPROF_UTF8_H */

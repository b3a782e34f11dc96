// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* utf8.c: UTF-8 validation and repair (RFC 3629, section 4's table of well-formed bytes). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/utf8.h"

/* A continuation byte (10xxxxxx); a NUL is none, so checks stop at the string's end. */
static inline bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8__char_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return cont(s[1]) ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		/* E0: no overlong form (below U+0800); ED: no surrogate (U+D800..U+DFFF). */
		if (!cont(s[1]) || !cont(s[2]) || (s[0] == 0xe0 && s[1] < 0xa0) ||
		    (s[0] == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		/* F0: no overlong form (below U+10000); F4: nothing above U+10FFFF. */
		if (!cont(s[1]) || !cont(s[2]) || !cont(s[3]) || (s[0] == 0xf0 && s[1] < 0x90) ||
		    (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

bool utf8__valid(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n;

	for (; *c; c += n) {
		/* ASCII, the common case, without the call. */
		n = *c < 0x80 ? 1 : utf8__char_len(c);
		if (!n)
			return false;
	}
	return true;
}

char *utf8__sanitize(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t len = strlen(s), n;
	char *out, *o;

	/* At worst every byte becomes three. */
	if (len > (SIZE_MAX - 1) / 3) {
		errno = ENOMEM;
		return NULL;
	}
	out = malloc(3 * len + 1);
	if (!out)
		return NULL;
	for (o = out; *c; c += n ? n : 1) {
		n = utf8__char_len(c);
		if (!n) {
			memcpy(o, UTF8_REPLACEMENT, 3);
			o += 3;
			continue;
		}
		memcpy(o, c, n);
		o += n;
	}
	*o = '\0';
	return out;
}

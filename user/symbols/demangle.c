// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* demangle.c: C++ and Rust names demangled with libiberty. */
#include <stddef.h>
#include "symbols/demangle.h"

#include <libiberty/demangle.h>

static int demangle_on = 1;
static int full_names;

void demangle__set(int on)
{
	demangle_on = !!on;
}

int demangle__on(void)
{
	return demangle_on;
}

void demangle__set_full_names(int on)
{
	full_names = !!on;
}

char *demangle__name(const char *name)
{
	char *res;

	/* _Z: Itanium C++ ABI (and Rust's legacy mangling, which wraps it); _R: Rust v0. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* libiberty's demangler, the one binutils and GCC use: C++ and both Rust manglings
	 * (Rust's legacy names lose their ::h<hash> suffix, as rustc-demangle prints them).
	 * Without DMGL_PARAMS it prints what perf prints by default (DMGL_NO_OPTS): a function
	 * name without its parameters, cv-qualifiers, return type or clone suffix. */
	res = cplus_demangle(name, full_names ? DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO : DMGL_AUTO);
	return res;
}

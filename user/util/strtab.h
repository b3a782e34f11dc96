/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * strtab.h: a string table that gives each distinct string a dense id (0, 1, 2, ... in order
 * of first use), as pprof's string_table and the flame graph's frame names need.
 */
#ifndef BPFPROF_STRTAB_H
#define BPFPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

/* An empty table, or NULL without memory. Free with strtab__free(). */
struct strtab *strtab__new(void);
void strtab__free(struct strtab *t);

/* The id of s (copied on first use), or -ENOMEM (the table is left as it was). */
int64_t strtab__intern(struct strtab *t, const char *s);

/* The string of id, owned by the table; NULL when id was never given. */
const char *strtab__str(const struct strtab *t, uint32_t id);

/* How many strings the table holds. */
size_t strtab__cnt(const struct strtab *t);

#endif

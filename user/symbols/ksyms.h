/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ksyms.h: kernel symbols from /proc/kallsyms, for kernel frames. */
#ifndef BPFPROF_KSYMS_H
#define BPFPROF_KSYMS_H

#include <stdint.h>
#include <stddef.h>

/* Text symbols (types t, T, w, W) of the kernel and loaded modules, sorted by address. */
struct ksyms;

/*
 * Loads a kallsyms file (normally "/proc/kallsyms"). Module symbols keep their name without
 * the "[module]" column. Returns NULL and sets errno: ENOENT no file, EPERM when every address
 * reads as 0 (kptr_restrict; run as root or with CAP_SYSLOG), ENOMEM.
 */
struct ksyms *ksyms__load(const char *path);
/* ksyms__load() of a kallsyms text already read (a raw capture's). */
struct ksyms *ksyms__load_text(const char *text, size_t len);
void ksyms__free(struct ksyms *ks);
size_t ksyms__cnt(const struct ksyms *ks);

/*
 * The symbol covering addr (the nearest one at or below addr; none past the last text
 * symbol's end when known) and addr's offset from it. The name lives until ksyms__free().
 * Returns NULL when none covers addr.
 */
const char *ksyms__find(const struct ksyms *ks, uint64_t addr, uint64_t *offset);

#endif /* BPFPROF_KSYMS_H */

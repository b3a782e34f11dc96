/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go.h: the Go runtime (runtime_go_ops, runtime/runtime.h): Go binaries without CFI or symbols
 * (-ldflags='-s -w') named and unwound from their .gopclntab (gopclntab.h), and Go threads on
 * their g0 stack unwound across the switch with the records of bpf/runtime/go.bpf.h
 * (RECORD_GO_STACK, RECORD_FP_CHAIN) for the processes armed in go_procs. Inside the folder.
 */
#ifndef BPFPROF_RUNTIME_GO_H
#define BPFPROF_RUNTIME_GO_H

#include <stdbool.h>
#include <stddef.h>
#include "process/module_cache.h"

struct record_header;
struct unwinder;
struct gopclntab;

/* e's Go function table, read at the first call (STAGE_GO_TABLE) and kept on e (a module
 * attachment); NULL when e has none (not a Go binary, a Go version before 1.16, a malformed
 * table). */
struct gopclntab *go_module_table(struct module *e);

/*
 * Registers Go's hooks in the layers below the runtimes: its unwind step (go_unwind.c) and its
 * symbol source (.gopclntab's function names, inline frames, files and lines for a file
 * without .symtab or DWARF). Done by runtime_go_ops.new; a test using those layers without a
 * session calls it. Again: a no-op. 0 or a negative errno.
 */
int go__register(void);

/* The unwinder's step for Go files (go_unwind.c): registered by go__register(). */
int go_unwind__register(void);
/* Whether the last unwind of uw used a Go table (the process runs Go code). */
bool go_unwind__used(const struct unwinder *uw);

/*
 * Checks a RECORD_GO_STACK or RECORD_FP_CHAIN (len bytes as delivered, hdr->sz of them its
 * own) against its layout: a Go stack's len against BPFPROF_GO_STACK_SZ and the bytes its size
 * holds, not wrapping around the address space; an FP chain's cnt non-zero, within
 * BPFPROF_FP_CHAIN_MAX and the frames its size holds. 0, -EINVAL when malformed or of another
 * type (runtime_go_ops.check).
 */
int go__record_check(const struct record_header *hdr, size_t len);

#endif /* BPFPROF_RUNTIME_GO_H */

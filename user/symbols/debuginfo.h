/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* debuginfo.h: inline frames and source lines from DWARF, and debuginfod fetches of debug files. */
#ifndef BPFPROF_DEBUGINFO_H
#define BPFPROF_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "process/module_cache.h"

/* One source-level frame at an address: innermost first. */
struct src_frame {
	const char *function;	 /* linkage name, demangled unless --no-demangle; owned by the
				 * file's cache */
	const char *system_name; /* the same name as the file spells it (mangled), or NULL */
	const char *file;	 /* source file, or NULL */
	uint32_t line;		 /* 0 when unknown */
};

/*
 * The source frames at addr (ELF virtual address) of e: out[0] is the innermost function (an
 * inlined one when addr is in inlined code) with addr's own file:line; out[i > 0] is the
 * function that inlined out[i-1], with the call site's file:line (DW_AT_call_file,
 * DW_AT_call_line); the last is the real (out-of-line) function.
 *
 * From the DWARF of e itself or of its separate debug file (debug_file__open(): build-id path,
 * .gnu_debuglink, then debuginfod once a fetch finished), as eu-addr2line -i does it: the CU by
 * dwarf_addrdie() (else by the CUs' own ranges: clang and rustc emit no .debug_aranges),
 * dwarf_getscopes(), dwarf_getscopes_die() and dwarf_getsrc_die(). Names: DW_AT_linkage_name,
 * else DW_AT_name, through DW_AT_abstract_origin and DW_AT_specification. The real function
 * takes the symbol table's name when that symbol starts inside it, so aliases and .cold or
 * .constprop parts keep the names they have without DWARF. A line without a DW_TAG_subprogram
 * (assembly) gives one frame named by the symbol table. A chain deeper than cap loses its
 * innermost frames.
 *
 * Cached per (file, addr). The strings live as long as e; a name from the symbol table, as long
 * as that table (see debuginfo__symtab_stale()): copy them. Returns the count (1..cap), 0 when
 * no DWARF covers addr (the caller then uses the symtab), -EINVAL for cap 0, or -ENOMEM. Only
 * called at output time, never per sample (the first call for a file opens its DWARF).
 */
int debuginfo__frames(struct elf_entry *e, uint64_t addr, struct src_frame *out, size_t cap);

/*
 * Queues a debuginfod fetch for e's build-id when DEBUGINFOD_URLS is set and e has no debug info
 * at hand (no .debug_info, no installed debug file). Never blocks: it may be called from the
 * sample path, once per file (it remembers). Fetches run in a background thread (libdebuginfod:
 * debuginfod_find_debuginfo(), its client cache, DEBUGINFOD_* variables), once per build-id,
 * with progress lines on stderr (pr_info, every 5 s): the file, its build-id, bytes received
 * (of the total when the server says it) or that no server answered yet, how long bpfprof
 * still waits (debuginfo__wait()), then done (and the size) or failed (and why). libdebuginfod reads DEBUGINFOD_URLS at each fetch: it
 * must stay in the environment.
 */
void debuginfo__request(struct elf_entry *e);

/*
 * Waits until queued fetches finish or timeout_ns passes (bpfprof calls this before symbolizing
 * a profile; 0 only polls), saying so on stderr; a SIGINT or SIGTERM pending for the process
 * (blocked: bpfprof reads them from a signalfd) ends the wait at once. Once a wait has ended
 * with fetches pending, later calls only poll. Returns the number still pending.
 */
unsigned int debuginfo__wait(uint64_t timeout_ns);

/* Stops the fetch thread (at exit): a transfer in progress is cancelled, queued fetches are
 * dropped, and files fetched so far are forgotten (their copies stay in the client cache). */
void debuginfo__shutdown(void);

/*
 * True once, when a debuginfod fetch that debuginfo__request(e) queued has brought e's debug
 * file after e's symbol table was built (elf_entry__symtab()): the caller drops the table, and
 * the next lookup builds it again with the debug file's .symtab. False otherwise (cheap: an
 * atomic load unless some fetch finished since the last call).
 */
bool debuginfo__symtab_stale(struct elf_entry *e);

/*
 * The path, in libdebuginfod's client cache, of the debug file fetched for this build-id (raw
 * bytes, id_sz of them), copied into buf. For debug_file__open(). Returns 0, -ENOENT when no
 * fetch of that build-id finished, or -ENAMETOOLONG. Thread-safe.
 */
int debuginfo__fetched_path(const uint8_t *id, size_t id_sz, char *buf, size_t buf_sz);

#endif /* BPFPROF_DEBUGINFO_H */

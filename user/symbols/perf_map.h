/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* perf_map.h: names for JIT and other anonymous code from a process's perf map. */
#ifndef BPFPROF_PERF_MAP_H
#define BPFPROF_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A perf map: the text file /tmp/perf-PID.map in which a JIT (V8/node --perf-basic-prof, the
 * JVM's perf agent, LuaJIT, CPython 3.12 -X perf, ...) names the code it generates, one entry a
 * line: "START SIZE name", START and SIZE in hex with or without "0x", the name the rest of the
 * line (it may hold spaces). Format: Linux tools/perf/Documentation/jit-interface.txt.
 *
 * Held as address ranges sorted by start, none overlapping: where entries overlap, the later
 * line wins (a JIT reuses code memory and appends the new entry), so an entry may be cut into
 * several ranges. A struct perf_map also carries perf_map__resolve()'s state (the file's path,
 * identity and when it was last checked). One thread uses a map at a time.
 */
struct perf_map;

/* Longest perf map read (bytes): a bigger file fails with EFBIG. */
#define BPFPROF_PERF_MAP_MAX_SZ	    (1ull << 30)
/* perf_map__resolve() looks at the file again at most this often (ns). */
#define BPFPROF_PERF_MAP_RECHECK_NS 1000000000ull

/*
 * Parses the perf map at path. Lines that are not "START SIZE name" (SIZE > 0, START + SIZE
 * within 64 bits, a non-empty name) are skipped and counted (perf_map__bad_cnt()); empty lines
 * are skipped. A last line without a newline is taken as still being written and skipped. The
 * file must be a regular file. Returns the map (free with perf_map__free()), or NULL with errno:
 * ENOENT (no such file), EINVAL (not a regular file), EFBIG (larger than
 * BPFPROF_PERF_MAP_MAX_SZ), ENOMEM, or open(2)'s and read(2)'s errors.
 */
struct perf_map *perf_map__parse_file(const char *path);

/*
 * The perf map of process pid (pid as bpfprof's /proc sees it): the file the process itself
 * calls /tmp/perf-NSPID.map, read as /proc/PID/root/tmp/perf-NSPID.map, NSPID being the last
 * field of the "NSpid:" line of /proc/PID/status (pid on kernels without it). The file must be
 * owned by root or one of the process's uids, and is not followed if it is a symbolic link
 * (a root profiler reading a path the target controls). Returns the map or NULL with errno:
 * ESRCH (no such process), ENOENT (no perf map), ELOOP (a symbolic link), EPERM (another
 * owner), or perf_map__parse_file()'s errors.
 */
struct perf_map *perf_map__load(pid_t pid);

/* Frees m and its names. NULL is fine. */
void perf_map__free(struct perf_map *m);

/*
 * The name of the entry covering addr, and addr's offset from that entry's START in *off (may
 * be NULL). Returns NULL when no entry covers addr. The name lives until perf_map__free(), or
 * until a perf_map__resolve() on this map reloads it.
 */
const char *perf_map__find(const struct perf_map *m, uint64_t addr, uint64_t *off);

/* Address ranges with a name (an entry cut by a later one counts once per part). */
size_t perf_map__cnt(const struct perf_map *m);
/* Lines skipped as malformed by the last successful read. */
size_t perf_map__bad_cnt(const struct perf_map *m);
/* Times perf_map__resolve() read the file into m (0 for a map never found). */
uint64_t perf_map__load_cnt(const struct perf_map *m);

/*
 * For the per-sample path: the name at addr in process pid's perf map (see perf_map__load()),
 * and the offset into it in *off (may be NULL); NULL when none.
 *
 * *mapp is the process's map, NULL before the first call: the first call creates it and reads
 * the file. When addr is in no entry and BPFPROF_PERF_MAP_RECHECK_NS have passed since the
 * last look, the file is looked at again (lstat) and read again if it changed (device, inode,
 * size or mtime). A missing or unusable file gives an empty map that is looked at again the
 * same way; a file that disappears leaves the entries read before (a JIT removes its map at
 * exit, while its samples may still be queued). now_ns: CLOCK_MONOTONIC, ns. Once created,
 * *mapp stays at the same address; the caller owns it (the process entry frees it with
 * perf_map__free()). NULL is also returned, with *mapp left NULL, when memory runs out.
 * The name lives until the next perf_map__resolve() on *mapp or its perf_map__free().
 */
const char *perf_map__resolve(struct perf_map **mapp, pid_t pid, uint64_t addr, uint64_t now_ns,
			      uint64_t *off);

/*
 * What perf_map__load() reads in the text of /proc/PID/status (len bytes, need not be
 * NUL-terminated): *nspid, the last field of the "NSpid:" line (the pid in the process's own,
 * innermost pid namespace), and uids[4], the "Uid:" line (real, effective, saved, filesystem).
 * Returns 0, -ENOENT when a line is missing (*nspid or uids left as they were; the other is
 * still set) or -EINVAL when one is malformed.
 */
int perf_map__parse_status(const char *text, size_t len, pid_t *nspid, uid_t uids[4]);

#endif /* BPFPROF_PERF_MAP_H */

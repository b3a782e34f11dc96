/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* perf_map.h: names for JIT and other anonymous code from a process's perf map. */
#ifndef BPFPROF_PERF_MAP_H
#define BPFPROF_PERF_MAP_H

#include <stdbool.h>
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
 * several ranges. A process's map (perf_map__open_process()) also holds where its file is and
 * the identity it had when last read. Reference counted; one thread uses a map at a time.
 */
struct perf_map;

/* Longest perf map read (bytes): a bigger file fails with EFBIG. */
#define BPFPROF_PERF_MAP_MAX_SZ	    (1ull << 30)

/*
 * Parses the perf map at path. Lines that are not "START SIZE name" (SIZE > 0, START + SIZE
 * within 64 bits, a non-empty name) are skipped and counted (perf_map__bad_cnt()); empty lines
 * are skipped. A last line without a newline is taken as still being written and skipped. The
 * file must be a regular file. Returns the map (one reference: perf_map__put()), or NULL with errno:
 * ENOENT (no such file), EINVAL (not a regular file), EFBIG (larger than
 * BPFPROF_PERF_MAP_MAX_SZ), ENOMEM, or open(2)'s and read(2)'s errors.
 */
struct perf_map *perf_map__parse_file(const char *path);

/*
 * The perf map of process pid (pid as bpfprof's /proc sees it): the file the process itself
 * calls /tmp/perf-NSPID.map, NSPID being the last field of the "NSpid:" line of
 * /proc/PID/status (pid on kernels without it), opened inside the process's root directory
 * (/proc/PID/root, a container's own) with file__open_regular_in_root(): no symlink on the way
 * leaves that root, the last component is not followed. The file must be owned by root or one
 * of the process's uids (a root profiler reading a path the target controls). Returns the map
 * or NULL with errno: ESRCH (no such process), ENOENT (no perf map), ELOOP (a symbolic link),
 * EPERM (another owner), or perf_map__parse_file()'s errors.
 */
struct perf_map *perf_map__load(pid_t pid);

/* Takes a reference on m; returns m. */
struct perf_map *perf_map__get(struct perf_map *m);
/* Drops a reference: the last frees m and its names. NULL is fine. */
void perf_map__put(struct perf_map *m);

/*
 * The names of a JIT's code as its process writes them, for output time (the aggregate keeps
 * a reference per JIT location, symbols/symbolizer.c looks the addresses up): a map of process
 * pid (located as perf_map__load() says) that holds the process's root directory open, so it
 * can be read again while the process runs (perf_map__refresh()) and once more when it ends
 * (perf_map__close(): a map written at exit, the JVM's -XX:+DumpPerfMapAtExit, is there by
 * then, and is found even after /proc/PID is gone). Reads the file now if it exists; a process
 * already gone or without a map gives an empty map. now_ns: CLOCK_MONOTONIC, ns. Returns the
 * map with one reference, or NULL when memory runs out.
 */
struct perf_map *perf_map__open_process(pid_t pid, uint64_t now_ns);

/*
 * Looks at m's file at now_ns and reads it again if it changed (device, inode, size or mtime).
 * Entries read before stay when the file is gone or cannot be read (a JIT removes its map at
 * exit); a file refused (owner, type, size) is not read again until it changes. Nothing once
 * m is closed. Names found before may move: look them up again.
 */
void perf_map__refresh(struct perf_map *m, uint64_t now_ns);
/* perf_map__refresh() one last time, then closes m's root: its process exited or exec'd. */
void perf_map__close(struct perf_map *m, uint64_t now_ns);
/* Whether m was closed (or never had a process). */
bool perf_map__closed(const struct perf_map *m);
/* When m's file was last looked at (CLOCK_MONOTONIC, ns). */
uint64_t perf_map__checked_ns(const struct perf_map *m);

/*
 * The name of the entry covering addr, and addr's offset from that entry's START in *off (may
 * be NULL). Returns NULL when no entry covers addr. The name lives until the map is freed or
 * read again (perf_map__refresh(), perf_map__close()).
 */
const char *perf_map__find(const struct perf_map *m, uint64_t addr, uint64_t *off);

/* Address ranges with a name (an entry cut by a later one counts once per part). */
size_t perf_map__cnt(const struct perf_map *m);
/* Lines skipped as malformed by the last successful read. */
size_t perf_map__bad_cnt(const struct perf_map *m);
/* Times perf_map__refresh() read the file into m (0 for a map never found). */
uint64_t perf_map__load_cnt(const struct perf_map *m);

/*
 * What perf_map__load() reads in the text of /proc/PID/status (len bytes, need not be
 * NUL-terminated): *nspid, the last field of the "NSpid:" line (the pid in the process's own,
 * innermost pid namespace), and uids[4], the "Uid:" line (real, effective, saved, filesystem).
 * Returns 0, -ENOENT when a line is missing (*nspid or uids left as they were; the other is
 * still set) or -EINVAL when one is malformed.
 */
int perf_map__parse_status(const char *text, size_t len, pid_t *nspid, uid_t uids[4]);

#endif /* BPFPROF_PERF_MAP_H */

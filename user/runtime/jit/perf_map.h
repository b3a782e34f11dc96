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
 * several ranges. Any process writes its own map, as large as it likes, and a live JIT changes
 * it constantly: a process's map (perf_map__open_process()) is read in a background thread
 * (util/worker.h), never by the loop that drains the ringbuf, streamed a chunk at a time, and
 * keeps only the lines covering an address its samples hit (perf_map__want()): its memory
 * grows with those addresses, not with the file, and its reads with the file's size, up to
 * BPFPROF_PERF_MAP_MAX_SZ. It also holds where its file is and the identity it had when last
 * read. Reference counted (atomically); one thread at a time uses a map's lookups.
 */
struct perf_map;

/* Bytes of a perf map read: the rest is not (counted: perf_map__stats()). */
#define BPFPROF_PERF_MAP_MAX_SZ	  (64ull << 20)
/* Addresses looked up per process map; more are not (counted: perf_map__stats()). */
#define BPFPROF_PERF_MAP_WANT_MAX 65536

/* Counters of every map since the start (perf_map__stats()). */
struct perf_map_stats {
	uint64_t reads; /* files read */
	uint64_t bytes_read;
	uint64_t capped_reads;	/* reads that stopped at BPFPROF_PERF_MAP_MAX_SZ */
	uint64_t max_not_read;	/* the most bytes such a read left */
	uint64_t addrs_dropped; /* addresses past BPFPROF_PERF_MAP_WANT_MAX, not looked up */
};

/* The counters so far (the end-of-run summary). Thread-safe. */
void perf_map__stats(struct perf_map_stats *s);

/* Sets the bytes read per file (0: BPFPROF_PERF_MAP_MAX_SZ), for tests. */
void perf_map__set_max_size(uint64_t bytes);

/*
 * Parses the perf map at path, every line, now, in the caller's thread. Lines that are not
 * "START SIZE name" (SIZE > 0, START + SIZE within 64 bits, a non-empty name, at most 64 KiB)
 * are skipped and counted (perf_map__bad_cnt()); empty lines are skipped. A last line without a
 * newline is taken as still being written and skipped. Only the first BPFPROF_PERF_MAP_MAX_SZ
 * bytes are read (perf_map__not_read(): the rest). The file must be a regular file. Returns the
 * map (one reference: perf_map__put()), or NULL with errno: ENOENT (no such file), EINVAL (not
 * a regular file), ENOMEM, or open(2)'s and read(2)'s errors.
 */
struct perf_map *perf_map__parse_file(const char *path);

/*
 * The perf map of process pid (pid as bpfprof's /proc sees it), read as perf_map__parse_file()
 * does: the file the process itself calls /tmp/perf-NSPID.map, NSPID being the last field of
 * the "NSpid:" line of /proc/PID/status (pid on kernels without it), opened inside the
 * process's root directory (/proc/PID/root, a container's own) with
 * file__open_regular_in_root(): no symlink on the way leaves that root, the last component is
 * not followed. The file must be owned by root or one of the process's uids (a root profiler
 * reading a path the target controls). Returns the map or NULL with errno: ESRCH (no such
 * process), ENOENT (no perf map), ELOOP (a symbolic link), EPERM (another owner), or
 * perf_map__parse_file()'s errors.
 */
struct perf_map *perf_map__load(pid_t pid);

/* Takes a reference on m; returns m. Thread-safe. */
struct perf_map *perf_map__get(struct perf_map *m);
/* Drops a reference: the last frees m and its names. NULL is fine. Thread-safe. */
void perf_map__put(struct perf_map *m);

/*
 * The names of a JIT's code as its process writes them, for output time (the aggregate keeps
 * a reference per JIT location, symbols/symbolizer.c looks the addresses up): a map of process
 * pid (located as perf_map__load() says) that holds the process's root directory open, so it
 * can be read while the process runs and once more when it ends (perf_map__close(): a map
 * written at exit, the JVM's -XX:+DumpPerfMapAtExit, is there by then, and is found even after
 * /proc/PID is gone). Reads nothing now: the reader thread reads the lines of the addresses
 * given to perf_map__want(). A process already gone gives an empty, closed map. now_ns:
 * CLOCK_MONOTONIC, ns. Returns the map with one reference, or NULL when memory runs out.
 */
struct perf_map *perf_map__open_process(pid_t pid, uint64_t now_ns);

/*
 * addr (a sample's pc in m's process's anonymous memory) is to be named: from the sample path,
 * it costs a lookup. A new address queues a read of the file in the reader thread, unless one
 * is queued or running, or one ended less than a second (or 20 times its length) before now_ns:
 * the addresses added meanwhile wait for the next one (perf_map__refresh()). At most
 * BPFPROF_PERF_MAP_WANT_MAX addresses per map. Nothing once m is closed.
 */
void perf_map__want(struct perf_map *m, uint64_t addr, uint64_t now_ns);

/*
 * Queues a read of m's file at now_ns (the symbolizer, before it names m's addresses: for code
 * compiled late and addresses wanted since the last read), or once more after the one queued
 * or running. The read is done only if the file changed (device, inode, size or mtime) or
 * addresses were added since the last one. Entries read before stay when the file is gone or
 * cannot be read (a JIT removes its map at exit); a file refused (owner, type) is not read
 * again until it changes. Nothing once m is closed or without addresses.
 */
void perf_map__refresh(struct perf_map *m, uint64_t now_ns);
/* Queues a last read (as perf_map__refresh() does), after which m's root is closed: its process
 * exited or exec'd. Without addresses wanted, closes it now. */
void perf_map__close(struct perf_map *m, uint64_t now_ns);
/* Whether m was closed (or never had a process). */
bool perf_map__closed(const struct perf_map *m);
/* When m was last refreshed or closed (CLOCK_MONOTONIC, ns). */
uint64_t perf_map__checked_ns(const struct perf_map *m);

/*
 * Waits until no read is queued or running, at most timeout_ns; a SIGINT or SIGTERM pending
 * ends the wait (*interrupted set; may be NULL). Returns the reads still pending.
 */
unsigned int perf_map__wait(uint64_t timeout_ns, bool *interrupted);
/* Stops the reader thread (at exit): a read in progress ends at its next chunk, queued ones are
 * dropped. */
void perf_map__shutdown(void);

/*
 * Takes the names of m's last read done, if it was not taken yet: names found before are
 * freed. The caller's thread is the one that looks names up.
 */
void perf_map__sync(struct perf_map *m);

/*
 * The name of the entry covering addr, and addr's offset from that entry's START in *off (may
 * be NULL), as of the read taken by perf_map__sync() (a process's map: for the addresses
 * wanted before that read only). Returns NULL when no entry covers addr. The name lives until
 * the map is freed or synced again.
 */
const char *perf_map__find(const struct perf_map *m, uint64_t addr, uint64_t *off);

/* Address ranges with a name (an entry cut by a later one counts once per part); a process's
 * map: those holding a wanted address. */
size_t perf_map__cnt(const struct perf_map *m);
/* Lines skipped as malformed by the read taken. */
size_t perf_map__bad_cnt(const struct perf_map *m);
/* Bytes past BPFPROF_PERF_MAP_MAX_SZ that the read taken left. */
uint64_t perf_map__not_read(const struct perf_map *m);
/* Times the reader thread read m's file (0 for a map never found). Thread-safe. */
uint64_t perf_map__load_cnt(struct perf_map *m);

/*
 * What perf_map__load() reads in the text of /proc/PID/status (len bytes, need not be
 * NUL-terminated): *nspid, the last field of the "NSpid:" line (the pid in the process's own,
 * innermost pid namespace), and uids[4], the "Uid:" line (real, effective, saved, filesystem).
 * Returns 0, -ENOENT when a line is missing (*nspid or uids left as they were; the other is
 * still set) or -EINVAL when one is malformed.
 */
int perf_map__parse_status(const char *text, size_t len, pid_t *nspid, uid_t uids[4]);

#endif /* BPFPROF_PERF_MAP_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* file.h: opening and reading files that other users may control. */
#ifndef BPFPROF_FILE_H
#define BPFPROF_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Opens the regular file at path for reading, whatever another user put there: the path is
 * first opened O_PATH (which never blocks on a FIFO nor runs a device's open), its type checked
 * with fstat, and only a regular file is then opened O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC
 * through /proc/self/fd (the same inode, whatever the path names by then). flags: O_NOFOLLOW
 * when the last component must not be a symlink (a path the kernel reported, which it gives
 * resolved); any other bit is ignored. Fills *st (of the file opened) when st is not NULL.
 * Returns the descriptor, or a negative errno: the open's, -ELOOP for a symlink with
 * O_NOFOLLOW, -EINVAL for anything but a regular file.
 */
int file__open_regular(const char *path, int flags, struct stat *st);

/*
 * file__open_regular() of path resolved inside the directory root_fd as if it were "/"
 * (openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, Linux 5.6): a symlink anywhere on path,
 * absolute or with "..", stays under root_fd. For a file in another process's root
 * (/proc/PID/root opened O_PATH), which that process's users control, and which stays
 * reachable through root_fd after the process exits. Same flags, *st and errors, and -ENOSYS
 * on kernels without openat2.
 */
int file__open_regular_in_root(int root_fd, const char *path, int flags, struct stat *st);

/*
 * For descriptors kept open long (one per cached ELF file): raises the soft RLIMIT_NOFILE to
 * the hard limit once, then moves fd to a number >= FD_SETSIZE when the limit allows, out of
 * the way of select()-based code (libmicrohttpd's) and of the files bpfprof writes. Returns
 * the descriptor to use: the new one (fd closed), or fd itself.
 */
int file__move_high(int fd);

/*
 * Reads the whole regular file at path (a /proc file: st_size is 0), opened with
 * file__open_regular(), into a malloc'd, NUL-terminated *text of *len bytes. Returns 0 or a
 * negative errno; -ENOENT also when a process went away while its file was read (ESRCH).
 */
int file__read_all(const char *path, char **text, size_t *len);

#endif /* BPFPROF_FILE_H */

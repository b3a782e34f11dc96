/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* proc_maps.h: /proc/PID/maps parser (proc(5)). */
#ifndef BPFPROF_PROC_MAPS_H
#define BPFPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROC_MAPPING_R	    (1u << 0)
#define PROC_MAPPING_W	    (1u << 1)
#define PROC_MAPPING_X	    (1u << 2)
#define PROC_MAPPING_SHARED (1u << 3) /* 's' in the perms column, else private */

/* One line of /proc/PID/maps: "start-end perms offset major:minor inode   path". */
struct proc_mapping {
	uint64_t start; /* first byte, virtual address */
	uint64_t end;	/* one past the last byte */
	uint64_t pgoff; /* file offset of start, bytes */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode; /* 0 for anonymous memory */
	uint32_t prot;	/* PROC_MAPPING_* */
	bool deleted;	/* the path had " (deleted)" (stripped from path) */
	char *path;	/* malloc'd; NULL when the column is empty; "[vdso]", "[stack]"... */
};

/*
 * Parses one line (with or without its trailing newline) into *m; m->path is malloc'd and
 * owned by the caller (proc_mapping__clear()). Paths may contain spaces.
 * Returns 0, -EINVAL for a malformed line, or -ENOMEM.
 */
int proc_mapping__parse(const char *line, struct proc_mapping *m);
void proc_mapping__clear(struct proc_mapping *m);

/*
 * Reads a maps file (e.g. "/proc/1234/maps"). With exec_only, keeps only PROC_MAPPING_X lines.
 * On success *mappings is a malloc'd array of *cnt entries sorted by start (free with
 * proc_maps__free()). Returns 0 or a negative errno: -ENOENT when the process is gone.
 * Malformed lines are skipped.
 */
int proc_maps__read(const char *path, bool exec_only, struct proc_mapping **mappings, size_t *cnt);
void proc_maps__free(struct proc_mapping *mappings, size_t cnt);

/* proc_maps__read() on text already read (len bytes, a whole maps file). */
int proc_maps__parse_text(const char *text, size_t len, bool exec_only,
			  struct proc_mapping **mappings, size_t *cnt);

/*
 * The directory that is process pid's root, as a path bpfprof can open, for the paths the
 * process mapped (relative to its root) once /proc/PID/root is gone: a short-lived process, a
 * capture's replay. A chroot in bpfprof's mount namespace has a path there (readlink of
 * /proc/PID/root); the root of another mount namespace (a container's pivot_root) is found
 * through mountinfo (proc(5)): the filesystem and directory of the process's "/" mount, under a
 * mount of that filesystem in bpfprof's namespace (where a container runtime mounts the
 * container's root on the host). A path is returned only when it is the same directory (device
 * and inode) as /proc/PID/root. Returns 0 with *root malloc'd, or NULL when the process's root
 * is bpfprof's own or is not reachable; or a negative errno (-ENOENT: no such process).
 */
int proc_maps__host_root(uint32_t pid, char **root);

/*
 * proc_table__read_maps() adds a line "root PATH" (proc_maps__host_root()) after the maps of
 * a process with a root of its own, so that a capture holds it. It is no mapping: parsers skip
 * it. proc_maps__text_root() finds it in text (len bytes): 0 with *root malloc'd or NULL, or
 * -ENOMEM. A root holding a newline is never added.
 */
#define PROC_MAPS_ROOT_LINE "root "
int proc_maps__text_root(const char *text, size_t len, char **root);

#endif /* BPFPROF_PROC_MAPS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * targets.h: the processes a run profiles (BPF's target_tgids): the -p processes with their
 * descendants, or CMD with its; and the CPU time they used during the run, from which the
 * summary tells how many samples to expect.
 */
#ifndef BPFPROF_TARGETS_H
#define BPFPROF_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sampling/loader.h"

struct targets;

/* l is borrowed. Returns NULL and sets errno. */
struct targets *targets__new(struct loader *l);
/* NULL is fine. */
void targets__free(struct targets *t);

/*
 * -p: makes pid a target with state (TARGET_*, | TARGET_F_FOLLOW_FORK), and with
 * TARGET_F_FOLLOW_FORK every process descended from it that runs now: the BPF fork hook
 * follows those forked later, and as each process is a target before /proc is read for its
 * children, none falls in between. bpfprof itself is never one. The CPU time each process had
 * used so far is where its count starts. A process that exits before it is a target (no exit
 * record will remove it) is removed again.
 * Returns how many processes became targets (0: pid is gone), or a negative errno when pid
 * could not be made one (a descendant that cannot is warned about and skipped).
 */
int targets__add_tree(struct targets *t, pid_t pid, uint32_t state);

/* RECORD_EXIT of a target with the CPU time of its life (task_record.cpu_ns), ns. */
void targets__exit(struct targets *t, uint32_t tgid, uint64_t cpu_ns);

/* Whether some target has not exited yet. At most once a second it also removes the targets
 * whose process exited without an exit record (it was exiting when it became a target). */
bool targets__alive(struct targets *t);

/* Reads the CPU time of each target still running (/proc/PID/stat): at the end of the run. */
void targets__snapshot(struct targets *t);

/* CPU time the targets used during the run, ns: those that exited up to their exit, the
 * others up to the last targets__snapshot(). A target counts from where targets__add_tree()
 * found it, or from 0 (a process forked during the run, CMD). */
int64_t targets__cpu_ns(const struct targets *t);

/* utime + stime of a process, all its threads (/proc/PID/stat fields 14, 15), ns; -1 when
 * it is gone. With ppid non-NULL, its parent's PID (field 4) too. */
int64_t proc_cpu_ns(pid_t pid, pid_t *ppid);

#endif /* BPFPROF_TARGETS_H */

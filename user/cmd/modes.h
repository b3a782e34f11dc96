/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * modes.h: bpfprof's modes on a session started with session__init(); each returns the exit
 * status (opts.h: 0, 1, or with -- CMD its status). The agent's is agent/agent_loop.h.
 */
#ifndef BPFPROF_MODES_H
#define BPFPROF_MODES_H

struct session;

/* bpfprof [record] -- CMD | -p PID | -a: sample until done, write the outputs and summary. */
int record__run(struct session *s);

/* bpfprof report FILE: the records of a raw capture through the same pipeline. */
int report__run(struct session *s);

/*
 * bpfprof --exec -- CMD: CMD replaces this process (same PID, its own exit status), after a
 * detached grandchild has set up profiling, or without it when that fails (unless --strict).
 * argc and argv: the command line, for the agent's SIGHUP. Returns only on failure.
 */
int exec__run(struct session *s, int argc, char **argv);

#endif /* BPFPROF_MODES_H */

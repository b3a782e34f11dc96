/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* opts.h: the command line parsed into struct bpfprof_opts (pipeline/opts.h), defaults and
 * checks. */
#ifndef BPFPROF_OPTS_H
#define BPFPROF_OPTS_H

#include "pipeline/opts.h"

/*
 * Parses argv into *o (defaults first). "bpfprof [record] [OPTIONS] -- CMD | -p PID | -a"
 * profiles; "bpfprof report FILE [OPTIONS]" replays a raw capture (o->report); "bpfprof check"
 * reports what the kernel allows; "bpfprof agent [OPTIONS]" runs the fleet agent, whose
 * options also come from BPFPROF_<OPTION> environment variables and a --config file of
 * "option = value" lines (the command line wins over the environment, which wins over the
 * file). A subcommand is argv[1] only. Numbers are decimal, range-checked (no nan, sign,
 * octal or hex). Nothing exits: returns OPTS_RUN to run with *o, else the exit status to end
 * with, what happened printed: 0 after -h, --help, --usage or --version (stdout),
 * BPFPROF_EXIT_USAGE after a usage error or a --config file that cannot be opened (stderr),
 * BPFPROF_EXIT_ERROR out of memory or a --config file that cannot be read. The pids array and
 * argv_built (a subcommand's arguments: o->cmd and o->report point in) are malloc'd:
 * opts__free() in every case.
 */
int opts__parse(int argc, char **argv, struct bpfprof_opts *o);

void opts__free(struct bpfprof_opts *o);

/* opts__parse() and opts__free(), for the agent's SIGHUP (agent/agent_loop.h). */
extern const struct opts_parser opts__parser;

#endif /* BPFPROF_OPTS_H */

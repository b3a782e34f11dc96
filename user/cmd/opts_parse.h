/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * opts_parse.h: what cmd/opts.c (common: the table, numbers, help, subcommands, the end checks),
 * cmd/opts_record.c (targets, sampling, output) and cmd/opts_agent.c (the agent, its --config
 * file and environment) share while parsing. Private to them: the rest of bpfprof includes
 * cmd/opts.h.
 */
#ifndef BPFPROF_OPTS_PARSE_H
#define BPFPROF_OPTS_PARSE_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"
#include "pipeline/opts.h"

/* "bpfprof SUB ARGS...": SUB_NONE is the same as record. */
enum subcmd { SUB_NONE, SUB_RECORD, SUB_REPORT, SUB_CHECK, SUB_AGENT };

/* A subcommand: its name, id and --help texts. */
struct subcommand {
	const char *name;
	enum subcmd id;
	const char *args_doc; /* argp's usage lines after "bpfprof SUB [OPTION...]" */
	const char *doc;      /* --help's text above the options */
};

#define SUBCOMMANDS_CNT 4
/* record, report, check, agent (opts.c). */
extern const struct subcommand opts_subcommands[SUBCOMMANDS_CNT];

/* One opts__parse() run: *o and what the parser needs besides. */
struct parse_ctx {
	struct bpfprof_opts *o;
	enum subcmd sub;
	const char *config_read; /* agent: the --config file read before parsing */
	bool format_set;	 /* --format given */
	bool agent_opt;		 /* an agent option given */
	bool off_cpu_opt;	 /* --off-cpu-min-us, --off-cpu-max-rate or --on-cpu given */
	bool off_cpu_min_set, off_cpu_rate_set;
	int status; /* OPTS_RUN, or the exit status after --help or --version */
};

/* --max-frames: the fewest bytes of stack a caller's frame takes (x86_64 psABI: a return
 * address, and calls made with the stack 16-byte aligned), and the most frames (and the
 * default): what a copy of BPFPROF_STACK_SZ_MAX bytes could hold even at 8 bytes a frame. */
#define MIN_FRAME_BYTES 16
#define MAX_FRAMES_MAX	(BPFPROF_STACK_SZ_MAX / 8u)

enum {
	OPT_STACK_SIZE = 256,
	OPT_MAX_STACK_SIZE,
	OPT_MAX_FRAMES,
	OPT_RINGBUF_SIZE,
	OPT_DRAIN_MS,
	OPT_TOP,
	OPT_STATS,
	OPT_REALTIME,
	OPT_RAW_CAPTURE,
	OPT_FORMAT,
	OPT_TITLE,
	OPT_NO_DEMANGLE,
	OPT_FULL_NAMES,
	OPT_INLINE,
	OPT_NO_INLINE,
	OPT_UNWINDER,
	OPT_INTERVAL,
	OPT_GROUP_BY,
	OPT_SERVICE_NAME_FROM,
	OPT_OUTPUT_DIR,
	OPT_OUTPUT_DIR_MAX,
	OPT_PYROSCOPE_URL,
	OPT_PYROSCOPE_API,
	OPT_BASIC_AUTH_FILE,
	OPT_BEARER_TOKEN_FILE,
	OPT_TENANT_ID,
	OPT_HEADER,
	OPT_QUEUE_SIZE,
	OPT_KUBERNETES,
	OPT_KUBERNETES_API,
	OPT_METRICS_ADDR,
	OPT_LOG_FORMAT,
	OPT_CONFIG,
	OPT_EXEC,
	OPT_STRICT,
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN_US,
	OPT_OFF_CPU_MAX_RATE,
	OPT_WAKERS,
	OPT_ON_CPU,
	OPT_USAGE, /* help_options[] */
	OPT_PROGNAME,
	OPT_HANG,
	/* OPT_NO_RUNTIME + i: --no-<name> of runtime_table[i] (runtime/runtime.h) */
	OPT_NO_RUNTIME = 0x10000,
};

/* The runtimes' --no-<name> options: one per bit of runtimes__new()'s disabled mask at most. */
#define RUNTIME_OPTIONS_MAX 64

/* A growing NULL-terminated argv of malloc'd strings (a subcommand's, the agent's). */
struct argv_buf {
	char **v;
	size_t cnt, cap;
};

/* opts.c */
/*
 * Numbers of options, environment variables and --config lines (opts.c tells their rules).
 * 0, -EINVAL for a malformed number or -ERANGE for one outside [lo, hi].
 */
int opts_parse_digits(const char *s, uint64_t *v, const char **end);
int opts_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int opts_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int opts_parse_duration(const char *s, uint64_t lo_ns, uint64_t hi_ns, uint64_t *out_ns);
/* A usage error: "bpfprof: MESSAGE" and argp's "Try ... --help" line on stderr. Returns the
 * error that ends argp_parse(). */
__attribute__((format(printf, 2, 3))) error_t opts_usage_error(struct argp_state *state,
							       const char *fmt, ...);
/* Help or the version was printed: the parse ends, and bpfprof with status. */
error_t opts_parse_done(struct parse_ctx *ctx, int status);
/* Appends s (malloc'd) to b. 0 or BPFPROF_EXIT_ERROR (reported). */
int opts_argv_add(struct argv_buf *b, char *s);

/* opts_record.c */
/* The format an -o name asks for; *known: its extension said so (or it has none). */
enum output_format opts_format_from_name(const char *path, bool *known);
/* The ringbuf size when --ringbuf-size is not given, bytes. */
size_t opts_default_ringbuf_sz(const struct bpfprof_opts *o);
/* argp parsers of one group of options: 0, an error, or ARGP_ERR_UNKNOWN for another's key. */
error_t opts_parse_target_opt(int key, char *arg, struct argp_state *state);
error_t opts_parse_output_opt(int key, char *arg, struct argp_state *state);
/* An operand: report's FILE, or the command and its arguments. */
error_t opts_parse_operand(char *arg, struct argp_state *state);

/* opts_agent.c */
error_t opts_parse_agent_opt(int key, char *arg, struct argp_state *state);
/* The agent's argv: its --config file's options, the environment's, into b. 0 or the exit
 * status (reported). */
int opts_agent_args(const struct argp *argp, int argc, char **argv, struct parse_ctx *ctx,
		    struct argv_buf *b);
/* The agent's defaults, which its options then change. */
void opts_agent_defaults(struct bpfprof_opts *o);

#endif /* BPFPROF_OPTS_PARSE_H */

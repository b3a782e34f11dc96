// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* opts_record.c: what the options of record and report set: targets, sampling, output; -p's
 * list, -o's format, the default ringbuf size, the operands. */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf/record.h"
#include "cmd/opts.h"
#include "cmd/opts_parse.h"
#include "sampling/perf_event.h"
#include "unwind/unwind.h"
#include "util/util.h"

/*
 * -p's list, added to o->pids: decimal PIDs separated by commas, none empty ("1,,2" and "1,"
 * are errors: a script's empty variable, not a PID). A PID given twice (in one list or in two
 * -p options, as lists joined from pgrep runs often are) is kept once: it is one process, and
 * counting it twice would double its CPU time in the summary.
 */
static int parse_pids(struct bpfprof_opts *o, const char *arg)
{
	const char *p = arg, *end;
	uint32_t *pids;
	uint64_t v;
	size_t i;
	int err;

	for (;; p = end + 1) {
		err = opts_parse_digits(p, &v, &end);
		if (err)
			return err;
		if (*end && *end != ',')
			return -EINVAL;
		if (v < 1 || v > INT_MAX)
			return -ERANGE;
		for (i = 0; i < o->pids_cnt && o->pids[i] != v; i++)
			;
		if (i == o->pids_cnt) {
			pids = realloc(o->pids, (o->pids_cnt + 1) * sizeof(*pids));
			if (!pids)
				return -ENOMEM;
			o->pids = pids;
			o->pids[o->pids_cnt++] = v;
		}
		if (!*end)
			return 0;
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The format an -o name asks for; *known: its extension said so (or it has none). */
enum output_format opts_format_from_name(const char *path, bool *known)
{
	static const char *const pprof[] = { ".pb", ".pb.gz", ".pprof", ".pprof.gz" };
	static const char *const folded[] = { ".folded", ".collapsed", ".txt" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t i;

	*known = true;
	for (i = 0; i < ARRAY_SIZE(pprof); i++)
		if (ends_with(path, pprof[i]))
			return OUTPUT_PPROF;
	if (ends_with(path, ".svg"))
		return OUTPUT_SVG;
	for (i = 0; i < ARRAY_SIZE(folded); i++)
		if (ends_with(path, folded[i]))
			return OUTPUT_FOLDED;
	/* "out", "/dev/stdout", "-", ".hidden": no extension. */
	*known = !*base || !strchr(base + 1, '.');
	return OUTPUT_FOLDED;
}

/*
 * The default ringbuf: room for a while of samples of every online CPU at the first copy size
 * (1 s, at most 16 MiB; the agent 0.25 s, at most 64 MiB), a power of 2 of at least 1 MiB and
 * four samples of --max-stack-size. It absorbs the consumer's stalls (a new process's set-up,
 * a large binary's first unwind: a 4 MiB ringbuf lost 1-2% of the samples of 200 processes
 * started at 999 Hz); a ringbuf a quarter full wakes an idle consumer. Bigger also costs the
 * sampled programs: each sample writes ringbuf pages last touched one ringbuf length ago, and
 * cold pages made the BPF program slower here (at 99 Hz, 16 MiB: ~14 us a sample, 4 MiB: ~7,
 * 1 MiB: ~3.3). The pages are also mapped twice into bpfprof (RSS counts 2x the size).
 */
size_t opts_default_ringbuf_sz(const struct bpfprof_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t need = (uint64_t)(cpus > 0 ? cpus : 1) * o->freq_hz * (o->copy_size + 512) /
			(o->agent ? 4 : 1);
	uint64_t min = 4 * ((uint64_t)o->max_copy_size + sizeof(struct sample_record));
	size_t sz = 1u << 20, max = o->agent ? 64u << 20 : 16u << 20;

	while ((sz < need || sz < min) && sz < max)
		sz <<= 1;
	return sz;
}

/* Targets and sampling (groups 1 and 2). */
error_t opts_parse_target_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	struct bpfprof_opts *o = ctx->o;
	uint64_t v = 0;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (parse_pids(o, arg))
			return opts_usage_error(
				state, "invalid PID list '%s' (decimal PIDs separated by commas)",
				arg);
		break;
	case 'd':
		if (opts_parse_duration(arg, 1000000, 365 * 86400 * 1000000000ull, &o->duration_ns))
			return opts_usage_error(
				state,
				"invalid duration '%s' (seconds, e.g. 30 or 0.5, or with an "
				"m or h suffix; 1 ms to 365 days)",
				arg);
		break;
	case 'F':
		if (opts_parse_uint(arg, 1, 100000, &o->freq_hz))
			return opts_usage_error(state, "invalid frequency '%s' (1-100000 Hz)", arg);
		break;
	case 'e':
		if (!perf_event__known(arg))
			return opts_usage_error(state, "unknown event '%s' (cpu-clock or cycles)",
						arg);
		o->event = arg;
		break;
	case OPT_OFF_CPU:
		o->off_cpu = true;
		break;
	case OPT_ON_CPU:
		o->on_cpu = true;
		ctx->off_cpu_opt = true;
		break;
	case OPT_WAKERS:
		o->wakers = true;
		o->off_cpu = true;
		break;
	case OPT_OFF_CPU_MIN_US:
		if (opts_parse_uint(arg, 1, 10000000, &v))
			return opts_usage_error(state, "invalid --off-cpu-min-us '%s' (1-10000000)",
						arg);
		o->off_cpu_min_ns = v * 1000;
		ctx->off_cpu_opt = true;
		ctx->off_cpu_min_set = true;
		break;
	case OPT_OFF_CPU_MAX_RATE:
		if (opts_parse_uint(arg, 1, 1000000, &v))
			return opts_usage_error(state,
						"invalid --off-cpu-max-rate '%s' (1-1000000)", arg);
		o->off_cpu_max_rate = v;
		ctx->off_cpu_opt = true;
		ctx->off_cpu_rate_set = true;
		break;
	case OPT_STACK_SIZE:
		if (opts_parse_size(arg, 512, BPFPROF_STACK_SZ_MAX, &v))
			return opts_usage_error(
				state, "invalid stack size '%s' (512-%u bytes, K suffix allowed)",
				arg, BPFPROF_STACK_SZ_MAX);
		o->copy_size = (v + 7) & ~7ull;
		break;
	case OPT_MAX_STACK_SIZE:
		if (opts_parse_size(arg, 512, BPFPROF_STACK_SZ_MAX, &v))
			return opts_usage_error(
				state, "invalid stack size '%s' (512-%u bytes, K suffix allowed)",
				arg, BPFPROF_STACK_SZ_MAX);
		o->max_copy_size = (v + 7) & ~7ull;
		break;
	case OPT_MAX_FRAMES:
		if (opts_parse_uint(arg, 1, MAX_FRAMES_MAX, &v))
			return opts_usage_error(state, "invalid frame count '%s' (1-%u)", arg,
						MAX_FRAMES_MAX);
		o->max_frames = v;
		break;
	case OPT_RINGBUF_SIZE:
		if (opts_parse_size(arg, 256 * 1024, 1u << 30, &v) || (v & (v - 1)))
			return opts_usage_error(
				state,
				"invalid ringbuf size '%s' (a power of 2, 256K-1G, K/M/G "
				"suffix allowed)",
				arg);
		o->ringbuf_sz = v;
		break;
	case OPT_DRAIN_MS:
		if (opts_parse_uint(arg, 1, 1000, &v))
			return opts_usage_error(state, "invalid drain interval '%s' (1-1000 ms)",
						arg);
		o->drain_ms = v;
		break;
	case OPT_REALTIME:
		if (opts_parse_uint(arg, 1, 99, &v))
			return opts_usage_error(state, "invalid realtime priority '%s' (1-99)",
						arg);
		o->realtime_prio = v;
		break;
	case OPT_EXEC:
		o->exec = true;
		break;
	case OPT_STRICT:
		o->strict = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Output (group 3), -h. */
error_t opts_parse_output_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	struct bpfprof_opts *o = ctx->o;
	uint64_t v = 0;

	/* --no-<name>: runtime_table[key - OPT_NO_RUNTIME] off (opts.c makes the options). */
	if (key >= OPT_NO_RUNTIME && key < OPT_NO_RUNTIME + RUNTIME_OPTIONS_MAX) {
		o->runtimes_off |= 1ull << (key - OPT_NO_RUNTIME);
		return 0;
	}
	switch (key) {
	case OPT_TOP:
		if (opts_parse_uint(arg, 0, 1000, &v))
			return opts_usage_error(state, "invalid count '%s' (0-1000)", arg);
		o->top = v;
		break;
	case 'o':
		if (o->outputs_cnt == BPFPROF_MAX_OUTPUTS)
			return opts_usage_error(state, "-o given more than %d times",
						BPFPROF_MAX_OUTPUTS);
		if (!*arg)
			return opts_usage_error(state, "-o needs a file name ('-' for stdout)");
		o->outputs[o->outputs_cnt++] = arg;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "folded"))
			o->format = OUTPUT_FOLDED;
		else if (!strcmp(arg, "pprof"))
			o->format = OUTPUT_PPROF;
		else if (!strcmp(arg, "svg"))
			o->format = OUTPUT_SVG;
		else
			return opts_usage_error(state, "unknown format '%s' (folded, pprof or svg)",
						arg);
		ctx->format_set = true;
		break;
	case OPT_TITLE:
		o->title = arg;
		break;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		break;
	case OPT_FULL_NAMES:
		o->full_names = true;
		break;
	case OPT_NO_INLINE:
		o->no_inline = true;
		break;
	case OPT_INLINE:
		o->no_inline = false;
		break;
	case OPT_UNWINDER:
		if (!strcmp(arg, "dwfl"))
			o->unwinder = UNWIND_MODE_DWFL;
		else if (!strcmp(arg, "fast"))
			o->unwinder = UNWIND_MODE_FAST;
		else if (!strcmp(arg, "diff"))
			o->unwinder = UNWIND_MODE_DIFF;
		else
			return opts_usage_error(state, "unknown unwinder '%s' (fast, dwfl or diff)",
						arg);
		o->unwinder_set = true;
		break;
	case OPT_RAW_CAPTURE:
		if (!*arg)
			return opts_usage_error(state, "--raw-capture needs a file name");
		o->raw_capture = arg;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_STATS:
		o->stats = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case 'h':
		argp_state_help(state, state->out_stream, ARGP_HELP_STD_HELP);
		return opts_parse_done(ctx, BPFPROF_EXIT_OK);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* An operand: report's FILE, or the command and its arguments. */
error_t opts_parse_operand(char *arg, struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	struct bpfprof_opts *o = ctx->o;

	if (o->agent)
		return opts_usage_error(state, "agent takes no operands ('%s')", arg);
	if (ctx->sub == SUB_REPORT) {
		if (o->report)
			return opts_usage_error(state, "one FILE only ('%s' is a second)", arg);
		o->report = arg;
		return 0;
	}
	/* "bpfprof -q report x": a subcommand comes first, or it is a program after --. */
	if (state->next < 2 || strcmp(state->argv[state->next - 2], "--"))
		for (size_t i = 0; i < SUBCOMMANDS_CNT; i++)
			if (!strcmp(arg, opts_subcommands[i].name))
				return opts_usage_error(
					state,
					"'%s' is a subcommand: bpfprof %s [OPTION...]"
					" (a program named %s runs after --)",
					arg, arg, arg);
	/* The first operand starts the command: the rest are its arguments, not ours. */
	o->cmd = &state->argv[state->next - 1];
	state->next = state->argc;
	return 0;
}

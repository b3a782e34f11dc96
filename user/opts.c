// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* opts.c: argp options for bpfprof. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/record.h"
#include "opts.h"
#include "perf_event.h"
#include "unwind.h"

const char *argp_program_version = "bpfprof " BPFPROF_VERSION;
const char *argp_program_bug_address = "<https://github.com/bpfprof/bpfprof/issues>";

static const char doc[] =
"bpfprof: sample CPU stacks (kernel and user, DWARF-unwound) with eBPF.\n"
"\n"
"Writes folded stacks (\"comm;root;...;leaf COUNT\", kernel frames suffixed\n"
"_[k], inlined _[i], JIT _[j]), a gzipped pprof profile (go tool pprof,\n"
"Pyroscope, speedscope) or an interactive SVG flame graph, to stdout or -o FILE\n"
"(the format follows the file name: .pb.gz or .pprof, .svg, else folded), and\n"
"a summary to stderr.\n"
"\n"
"EXAMPLES:\n"
"  bpfprof -- make -j2          # a build and every process it starts\n"
"  bpfprof -F 999 -o out.folded -- python3 app.py\n"
"  bpfprof -o app.svg -- ./app   # flame graph; open it in a browser\n"
"  bpfprof -o app.pb.gz -- ./app; go tool pprof -http=: app.pb.gz\n"
"  bpfprof -p 1234 -d 30 > out.folded   # all threads of 1234 for 30 s\n"
"  bpfprof -p 1234,5678         # until Ctrl-C or both exit\n"
"  bpfprof -a -d 10 -o all.folded       # every process and kernel thread\n"
"  bpfprof --raw-capture run.raw -- ./app; bpfprof report run.raw -o app.folded\n"
"\n"
"EXIT STATUS: with -- CMD, CMD's status (128+N if signal N killed it, 127 if\n"
"it could not be started); else 0 on success, 1 on errors (privileges,\n"
"unknown PID, unsupported event), 64 on usage errors.\n"
"\n"
"REQUIRES: root, or CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN too for deleted\n"
"binaries), and a kernel with BTF (/sys/kernel/btf/vmlinux).\n"
"\n"
"OPTIONS:";

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
	OPT_UNWINDER,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "pid", 'p', "PID[,PID...]", 0, "Profile running processes (all their threads)", 1 },
	{ "all-cpus", 'a', NULL, 0, "Profile every process and kernel thread (not bpfprof)", 1 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: when the targets exit "
	  "or on Ctrl-C)", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU (default 99, 1-100000)", 2 },
	{ "event", 'e', "EVENT", 0, "cpu-clock (default, software timer) or cycles (needs a "
	  "hardware PMU)", 2 },
	{ "stack-size", OPT_STACK_SIZE, "BYTES", 0, "User stack bytes first copied per sample of "
	  "a process (default 16K, 512-128K): raised while unwinds run out of stack, lowered "
	  "when stacks stay shallow", 2 },
	{ "max-stack-size", OPT_MAX_STACK_SIZE, "BYTES", 0, "Largest stack copy per sample "
	  "(default 128K, 512-128K; K suffix allowed)", 2 },
	{ "max-frames", OPT_MAX_FRAMES, "N", 0, "User frames unwound per sample (default 256)", 2 },
	{ "ringbuf-size", OPT_RINGBUF_SIZE, "BYTES", 0, "BPF ringbuf size (default 16M; power "
	  "of 2; K/M suffix allowed)", 2 },
	{ "drain-interval", OPT_DRAIN_MS, "MS", 0, "Ringbuf drain period (default 10)", 2 },
	{ "realtime", OPT_REALTIME, "PRIO", 0, "Run bpfprof with SCHED_FIFO priority PRIO (1-99), "
	  "as perf record -r: keeps up with the ringbuf when targets saturate every CPU", 2 },
	{ NULL, 0, NULL, 0, "Output:", 3 },
	{ "unwinder", OPT_UNWINDER, "NAME", 0, "fast (default: per-binary CFI tables, libdwfl "
	  "for what they cannot express), dwfl (libdwfl only) or diff (both, compared: exit 1 "
	  "on a difference)", 2 },
	{ "output", 'o', "FILE", 0, "Write the profile to FILE (default stdout), atomically", 3 },
	{ "format", OPT_FORMAT, "FMT", 0, "folded, pprof or svg (default: from -o's name: "
	  ".pb.gz/.pprof pprof, .svg svg, else folded)", 3 },
	{ "title", OPT_TITLE, "TEXT", 0, "Title of the SVG flame graph", 3 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "Keep C++ and Rust symbol names mangled", 3 },
	{ "top", OPT_TOP, "N", 0, "Functions listed in the summary (default 10, 0 = none)", 3 },
	{ "raw-capture", OPT_RAW_CAPTURE, "FILE", 0, "Also write every record received (samples "
	  "WITH THEIR STACK MEMORY, mode 0600) to FILE, for 'bpfprof report FILE'", 3 },
	{ "stats", OPT_STATS, NULL, 0, "Unwind quality per process and module: samples, share "
	  "unwound to the root, why unwinding stopped and where; files and Dwfls open", 3 },
	{ "quiet", 'q', NULL, 0, "No progress or summary on stderr", 3 },
	{ "verbose", 'v', NULL, 0, "Debug messages (twice: libbpf's too)", 3 },
	{},
};

/* A number in [lo, hi] with an optional K/M suffix (when allow_suffix). */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, bool allow_suffix, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (allow_suffix && (*end == 'K' || *end == 'k')) {
		v *= 1024;
		end++;
	} else if (allow_suffix && (*end == 'M' || *end == 'm')) {
		v *= 1024 * 1024;
		end++;
	}
	if (*end || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_pids(struct bpfprof_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint32_t *pids;
	uint64_t v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		err = parse_u64(tok, 1, INT_MAX, false, &v);
		if (err)
			break;
		pids = realloc(o->pids, (o->pids_cnt + 1) * sizeof(*pids));
		if (!pids) {
			err = -ENOMEM;
			break;
		}
		o->pids = pids;
		o->pids[o->pids_cnt++] = v;
	}
	if (!err && !o->pids_cnt)
		err = -EINVAL;
	free(copy);
	return err;
}

static bool format_set;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static enum output_format format_from_name(const char *path)
{
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof") || ends_with(path, ".pb"))
		return OUTPUT_PPROF;
	if (ends_with(path, ".svg"))
		return OUTPUT_SVG;
	return OUTPUT_FOLDED;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct bpfprof_opts *o = state->input;
	uint64_t v;
	double d;
	char *end;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (parse_pids(o, arg))
			argp_error(state, "invalid PID list '%s'", arg);
		break;
	case 'd':
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || d <= 0 || d > 365 * 86400.0)
			argp_error(state, "invalid duration '%s' (seconds > 0)", arg);
		o->duration_ns = d * 1e9;
		break;
	case 'F':
		if (parse_u64(arg, 1, 100000, false, &o->freq_hz))
			argp_error(state, "invalid frequency '%s' (1-100000 Hz)", arg);
		break;
	case 'e':
		if (!perf_event__known(arg))
			argp_error(state, "unknown event '%s' (cpu-clock or cycles)", arg);
		o->event = arg;
		break;
	case OPT_STACK_SIZE:
		if (parse_u64(arg, 512, BPFPROF_STACK_SZ_MAX, true, &v))
			argp_error(state, "invalid stack size '%s' (512-%u bytes)", arg,
				   BPFPROF_STACK_SZ_MAX);
		o->stack_sz = (v + 7) & ~7ull;
		break;
	case OPT_MAX_STACK_SIZE:
		if (parse_u64(arg, 512, BPFPROF_STACK_SZ_MAX, true, &v))
			argp_error(state, "invalid stack size '%s' (512-%u bytes)", arg,
				   BPFPROF_STACK_SZ_MAX);
		o->max_stack_sz = (v + 7) & ~7ull;
		break;
	case OPT_MAX_FRAMES:
		if (parse_u64(arg, 1, 4096, false, &v))
			argp_error(state, "invalid frame count '%s' (1-4096)", arg);
		o->max_frames = v;
		break;
	case OPT_RINGBUF_SIZE:
		if (parse_u64(arg, 256 * 1024, 1u << 30, true, &v) || (v & (v - 1)))
			argp_error(state, "invalid ringbuf size '%s' (a power of 2, 256K-1G)", arg);
		o->ringbuf_sz = v;
		break;
	case OPT_DRAIN_MS:
		if (parse_u64(arg, 1, 1000, false, &v))
			argp_error(state, "invalid drain interval '%s' (1-1000 ms)", arg);
		o->drain_ms = v;
		break;
	case OPT_REALTIME:
		if (parse_u64(arg, 1, 99, false, &v))
			argp_error(state, "invalid realtime priority '%s' (1-99)", arg);
		o->realtime_prio = v;
		break;
	case OPT_TOP:
		if (parse_u64(arg, 0, 1000, false, &v))
			argp_error(state, "invalid count '%s' (0-1000)", arg);
		o->top = v;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "folded"))
			o->format = OUTPUT_FOLDED;
		else if (!strcmp(arg, "pprof"))
			o->format = OUTPUT_PPROF;
		else if (!strcmp(arg, "svg"))
			o->format = OUTPUT_SVG;
		else
			argp_error(state, "unknown format '%s' (folded, pprof or svg)", arg);
		format_set = true;
		break;
	case OPT_TITLE:
		o->title = arg;
		break;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		break;
	case OPT_UNWINDER:
		if (!strcmp(arg, "dwfl"))
			o->unwinder = UNWIND_MODE_DWFL;
		else if (!strcmp(arg, "fast"))
			o->unwinder = UNWIND_MODE_FAST;
		else if (!strcmp(arg, "diff"))
			o->unwinder = UNWIND_MODE_DIFF;
		else
			argp_error(state, "unknown unwinder '%s' (fast, dwfl or diff)", arg);
		o->unwinder_set = true;
		break;
	case OPT_RAW_CAPTURE:
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
	case ARGP_KEY_ARG:
		if (o->report)
			argp_error(state, "report takes one FILE");
		/* The first operand starts the command: the rest are its arguments, not ours. */
		o->cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!format_set && o->output)
			o->format = format_from_name(o->output);
		if (o->report) {
			if (o->pids_cnt || o->all || o->raw_capture)
				argp_error(state, "report replays a capture: no -p, -a or --raw-capture");
			break;
		}
		if (!o->cmd && !o->pids_cnt && !o->all)
			argp_error(state, "nothing to profile: give -p PID, -a or -- CMD");
		if (!!o->cmd + !!o->pids_cnt + o->all > 1)
			argp_error(state, "-p, -a and a command exclude each other");
		if (o->stack_sz > o->max_stack_sz)
			o->stack_sz = o->max_stack_sz;
		if ((uint64_t)o->max_stack_sz + sizeof(struct sample_record) > o->ringbuf_sz / 4)
			argp_error(state, "--max-stack-size %u needs a ringbuf of at least %zu bytes",
				   o->max_stack_sz,
				   4 * (o->max_stack_sz + sizeof(struct sample_record)));
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void opts__parse(int argc, char **argv, struct bpfprof_opts *o)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_opt,
		.args_doc = "-- CMD [ARGS...]\n-p PID[,PID...] [-d SECONDS]\n-a [-d SECONDS]\nreport FILE",
		.doc = doc,
	};

	memset(o, 0, sizeof(*o));
	o->freq_hz = 99;
	o->event = "cpu-clock";
	o->stack_sz = 16384;
	o->max_stack_sz = BPFPROF_STACK_SZ_MAX;
	o->max_frames = 256;
	o->ringbuf_sz = 16 * 1024 * 1024;
	o->drain_ms = 10;
	o->top = 10;
	argp_err_exit_status = BPFPROF_EXIT_USAGE;
	if (argc >= 2 && !strcmp(argv[1], "report")) {
		/* bpfprof report FILE [OPTIONS]: argp sees "bpfprof [OPTIONS]" with FILE taken. */
		if (argc < 3 || argv[2][0] == '-') {
			fprintf(stderr, "bpfprof: report needs a FILE written by --raw-capture\n");
			exit(BPFPROF_EXIT_USAGE);
		}
		o->report = argv[2];
		argv[2] = argv[0];
		argp_parse(&argp, argc - 2, argv + 2, ARGP_IN_ORDER, NULL, o);
		return;
	}
	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, o);
}

void opts__free(struct bpfprof_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* opts.c: argp options for bpfprof: the table, numbers, help, the subcommands and the checks at
 * the end (common); what each option sets: opts_record.c (targets, sampling, output),
 * opts_agent.c (the agent, its --config file and environment). */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf/record.h"
#include "cmd/opts.h"
#include "cmd/opts_parse.h"
#include "runtime/runtime.h"
#include "sampling/perf_event.h"
#include "unwind/unwind.h"
#include "util/util.h"

const char *argp_program_version = "bpfprof " BPFPROF_VERSION;
const char *argp_program_bug_address = "<https://github.com/bpfprof/bpfprof/issues>";

static const char doc[] =
	"bpfprof: sample CPU stacks (kernel and user, DWARF-unwound) with eBPF.\n"
	"\n"
	"Writes folded stacks (\"comm;root;...;leaf COUNT\", kernel frames suffixed\n"
	"_[k], inlined _[i], JIT _[j]), a gzipped pprof profile (go tool pprof,\n"
	"Pyroscope, speedscope) or an interactive SVG flame graph to -o FILE (the\n"
	"format follows the name: .pb.gz, .pb, .pprof, .pprof.gz pprof, .svg flame\n"
	"graph, else folded), by default to stdout, or with -- CMD to bpfprof.folded\n"
	"(CMD's own output goes to stdout), and a summary to stderr.\n"
	"\n"
	"EXIT STATUS: with -- CMD, CMD's status (128+N if signal N killed it; 127 if\n"
	"it was not found, 126 if not executable: outputs are then left as they\n"
	"were); else 0 on success, 1 on errors (privileges, unknown PID,\n"
	"unsupported event), 64 on usage errors.\n"
	"\n"
	"REQUIRES: a kernel with BTF (/sys/kernel/btf/vmlinux), and root or CAP_BPF\n"
	"and CAP_PERFMON. These two alone copy the stack memory of every process\n"
	"(root's too): never give them to a binary other users can run. Naming the\n"
	"frames of other users' processes and of root daemons also needs\n"
	"CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH; deleted binaries,\n"
	"CAP_CHECKPOINT_RESTORE; kernel symbols, CAP_SYSLOG (README, docs/deploy.md).\n"
	"\n"
	"SUBCOMMANDS (bpfprof SUBCOMMAND [OPTION...], each with its own --help):\n"
	"  record ...    the same as none, as perf users type it: bpfprof record -- CMD\n"
	"  report FILE   replay a --raw-capture FILE into any output format\n"
	"  check         what this kernel allows and what falls back\n"
	"  agent         profile every process continuously, export to Pyroscope or a\n"
	"                directory\n"
	"A program named like a subcommand runs after --: bpfprof -- report.\n"
	"\n"
	"Examples:\n"
	"  bpfprof -- make -j2             a build and every process it starts,\n"
	"                                  into bpfprof.folded (no -o with -- CMD)\n"
	"  bpfprof -F 999 -o out.folded -- python3 app.py\n"
	"                                  999 samples a second per CPU\n"
	"  bpfprof -o app.svg -- ./app     flame graph: open it in a browser\n"
	"  bpfprof -o app.pb.gz -- ./app   pprof: go tool pprof -http=: app.pb.gz\n"
	"  bpfprof -p 1234 -d 30 > out.folded\n"
	"                                  all threads of 1234 for 30 s\n"
	"  bpfprof -p 1234,5678            until Ctrl-C or both exit\n"
	"  bpfprof -a -d 10 -o all.folded  every process and kernel thread\n"
	"  bpfprof --raw-capture r.raw -- ./app\n"
	"                                  also keep every record (stack memory!)\n"
	"  bpfprof report r.raw -o app.svg\n"
	"                                  replay them, into any format\n"
	"  bpfprof check                   can bpfprof run here? what falls back?\n"
	"\n"
	"Options:";

/* The opts_subcommands come first ("bpfprof report FILE [OPTION...]"): the doc lists them. */
static const char main_args_doc[] =
	"-- CMD [ARGS...]\n-p PID[,PID...] [-d SECONDS]\n-a [-d SECONDS]";

static const char report_doc[] =
	"bpfprof report: replay a raw capture (written by bpfprof --raw-capture FILE)\n"
	"through the same unwinding, symbolization and outputs as a live run: another\n"
	"output format (-o, --format), another unwinder (--unwinder), --stats. -p, -a\n"
	"and --raw-capture do not apply.\n"
	"\n"
	"Options:";

static const char check_doc[] =
	"bpfprof check: print what this kernel allows (BTF, ringbuf, BPF features,\n"
	"privileges, perf_event_paranoid) and what falls back, then load and attach the\n"
	"programs as a run would, for event -e at -F Hz. Exit 0 if bpfprof can run\n"
	"here, else 1.\n"
	"\n"
	"Options:";

static const char agent_doc[] =
	"bpfprof agent: profile every process continuously (19 Hz) and every --interval\n"
	"export a gzipped pprof profile per executable per container to Pyroscope\n"
	"(--pyroscope-url) and/or a directory (--output-dir). Every option is also an\n"
	"environment variable BPFPROF_<OPTION> and a line 'option = value' of --config\n"
	"FILE: the command line wins over the environment, which wins over the file.\n"
	"SIGHUP rereads them; SIGTERM sends the interval under way and exits.\n"
	"\n"
	"Options:";

const struct subcommand opts_subcommands[SUBCOMMANDS_CNT] = {
	{ "record", SUB_RECORD, main_args_doc, doc },
	{ "report", SUB_REPORT, "FILE", report_doc },
	{ "check", SUB_CHECK, NULL, check_doc },
	{ "agent", SUB_AGENT, "[--pyroscope-url URL] [--output-dir DIR]", agent_doc },
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Profile running processes: all their threads and "
	  "descendants, those running and those they start; stops when all have exited "
	  "(decimal PIDs, a PID given twice counts once)",
	  1 },
	{ "all-cpus", 'a', NULL, 0, "Profile every process and kernel thread (not bpfprof)", 1 },
	{ "duration", 'd', "SECONDS", 0,
	  "Stop after SECONDS (0.001 to 1 year; m/h suffix "
	  "allowed; default: when the targets exit or on Ctrl-C)",
	  1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU (default 99, 1-100000)", 2 },
	{ "event", 'e', "EVENT", 0,
	  "cpu-clock (default, software timer) or cycles (needs a "
	  "hardware PMU)",
	  2 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0,
	  "Profile the time target threads spend blocked (off CPU, switched out in a system "
	  "call: sleeping, waiting for a lock, a pipe, I/O) instead of CPU samples, with the "
	  "stack where they blocked; folded and SVG count microseconds, pprof has "
	  "off_cpu/nanoseconds and switches/count. Preemption is not counted. Linux 5.17+",
	  2 },
	{ "off-cpu-min-us", OPT_OFF_CPU_MIN_US, "US", 0,
	  "With --off-cpu: shorter blocked periods are not counted (default 5; agent 1000; "
	  "1-10000000)",
	  2 },
	{ "off-cpu-max-rate", OPT_OFF_CPU_MAX_RATE, "N", 0,
	  "With --off-cpu: blocked stacks (and --wakers' waker stacks: one budget) written per "
	  "second per CPU, at most (default 1000; agent 200; 1-1000000); a thread's blocked time "
	  "not written goes with its next stack that is",
	  2 },
	{ "wakers", OPT_WAKERS, NULL, 0,
	  "--off-cpu, and for each blocked stack the stack of the thread that woke it, as bcc's "
	  "offwaketime shows them: the blocked stack, a \"--\" frame, the waker's stack from its "
	  "leaf to its root and its name (only its kernel stack when it is not a target)",
	  2 },
	{ "on-cpu", OPT_ON_CPU, NULL, 0,
	  "With --off-cpu: sample CPU time too (-F, -e), in one profile: pprof has both sample "
	  "types; folded and SVG count microseconds both ways (a sample its period, 1/F s), "
	  "the off-CPU stacks under an [off-cpu] frame after the thread name",
	  2 },
	{ "stack-size", OPT_STACK_SIZE, "BYTES", 0,
	  "User stack bytes first copied per sample of "
	  "a process (default 16K, 512-128K): raised while unwinds run out of stack, lowered "
	  "when stacks stay shallow",
	  2 },
	{ "max-stack-size", OPT_MAX_STACK_SIZE, "BYTES", 0,
	  "Largest stack copy per sample "
	  "(default 128K, 512-128K; K suffix allowed)",
	  2 },
	{ "max-frames", OPT_MAX_FRAMES, "N", 0,
	  "User frames unwound per sample (default 16384: twice what the largest stack copy "
	  "can hold, as a Go stack's frame-pointer chain goes past it)",
	  2 },
	{ "ringbuf-size", OPT_RINGBUF_SIZE, "BYTES", 0,
	  "BPF ringbuf size (default: 1 s of "
	  "samples of every CPU, 1M-16M; agent 0.25 s, up to 64M; a power of 2; K/M suffix allowed)",
	  2 },
	{ "drain-interval", OPT_DRAIN_MS, "MS", 0,
	  "Ringbuf drain period (default 10, agent 250; "
	  "a ringbuf a quarter full is drained at once)",
	  2 },
	{ "exec", OPT_EXEC, NULL, 0,
	  "With -- CMD: CMD runs in bpfprof's own process (its PID "
	  "stays the one the caller started, its exit status is its own); a detached process "
	  "profiles it and writes -o or exports as the agent does (--pyroscope-url, "
	  "--output-dir). CMD runs unprofiled if profiling cannot start",
	  1 },
	{ "strict", OPT_STRICT, NULL, 0, "With --exec: exit 1 instead of running CMD unprofiled",
	  1 },
	{ "realtime", OPT_REALTIME, "PRIO", 0,
	  "Run bpfprof with SCHED_FIFO priority PRIO (1-99), "
	  "as perf record -r: keeps up with the ringbuf when targets saturate every CPU",
	  2 },
	{ NULL, 0, NULL, 0, "Output:", 3 },
	{ "unwinder", OPT_UNWINDER, "NAME", 0,
	  "fast (default: per-binary CFI tables, libdwfl "
	  "for what they cannot express), dwfl (libdwfl only) or diff (both, compared: exit 1 "
	  "on a difference)",
	  2 },
	{ "output", 'o', "FILE", 0,
	  "Write the profile to FILE ('-': stdout; default stdout, "
	  "with -- CMD bpfprof.folded), created at the start, written at the end; repeat for "
	  "several formats of one run (-o a.svg -o a.pb.gz)",
	  3 },
	{ "format", OPT_FORMAT, "FMT", 0,
	  "folded, pprof or svg (default: from -o's name: "
	  ".pb.gz/.pb/.pprof/.pprof.gz pprof, .svg svg, else folded)",
	  3 },
	{ "title", OPT_TITLE, "TEXT", 0, "Title of the SVG flame graph", 3 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "Keep C++ and Rust symbol names mangled", 3 },
	{ "full-names", OPT_FULL_NAMES, NULL, 0,
	  "Demangled C++ names with their parameter lists, "
	  "qualifiers and template return types (default: ns::Class<T>::method, as perf shows "
	  "them; pprof keeps the mangled name in Function.system_name either way)",
	  3 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0,
	  "Name frames from symbol tables only: no inline "
	  "frames or source lines from DWARF (the agent's default: a large library's DWARF costs "
	  "tens of MB and a CPU-second to load)",
	  3 },
	/* The runtimes' --no-<name> (opts_options()): this entry's place and group. */
	{ "no-RUNTIME", OPT_NO_RUNTIME, NULL, OPTION_HIDDEN, NULL, 3 },
	{ "inline", OPT_INLINE, NULL, 0,
	  "Inline frames and source lines from DWARF (default, "
	  "but for the agent)",
	  3 },
	{ "top", OPT_TOP, "N", 0, "Functions listed in the summary (default 10, 0 = none)", 3 },
	{ "raw-capture", OPT_RAW_CAPTURE, "FILE", 0,
	  "Also write every record received (samples "
	  "WITH THEIR STACK MEMORY, mode 0600) to FILE, for 'bpfprof report FILE'",
	  3 },
	{ "stats", OPT_STATS, NULL, 0,
	  "Unwind quality per process and module: samples, share "
	  "unwound to the root, why unwinding stopped and where; files and Dwfls open",
	  3 },
	{ "quiet", 'q', NULL, 0, "No progress or summary on stderr", 3 },
	{ "verbose", 'v', NULL, 0, "Debug messages (twice: libbpf's too)", 3 },
	{ NULL, 0, NULL, 0,
	  "Agent (bpfprof agent; each also as environment variable "
	  "BPFPROF_<OPTION>, e.g. BPFPROF_PYROSCOPE_URL, or a line 'option = value' in --config):",
	  4 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0,
	  "Profile length (default 60, 1 s to 1 day; "
	  "m/h suffix allowed)",
	  4 },
	{ "group-by", OPT_GROUP_BY, "exe|pid", 0,
	  "One profile per executable per container "
	  "(default) or per process",
	  4 },
	{ "service-name-from", OPT_SERVICE_NAME_FROM, "RULES", 0,
	  "Where service_name comes "
	  "from, first that applies: container, unit (systemd), comm (default container,unit,comm)",
	  4 },
	{ "output-dir", OPT_OUTPUT_DIR, "DIR", 0,
	  "Write each profile as a gzipped pprof file in DIR", 4 },
	{ "output-dir-max-bytes", OPT_OUTPUT_DIR_MAX, "BYTES", 0,
	  "Size cap of --output-dir, "
	  "oldest files deleted first (default 1G; K/M/G suffix allowed)",
	  4 },
	{ "pyroscope-url", OPT_PYROSCOPE_URL, "URL", 0,
	  "Send profiles to Pyroscope at URL "
	  "(POST URL/ingest, pprof)",
	  4 },
	{ "pyroscope-api", OPT_PYROSCOPE_API, "ingest|push", 0,
	  "Pyroscope's API: /ingest "
	  "(default; labels in the name parameter) or push (/push.v1.PusherService/Push, "
	  "Pyroscope >= 1.0)",
	  4 },
	{ "basic-auth-file", OPT_BASIC_AUTH_FILE, "FILE", 0,
	  "HTTP Basic credentials, "
	  "'user:password'",
	  4 },
	{ "bearer-token-file", OPT_BEARER_TOKEN_FILE, "FILE", 0, "HTTP Bearer token", 4 },
	{ "tenant-id", OPT_TENANT_ID, "ID", 0, "X-Scope-OrgID of a multi-tenant Pyroscope", 4 },
	{ "header", OPT_HEADER, "'K: V'", 0, "Extra HTTP header (repeatable)", 4 },
	{ "queue-size", OPT_QUEUE_SIZE, "N", 0,
	  "Profiles held for delivery while the backend is "
	  "down (default 64; then the oldest are dropped and counted)",
	  4 },
	{ "kubernetes", OPT_KUBERNETES, NULL, 0,
	  "Pod, namespace and container labels from the "
	  "Kubernetes API (in-cluster ServiceAccount)",
	  4 },
	{ "kubernetes-api", OPT_KUBERNETES_API, "URL", 0,
	  "The API server instead of the "
	  "in-cluster one",
	  4 },
	{ "metrics-addr", OPT_METRICS_ADDR, "HOST:PORT", 0,
	  "Prometheus /metrics and /healthz "
	  "(default 127.0.0.1:9464; 'off' for none)",
	  4 },
	{ "log-format", OPT_LOG_FORMAT, "text|json", 0, "Log lines as text (default) or JSON", 4 },
	{ "config", OPT_CONFIG, "FILE", 0,
	  "Read options from FILE ('option = value' lines, "
	  "# comments)",
	  4 },
	{ NULL, 'h', NULL, 0, "Give this help list (as --help)", -1 },
	{},
};

/*
 * options[] with its OPT_NO_RUNTIME entry replaced by a --no-<name> for each runtime of the
 * table with an option_help, in table order (key OPT_NO_RUNTIME + its index, the entry's
 * group): built once, at the first parse, and kept (the agent parses again on SIGHUP).
 */
static struct argp_option all_options[ARRAY_SIZE(options) - 1 + RUNTIME_OPTIONS_MAX];
static char runtime_option_names[RUNTIME_OPTIONS_MAX][32];
static pthread_once_t all_options_once = PTHREAD_ONCE_INIT;

static void build_options(void)
{
	const struct argp_option *opt;
	struct argp_option *out = all_options;
	size_t i;

	for (opt = options; opt < options + ARRAY_SIZE(options); opt++) {
		if (opt->key != OPT_NO_RUNTIME) {
			*out++ = *opt;
			continue;
		}
		for (i = 0; i < runtime_cnt && i < RUNTIME_OPTIONS_MAX; i++) {
			const struct runtime_ops *ops = runtime_table[i];
			char *name = runtime_option_names[i];

			/* A name too long for its slot gets no option: test_opts catches it. */
			if (!ops || !ops->option_help ||
			    (size_t)snprintf(name, sizeof(runtime_option_names[i]), "no-%s",
					     ops->name) >= sizeof(runtime_option_names[i]))
				continue;
			*out++ = (struct argp_option){ .name = name,
						       .key = OPT_NO_RUNTIME + (int)i,
						       .doc = ops->option_help,
						       .group = opt->group };
		}
	}
}

/* bpfprof's options: options[] with the runtimes' (build_options()). */
static const struct argp_option *opts_options(void)
{
	pthread_once(&all_options_once, build_options);
	return all_options;
}

/*
 * Numbers of options, environment variables and --config lines. Each kind has one parser;
 * all take plain decimal digits only: no sign, space, "0x" or octal (010 is ten), no
 * "nan"/"inf", nothing after the number but the suffixes named. They return 0, -EINVAL for
 * a malformed number or -ERANGE for one outside [lo, hi] (overflow included).
 */

/* The decimal digits at the start of s as *v (at least one); *end after them. */
int opts_parse_digits(const char *s, uint64_t *v, const char **end)
{
	uint64_t n = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (n > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		n = n * 10 + (*s - '0');
	}
	*v = n;
	*end = s;
	return 0;
}

/* A count, frequency or priority in [lo, hi]. */
int opts_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int err = opts_parse_digits(s, &v, &end);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

/* A size in bytes in [lo, hi], with an optional binary K, M or G suffix (either case). */
int opts_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *end;
	unsigned int shift = 0;
	uint64_t v;
	int err = opts_parse_digits(s, &v, &end);

	if (err)
		return err;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	}
	if (shift)
		end++;
	if (*end)
		return -EINVAL;
	if (v > hi >> shift || v << shift < lo)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/*
 * A duration in [lo_ns, hi_ns] (lo_ns > 0): seconds with an optional decimal fraction
 * ("30", "0.5"), or minutes or hours with an "m" or "h" suffix ("s" is allowed too). Whole
 * nanoseconds: a fraction finer than 1 ns is dropped, so the range check sees the real value.
 */
int opts_parse_duration(const char *s, uint64_t lo_ns, uint64_t hi_ns, uint64_t *out_ns)
{
	uint64_t ip = 0, frac = 0, frac_den = 1, unit = 1000000000ull, ns;
	const char *p = s;
	int err;

	if (*p != '.') {
		err = opts_parse_digits(p, &ip, &p);
		if (err)
			return err;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p) && p == s + 1)
			return -EINVAL; /* "." alone */
		/* Past the 13th digit, even a fraction of an hour is below 1 ns. */
		for (; isdigit((unsigned char)*p); p++)
			if (frac_den < 10000000000000ull) {
				frac = frac * 10 + (*p - '0');
				frac_den *= 10;
			}
	}
	if (*p == 'h')
		unit *= 3600;
	else if (*p == 'm')
		unit *= 60;
	if (*p == 'h' || *p == 'm' || *p == 's')
		p++;
	if (*p)
		return -EINVAL;
	if (ip > hi_ns / unit)
		return -ERANGE;
	ns = ip * unit + (uint64_t)((unsigned __int128)frac * unit / frac_den);
	if (ns < lo_ns || ns > hi_ns)
		return -ERANGE;
	*out_ns = ns;
	return 0;
}

/* A usage error: "bpfprof: MESSAGE" and argp's "Try ... --help" line on stderr. Returns the
 * error that ends argp_parse() (ARGP_NO_EXIT: argp_error() returns). */
error_t opts_usage_error(struct argp_state *state, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ENOMEM;
	argp_error(state, "%s", msg);
	free(msg);
	return EINVAL;
}

/* Help or the version was printed: the parse ends, and bpfprof with status. */
error_t opts_parse_done(struct parse_ctx *ctx, int status)
{
	ctx->status = status;
	return ECANCELED;
}

/*
 * argp's own --help, --usage and --version (ARGP_NO_HELP leaves them out) as glibc defines
 * them (same options, groups and texts: the same --help), but ending the parse where glibc's
 * exit(0), which ARGP_NO_EXIT would let go on to the options after them.
 */
static const struct argp_option help_options[] = {
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", 0 },
	{ "program-name", OPT_PROGNAME, "NAME", OPTION_HIDDEN, "Set the program name", 0 },
	{ "HANG", OPT_HANG, "SECS", OPTION_ARG_OPTIONAL | OPTION_HIDDEN,
	  "Hang for SECS seconds (default 3600)", 0 },
	{},
};

static const struct argp_option version_options[] = {
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{},
};

static error_t parse_help_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	int secs;

	switch (key) {
	case '?':
		argp_state_help(state, state->out_stream, ARGP_HELP_STD_HELP);
		return opts_parse_done(ctx, BPFPROF_EXIT_OK);
	case OPT_USAGE:
		argp_state_help(state, state->out_stream, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		return opts_parse_done(ctx, BPFPROF_EXIT_OK);
	case 'V':
		fprintf(state->out_stream, "%s\n", argp_program_version);
		return opts_parse_done(ctx, BPFPROF_EXIT_OK);
	case OPT_PROGNAME: /* the name in messages */
		program_invocation_name = arg;
		state->name = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
		program_invocation_short_name = (char *)state->name;
		return 0;
	case OPT_HANG: /* for a debugger to attach */
		for (secs = atoi(arg ? arg : "3600"); secs > 0; secs--)
			sleep(1);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp help_argp = { .options = help_options, .parser = parse_help_opt };
static const struct argp version_argp = { .options = version_options, .parser = parse_help_opt };

/* The root of the parse: bpfprof's options, then argp's own; each gets the parse_ctx. */
static error_t parse_root(int key, char *arg, struct argp_state *state)
{
	if (key != ARGP_KEY_INIT)
		return ARGP_ERR_UNKNOWN;
	for (int i = 0; i < 3; i++)
		state->child_inputs[i] = state->input;
	return 0;
}

/* The end of the options: defaults that depend on others, and cross-option checks. */
static error_t parse_end(struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	struct bpfprof_opts *o = ctx->o;

	/* Every frame but the sampled one holds at least 16 bytes of stack (its return
	 * address, kept 16-byte aligned at calls by the psABI): a copy of the largest size holds
	 * 8192. A Go stack goes on past the copy (RECORD_FP_CHAIN): go/printer's recursions
	 * reach 14,000 frames; with 8192, 2.6% of gofmt's samples stopped at that depth. */
	if (!o->max_frames)
		o->max_frames = MAX_FRAMES_MAX;
	for (size_t i = 0; i < o->outputs_cnt; i++) {
		bool known;

		o->formats[i] = ctx->format_set ? o->format :
						  opts_format_from_name(o->outputs[i], &known);
		if (!ctx->format_set && !known)
			fprintf(stderr,
				"bpfprof: %s: extension unknown, writing folded stacks "
				"(.pb.gz or .pprof: pprof, .svg: flame graph; or --format)\n",
				o->outputs[i]);
	}
	if (ctx->off_cpu_opt && !o->off_cpu)
		return opts_usage_error(state,
					"--off-cpu-min-us, --off-cpu-max-rate and --on-cpu go with "
					"--off-cpu");
	if (o->off_cpu && o->exec)
		return opts_usage_error(state, "--off-cpu: not with --exec yet");
	/* The agent samples CPU always; its off-CPU profile stays within its budget: blocked
	 * periods of 1 ms or more, 200 stacks a second per CPU at most, unless told. */
	if (o->off_cpu && o->agent) {
		o->on_cpu = true;
		if (!ctx->off_cpu_min_set)
			o->off_cpu_min_ns = 1000000;
		if (!ctx->off_cpu_rate_set)
			o->off_cpu_max_rate = 200;
	}
	if (ctx->agent_opt && !o->agent && !o->exec)
		return opts_usage_error(state, "agent options need 'bpfprof agent' or --exec");
	if (o->exec && !o->cmd)
		return opts_usage_error(state, "--exec needs -- CMD");
	if (o->strict && !o->exec)
		return opts_usage_error(state, "--strict goes with --exec");
	if (o->exec && (o->ag.pyroscope_url || o->ag.output_dir) && !o->ag.interval_ns)
		o->ag.interval_ns = 60 * 1000000000ull;
	if (o->exec && !o->ag.service_name_from)
		o->ag.service_name_from = "container,unit,comm";
	if (o->exec && !o->ag.queue_size)
		o->ag.queue_size = 64;
	if (o->exec && !o->ag.output_dir_max)
		o->ag.output_dir_max = 1ull << 30;
	if (o->agent) {
		if (o->pids_cnt || o->cmd || o->raw_capture || o->outputs_cnt)
			return opts_usage_error(state,
						"agent profiles every process and exports: no -p, "
						"CMD, -o or --raw-capture");
		if (!o->ag.pyroscope_url && !o->ag.output_dir)
			return opts_usage_error(
				state, "agent: give --pyroscope-url URL or --output-dir DIR");
		o->all = true;
	}
	if (o->check) {
		if (o->pids_cnt || o->all || o->cmd || o->raw_capture || o->outputs_cnt)
			return opts_usage_error(state, "check takes -e, -F and -v only");
		return 0;
	}
	if (ctx->sub == SUB_REPORT) {
		if (!o->report)
			return opts_usage_error(state, "needs a FILE written by --raw-capture");
		if (o->pids_cnt || o->all || o->raw_capture)
			return opts_usage_error(
				state, "report replays a capture: no -p, -a or --raw-capture");
		return 0;
	}
	if (!o->cmd && !o->pids_cnt && !o->all)
		return opts_usage_error(state, "nothing to profile: give -p PID, -a or -- CMD");
	if (!!o->cmd + !!o->pids_cnt + o->all > 1)
		return opts_usage_error(state, "-p, -a and a command exclude each other");
	if (o->copy_size > o->max_copy_size)
		o->copy_size = o->max_copy_size;
	if (!o->ringbuf_sz)
		o->ringbuf_sz = opts_default_ringbuf_sz(o);
	if ((uint64_t)o->max_copy_size + sizeof(struct sample_record) > o->ringbuf_sz / 4)
		return opts_usage_error(state,
					"--max-stack-size %u needs a ringbuf of at least %zu bytes",
					o->max_copy_size,
					4 * (o->max_copy_size + sizeof(struct sample_record)));
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	error_t err;

	switch (key) {
	case ARGP_KEY_ARG:
		return opts_parse_operand(arg, state);
	case ARGP_KEY_END:
		return parse_end(state);
	}
	err = opts_parse_target_opt(key, arg, state);
	if (err == ARGP_ERR_UNKNOWN)
		err = opts_parse_output_opt(key, arg, state);
	if (err == ARGP_ERR_UNKNOWN)
		err = opts_parse_agent_opt(key, arg, state);
	return err;
}

/* Appends s (malloc'd, NULL after a failed allocation: reported, as is a full buffer). 0 or
 * BPFPROF_EXIT_ERROR. */
int opts_argv_add(struct argv_buf *b, char *s)
{
	size_t cap;
	char **v;

	if (!s)
		goto oom;
	if (b->cnt + 2 > b->cap) {
		cap = b->cap ? b->cap * 2 : 64;
		v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			goto oom;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->cnt++] = s;
	b->v[b->cnt] = NULL;
	return 0;
oom:
	free(s);
	fprintf(stderr, "bpfprof: build options: %s\n", strerror(ENOMEM));
	return BPFPROF_EXIT_ERROR;
}

static void argv_free(char **argv)
{
	char **a;

	for (a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

static void defaults(struct bpfprof_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq_hz = 99;
	o->event = "cpu-clock";
	o->copy_size = 16384;
	o->max_copy_size = BPFPROF_STACK_SZ_MAX;
	o->max_frames = 0; /* MAX_FRAMES_MAX unless given */
	o->off_cpu_min_ns = 5000;
	o->off_cpu_max_rate = 1000;
	o->ringbuf_sz = 0; /* opts_default_ringbuf_sz() once -F is known */
	o->drain_ms = 10;
	o->top = 10;
}

/*
 * "bpfprof SUB ARGS...": argp sees "bpfprof SUB" as the program's name (its usage and messages
 * say it), then ARGS (the agent's after its --config file's and environment's), in a copy that
 * lives as long as *o (o->cmd points in): o->argv_built. 0, or the exit status (reported).
 */
static int subcommand_argv(struct argp *argp, int argc, char **argv, struct parse_ctx *ctx,
			   int *argc_built)
{
	struct bpfprof_opts *o = ctx->o;
	struct argv_buf b = {};
	const char *base;
	char *name = NULL;
	size_t i;
	int j, ret;

	for (i = 0; opts_subcommands[i].id != ctx->sub; i++)
		;
	argp->args_doc = opts_subcommands[i].args_doc;
	argp->doc = opts_subcommands[i].doc;
	base = strrchr(argv[0], '/');
	ret = opts_argv_add(
		&b, asprintf(&name, "%s %s", base ? base + 1 : argv[0], argv[1]) < 0 ? NULL : name);
	if (ctx->sub == SUB_CHECK)
		o->check = true;
	if (!ret && ctx->sub == SUB_AGENT) {
		opts_agent_defaults(o);
		ret = opts_agent_args(argp, argc, argv, ctx, &b);
		o->ag.config = ctx->config_read;
	}
	for (j = 2; !ret && j < argc; j++)
		ret = opts_argv_add(&b, strdup(argv[j]));
	o->argv_built = b.v;
	*argc_built = b.cnt;
	return ret;
}

int opts__parse(int argc, char **argv, struct bpfprof_opts *o)
{
	struct argp argp = {
		.options = opts_options(),
		.parser = parse_opt,
		.args_doc = main_args_doc,
		.doc = doc,
	};
	struct argp_child children[] = { { &argp }, { &help_argp }, { &version_argp }, {} };
	struct argp root = { .parser = parse_root, .children = children };
	struct parse_ctx ctx = { .o = o, .status = OPTS_RUN };
	size_t i;
	int ret;

	defaults(o);
	for (i = 0; argc >= 2 && i < SUBCOMMANDS_CNT; i++)
		if (!strcmp(argv[1], opts_subcommands[i].name))
			ctx.sub = opts_subcommands[i].id;
	if (ctx.sub != SUB_NONE) {
		ret = subcommand_argv(&argp, argc, argv, &ctx, &argc);
		if (ret)
			return ret;
		argv = o->argv_built;
	}
	ret = argp_parse(&root, argc, argv, ARGP_IN_ORDER | ARGP_NO_EXIT | ARGP_NO_HELP, NULL,
			 &ctx);
	if (ctx.status != OPTS_RUN)
		return ctx.status; /* --help, --usage, --version */
	if (ret == ENOMEM) {
		fprintf(stderr, "bpfprof: parse options: %s\n", strerror(ENOMEM));
		return BPFPROF_EXIT_ERROR;
	}
	/* Reported by argp or opts_usage_error(). */
	return ret ? BPFPROF_EXIT_USAGE : OPTS_RUN;
}

void opts__free(struct bpfprof_opts *o)
{
	free(o->pids);
	o->pids = NULL;
	argv_free(o->argv_built);
	o->argv_built = NULL;
}

const struct opts_parser opts__parser = {
	.parse = opts__parse,
	.free = opts__free,
};

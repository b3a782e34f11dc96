// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c: bpfprof -- CMD / -p PID: set up, sample until done, write folded stacks. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "agent/agent.h"
#include "profile/aggregate.h"
#include "sampling/capture.h"
#include "cmd/check.h"
#include "sampling/consumer.h"
#include "symbols/debuginfod.h"
#include "util/file.h"
#include "symbols/ksyms.h"
#include "sampling/loader.h"
#include "util/log.h"
#include "cmd/opts.h"
#include "output/output_file.h"
#include "output/output_folded.h"
#include "output/output_pprof.h"
#include "output/output_svg.h"
#include "sampling/perf_event.h"
#include "process/proc_table.h"
#include "profile/sample.h"
#include "profile/stage_timer.h"
#include "profile/summary.h"
#include "symbols/demangle.h"
#include "symbols/symbolizer.h"
#include "sampling/targets.h"
#include "unwind/unwind.h"
#include "profile/unwind_stats.h"
#include "util/util.h"

/* How long `-- CMD` may take to exit after bpfprof was asked to stop. */
#define STOP_GRACE_NS (3 * 1000000000ull)

/* bpfprof report: one recorded read of /proc/PID/maps. */
struct replay_maps {
	uint32_t tgid;
	char *text;
	size_t len;
	struct replay_maps *next;
};

struct session {
	struct bpfprof_opts *opts;
	struct loader *loader;
	struct perf_events events;
	struct ksyms *ksyms;
	struct proc_table *pt;
	struct aggregate *agg;
	struct sample_handler *sh;
	struct symbolizer *symbolizer;
	struct consumer *consumer;
	struct unwind_stats *ustats; /* --stats */
	sigset_t old_mask;
	int sigfd;
	pid_t child; /* -- CMD */
	int child_status;
	bool child_done;
	struct targets *targets; /* -p, -- CMD, --exec: the target processes */
	int64_t busy_start_ns;	 /* -a: busy CPU time of the machine, less bpfprof's */
	uint64_t start_ns;
	uint64_t end_ns;
	int64_t start_realtime_ns;	/* CLOCK_REALTIME at the start, for pprof; a replay: the
					 * capture's (0 in version 1 captures) */
	char *cmdline;			/* the command line, for pprof's comment */
	int stop_signal;		/* the signal that stopped profiling, or 0 */
	bool events_lost;		/* mapping or task events were lost */
	struct capture_writer *capture; /* --raw-capture (it keeps its first write error) */
	struct output_file outs[BPFPROF_MAX_OUTPUTS]; /* open_outputs() */
	enum output_format out_formats[BPFPROF_MAX_OUTPUTS];
	size_t outs_cnt;
	struct replay_maps *replay_maps;  /* bpfprof report: maps texts not read yet, */
	struct replay_maps **replay_tail; /* in capture order: append at *replay_tail */
	struct agent *agent;		  /* bpfprof agent */
	uint64_t next_cut_ns;		  /* agent: CLOCK_MONOTONIC of the next interval's end */
	int64_t cut_start_realtime_ns;	  /* agent: start of the current interval */
	bool reload;			  /* agent: SIGHUP, reread the configuration */
	int argc;			  /* the command line, to parse again on SIGHUP */
	char **argv;
};

/* -a: CPU time the machine spent busy (/proc/stat "cpu" line: user, nice, system, irq,
 * softirq; guest time is part of user), less bpfprof's own, ns; -1 if unreadable. */
static int64_t machine_busy_ns(void)
{
	unsigned long long v[8] = {};
	struct rusage ru;
	int64_t busy;
	FILE *f;
	int n;

	f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)
		return -1;
	busy = (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6]) * (1000000000ll / sysconf(_SC_CLK_TCK));
	getrusage(RUSAGE_SELF, &ru);
	busy -= (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
	return busy;
}

static int report_event_error(const struct bpfprof_opts *o, int err, int cpu,
			      const struct kernel_features *kf)
{
	const char *hint = "";

	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		hint = !strcmp(o->event, "cycles") ?
			       "; this machine has no hardware PMU for cycles (common in VMs): "
			       "use -e cpu-clock" :
			       "";
	else if ((err == EACCES || err == EPERM) && !kf->cap_sys_admin &&
		 kernel_features__paranoid() > 2)
		hint = "; kernel.perf_event_paranoid is above 2 (a Debian and Ubuntu patch): only "
		       "CAP_SYS_ADMIN may open perf_events, CAP_PERFMON is not enough; set it to 2 "
		       "(sysctl kernel.perf_event_paranoid=2) or grant CAP_SYS_ADMIN";
	else if (err == EACCES || err == EPERM)
		hint = "; run as root or grant CAP_PERFMON (or lower kernel.perf_event_paranoid)";
	else if (err == EINVAL)
		hint = "; is -F above /proc/sys/kernel/perf_event_max_sample_rate?";
	pr_warn("open perf_event %s at %" PRIu64 " Hz on CPU %d: %s%s", o->event, o->freq_hz, cpu,
		strerror(err), hint);
	return BPFPROF_EXIT_ERROR;
}

static int check_pids(const struct bpfprof_opts *o)
{
	size_t i;

	for (i = 0; i < o->pids_cnt; i++) {
		if (o->pids[i] == (uint32_t)getpid()) {
			pr_warn("profile PID %u: bpfprof does not profile itself", o->pids[i]);
			return -EINVAL;
		}
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			pr_warn("profile PID %u: no such process", o->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

/* The child waits on go_fd until it is a target, so its first instruction after exec is
 * sampled and bpfprof's own code in it never is (the target arms at exec). */
static void child_exec(struct session *s, int go_fd)
{
	char go;

	if (read(go_fd, &go, 1) != 1)
		_exit(127);
	close(go_fd);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (s->opts->realtime_prio) {
		struct sched_param sp = { .sched_priority = 0 };

		sched_setscheduler(0, SCHED_OTHER, &sp);
	}
	execvp(s->opts->cmd[0], s->opts->cmd);
	fprintf(stderr, "bpfprof: run %s: %s\n", s->opts->cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int start_cmd(struct session *s)
{
	int go[2], err;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	s->child = fork();
	if (s->child < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	if (s->child == 0) {
		close(go[1]);
		child_exec(s, go[0]);
	}
	close(go[0]);
	err = loader__add_target(s->loader, s->child, TARGET_PENDING_EXEC | TARGET_F_FOLLOW_FORK);
	if (err) {
		close(go[1]); /* the child exits 127 */
		return err;
	}
	if (write(go[1], "g", 1) != 1)
		err = -errno;
	close(go[1]);
	return err;
}

/* -p: each process with its descendants, running and to come (targets__add_tree()). */
static int add_pids(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	size_t i;
	int n;

	for (i = 0; i < o->pids_cnt; i++) {
		n = targets__add_tree(s->targets, o->pids[i], TARGET_ACTIVE | TARGET_F_FOLLOW_FORK);
		if (n < 0)
			return n;
		if (n == 0 && !loader__is_target(s->loader, o->pids[i]))
			pr_warn("PID %u exited before profiling started", o->pids[i]);
		else if (n > 1)
			pr_info("PID %u: %d descendant process%s running already profiled too",
				o->pids[i], n - 1, n > 2 ? "es" : "");
	}
	return 0;
}

static void reap_child(struct session *s, int flags)
{
	pid_t r;

	if (s->child <= 0 || s->child_done)
		return;
	r = waitpid(s->child, &s->child_status, flags);
	if (r == s->child)
		s->child_done = true;
}

/* Handles pending signals; returns true when profiling should stop now. */
static bool handle_signals(struct session *s, uint64_t *stop_at)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap_child(s, WNOHANG);
			continue;
		}
		if (s->child > 0 && !s->child_done) {
			/* A terminal's Ctrl-C reached the child too (same process group); a signal
			 * sent to bpfprof alone is passed on. The child's exit ends the run. */
			if (si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE ||
			    si.ssi_code == SI_TKILL || si.ssi_signo != SIGINT)
				kill(s->child, si.ssi_signo);
			if (si.ssi_signo == SIGHUP)
				continue;
			if (s->stop_signal)
				return true; /* asked twice: stop now */
			s->stop_signal = si.ssi_signo;
			*stop_at = now_ns() + STOP_GRACE_NS;
			continue;
		}
		if (si.ssi_signo == SIGHUP) {
			s->reload = s->agent != NULL;
			continue;
		}
		s->stop_signal = si.ssi_signo;
		return true;
	}
	return false;
}

/* Lost mapping or task events leave holes only /proc can fill: tell the process table. */
static void check_lost_events(struct session *s)
{
	struct sample_stats st;

	if (s->events_lost || loader__read_stats(s->loader, &st))
		return;
	if (st.events_lost || st.mmap_lost) {
		s->events_lost = true;
		pr_warn("%llu task and %llu mapping events lost (ringbuf full): stacks may be "
			"attributed late; try a larger --ringbuf-size",
			(unsigned long long)st.events_lost, (unsigned long long)st.mmap_lost);
		proc_table__events_lost(s->pt);
	}
}

/* The counters /metrics shows, from the BPF side, the consumer and the process table. */
static void agent_counters(struct session *s)
{
	const struct consumer_stats *cs = consumer__stats(s->consumer);
	struct proc_stats st = *proc_table__freed_stats(s->pt);
	struct proc_table_counts counts;
	struct agent_counters c = {};
	struct sample_stats bpf = {};
	struct proc *p;
	int i;

	loader__read_stats(s->loader, &bpf);
	for (p = proc_table__first(s->pt); p; p = proc_table__next(p)) {
		st.samples += p->stats.samples;
		st.root += p->stats.root;
		for (i = 0; i < UNWIND_STOP_CNT; i++)
			st.stops[i] += p->stats.stops[i];
	}
	proc_table__counts(s->pt, &counts);
	c.samples = cs->samples;
	c.lost = bpf.lost;
	c.events_lost = bpf.events_lost + bpf.mmap_lost;
	c.user_stacks = st.samples - st.stops[UNWIND_STOP_NO_REGS];
	c.root_stacks = st.root;
	c.truncated_stacks = st.stops[UNWIND_STOP_TRUNCATED];
	c.processes = counts.procs;
	c.files = counts.files;
	agent__set_counters(s->agent, &c);
}

/* Free heap bytes from which a cut returns them to the system: malloc_trim() costs madvise()
 * calls, TLB shootdowns and page faults when the pages are used again. */
#define AGENT_TRIM_FREE_BYTES (4u << 20)

/* Ends the agent's interval: its profiles out, a new aggregate in. 0 or a negative errno. */
static int agent_cut(struct session *s)
{
	struct aggregate *fresh = aggregate__new();
	int64_t end = realtime_ns();
	int err;

	if (!fresh)
		return -ENOMEM;
	err = symbolizer__run(s->symbolizer, s->agg) ?:
	      agent__cut(s->agent, s->agg, s->cut_start_realtime_ns, end);
	sample_handler__set_aggregate(s->sh, fresh);
	aggregate__free(s->agg);
	s->agg = fresh;
	s->cut_start_realtime_ns = end;
	s->next_cut_ns = now_ns() + s->opts->ag.interval_ns;
	/* Files no process maps any more can go now that no profile refers to them; the heap
	 * pages symbolization freed go back to the system (RSS stays flat between intervals). */
	proc_table__trim_files(s->pt);
	if (mallinfo2().fordblks >= AGENT_TRIM_FREE_BYTES)
		malloc_trim(0);
	return err < 0 ? err : 0;
}

/* How long the agent tries to deliver queued profiles at exit (SIGTERM: Kubernetes gives
 * 30 s by default before SIGKILL). */
#define AGENT_STOP_FLUSH_MS 8000

/*
 * SIGHUP in the agent: the command line, environment and --config file again. A child process
 * parses first (the parser exits on an error), so a broken file keeps the running
 * configuration. The interval so far goes out under the old one. Sampling options (-F, -e)
 * keep their values until a restart.
 */
static void agent_reload(struct session *s)
{
	struct bpfprof_opts *n;
	char **old_argv;
	pid_t pid;
	int status;

	s->reload = false;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct bpfprof_opts t;

		opts__parse(s->argc, s->argv, &t);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		pr_warn("agent: SIGHUP: the configuration has errors (above); keeping the running one");
		return;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	opts__parse(s->argc, s->argv, n);
	agent_cut(s);
	agent__free(s->agent, 2000);
	old_argv = s->opts->argv_built;
	s->opts->ag = n->ag;
	s->opts->argv_built = n->argv_built;
	n->argv_built = old_argv;
	opts__free(n);
	free(n);
	log__set_json(s->opts->ag.log_json);
	s->next_cut_ns = now_ns() + s->opts->ag.interval_ns;
	s->agent = agent__new(s->opts);
	if (!s->agent) {
		pr_warn("agent: SIGHUP: cannot start with the new configuration; stopping");
		s->stop_signal = SIGHUP;
		return;
	}
	pr_info("agent: SIGHUP: configuration reread%s%s", s->opts->ag.config ? " from " : "",
		s->opts->ag.config ? s->opts->ag.config : "");
}

static int run_loop(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	uint64_t stop_at = o->duration_ns ? s->start_ns + o->duration_ns : UINT64_MAX;
	uint64_t next_check = 0, next_sweep = now_ns() + 5000000000ull, now;
	unsigned int swept;
	struct pollfd pfd[2] = {
		{ .fd = s->sigfd, .events = POLLIN },
		{ .fd = consumer__wakeup_fd(s->consumer), .events = POLLIN },
	};
	int n;

	for (;;) {
		n = consumer__drain(s->consumer);
		if (n < 0 && n != -EINTR) {
			pr_warn("read ringbuf: %s", strerror(-n));
			return n;
		}
		if (handle_signals(s, &stop_at))
			break;
		if (s->child > 0 && s->child_done)
			break;
		now = now_ns();
		if (now >= stop_at)
			break;
		if (now >= next_sweep) {
			/* Processes gone without an exit record: after 5 s without records. */
			next_sweep = now + 5000000000ull;
			swept = proc_table__sweep(s->pt, 5000000000ull);
			if (swept)
				pr_debug("%u vanished processes swept", swept);
		}
		if (s->agent && s->reload)
			agent_reload(s);
		if (s->stop_signal == SIGHUP)
			break;
		if (s->agent && now >= s->next_cut_ns)
			agent_cut(s);
		if (now >= next_check) {
			next_check = now + 200000000ull;
			check_lost_events(s);
			if (s->agent)
				agent_counters(s);
			if (o->pids_cnt && s->targets && !targets__alive(s->targets)) {
				pr_info("all target processes exited");
				break;
			}
		}
		poll(pfd, 2, o->drain_ms);
	}
	return 0;
}

/* Stops sampling, then handles every record still in the ringbuf. */
static void final_drain(struct session *s)
{
	int i;

	perf_events__close(&s->events);
	loader__detach_perf_events(s->loader);
	for (i = 0; i < 3; i++) {
		/* A program that reserved before the detach may still commit. */
		if (consumer__drain(s->consumer) <= 0 && i)
			break;
		usleep(1000);
	}
}

static int64_t target_cpu_ns(struct session *s)
{
	int64_t ns;

	if (s->opts->report)
		return -1;
	if (s->opts->all) {
		ns = machine_busy_ns();
		return ns < 0 || s->busy_start_ns < 0 ? -1 : ns - s->busy_start_ns;
	}
	/* Each target's own, exits included: a command that does not reap its children (one
	 * killed by timeout) has their CPU time in no rusage. */
	return s->targets ? targets__cpu_ns(s->targets) : -1;
}

static int write_svg(struct session *s, FILE *fp, struct output_counts *counts)
{
	const struct bpfprof_opts *o = s->opts;
	char subtitle[256];
	struct flamegraph_opts fo = { .title = o->title, .subtitle = subtitle };
	const char *what = o->cmd    ? o->cmd[0] :
			   o->all    ? "all processes" :
			   o->report ? o->report :
				       "processes";

	snprintf(subtitle, sizeof(subtitle), "%s, %s %" PRIu64 " Hz, %.1f s, %" PRIu64 " samples",
		 what, o->event, o->freq_hz, (s->end_ns - s->start_ns) / 1e9,
		 aggregate__samples(s->agg));
	return output_svg__write(s->agg, fp, &fo, counts);
}

/* The profile in one format; what was written in *counts. 0 or a negative errno. */
static int write_profile(struct session *s, FILE *fp, enum output_format format,
			 struct output_counts *counts)
{
	const struct bpfprof_opts *o = s->opts;
	struct pprof_opts po = {
		.freq_hz = o->freq_hz,
		.time_ns = s->start_realtime_ns,
		.duration_ns = s->end_ns - s->start_ns,
		.comment = s->cmdline,
	};

	switch (format) {
	case OUTPUT_PPROF:
		return output_pprof__write(s->agg, fp, &po, counts);
	case OUTPUT_SVG:
		return write_svg(s, fp, counts);
	case OUTPUT_FOLDED:
	default:
		return output_folded__write(s->agg, fp, counts);
	}
}

static const char *const format_names[] = {
	[OUTPUT_FOLDED] = "folded stacks",
	[OUTPUT_PPROF] = "pprof profile",
	[OUTPUT_SVG] = "flame graph",
};

/* Without -o, the profile of -- CMD goes to this file of the current directory, not to the
 * stdout CMD writes to (as perf record writes perf.data). */
static const char *const default_names[] = {
	[OUTPUT_FOLDED] = "bpfprof.folded",
	[OUTPUT_PPROF] = "bpfprof.pb.gz",
	[OUTPUT_SVG] = "bpfprof.svg",
};

/* Removes the temp files of the outputs not written (an error, a signal before the end). */
static void close_outputs(struct session *s)
{
	size_t i;

	for (i = 0; i < s->outs_cnt; i++)
		if (s->outs[i].fp)
			output_file__abort(&s->outs[i], 0);
	s->outs_cnt = 0;
}

/*
 * Opens every output before the run: each -o FILE; without -o, stdout, or with -- CMD
 * default_names[]. A missing or read-only directory, a FIFO without a reader, a link of
 * another user fail now, before the targets run, not after. 0 or BPFPROF_EXIT_ERROR (reported).
 */
static int open_outputs(struct session *s)
{
	const struct bpfprof_opts *o = s->opts;
	size_t i, n = o->outputs_cnt ? o->outputs_cnt : 1;
	enum output_format format;
	const char *path;

	for (i = 0; i < n; i++) {
		path = o->outputs_cnt ? o->outputs[i] : o->cmd ? default_names[o->format] : "-";
		format = o->outputs_cnt ? o->formats[i] : o->format;
		if (format != OUTPUT_FOLDED && !strcmp(path, "-") && isatty(STDOUT_FILENO)) {
			pr_warn("not writing a %s to a terminal: give -o FILE",
				format_names[format]);
			break;
		}
		if (output_file__open(&s->outs[i], path, 0)) /* reported */
			break;
		s->out_formats[i] = format;
		s->outs_cnt++;
		if (!o->outputs_cnt && o->cmd)
			pr_info("the profile goes to %s at the end (-o FILE names another, -o - is "
				"stdout)",
				path);
	}
	if (s->outs_cnt == n)
		return 0;
	close_outputs(s);
	return BPFPROF_EXIT_ERROR;
}

/* Writes the profile to an output of open_outputs(). 0 or a negative errno. */
static int write_one(struct session *s, struct output_file *of, enum output_format format)
{
	const char *path = of->path;
	struct output_counts c = { 0 };
	uint64_t t0 = now_ns();
	int err;

	/* The first output's run names the locations; the others' find nothing to do. */
	err = symbolizer__run(s->symbolizer, s->agg) ?: write_profile(s, of->fp, format, &c);
	err = err ? output_file__abort(of, err) : output_file__commit(of);
	if (stage_timers_on)
		stage_timer__add(STAGE_OUTPUT, now_ns() - t0);
	if (err)
		pr_warn("write %s: %s", path ? path : "stdout", strerror(-err));
	else if (path && format == OUTPUT_FOLDED)
		pr_info("wrote %" PRIu64 " folded stacks (%" PRIu64 " samples) to %s", c.stacks,
			c.samples, path);
	else if (path && format == OUTPUT_PPROF)
		pr_info("wrote pprof profile of %" PRIu64 " samples (%" PRIu64 " stacks by thread) "
			"to %s",
			c.samples, c.stacks, path);
	else if (path)
		pr_info("wrote %s of %" PRIu64 " samples to %s", format_names[format], c.samples,
			path);
	return err;
}

/* --raw-capture at the end of a run. 0 or BPFPROF_EXIT_ERROR (reported: the real errno). */
static int close_capture(struct session *s)
{
	int err;

	if (!s->capture)
		return 0;
	err = capture_writer__close(s->capture, s->start_realtime_ns, s->end_ns - s->start_ns);
	s->capture = NULL;
	if (err) {
		pr_warn("write %s: %s", s->opts->raw_capture, strerror(-err));
		return BPFPROF_EXIT_ERROR;
	}
	pr_info("wrote raw capture %s", s->opts->raw_capture);
	return 0;
}

/* Every output. A failed one does not stop the others. 0 or a negative errno. */
static int write_output(struct session *s)
{
	int err = 0, ret;
	size_t i;

	for (i = 0; i < s->outs_cnt; i++) {
		ret = write_one(s, &s->outs[i], s->out_formats[i]);
		if (ret && !err)
			err = ret;
	}
	s->outs_cnt = 0;
	return err;
}

static double tv_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

static void print_prog_stats(const char *name, uint64_t run_cnt, uint64_t run_time_ns, void *arg)
{
	uint64_t *total_ns = arg;

	if (!run_cnt)
		return;
	*total_ns += run_time_ns;
	fprintf(stderr, "bpfprof: BPF program %s: %llu runs, %.2f us each, %.3f s in all\n", name,
		(unsigned long long)run_cnt, run_time_ns / 1e3 / run_cnt, run_time_ns / 1e9);
}

/* --stats: the process table's work and bpfprof's own footprint. */
static void print_stats_totals(struct session *s, const struct sample_stats *bpf)
{
	const struct consumer_stats *cs = consumer__stats(s->consumer);
	struct proc_table_counts c;
	unsigned int fds = 0;
	struct rusage ru;
	struct dirent *d;
	DIR *dir;

	uint64_t bpf_ns;

	proc_table__counts(s->pt, &c);
	getrusage(RUSAGE_SELF, &ru);
	dir = opendir("/proc/self/fd");
	while (dir && (d = readdir(dir)))
		fds += d->d_name[0] != '.';
	if (dir) {
		closedir(dir);
		fds--; /* the directory's own */
	}
	fprintf(stderr,
		"bpfprof: %u ELF files open (%llu opened in all), %u Dwfls open, "
		"%u processes tracked, %llu events lost (%llu task, %llu mmap), %llu samples "
		"lost\n",
		c.files, (unsigned long long)c.files_opened, c.dwfls, c.procs,
		(unsigned long long)(bpf->events_lost + bpf->mmap_lost),
		(unsigned long long)bpf->events_lost, (unsigned long long)bpf->mmap_lost,
		(unsigned long long)bpf->lost);
	fprintf(stderr,
		"bpfprof: %llu mmap and %llu munmap records; /proc/PID/maps read %llu "
		"times, %llu of them re-scans on a pc in no mapping; %llu processes swept\n",
		(unsigned long long)cs->mmaps, (unsigned long long)cs->munmaps,
		(unsigned long long)c.maps_reads, (unsigned long long)c.maps_rescans,
		(unsigned long long)c.swept);
	fprintf(stderr, "bpfprof: max RSS %ld KiB, %u file descriptors open\n", ru.ru_maxrss, fds);
	fprintf(stderr,
		"bpfprof: %llu stack mapping lookups in BPF (%llu failed), %llu stack "
		"copies cut at the mapping's end\n",
		(unsigned long long)bpf->stack_vma_lookups,
		(unsigned long long)bpf->stack_vma_unknown,
		(unsigned long long)bpf->stack_truncated);
	bpf_ns = 0;
	if (s->loader)
		loader__prog_stats(s->loader, print_prog_stats, &bpf_ns);
	fprintf(stderr, "bpfprof: own CPU %.3f s (user %.3f, system %.3f)",
		tv_s(&ru.ru_utime) + tv_s(&ru.ru_stime), tv_s(&ru.ru_utime), tv_s(&ru.ru_stime));
	if (s->loader && !bpf_ns)
		fprintf(stderr, "; BPF run time not counted: sysctl kernel.bpf_stats_enabled=1");
	else if (s->loader)
		fprintf(stderr, "; BPF programs %.3f s", bpf_ns / 1e9);
	fprintf(stderr, "\n");
}

static void print_summary(struct session *s)
{
	struct sample_stats bpf = {};
	struct summary_input in = {
		.duration_ns = s->end_ns - s->start_ns,
		.freq_hz = s->opts->freq_hz,
		.target_cpu_ns = target_cpu_ns(s),
		.bpf = &bpf,
		.consumer = consumer__stats(s->consumer),
		.agg = s->agg,
		.pt = s->pt,
		.top = s->opts->top,
	};

	if (s->loader)
		loader__read_stats(s->loader, &bpf);
	if (!s->opts->quiet)
		summary__print(stderr, &in);
	if (s->ustats) {
		unwind_stats__print(s->ustats, stderr, 20);
		print_stats_totals(s, &bpf);
		stage_timers__print(stderr);
	}
}

/* --raw-capture: /proc/PID/maps as read, recorded before the record that made it read. */
static int capture_maps_text(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	struct session *s = ctx;
	int err = proc_table__read_maps(tgid, text, len);

	if (!err && s->capture) /* a failed write fails the capture's close */
		capture_writer__text(s->capture, RECORD_CAPTURE_MAPS, tgid, *text, *len);
	return err;
}

/* bpfprof report: the recorded text of the next read of tgid's maps. */
static int replay_maps_text(void *ctx, uint32_t tgid, char **text, size_t *len)
{
	struct session *s = ctx;
	struct replay_maps *m, **prev;

	for (prev = &s->replay_maps; (m = *prev); prev = &m->next) {
		if (m->tgid != tgid)
			continue;
		*prev = m->next;
		if (s->replay_tail == &m->next)
			s->replay_tail = prev;
		*text = m->text;
		*len = m->len;
		free(m);
		return 0;
	}
	return -ENOENT; /* the process was gone when the capture read it */
}

static int set_copy_size(void *ctx, uint32_t tgid, uint32_t bytes)
{
	return loader__set_copy_size(ctx, tgid, bytes);
}

/* The user-space pipeline, fed by the ringbuf (ringbuf_fd) or a replay (-1). */
static int setup_pipeline(struct session *s, int ringbuf_fd, uint32_t stack_cap, bool lazy_maps)
{
	struct bpfprof_opts *o = s->opts;
	struct proc_table_opts pto = {
		.rescan_interval_ns = 10000000ull,
		.lazy_maps = lazy_maps,
		.unused_file_ttl_ns = o->agent ? o->ag.interval_ns : 0,
	};
	struct sample_handler_opts sho = {
		.stack_cap = stack_cap,
		.max_frames = o->max_frames,
		.copy = { .init_sz = o->stack_sz, .max_sz = o->max_stack_sz },
	};
	struct symbolizer_opts syo = {
		.no_dwarf = o->no_inline,
		/* The agent never stalls its sampling loop for a download; a profile written at
		 * the end of a run may wait a while. */
		.debuginfod_wait_ns = o->agent ? 0 : 120 * 1000000000ull,
	};

	if (s->loader) {
		sho.copy.set = set_copy_size;
		sho.copy.ctx = s->loader;
	}
	if (o->report) {
		pto.maps_text = replay_maps_text;
		pto.maps_ctx = s;
	} else if (o->raw_capture) {
		pto.maps_text = capture_maps_text;
		pto.maps_ctx = s;
	}
	if (!s->ksyms)
		s->ksyms = ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		pr_warn("load kernel symbols (/proc/kallsyms): %s; kernel frames show as "
			"addresses",
			strerror(errno));
	s->pt = proc_table__new(&pto);
	s->agg = aggregate__new();
	if (!s->pt || !s->agg) {
		pr_warn("set up process table: %s", strerror(errno ? errno : ENOMEM));
		return BPFPROF_EXIT_ERROR;
	}
	if (o->stats) {
		s->ustats = unwind_stats__new();
		if (!s->ustats) {
			pr_warn("set up --stats: %s", strerror(errno));
			return BPFPROF_EXIT_ERROR;
		}
		sho.stats = s->ustats;
	}
	s->sh = sample_handler__new(s->pt, s->ksyms, s->agg, &sho);
	s->symbolizer = s->sh ? symbolizer__new(s->ksyms, &syo) : NULL;
	if (!s->symbolizer) {
		pr_warn("set up sample handler: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	s->consumer = consumer__new(ringbuf_fd, s->sh, s->pt);
	if (!s->consumer) {
		pr_warn("open ringbuf: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	return 0;
}

static int setup(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	struct loader_opts lo = {
		.stack_sz = o->stack_sz,
		.max_stack_sz = o->max_stack_sz,
		.ringbuf_sz = o->ringbuf_sz,
		.max_targets = 16384,
		.target_all = o->all,
		.self_tgid = getpid(),
	};
	struct perf_event_opts po = { .event = o->event, .freq_hz = o->freq_hz };
	struct loader_error le;
	struct capture_header ch = {
		.stack_sz = o->max_stack_sz,
		.freq_hz = o->freq_hz,
		.flags = o->all ? CAPTURE_F_LAZY_MAPS : 0,
	};
	int err, cpu = -1;
	char *text;
	size_t len;

	s->loader = loader__load(&lo, &le);
	if (!s->loader) {
		loader__report_error(&le);
		return BPFPROF_EXIT_ERROR;
	}
	if (loader__compat(s->loader))
		pr_debug("kernel %s: BPF programs with fallbacks for features before 5.17 "
			 "(`bpfprof check` lists them)",
			 loader__features(s->loader)->release);
	err = perf_events__open(&s->events, &po, &cpu);
	if (err)
		return report_event_error(o, -err, cpu, loader__features(s->loader));
	err = loader__attach_tracepoints(s->loader);
	if (!err)
		err = loader__attach_perf_events(s->loader, &s->events);
	if (err) {
		pr_warn("attach BPF programs: %s", strerror(-err));
		return BPFPROF_EXIT_ERROR;
	}
	if (o->raw_capture) {
		ch.start_ns = now_ns();
		ch.start_realtime_ns = realtime_ns();
		s->capture = capture_writer__open(o->raw_capture, &ch);
		if (!s->capture) /* reported */
			return BPFPROF_EXIT_ERROR;
		pr_warn("%s will hold the targets' stack memory (mode 0600): keep it private",
			o->raw_capture);
		if (!file__read_all("/proc/kallsyms", &text, &len)) {
			err = capture_writer__text(s->capture, RECORD_CAPTURE_KALLSYMS, 0, text,
						   len);
			s->ksyms = ksyms__load_text(text, len);
			free(text);
			if (err) { /* a full disk, before the targets run */
				pr_warn("write %s: %s", o->raw_capture, strerror(-err));
				return BPFPROF_EXIT_ERROR;
			}
		}
	}
	err = setup_pipeline(s, loader__ringbuf_fd(s->loader), o->max_stack_sz, o->all);
	if (!err && s->capture)
		consumer__set_capture(s->consumer, s->capture);
	if (!err && !o->all) {
		s->targets = targets__new(s->loader);
		if (!s->targets) {
			pr_warn("set up targets: %s", strerror(errno));
			return BPFPROF_EXIT_ERROR;
		}
		consumer__set_targets(s->consumer, s->targets);
	}
	return err;
}

/* bpfprof report FILE: the records of a raw capture through the same pipeline. */
static int run_report(struct session *s)
{
	struct capture_header hdr;
	struct capture_reader *r;
	const struct record_header *rh;
	const struct capture_maps_record *mr;
	struct replay_maps *m;
	const void *data;
	size_t sz;
	int n, err;

	r = capture_reader__open(s->opts->report, &hdr);
	if (!r) {
		pr_warn("open %s: %s", s->opts->report,
			errno == EINVAL ? "not a bpfprof raw capture" : strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	err = open_outputs(s);
	if (err) {
		capture_reader__close(r);
		return err;
	}
	/* The kernel symbols of the capture's time, if it recorded them (its first record). */
	n = capture_reader__next(r, &data, &sz);
	if (n > 0 && ((const struct record_header *)data)->type == RECORD_CAPTURE_KALLSYMS) {
		mr = data;
		if (sz >= sizeof(*mr) && mr->len <= sz - sizeof(*mr))
			s->ksyms = ksyms__load_text(mr->text, mr->len);
		n = capture_reader__next(r, &data, &sz);
	}
	s->replay_tail = &s->replay_maps;
	err = setup_pipeline(s, -1, hdr.stack_sz, hdr.flags & CAPTURE_F_LAZY_MAPS);
	if (err)
		goto out;
	s->opts->freq_hz = hdr.freq_hz;
	for (; n > 0; n = capture_reader__next(r, &data, &sz)) {
		rh = data;
		if (rh->type == RECORD_CAPTURE_BATCH) {
			proc_table__end_batch(s->pt);
		} else if (rh->type == RECORD_CAPTURE_MAPS) {
			mr = data;
			m = calloc(1, sizeof(*m));
			if (!m || sz < sizeof(*mr) || mr->len > sz - sizeof(*mr) ||
			    !(m->text = malloc(mr->len + 1))) {
				free(m);
				n = -ENOMEM;
				break;
			}
			memcpy(m->text, mr->text, mr->len);
			m->text[mr->len] = '\0';
			m->len = mr->len;
			m->tgid = mr->tgid;
			/* In order: a process's reads are served as they happened. */
			*s->replay_tail = m;
			s->replay_tail = &m->next;
		} else {
			consumer__handle(s->consumer, data, sz);
		}
	}
	if (n < 0)
		pr_warn("read %s: %s; the records before are reported", s->opts->report,
			strerror(-n));
	s->start_ns = 0;
	s->end_ns = hdr.duration_ns;
	s->start_realtime_ns = hdr.start_realtime_ns;
	err = write_output(s) ? BPFPROF_EXIT_ERROR : 0;
	print_summary(s);
out:
	while ((m = s->replay_maps)) {
		s->replay_maps = m->next;
		free(m->text);
		free(m);
	}
	s->replay_tail = &s->replay_maps;
	capture_reader__close(r);
	return err;
}

/* Frees in the reverse order of use: the consumer feeds the sample handler, which fills the
 * aggregate, whose locations hold references on the process table's cached ELF files. */
static void teardown(struct session *s)
{
	close_outputs(s);
	/* An error after the capture started: keep what it holds. */
	capture_writer__close(s->capture, 0, 0);
	consumer__free(s->consumer);
	sample_handler__free(s->sh);
	symbolizer__free(s->symbolizer);
	aggregate__free(s->agg);
	proc_table__free(s->pt);
	unwind_stats__free(s->ustats);
	ksyms__free(s->ksyms);
	perf_events__close(&s->events);
	loader__free(s->loader);
	targets__free(s->targets);
	if (s->sigfd >= 0)
		close(s->sigfd);
}

static int child_exit_code(const struct session *s)
{
	if (!s->child_done)
		return s->stop_signal ? 128 + s->stop_signal : BPFPROF_EXIT_ERROR;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return BPFPROF_EXIT_ERROR;
}

/* bpfprof agent: -a until SIGTERM or SIGINT, a profile per group per interval. */
static int run_agent(struct session *s)
{
	const struct bpfprof_opts *o = s->opts;
	int err;

	s->agent = agent__new(o);
	if (!s->agent)
		return BPFPROF_EXIT_ERROR;
	err = setup(s);
	if (err) {
		agent__free(s->agent, 0);
		s->agent = NULL;
		return err;
	}
	s->start_ns = now_ns();
	s->start_realtime_ns = s->cut_start_realtime_ns = realtime_ns();
	s->next_cut_ns = s->start_ns + o->ag.interval_ns;
	s->busy_start_ns = machine_busy_ns();
	pr_info("agent: profiling every process at %" PRIu64
		" Hz, a profile per %s every %.0f s%s%s%s%s",
		o->freq_hz, o->ag.group_by_pid ? "process" : "executable and container",
		o->ag.interval_ns / 1e9, o->ag.pyroscope_url ? " to " : "",
		o->ag.pyroscope_url ? o->ag.pyroscope_url : "", o->ag.output_dir ? " into " : "",
		o->ag.output_dir ? o->ag.output_dir : "");
	err = run_loop(s);
	s->end_ns = now_ns();
	final_drain(s);
	/* The interval under way is flushed too: a stop loses no samples. */
	if (s->agent) {
		agent_counters(s);
		agent_cut(s);
	}
	pr_info("agent: stopping%s%s", s->stop_signal ? " on " : "",
		s->stop_signal ? strsignal(s->stop_signal) : "");
	agent__free(s->agent, AGENT_STOP_FLUSH_MS);
	s->agent = NULL;
	return err ? BPFPROF_EXIT_ERROR : BPFPROF_EXIT_OK;
}

/* How long CMD waits for the detached profiler of --exec to be ready before it runs anyway. */
#define EXEC_READY_TIMEOUT_MS 15000

/*
 * The detached profiler of --exec (a grandchild, so not CMD's parent): loads BPF, arms target
 * (the original process) for its exec of CMD, says so on ready_fd, then profiles it and its
 * descendants until it exits: -o files at the end, or profiles per interval to the exporters.
 * Returns the exit status of the profiler.
 */
static int exec_profiler(struct session *s, pid_t target, int ready_fd)
{
	struct bpfprof_opts *o = s->opts;
	bool exporting = o->ag.pyroscope_url || o->ag.output_dir;
	int err, fd;

	setsid();
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	if (exporting) {
		s->agent = agent__new(o);
		if (!s->agent)
			return BPFPROF_EXIT_ERROR;
	}
	err = setup(s);
	if (!err && !exporting)
		err = open_outputs(s);
	if (!err) {
		o->pids = calloc(1, sizeof(*o->pids));
		if (!o->pids)
			err = -ENOMEM;
	}
	if (!err) {
		o->pids[0] = target;
		o->pids_cnt = 1;
		/* Sampling starts at its exec of CMD: bpfprof's own code is never profiled. */
		err = loader__add_target(s->loader, target,
					 TARGET_PENDING_EXEC | TARGET_F_FOLLOW_FORK);
	}
	if (err) {
		if (err < 0)
			pr_warn("--exec: set up profiling: %s", strerror(-err));
		close(ready_fd); /* CMD runs unprofiled (or not at all with --strict) */
		return BPFPROF_EXIT_ERROR;
	}
	if (write(ready_fd, "r", 1) != 1) {
		close(ready_fd);
		return BPFPROF_EXIT_ERROR;
	}
	close(ready_fd);
	s->start_ns = now_ns();
	s->start_realtime_ns = s->cut_start_realtime_ns = realtime_ns();
	if (s->agent)
		s->next_cut_ns = s->start_ns + o->ag.interval_ns;
	err = run_loop(s);
	s->end_ns = now_ns();
	if (s->targets)
		targets__snapshot(s->targets);
	final_drain(s);
	if (close_capture(s))
		err = BPFPROF_EXIT_ERROR;
	if (s->agent) {
		agent_counters(s);
		agent_cut(s);
		agent__free(s->agent, AGENT_STOP_FLUSH_MS);
		s->agent = NULL;
	} else {
		err = write_output(s) ? BPFPROF_EXIT_ERROR : err;
		print_summary(s);
	}
	return err ? BPFPROF_EXIT_ERROR : BPFPROF_EXIT_OK;
}

/*
 * bpfprof --exec -- CMD: CMD replaces this process (same PID, its own exit status), after a
 * detached grandchild has set up profiling, or without it when that fails (unless --strict).
 * Returns only on failure.
 */
static int run_exec(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	struct pollfd pfd;
	pid_t target = getpid(), mid;
	int ready[2], status;
	char r = 0;

	if (pipe2(ready, O_CLOEXEC)) {
		pr_warn("--exec: pipe: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	fflush(NULL);
	mid = fork();
	if (mid == 0) {
		close(ready[0]);
		/* Fork again and leave: the profiler is nobody's child that CMD would see. */
		mid = fork();
		if (mid)
			_exit(mid < 0 ? 1 : 0);
		status = exec_profiler(s, target, ready[1]);
		teardown(s); /* temp files of outputs never written are removed */
		_exit(status);
	}
	close(ready[1]);
	if (mid > 0)
		waitpid(mid, &status, 0);
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (mid > 0 && poll(&pfd, 1, EXEC_READY_TIMEOUT_MS) == 1 && read(ready[0], &r, 1) != 1)
		r = 0;
	close(ready[0]);
	if (r != 'r') {
		if (o->strict) {
			pr_warn("--exec --strict: profiling could not start; not running %s",
				o->cmd[0]);
			return BPFPROF_EXIT_ERROR;
		}
		pr_warn("--exec: profiling could not start; running %s unprofiled", o->cmd[0]);
	}
	/* CMD inherits nothing of bpfprof's: signal mask and dispositions back. */
	close(s->sigfd);
	s->sigfd = -1;
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "bpfprof: run %s: %s\n", o->cmd[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* "bpfprof ARGS..." as one malloc'd string (NULL on ENOMEM: then there is no comment). */
static char *join_args(int argc, char **argv)
{
	size_t sz = 0;
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, &sz);
	int i;

	if (!mem)
		return NULL;
	for (i = 0; i < argc; i++)
		fprintf(mem, "%s%s", i ? " " : "", argv[i]);
	if (fclose(mem)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int main(int argc, char **argv)
{
	struct bpfprof_opts o;
	struct session s = { .opts = &o, .sigfd = -1 };
	sigset_t mask;
	int ret = BPFPROF_EXIT_ERROR, err;

	opts__parse(argc, argv, &o);
	stage_timers_on = o.stats;
	demangle__set(!o.no_demangle);
	demangle__set_full_names(o.full_names);
	if (o.unwinder_set)
		unwind__set_mode(o.unwinder);
	s.cmdline = join_args(argc, argv);
	s.argc = argc;
	s.argv = argv;
	log__set_level(o.quiet ? LOG_WARN : o.verbose ? LOG_DEBUG : LOG_INFO);
	libbpf_set_print(o.verbose > 1 ? log__libbpf_print : NULL);

	/* A closed stdout or stderr pipe is an error to report, not a reason to die before
	 * the output is written. */
	signal(SIGPIPE, SIG_IGN);
	/* Signals arrive through a signalfd; the child gets the old mask back before exec. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s.old_mask);
	s.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sigfd < 0) {
		pr_warn("create signalfd: %s", strerror(errno));
		goto out;
	}
	if (o.check) {
		ret = check__run(stdout, o.event, o.freq_hz) ? BPFPROF_EXIT_ERROR : 0;
		goto out;
	}
	if (o.report) {
		ret = run_report(&s);
		/* --unwinder=diff: the two unwinders must agree on every sample. */
		if (!ret && o.unwinder_set && o.unwinder == UNWIND_MODE_DIFF &&
		    unwind__diff_divergent())
			ret = BPFPROF_EXIT_ERROR;
		goto out;
	}
	if (o.agent) {
		log__set_json(o.ag.log_json);
		ret = run_agent(&s);
		goto out;
	}
	if (o.exec) {
		ret = run_exec(&s);
		goto out;
	}
	if (o.pids_cnt && check_pids(&o))
		goto out;
	err = setup(&s);
	if (!err)
		err = open_outputs(&s);
	if (err) {
		ret = err;
		goto out;
	}
	if (o.realtime_prio) {
		struct sched_param sp = { .sched_priority = o.realtime_prio };

		/* After setup, before CMD: the child gets the normal policy back (below). */
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			pr_warn("set SCHED_FIFO priority %d: %s; needs root or CAP_SYS_NICE",
				o.realtime_prio, strerror(errno));
			goto out;
		}
	}
	s.start_ns = now_ns();
	s.start_realtime_ns = realtime_ns();
	if (o.cmd) {
		err = start_cmd(&s);
		if (err) {
			pr_warn("start %s: %s", o.cmd[0], strerror(-err));
			goto out;
		}
	} else if (o.all) {
		s.busy_start_ns = machine_busy_ns();
	} else {
		err = add_pids(&s);
		if (err) {
			pr_warn("add target processes: %s", strerror(-err));
			goto out;
		}
	}
	if (o.cmd)
		pr_info("profiling %s (PID %d) at %" PRIu64 " Hz", o.cmd[0], s.child, o.freq_hz);
	else if (o.all)
		pr_info("profiling every process at %" PRIu64 " Hz%s", o.freq_hz,
			o.duration_ns ? "" : "; Ctrl-C to stop");
	else
		pr_info("profiling %zu process%s at %" PRIu64 " Hz%s", o.pids_cnt,
			o.pids_cnt > 1 ? "es" : "", o.freq_hz,
			o.duration_ns ? "" : "; Ctrl-C to stop");

	err = run_loop(&s);
	s.end_ns = now_ns();
	if (s.targets)
		targets__snapshot(s.targets); /* for the expected sample count */
	final_drain(&s);
	reap_child(&s, WNOHANG);
	err = close_capture(&s);
	err = write_output(&s) || err ? BPFPROF_EXIT_ERROR : 0;
	print_summary(&s);
	if (o.cmd)
		ret = err ? err : child_exit_code(&s);
	else
		ret = err;
out:
	teardown(&s);
	debuginfod__shutdown();
	free(s.cmdline);
	opts__free(&o);
	return ret;
}

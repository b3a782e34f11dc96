// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* session.c: the one pipeline and run loop of every mode, its outputs and its summary. */
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pipeline/session.h"
#include "output/output.h"
#include "profile/aggregate.h"
#include "pipeline/sample.h"
#include "util/stage_timer.h"
#include "pipeline/summary.h"
#include "profile/unwind_stats.h"
#include "sampling/capture.h"
#include "pipeline/consumer.h"
#include "sampling/loader.h"
#include "sampling/targets.h"
#include "symbols/ksyms.h"
#include "pipeline/symbolizer.h"
#include "util/file.h"
#include "util/log.h"
#include "util/util.h"

/* How long `-- CMD` may take to exit after bpfprof was asked to stop. */
#define STOP_GRACE_NS (3 * 1000000000ull)

/* /proc/stat "cpu" line: user, nice, system, irq, softirq; guest time is part of user. */
int64_t session__machine_busy_ns(void)
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

void session__reap_child(struct session *s, int flags)
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
			session__reap_child(s, WNOHANG);
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
			s->sighup = true;
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
	struct bpf_stats st;

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

int session__run_loop(struct session *s, session_tick_fn tick, void *ctx)
{
	struct bpfprof_opts *o = s->opts;
	uint64_t stop_at = o->duration_ns ? s->start_ns + o->duration_ns : UINT64_MAX;
	uint64_t next_check = 0, next_sweep = now_ns() + 5000000000ull, now;
	unsigned int swept;
	bool periodic;
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
		periodic = now >= next_check;
		if (tick && tick(s, now, periodic, ctx))
			break;
		if (periodic) {
			next_check = now + 200000000ull;
			check_lost_events(s);
			if (o->pids_cnt && s->targets && !targets__alive(s->targets)) {
				pr_info("all target processes exited");
				break;
			}
		}
		poll(pfd, 2, o->drain_ms);
	}
	return 0;
}

void session__final_drain(struct session *s)
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
		ns = session__machine_busy_ns();
		return ns < 0 || s->busy_start_ns < 0 ? -1 : ns - s->busy_start_ns;
	}
	/* Each target's own, exits included: a command that does not reap its children (one
	 * killed by timeout) has their CPU time in no rusage. */
	return s->targets ? targets__cpu_ns(s->targets) : -1;
}

/* The profile in one format; what was written in *counts. 0 or a negative errno. */
static int write_profile(struct session *s, FILE *fp, enum output_format format,
			 struct output_counts *counts)
{
	const struct bpfprof_opts *o = s->opts;
	struct output_info info = {
		.what = o->cmd	  ? o->cmd[0] :
			o->all	  ? "all processes" :
			o->report ? o->report :
				    "processes",
		.event = o->event,
		.freq_hz = o->off_cpu && !o->on_cpu ? 0 : o->freq_hz,
		.time_ns = s->start_realtime_ns,
		.duration_ns = s->end_ns - s->start_ns,
		.comment = s->cmdline,
		.title = o->title,
	};

	return output__write(s->agg, fp, format, &info, counts);
}

/* Removes the temp files of the outputs not written (an error, a signal before the end). */
static void close_outputs(struct session *s)
{
	size_t i;

	for (i = 0; i < s->outs_cnt; i++)
		if (s->outs[i].fp)
			output_file__abort(&s->outs[i], 0);
	s->outs_cnt = 0;
}

/* A missing or read-only directory, a FIFO without a reader, a link of another user fail now,
 * before the targets run, not after. */
int session__open_outputs(struct session *s)
{
	const struct bpfprof_opts *o = s->opts;
	size_t i, n = o->outputs_cnt ? o->outputs_cnt : 1;
	enum output_format format;
	const char *path;

	for (i = 0; i < n; i++) {
		path = o->outputs_cnt ? o->outputs[i] :
		       o->cmd	      ? output__default_name(o->format) :
					"-";
		format = o->outputs_cnt ? o->formats[i] : o->format;
		if (format != OUTPUT_FOLDED && !strcmp(path, "-") && isatty(STDOUT_FILENO)) {
			pr_warn("not writing a %s to a terminal: give -o FILE",
				output__format_name(format));
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

/* Writes the profile to an output of session__open_outputs(). 0 or a negative errno. */
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
		pr_info("wrote %" PRIu64 " folded stacks (%" PRIu64 " %s) to %s", c.stacks,
			c.samples,
			!s->opts->off_cpu ? "samples" :
			s->opts->on_cpu	  ? "us on and off CPU" :
					    "us off CPU",
			path);
	else if (path && s->opts->off_cpu)
		pr_info("wrote %s of %.3f s off CPU to %s", output__format_name(format),
			aggregate__weight(s->agg, SAMPLE_OFF_CPU).ns / 1e9, path);
	else if (path && format == OUTPUT_PPROF)
		pr_info("wrote pprof profile of %" PRIu64 " samples (%" PRIu64 " stacks by thread) "
			"to %s",
			c.samples, c.stacks, path);
	else if (path)
		pr_info("wrote %s of %" PRIu64 " samples to %s", output__format_name(format),
			c.samples, path);
	return err;
}

int session__close_capture(struct session *s)
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

int session__write_outputs(struct session *s)
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

static void print_prog_stats(const char *name, uint64_t run_cnt, uint64_t run_time_ns,
			     uint64_t misses, void *arg)
{
	uint64_t *total_ns = arg;

	/* A run skipped: whatever it had to count (an off-CPU switch-in) is not. */
	if (misses)
		fprintf(stderr,
			"bpfprof: BPF program %s: %llu runs skipped by the kernel "
			"(recursion misses)\n",
			name, (unsigned long long)misses);
	if (!run_cnt)
		return;
	*total_ns += run_time_ns;
	fprintf(stderr, "bpfprof: BPF program %s: %llu runs, %.2f us each, %.3f s in all\n", name,
		(unsigned long long)run_cnt, run_time_ns / 1e3 / run_cnt, run_time_ns / 1e9);
}

/* --stats: the process table's work and bpfprof's own footprint. */
static void print_stats_totals(struct session *s, const struct bpf_stats *bpf)
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

void session__print_summary(struct session *s)
{
	struct bpf_stats bpf = {};
	struct summary_input in = {
		.duration_ns = s->end_ns - s->start_ns,
		.freq_hz = s->opts->freq_hz,
		.target_cpu_ns = target_cpu_ns(s),
		.bpf = s->loader ? &bpf : NULL,
		.consumer = consumer__stats(s->consumer),
		.agg = s->agg,
		.pt = s->pt,
		.unwound = sample_handler__unwound(s->sh),
		.top = s->opts->top,
		.off_cpu = s->opts->off_cpu,
		.on_cpu = s->opts->on_cpu,
		.off_cpu_min_ns = s->opts->off_cpu_min_ns,
		.runtimes = s->runtimes,
		.off_cpu_joins = sample_handler__off_cpu(s->sh),
	};

	if (s->loader)
		loader__read_stats(s->loader, &bpf);
	/* The top functions need names: a no-op when an output's run named them already. */
	if (!s->opts->quiet && s->opts->top && symbolizer__run(s->symbolizer, s->agg))
		in.top = 0;
	if (!s->opts->quiet) {
		summary__print(stderr, &in);
		runtimes__summary(s->runtimes, s->loader ? &bpf : NULL, stderr);
	}
	if (s->ustats) {
		unwind_stats__print(s->ustats, stderr, 20);
		runtimes__stats(s->runtimes, s->loader ? &bpf : NULL, stderr);
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

static int set_copy_size(void *ctx, uint32_t tgid, uint32_t bytes)
{
	return loader__set_copy_size(ctx, tgid, bytes);
}

int session__setup_pipeline(struct session *s, int ringbuf_fd, uint32_t stack_cap, bool lazy_maps,
			    proc_maps_text_fn maps_text, void *maps_ctx)
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
		.copy = { .init_sz = o->copy_size, .max_sz = o->max_copy_size },
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
	pto.maps_text = maps_text;
	pto.maps_ctx = maps_ctx;
	if (!s->ksyms)
		s->ksyms = ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		pr_warn("load kernel symbols (/proc/kallsyms): %s; kernel frames show as "
			"addresses",
			strerror(errno));
	sho.ksyms = s->ksyms;
	s->pt = proc_table__new(&pto);
	s->agg = aggregate__new();
	if (s->agg && o->freq_hz)
		aggregate__set_period(s->agg, 1000000000ull / o->freq_hz);
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
	s->runtime_env.pt = s->pt;
	s->runtime_env.maps = s->loader ? loader__runtime_maps(s->loader) : NULL;
	s->runtime_env.ksyms = s->ksyms;
	s->runtime_env.live = s->loader != NULL;
	s->runtimes = runtimes__new(&s->runtime_env, o->runtimes_off);
	if (!s->runtimes) {
		pr_warn("set up runtimes: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	sho.runtimes = s->runtimes;
	s->sh = sample_handler__new(s->pt, s->agg, &sho);
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
	consumer__set_runtimes(s->consumer, s->runtimes);
	return 0;
}

int session__setup(struct session *s)
{
	struct bpfprof_opts *o = s->opts;
	struct loader_opts lo = {
		.copy_size = o->copy_size,
		.max_copy_size = o->max_copy_size,
		.ringbuf_sz = o->ringbuf_sz,
		.max_targets = 16384,
		.target_all = o->all,
		.self_tgid = getpid(),
		.runtimes_off = o->runtimes_off,
		.max_frames = o->max_frames,
		.off_cpu = o->off_cpu,
		.off_cpu_min_ns = o->off_cpu_min_ns,
		.off_cpu_max_rate = o->off_cpu_max_rate,
		.wakers = o->wakers,
	};
	struct perf_event_opts po = { .event = o->event, .freq_hz = o->freq_hz };
	struct loader_error le;
	struct capture_header ch = {
		.max_copy_size = o->max_copy_size,
		.freq_hz = o->off_cpu && !o->on_cpu ? 0 : o->freq_hz,
		.flags = (o->all ? CAPTURE_F_LAZY_MAPS : 0) | (o->off_cpu ? CAPTURE_F_OFF_CPU : 0),
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
	/* --off-cpu: sched_switch, and a perf_event only with --on-cpu. */
	err = o->off_cpu && !o->on_cpu ? 0 : perf_events__open(&s->events, &po, &cpu);
	if (err)
		return report_event_error(o, -err, cpu, loader__features(s->loader));
	err = loader__attach_tracepoints(s->loader);
	if (!err && (!o->off_cpu || o->on_cpu))
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
	err = session__setup_pipeline(s, loader__ringbuf_fd(s->loader), o->max_copy_size, o->all,
				      o->raw_capture ? capture_maps_text : NULL, s);
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

/* Frees in the reverse order of use: the consumer feeds the sample handler, which fills the
 * aggregate, whose locations hold references on the process table's cached ELF files. */
void session__teardown(struct session *s)
{
	close_outputs(s);
	/* An error after the capture started: keep what it holds. */
	capture_writer__close(s->capture, 0, 0);
	consumer__free(s->consumer);
	sample_handler__free(s->sh);
	symbolizer__free(s->symbolizer);
	aggregate__free(s->agg);
	runtimes__free(s->runtimes); /* their references on ELF files too */
	s->runtimes = NULL;
	proc_table__free(s->pt);
	unwind_stats__free(s->ustats);
	ksyms__free(s->ksyms);
	perf_events__close(&s->events);
	loader__free(s->loader);
	targets__free(s->targets);
	if (s->sigfd >= 0)
		close(s->sigfd);
	s->sigfd = -1;
	free(s->cmdline);
	s->cmdline = NULL;
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

int session__init(struct session *s, struct bpfprof_opts *o, int argc, char **argv)
{
	sigset_t mask;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->sigfd = -1;
	s->cmdline = join_args(argc, argv);
	/* A closed stdout or stderr pipe is an error to report, not a reason to die before
	 * the output is written. */
	signal(SIGPIPE, SIG_IGN);
	/* Signals arrive through a signalfd; a child gets the old mask back before exec. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s->old_mask);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0) {
		pr_warn("create signalfd: %s", strerror(errno));
		return BPFPROF_EXIT_ERROR;
	}
	return 0;
}

struct aggregate *session__swap_aggregate(struct session *s, struct aggregate *fresh)
{
	struct aggregate *old = s->agg;

	sample_handler__set_aggregate(s->sh, fresh);
	s->agg = fresh;
	return old;
}

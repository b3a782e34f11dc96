// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* check.c: `bpfprof check`: probes, then a real load and attach, reported line by line. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "cmd/check.h"
#include "util/file.h"
#include "sampling/kernel_features.h"
#include "sampling/loader.h"
#include "util/log.h"
#include "sampling/perf_event.h"

#define TRACEFS_MAGIC 0x74726163 /* include/uapi/linux/magic.h */

/* The first line of a small /proc or /sys file (file__read_all()), without its newline; ""
 * when unreadable. */
static void read_line(const char *path, char *buf, size_t sz)
{
	size_t len;
	char *text;

	buf[0] = '\0';
	if (file__read_all(path, &text, &len))
		return;
	snprintf(buf, sz, "%.*s", (int)strcspn(text, "\n"), text);
	free(text);
}

static void print_privileges(FILE *out, const struct kernel_features *kf)
{
	char hint[160];

	fprintf(out, "privileges  uid %u; CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s: %s%s\n",
		(unsigned)geteuid(), kf->cap_bpf ? "yes" : "no", kf->cap_perfmon ? "yes" : "no",
		kf->cap_sys_admin ? "yes" : "no",
		kernel_features__privileged(kf) ? "enough" : "NOT ENOUGH: ",
		kernel_features__privilege_hint(kf, hint, sizeof(hint)));
}

static void print_system(FILE *out, const struct kernel_features *kf)
{
	char buf[256];
	int paranoid;
	struct statfs sfs;

	paranoid = kernel_features__paranoid();
	if (paranoid > 2)
		fprintf(out,
			"paranoid    kernel.perf_event_paranoid = %d: above 2 (a Debian and Ubuntu "
			"patch), only CAP_SYS_ADMIN opens perf_events%s\n",
			paranoid, kf->cap_sys_admin ? "" : " (not this process: set it to 2)");
	else
		fprintf(out,
			"paranoid    kernel.perf_event_paranoid = %d (no limit with CAP_PERFMON "
			"or root)\n",
			paranoid);
	read_line("/sys/kernel/security/lockdown", buf, sizeof(buf));
	fprintf(out, "lockdown    %s%s\n", buf[0] ? buf : "unknown (securityfs not mounted)",
		strstr(buf, "[confidentiality]") ?
			": BPF cannot read kernel memory, bpfprof cannot run" :
			"");
	if (!statfs("/sys/kernel/tracing", &sfs) && sfs.f_type == TRACEFS_MAGIC)
		fprintf(out, "tracefs     mounted at /sys/kernel/tracing (not needed: BTF "
			     "tracepoints attach without it)\n");
	else
		fprintf(out, "tracefs     not mounted (not needed: BTF tracepoints attach "
			     "without it)\n");
	read_line("/proc/sys/kernel/bpf_stats_enabled", buf, sizeof(buf));
	fprintf(out,
		"bpf_stats   kernel.bpf_stats_enabled = %s (--stats turns it on for its "
		"BPF cost figures)\n",
		buf[0] ? buf : "? (Linux < 5.1)");
}

/* Loads, attaches and opens the event as a run would; 0 when all of it worked. */
static int try_run(FILE *out, const char *event, unsigned long long freq_hz)
{
	struct loader_opts lo = {
		.copy_size = 16384,
		.max_copy_size = BPFPROF_STACK_SZ_MAX,
		.ringbuf_sz = 1 << 20,
		.max_targets = 1024,
		.self_tgid = getpid(),
	};
	struct perf_event_opts po = { .event = event, .freq_hz = freq_hz };
	struct perf_events pe = {};
	struct loader_error le;
	struct loader *l;
	int err, cpu = -1, ret = 1;

	fflush(out);
	l = loader__load(&lo, &le);
	if (!l) {
		fprintf(out, "programs    FAILED to load (the line below says why)\n");
		fflush(out);
		loader__report_error(&le);
		return 1;
	}
	fprintf(out, "programs    loaded: %s\n",
		loader__compat(l) ?
			"with the fallbacks for kernels before 5.17 (bpf/compat.bpf.h)" :
			"the programs for Linux >= 5.17 (no fallback needed)");
	err = loader__attach_tracepoints(l);
	if (err) {
		fprintf(out, "tracepoints FAILED to attach: %s\n", strerror(-err));
		goto out;
	}
	fprintf(out, "tracepoints attached: sched_process_fork/exec/exit, sys_exit\n");
	err = perf_events__open(&pe, &po, &cpu);
	if (err) {
		fprintf(out, "perf_event  %s at %llu Hz FAILED on CPU %d: %s%s\n", event, freq_hz,
			cpu, strerror(-err),
			err == -ENOENT || err == -EOPNOTSUPP ?
				" (no such event here: a VM without a hardware PMU has cpu-clock only)" :
				"");
		goto out;
	}
	err = loader__attach_perf_events(l, &pe);
	if (err) {
		fprintf(out, "perf_event  %s: attaching the sampler FAILED: %s\n", event,
			strerror(-err));
		goto out;
	}
	fprintf(out, "perf_event  %s at %llu Hz opened on %d CPUs, sampler attached\n", event,
		freq_hz, pe.cnt);
	ret = 0;
out:
	loader__free(l);
	perf_events__close(&pe);
	return ret;
}

int check__run(FILE *out, const char *event, unsigned long long freq_hz)
{
	struct kernel_features kf;
	enum kernel_feature missing;
	int ret;

	kernel_features__probe(&kf);
	fprintf(out, "bpfprof %s check\n", BPFPROF_VERSION);
	fprintf(out, "kernel      %s (bpfprof supports Linux >= 5.10 with BTF)\n", kf.release);
	print_privileges(out, &kf);
	fprintf(out, "BPF features (the release that introduced each):\n");
	if (kernel_features__denied(&kf))
		fprintf(out,
			"  (the kernel refused some probes: without privileges they cannot tell)\n");
	kernel_features__print(&kf, out);
	print_system(out, &kf);
	ret = try_run(out, event, freq_hz);
	missing = kernel_features__missing(&kf);
	if (ret && !kernel_features__privileged(&kf))
		fprintf(out, "result      bpfprof CANNOT run with these privileges\n");
	else if (ret)
		fprintf(out, "result      bpfprof CANNOT run here%s%s\n",
			missing != KF__CNT ? ": no " : "",
			missing != KF__CNT ? kernel_feature__info(missing)->name : "");
	else
		fprintf(out, "result      bpfprof can run here (-- CMD, -p, -a, agent)%s\n",
			kernel_features__compat(&kf) ? ", on fallbacks" : "");
	fflush(out);
	return ret;
}

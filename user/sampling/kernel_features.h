/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kernel_features.h: the kernel features bpfprof's BPF programs use, probed at load time.
 * Each is required (no BPF ringbuf: nothing runs), or has a fallback (bpf/compat.bpf.h): the
 * loader loads the programs built on the fallbacks when any such feature is missing.
 */
#ifndef BPFPROF_KERNEL_FEATURES_H
#define BPFPROF_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

enum kernel_feature {
	KF_BTF,		     /* /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF) */
	KF_PERF_EVENT_PROG,  /* BPF_PROG_TYPE_PERF_EVENT */
	KF_RINGBUF,	     /* BPF_MAP_TYPE_RINGBUF */
	KF_CURRENT_TASK_BTF, /* bpf_get_current_task_btf() */
	KF_TASK_STORAGE,     /* BPF_MAP_TYPE_TASK_STORAGE */
	KF_TASK_PT_REGS,     /* bpf_task_pt_regs() */
	KF_FIND_VMA,	     /* bpf_find_vma() */
	KF__CNT
};

/* What bpfprof knows of a feature: its name as users and kernel docs say it, the mainline
 * release that introduced it, and the fallback used without it (NULL: required). */
struct kernel_feature_info {
	const char *name;
	const char *since;    /* "5.8" */
	const char *fallback; /* NULL: bpfprof cannot run without it */
	const char *key;      /* short name for BPFPROF_TEST_NO_FEATURES */
};

struct kernel_features {
	bool have[KF__CNT];
	/* The probe was refused for want of privilege (EPERM or EACCES): whether the kernel has
	 * the feature is unknown, not missing. have[] is false for these. */
	bool denied[KF__CNT];
	/* Effective capabilities (/proc/self/status CapEff): CAP_BPF and CAP_PERFMON (5.8), or
	 * CAP_SYS_ADMIN, load the programs. */
	bool cap_bpf, cap_perfmon, cap_sys_admin;
	/* struct mm_struct has mm_rb, the VMA red-black tree (kernels before 6.1, from the kernel's
	 * BTF): the compat programs' bpf_find_vma() fallback walks it. */
	bool vma_tree;
	/* The running kernel's release (uname -r), e.g. "6.1.0-28-amd64". */
	char release[128];
};

/* The feature's description; never NULL for feat < KF__CNT. */
const struct kernel_feature_info *kernel_feature__info(enum kernel_feature feat);

/*
 * Probes every feature (BPF programs and maps loaded and freed at once: needs CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN). A probe the kernel refuses with EPERM or EACCES (no
 * capability, even as root in a container without them; an LSM) sets denied[], not missing:
 * the helpers, probed in perf_event programs, are denied with that program type. The
 * environment variable BPFPROF_TEST_NO_FEATURES=key[,key...] makes the named probes fail, for
 * tests of the fallbacks' selection and of the messages.
 */
void kernel_features__probe(struct kernel_features *kf);

/* kernel.perf_event_paranoid, or -100 when unreadable. Above 2 comes from a Debian and Ubuntu
 * patch: perf_event_open(2) only with CAP_SYS_ADMIN (measured on Debian's 6.1: CAP_PERFMON is
 * not enough). */
int kernel_features__paranoid(void);

/*
 * Whether bpfprof has the privileges to load BPF programs and open perf_events: CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN, in its effective set; or euid 0 when no probe was denied
 * (the capabilities could not be read). Root without the capabilities (a container started
 * without them) is not privileged: its probes are denied.
 */
bool kernel_features__privileged(const struct kernel_features *kf);

/* Whether some probe was denied (kernel_features__probe()): the features cannot be told. */
bool kernel_features__denied(const struct kernel_features *kf);

/*
 * Why kf is not privileged and what to do, for messages, in buf (sz bytes, truncated):
 * "no CAP_BPF, CAP_PERFMON or CAP_SYS_ADMIN; run as root or grant CAP_BPF and CAP_PERFMON",
 * naming only the capabilities it lacks; as root, "root without ... (a container started
 * without them?); grant ...". "" when kf is privileged. Returns buf.
 */
char *kernel_features__privilege_hint(const struct kernel_features *kf, char *buf, size_t sz);

/* The first feature kf lacks that bpfprof cannot do without: a required one, or one with a
 * fallback when the fallbacks cannot run either (no mm_rb: a kernel >= 6.1 that lacks a 5.17
 * feature, a vendor kernel or a forced probe). A denied probe is no missing feature. KF__CNT
 * when nothing is known to be missing. */
enum kernel_feature kernel_features__missing(const struct kernel_features *kf);

/* Whether the programs built on the fallbacks are needed (a feature with one is missing, not
 * denied). */
bool kernel_features__compat(const struct kernel_features *kf);

/*
 * One line per feature: "  ok        BPF ringbuf (Linux 5.8)", "  fallback  bpf_find_vma()
 * (Linux 5.17): <fallback>", "  MISSING   ...", "  UNKNOWN   ... (no privilege to probe)".
 * For `bpfprof check`.
 */
void kernel_features__print(const struct kernel_features *kf, FILE *out);

#endif /* BPFPROF_KERNEL_FEATURES_H */

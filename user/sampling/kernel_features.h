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
 * Probes every feature (BPF programs and maps loaded and freed at once: needs CAP_BPF or
 * root; without them every BPF probe says missing). The environment variable
 * BPFPROF_TEST_NO_FEATURES=key[,key...] makes the named probes fail, for tests of the
 * fallbacks' selection and of the messages.
 */
void kernel_features__probe(struct kernel_features *kf);

/* kernel.perf_event_paranoid, or -100 when unreadable. Above 2 comes from a Debian and Ubuntu
 * patch: perf_event_open(2) only with CAP_SYS_ADMIN (measured on Debian's 6.1: CAP_PERFMON is
 * not enough). */
int kernel_features__paranoid(void);

/* Whether the capabilities allow loading BPF programs and opening perf_events. */
bool kernel_features__privileged(const struct kernel_features *kf);

/* The first feature kf lacks that bpfprof cannot do without: a required one, or one with a
 * fallback when the fallbacks cannot run either (no mm_rb: a kernel >= 6.1 that lacks a 5.17
 * feature, a vendor kernel or a forced probe). KF__CNT when bpfprof can run. */
enum kernel_feature kernel_features__missing(const struct kernel_features *kf);

/* Whether the programs built on the fallbacks are needed (a feature with one is missing). */
bool kernel_features__compat(const struct kernel_features *kf);

/*
 * One line per feature: "  ok        BPF ringbuf (Linux 5.8)", "  fallback  bpf_find_vma()
 * (Linux 5.17): <fallback>", "  MISSING   ...". For `bpfprof check`.
 */
void kernel_features__print(const struct kernel_features *kf, FILE *out);

#endif /* BPFPROF_KERNEL_FEATURES_H */

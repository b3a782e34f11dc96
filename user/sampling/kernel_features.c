// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel_features.c: probes of the kernel features the BPF programs use (libbpf's probes). */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "util/file.h"
#include "sampling/kernel_features.h"

/* Versions: the mainline release that added each (kernel commit history, as in
 * bpf-helpers(7) and libbpf's feature probes). */
static const struct kernel_feature_info infos[KF__CNT] = {
	[KF_BTF] = { "BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)", "5.4", NULL, "btf" },
	[KF_PERF_EVENT_PROG] = { "BPF programs on perf_events", "4.9", NULL, "perf_event" },
	[KF_RINGBUF] = { "BPF ringbuf", "5.8", NULL, "ringbuf" },
	[KF_CURRENT_TASK_BTF] = { "bpf_get_current_task_btf()", "5.11",
				  "bpf_get_current_task() and CO-RE reads", "current_task_btf" },
	[KF_TASK_STORAGE] = { "BPF task storage", "5.11",
			      "a direct-mapped array, a slot per thread id", "task_storage" },
	[KF_TASK_PT_REGS] = { "bpf_task_pt_regs()", "5.15",
			      "the pt_regs at the top of the task's kernel stack", "task_pt_regs" },
	[KF_FIND_VMA] = { "bpf_find_vma()", "5.17",
			  "a walk of the mm's VMA tree (mm_rb, kernels before 6.1)", "find_vma" },
};

const struct kernel_feature_info *kernel_feature__info(enum kernel_feature feat)
{
	return &infos[feat];
}

/* Whether BPFPROF_TEST_NO_FEATURES names key. */
static bool disabled(const char *key)
{
	const char *list = getenv("BPFPROF_TEST_NO_FEATURES"), *p;
	size_t n = strlen(key);

	for (p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, key, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* Whether struct type id of btf has a member name, looking into anonymous struct and union
 * members too (since 4.19 all of mm_struct's fields sit in one anonymous struct). */
static bool has_member(const struct btf *btf, int id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	int i;

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (!t || !btf_is_composite(t) || depth > 4)
		return false;
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
		if (m->name_off == 0 && has_member(btf, m->type, name, depth + 1))
			return true;
		if (m->name_off && !strcmp(btf__name_by_offset(btf, m->name_off), name))
			return true;
	}
	return false;
}

/* Whether the kernel's struct mm_struct has mm_rb (its BTF; false without BTF). */
static bool has_vma_tree(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "mm_struct", BTF_KIND_STRUCT);
	if (id > 0)
		found = has_member(btf, id, "mm_rb", 0);
	btf__free(btf);
	return found;
}

/* A refusal for want of privilege, not an answer about the kernel. */
static bool is_denial(int err)
{
	return err == EPERM || err == EACCES;
}

/*
 * Records a libbpf probe's answer for feat: ret 1 has it; else err (the errno the failed bpf()
 * call left: libbpf's prog and map probes return 0 or a negative errno without clobbering it)
 * tells a denial from a missing feature.
 */
static void record_probe(struct kernel_features *kf, enum kernel_feature feat, int ret, int err)
{
	kf->have[feat] = ret == 1;
	kf->denied[feat] = ret != 1 && (is_denial(err) || is_denial(-ret));
}

/*
 * BPF_PROG_TYPE_PERF_EVENT, probed with bpf_prog_load() itself for its errno: EINVAL for a
 * type the kernel does not know, EPERM without CAP_PERFMON (or CAP_BPF).
 */
static void probe_perf_event_prog(struct kernel_features *kf)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns, 2, NULL);
	err = fd < 0 ? -fd : 0;
	if (fd >= 0)
		close(fd);
	record_probe(kf, KF_PERF_EVENT_PROG, fd >= 0, err);
}

/* A map type: libbpf's probe, its errno kept. */
static void probe_map(struct kernel_features *kf, enum kernel_feature feat, enum bpf_map_type type)
{
	int ret;

	errno = 0;
	ret = libbpf_probe_bpf_map_type(type, NULL);
	record_probe(kf, feat, ret, errno);
}

/*
 * A helper in perf_event programs. libbpf's helper probe reads the verifier's log, and says
 * "supported" when the load is refused before any log: its answer stands only when a
 * perf_event program could be loaded; else the helper is denied or missing with the type.
 */
static void probe_helper(struct kernel_features *kf, enum kernel_feature feat, enum bpf_func_id id)
{
	int ret;

	if (!kf->have[KF_PERF_EVENT_PROG]) {
		kf->have[feat] = false;
		kf->denied[feat] = kf->denied[KF_PERF_EVENT_PROG];
		return;
	}
	/* The type loads: a 0 is the verifier's "unknown func", a missing helper. */
	errno = 0;
	ret = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL);
	record_probe(kf, feat, ret, ret < 0 ? errno : 0);
}

/* Capability numbers: include/uapi/linux/capability.h. */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT	  38
#define CAP_BPF_BIT	  39

static void read_caps(struct kernel_features *kf)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	kf->cap_sys_admin = eff >> CAP_SYS_ADMIN_BIT & 1;
	kf->cap_perfmon = eff >> CAP_PERFMON_BIT & 1;
	kf->cap_bpf = eff >> CAP_BPF_BIT & 1;
}

int kernel_features__paranoid(void)
{
	char *text;
	size_t len;
	int v = -100;

	if (!file__read_all("/proc/sys/kernel/perf_event_paranoid", &text, &len)) {
		if (sscanf(text, "%d", &v) != 1)
			v = -100;
		free(text);
	}
	return v;
}

bool kernel_features__denied(const struct kernel_features *kf)
{
	int i;

	for (i = 0; i < KF__CNT; i++)
		if (kf->denied[i])
			return true;
	return false;
}

bool kernel_features__privileged(const struct kernel_features *kf)
{
	return kf->cap_sys_admin || (kf->cap_bpf && kf->cap_perfmon) ||
	       (geteuid() == 0 && !kernel_features__denied(kf));
}

char *kernel_features__privilege_hint(const struct kernel_features *kf, char *buf, size_t sz)
{
	const char *lack = !kf->cap_bpf && !kf->cap_perfmon ? "CAP_BPF, CAP_PERFMON" :
			   !kf->cap_bpf			    ? "CAP_BPF" :
							      "CAP_PERFMON";

	if (kernel_features__privileged(kf))
		snprintf(buf, sz, "%s", "");
	else if (geteuid() == 0)
		snprintf(buf, sz,
			 "root without %s or CAP_SYS_ADMIN (a container started without them?); "
			 "grant CAP_BPF and CAP_PERFMON",
			 lack);
	else
		snprintf(buf, sz,
			 "no %s or CAP_SYS_ADMIN; run as root or grant CAP_BPF and "
			 "CAP_PERFMON",
			 lack);
	return buf;
}

void kernel_features__probe(struct kernel_features *kf)
{
	struct utsname u;
	int i;

	memset(kf, 0, sizeof(*kf));
	if (!uname(&u))
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	read_caps(kf);
	kf->have[KF_BTF] = !access("/sys/kernel/btf/vmlinux", R_OK);
	kf->denied[KF_BTF] = !kf->have[KF_BTF] && is_denial(errno);
	probe_perf_event_prog(kf);
	probe_map(kf, KF_RINGBUF, BPF_MAP_TYPE_RINGBUF);
	probe_helper(kf, KF_CURRENT_TASK_BTF, BPF_FUNC_get_current_task_btf);
	/* The map type (5.11) and its helpers in tracing programs (5.12). */
	probe_map(kf, KF_TASK_STORAGE, BPF_MAP_TYPE_TASK_STORAGE);
	if (kf->have[KF_TASK_STORAGE])
		probe_helper(kf, KF_TASK_STORAGE, BPF_FUNC_task_storage_get);
	probe_helper(kf, KF_TASK_PT_REGS, BPF_FUNC_task_pt_regs);
	probe_helper(kf, KF_FIND_VMA, BPF_FUNC_find_vma);
	for (i = 0; i < KF__CNT; i++)
		if (disabled(infos[i].key))
			kf->have[i] = kf->denied[i] = false;
	/* Read only where the fallbacks are needed: the BTF costs ~50 ms to parse. */
	kf->vma_tree = kernel_features__compat(kf) && !disabled("vma_tree") && has_vma_tree();
}

enum kernel_feature kernel_features__missing(const struct kernel_features *kf)
{
	int i;

	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && !kf->denied[i] && !infos[i].fallback)
			return i;
	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && !kf->denied[i] && !kf->vma_tree)
			return i;
	return KF__CNT;
}

bool kernel_features__compat(const struct kernel_features *kf)
{
	int i;

	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && !kf->denied[i] && infos[i].fallback)
			return true;
	return false;
}

void kernel_features__print(const struct kernel_features *kf, FILE *out)
{
	const struct kernel_feature_info *fi;
	int i;

	for (i = 0; i < KF__CNT; i++) {
		fi = &infos[i];
		if (kf->have[i])
			fprintf(out, "  ok        %s (Linux %s)\n", fi->name, fi->since);
		else if (kf->denied[i])
			fprintf(out, "  UNKNOWN   %s (Linux %s): no privilege to probe\n", fi->name,
				fi->since);
		else if (fi->fallback && kf->vma_tree)
			fprintf(out, "  fallback  %s (Linux %s): %s\n", fi->name, fi->since,
				fi->fallback);
		else if (fi->fallback)
			fprintf(out,
				"  MISSING   %s (Linux %s): the fallbacks need mm->mm_rb (kernels "
				"before 6.1), which this kernel lacks\n",
				fi->name, fi->since);
		else
			fprintf(out, "  MISSING   %s (Linux %s): required\n", fi->name, fi->since);
	}
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel_features.c: probes of the kernel features the BPF programs use (libbpf's probes). */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
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

static bool helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL) == 1;
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

bool kernel_features__privileged(const struct kernel_features *kf)
{
	return kf->cap_sys_admin || (kf->cap_bpf && kf->cap_perfmon);
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
	kf->have[KF_PERF_EVENT_PROG] = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) ==
				       1;
	kf->have[KF_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	kf->have[KF_CURRENT_TASK_BTF] = helper(BPF_FUNC_get_current_task_btf);
	/* The map type (5.11) and its helpers in tracing programs (5.12). */
	kf->have[KF_TASK_STORAGE] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) ==
					    1 &&
				    helper(BPF_FUNC_task_storage_get);
	kf->have[KF_TASK_PT_REGS] = helper(BPF_FUNC_task_pt_regs);
	kf->have[KF_FIND_VMA] = helper(BPF_FUNC_find_vma);
	for (i = 0; i < KF__CNT; i++)
		if (disabled(infos[i].key))
			kf->have[i] = false;
	/* Read only where the fallbacks are needed: the BTF costs ~50 ms to parse. */
	kf->vma_tree = kernel_features__compat(kf) && !disabled("vma_tree") && has_vma_tree();
}

enum kernel_feature kernel_features__missing(const struct kernel_features *kf)
{
	int i;

	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && !infos[i].fallback)
			return i;
	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && !kf->vma_tree)
			return i;
	return KF__CNT;
}

bool kernel_features__compat(const struct kernel_features *kf)
{
	int i;

	for (i = 0; i < KF__CNT; i++)
		if (!kf->have[i] && infos[i].fallback)
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

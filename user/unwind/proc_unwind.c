// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_unwind.c: a process's unwinder and counters as an attachment of its process table entry. */
#include <errno.h>
#include <stdlib.h>
#include "unwind/proc_unwind.h"

struct proc_unwind {
	struct unwinder *uw;
	struct proc_stats stats;
};

/* After the entry's address space: its Dwfl points to the unwinder's context. */
static void proc_unwind__free(void *data)
{
	struct proc_unwind *pu = data;

	unwinder__free(pu->uw);
	free(pu);
}

/* No end hook: an exec or exit keeps the unwinder until the entry is freed. */
static const struct proc_attach_type proc_unwind_type = {
	.name = "unwind",
	.free = proc_unwind__free,
};

struct unwinder *proc_unwind__unwinder(struct proc *p)
{
	struct proc_unwind *pu = proc__attachment(p, &proc_unwind_type);
	int err;

	if (pu)
		return pu->uw;
	pu = calloc(1, sizeof(*pu));
	if (!pu)
		return NULL;
	pu->uw = unwinder__new(proc__addr_space(p), proc__ref_elf(p));
	if (!pu->uw) {
		free(pu);
		return NULL;
	}
	err = proc__attach(p, &proc_unwind_type, pu);
	if (err) {
		proc_unwind__free(pu);
		errno = -err;
		return NULL;
	}
	return pu->uw;
}

struct proc_stats *proc_unwind__stats(struct proc *p)
{
	struct proc_unwind *pu = proc__attachment(p, &proc_unwind_type);

	return pu ? &pu->stats : NULL;
}

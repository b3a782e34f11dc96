/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output_pprof.h: gzipped pprof profiles (profile.proto of github.com/google/pprof, copied in
 * user/proto/, encoded with protobuf-c, compressed with zlib), as go tool pprof, Pyroscope,
 * Parca and speedscope read them.
 */
#ifndef BPFPROF_OUTPUT_PPROF_H
#define BPFPROF_OUTPUT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/aggregate.h"
#include "util/output_file.h"

/* A label of a whole profile: key and value, NUL-terminated UTF-8. */
struct pprof_label {
	const char *key, *value;
};

struct pprof_opts {
	uint64_t freq_hz;    /* sampling rate: period = 1e9 / freq_hz ns of CPU per sample */
	int64_t time_ns;     /* start of the profile, CLOCK_REALTIME ns since the epoch */
	int64_t duration_ns; /* its length, ns */
	const char *comment; /* e.g. the command line; NULL: none */
	/* What the profile is of (service_name, exe, pod...): a string label of every sample, as
	 * Pyroscope (series labels it lacks) and Parca read them, and a "key=value" comment each
	 * (go tool pprof -comments). labels_cnt of them; borrowed for the call. */
	const struct pprof_label *labels;
	size_t labels_cnt;
	/* Only the samples keep() accepts (with the locations, mappings and functions they use);
	 * NULL: all. */
	bool (*keep)(const struct agg_stack *st, void *arg);
	void *keep_arg;
	/* only_origin: the samples of that origin only, and its two sample types (the agent's
	 * CPU and off-CPU profiles); false: every sample, the types of the origins the aggregate
	 * holds. */
	bool only_origin;
	enum sample_origin origin;
};

/*
 * Encodes agg (named by the symbolizer first) as a profile.proto Profile:
 * sample types samples/count and cpu/nanoseconds (count x period), period type
 * cpu/nanoseconds; one Sample per (pid, tid, stack) with leaf-first location ids and labels
 * pid, tid (numbers), comm and o->labels; one Location per unique location (ELF virtual address for files,
 * kernel address for the kernel), its lines innermost first (inline frames, the pprof
 * convention); one Mapping per ELF file (filename, hex build-id, ELF address range of its
 * PT_LOAD segments and the file offset of the first; has_* flags from what was found) and one
 * "[kernel.kallsyms]" mapping; Functions by (name, file).
 * *gz is a malloc'd gzip stream of *gz_sz bytes. Returns 0 or a negative errno.
 */
int output_pprof__encode(struct aggregate *agg, const struct pprof_opts *o, void **gz,
			 size_t *gz_sz);

/* output_pprof__encode() written to fp; counts (NULL: not wanted): the Samples encoded (one
 * per thread and stack) and the samples they hold. 0, -ENOMEM or -EIO. */
int output_pprof__write(struct aggregate *agg, FILE *fp, const struct pprof_opts *o,
			struct output_counts *counts);

#endif /* BPFPROF_OUTPUT_PPROF_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* capture.h: raw capture files (--raw-capture) and their replay (bpfprof report). */
#ifndef BPFPROF_CAPTURE_H
#define BPFPROF_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/record.h"

/*
 * File layout, version 1 (host byte order, written and read on the same machine):
 *   struct capture_header
 *   entries: __u32 sz, then sz bytes holding one record (starting with struct record_header),
 *   then zero padding to a multiple of 8 bytes.
 * Records are the ringbuf records as the consumer received them (samples with their stack
 * bytes: the file holds process memory, hence mode 0600), plus the capture-only records
 * below, in the order the consumer handled them.
 */
#define CAPTURE_MAGIC	"BPFPROF"
/* 2 added start_realtime_ns; version 1 files are still read (start_realtime_ns 0). */
#define CAPTURE_VERSION 2

/* The text of /proc/PID/maps as the process table read it (proc_table__read_maps(): with a
 * "root PATH" line for a process with a root of its own), before the record that made it read
 * (struct capture_maps_record). */
#define RECORD_CAPTURE_MAPS	100
/* The text of /proc/kallsyms at the start (struct capture_text_record with tgid 0): BPF
 * programs' symbols change from one load to the next. First record of a capture. */
#define RECORD_CAPTURE_KALLSYMS 102
/* The end of one ringbuf drain: exited processes are freed here (struct record_header). */
#define RECORD_CAPTURE_BATCH	101

/* The capture's process table read /proc/PID/maps lazily (proc_table_opts.lazy_maps, -a):
 * its replay must too, to ask for the recorded reads in the same order. */
#define CAPTURE_F_LAZY_MAPS (1u << 0)
/* --off-cpu: the capture holds blocked stacks (RECORD_OFF_CPU), and CPU samples only if
 * freq_hz is not 0 (--on-cpu). Older captures of --off-cpu alone have freq_hz 0. */
#define CAPTURE_F_OFF_CPU (1u << 1)

struct capture_header {
	char magic[8];		 /* CAPTURE_MAGIC, NUL-padded */
	__u32 version;		 /* CAPTURE_VERSION */
	__u32 hdr_sz;		 /* sizeof(struct capture_header) */
	__u32 max_copy_size;	 /* --max-stack-size of the capture: the largest copy, bytes */
	__u32 flags;		 /* CAPTURE_F_* (0 in captures of older versions) */
	__u64 freq_hz;		 /* -F of the capture */
	__u64 start_ns;		 /* CLOCK_MONOTONIC at the start */
	__u64 duration_ns;	 /* of the capture; 0 if it was not closed cleanly */
	__u64 start_realtime_ns; /* CLOCK_REALTIME at start_ns (pprof time_nanos); 0: unknown */
};

/* The header of a version 1 capture: up to duration_ns. */
#define CAPTURE_HDR_SZ_V1 offsetof(struct capture_header, start_realtime_ns)

struct capture_maps_record {
	struct record_header hdr; /* RECORD_CAPTURE_MAPS, RECORD_CAPTURE_KALLSYMS */
	__u32 tgid;		  /* 0 for kallsyms */
	__u32 len;		  /* bytes of text */
	char text[];
};

struct capture_writer;

/*
 * Creates path: a temp file of mode 0600 (at most) renamed over path at
 * capture_writer__close(), a regular file only (output_file__open(), OUTPUT_FILE_PRIVATE |
 * OUTPUT_FILE_REGULAR; it reports failures). Returns NULL and sets errno.
 */
struct capture_writer *capture_writer__open(const char *path, const struct capture_header *hdr);
/* Appends one record of sz bytes (starting with struct record_header). 0 or a negative errno:
 * the first write error (e.g. -ENOSPC), which every later call returns too. */
int capture_writer__record(struct capture_writer *w, const void *data, size_t sz);
/* Appends a RECORD_CAPTURE_MAPS of tgid (or, type RECORD_CAPTURE_KALLSYMS, the kallsyms text
 * with tgid 0). 0 or -errno. */
int capture_writer__text(struct capture_writer *w, uint32_t type, uint32_t tgid, const char *text,
			 size_t len);
/* Sets the profiled run's CLOCK_REALTIME start (0: keep the one given at open) and duration,
 * flushes, renames into place and frees w. 0 or a negative errno, the first write error of
 * the capture's life (the temp file is removed then). NULL is fine. */
int capture_writer__close(struct capture_writer *w, int64_t start_realtime_ns,
			  uint64_t duration_ns);

struct capture_reader;

/* Opens a capture and checks its header (-EINVAL: not a capture, -ENOTSUP: another version).
 * Returns NULL and sets errno. */
struct capture_reader *capture_reader__open(const char *path, struct capture_header *hdr);
/*
 * The next record: *data (8-byte aligned, valid until the next call) and *sz. Returns 1, 0 at
 * the end, or -EINVAL for a truncated or corrupt entry (what came before stays good).
 */
int capture_reader__next(struct capture_reader *r, const void **data, size_t *sz);
void capture_reader__close(struct capture_reader *r);

#endif /* BPFPROF_CAPTURE_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output.c: format dispatch to the profile writers. */
#include <inttypes.h>
#include "output/output.h"
#include "output/output_folded.h"
#include "output/output_pprof.h"
#include "output/output_svg.h"
#include "profile/aggregate.h"

static int write_svg(struct aggregate *agg, FILE *fp, const struct output_info *info,
		     struct output_counts *counts)
{
	char subtitle[256];
	struct flamegraph_opts fo = { .title = info->title, .subtitle = subtitle };
	struct sample_weight off = aggregate__weight(agg, SAMPLE_OFF_CPU);

	if (aggregate__mixed(agg)) { /* --off-cpu --on-cpu */
		fo.title = info->title ? info->title : "On- and Off-CPU Time Flame Graph";
		fo.unit = "us";
		snprintf(subtitle, sizeof(subtitle),
			 "%s, %s %" PRIu64 " Hz and time off CPU ([off-cpu]), %.1f s profiled, "
			 "%.3f s blocked",
			 info->what, info->event, info->freq_hz, info->duration_ns / 1e9,
			 off.ns / 1e9);
		return output_svg__write(agg, fp, &fo, counts);
	}
	if (aggregate__has_off_cpu(agg)) { /* --off-cpu */
		fo.title = info->title ? info->title : "Off-CPU Time Flame Graph";
		fo.unit = "us";
		snprintf(subtitle, sizeof(subtitle),
			 "%s, time off CPU (blocked), %.1f s profiled, %.3f s blocked in %" PRIu64
			 " periods",
			 info->what, info->duration_ns / 1e9, off.ns / 1e9, off.count);
		return output_svg__write(agg, fp, &fo, counts);
	}
	snprintf(subtitle, sizeof(subtitle), "%s, %s %" PRIu64 " Hz, %.1f s, %" PRIu64 " samples",
		 info->what, info->event, info->freq_hz, info->duration_ns / 1e9,
		 aggregate__samples(agg));
	return output_svg__write(agg, fp, &fo, counts);
}

int output__write(struct aggregate *agg, FILE *fp, enum output_format format,
		  const struct output_info *info, struct output_counts *counts)
{
	struct pprof_opts po = {
		.freq_hz = info->freq_hz,
		.time_ns = info->time_ns,
		.duration_ns = info->duration_ns,
		.comment = info->comment,
	};

	switch (format) {
	case OUTPUT_PPROF:
		return output_pprof__write(agg, fp, &po, counts);
	case OUTPUT_SVG:
		return write_svg(agg, fp, info, counts);
	case OUTPUT_FOLDED:
	default:
		return output_folded__write(agg, fp, counts);
	}
}

const char *output__format_name(enum output_format format)
{
	static const char *const names[] = {
		[OUTPUT_FOLDED] = "folded stacks",
		[OUTPUT_PPROF] = "pprof profile",
		[OUTPUT_SVG] = "flame graph",
	};

	return format <= OUTPUT_SVG ? names[format] : names[OUTPUT_FOLDED];
}

const char *output__default_name(enum output_format format)
{
	static const char *const names[] = {
		[OUTPUT_FOLDED] = "bpfprof.folded",
		[OUTPUT_PPROF] = "bpfprof.pb.gz",
		[OUTPUT_SVG] = "bpfprof.svg",
	};

	return format <= OUTPUT_SVG ? names[format] : names[OUTPUT_FOLDED];
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jit.h: the JIT runtime: frames in anonymous memory named from their process's perf map
 * (perf_map.h) when a profile is written. Its hooks are runtime_jit_ops (runtime/runtime.h).
 */
#ifndef BPFPROF_JIT_H
#define BPFPROF_JIT_H

#include "profile/frame_kind.h"

/* A symbol of a JIT's perf map (folded suffix "_[j]", green); its locations hold a reference
 * on the perf map (struct perf_map *). */
extern const struct frame_kind frame_kind_jit;

#define FRAME_JIT (&frame_kind_jit)

#endif /* BPFPROF_JIT_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* python_kind.h: the frame kind of Python functions (folded suffix "_[py]", blue). */
#ifndef BPFPROF_PYTHON_KIND_H
#define BPFPROF_PYTHON_KIND_H

#include "profile/frame_kind.h"

/* A Python function, named by its code object when its frame is read. */
extern const struct frame_kind frame_kind_python;

#define FRAME_PYTHON (&frame_kind_python)

#endif /* BPFPROF_PYTHON_KIND_H */

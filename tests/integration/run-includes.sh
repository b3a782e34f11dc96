#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-includes.sh: tools/check-includes.py fails on an include against the order of folders and
# names it, whatever the state of the tree: a copy of user/ gets an upward include planted
# (util/log.c -> cmd/opts.h), one runtime's folder includes another's, and a small tree in the
# order passes. The real tree's own check is `make check-includes`. No BPF, no privileges.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=$ROOT/tools/check-includes.py

# check NAME DIR: runs the script on DIR into $TEST_TMP/NAME.out, its status in CHECK_RC.
check() {
	python3 "$CHECK" "$2" >"$TEST_TMP/$1.out" 2>&1
	CHECK_RC=$?
	sed 's/^/  > /' "$TEST_TMP/$1.out" | tail -n 4
}

# A copy of the real tree with one upward include added: whatever the tree holds today, that
# line is reported, and it was not before.
test_planted_upward() {
	local tree=$TEST_TMP/planted

	mkdir -p "$tree"
	cp -r "$ROOT/user" "$ROOT/bpf" "$tree/"
	check before "$tree"
	sed -i '0,/^#include "/s//#include "cmd\/opts.h"\n&/' "$tree/user/util/log.c"
	check planted "$tree"
	assert_eq includes_planted_fails "$CHECK_RC" 1
	assert_grep includes_planted_named "$TEST_TMP/planted.out" \
		'^user/util/log\.c:[0-9]+: includes "cmd/opts\.h" \(folder cmd after util\)$'
	assert_true includes_planted_new "the planted line is not reported on the copy before" \
		bash -c "! grep -q '^user/util/log\.c:.*cmd/opts\.h' '$TEST_TMP/before.out'"
	assert_grep includes_planted_folder_cycle "$TEST_TMP/planted.out" \
		'^folder cycle: .*\<util\>|loop of [0-9]+ folders: .*\<util\>'
}

# mini_tree DIR: a tree whose includes all follow the order: util <- bpf/record.h <- process
# <- runtime (runtime.h, two runtimes) <- cmd.
mini_tree() {
	local d=$1

	mkdir -p "$d/user/util" "$d/user/process" "$d/user/runtime/aa" "$d/user/runtime/bb" \
		"$d/user/cmd" "$d/bpf"
	echo '/* records */' >"$d/bpf/record.h"
	echo '#include <stdint.h>' >"$d/user/util/util.h"
	printf '#include "util.h"\n' >"$d/user/util/util.c"
	printf '#include "bpf/record.h"\n#include "util/util.h"\n' >"$d/user/process/proc.h"
	printf '#include "process/proc.h"\n' >"$d/user/runtime/runtime.h"
	printf '#include "runtime/runtime.h"\n#include "util/util.h"\n' >"$d/user/runtime/runtime.c"
	printf '#include "runtime/runtime.h"\n' >"$d/user/runtime/aa/aa.h"
	printf '#include "runtime/runtime.h"\n#include "util/util.h"\n' >"$d/user/runtime/bb/bb.h"
	printf '#include "runtime/runtime.h"\n#include "bpf/record.h"\n' >"$d/user/cmd/main.c"
}

# The small tree passes; one runtime including another, or util including bpf/record.h, fails.
test_mini_tree() {
	local tree=$TEST_TMP/mini

	mini_tree "$tree"
	check mini "$tree"
	assert_eq includes_clean_passes "$CHECK_RC" 0
	assert_grep includes_clean_no_folder_cycle "$TEST_TMP/mini.out" ' 0 folder cycles$'

	printf '#include "runtime/bb/bb.h"\n' >>"$tree/user/runtime/aa/aa.h"
	check sibling "$tree"
	assert_eq includes_sibling_runtime_fails "$CHECK_RC" 1
	assert_grep includes_sibling_runtime_named "$TEST_TMP/sibling.out" \
		'^user/runtime/aa/aa\.h:2: includes "runtime/bb/bb\.h" \(runtime bb beside runtime aa'

	mini_tree "$TEST_TMP/mini2"
	printf '#include "bpf/record.h"\n' >>"$TEST_TMP/mini2/user/util/util.c"
	check util_record "$TEST_TMP/mini2"
	assert_eq includes_util_record_fails "$CHECK_RC" 1
	assert_grep includes_util_record_named "$TEST_TMP/util_record.out" \
		'^user/util/util\.c:2: includes "bpf/record\.h" \(folder bpf after util\)$'
}

test_planted_upward
test_mini_tree

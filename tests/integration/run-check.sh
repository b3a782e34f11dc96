#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-check.sh: `bpfprof check` on this kernel (each BPF feature ok or on its fallback, by the
# release that introduced it; the programs loaded and attached), and the one line a kernel
# without what bpfprof needs gets. Missing features are made by failing their probes
# (BPFPROF_TEST_NO_FEATURES), as they fail on a kernel before the feature.
. "$(dirname "$0")/../lib.sh"
require_bpf

# no_features FEATURES PREFIX ARGS...: bpfprof ARGS with those probes failing.
no_features() {
	local features=$1 prefix=$2

	shift 2
	run_limited 60 "$prefix" env BPFPROF_TEST_NO_FEATURES="$features" "$BPFPROF" "$@"
}

test_check() {
	local p=$TEST_TMP/check

	run_limited 60 "$p" "$BPFPROF" check
	sed 's/^/  > /' "$p.out"
	assert_eq check_exit "$BP_RC" 0
	assert_grep check_kernel "$p.out" "^kernel +$(uname -r) "
	assert_grep check_privileges "$p.out" '^privileges .*: enough$'
	assert_grep check_ringbuf "$p.out" '^  ok +BPF ringbuf \(Linux 5\.8\)$'
	assert_grep check_btf "$p.out" '^  ok +BTF .*\(Linux 5\.4\)$'
	if kernel_at_least 5 17; then
		assert_grep check_find_vma "$p.out" '^  ok +bpf_find_vma\(\) \(Linux 5\.17\)$'
		assert_grep check_programs "$p.out" '^programs +loaded: the programs for Linux >= 5\.17'
		assert_grep check_result "$p.out" '^result +bpfprof can run here \(-- CMD, -p, -a, agent\)$'
	else
		assert_grep check_find_vma "$p.out" '^  fallback +bpf_find_vma\(\) \(Linux 5\.17\): .*mm_rb'
		assert_grep check_programs "$p.out" '^programs +loaded: with the fallbacks'
		assert_grep check_result "$p.out" '^result +bpfprof can run here .*, on fallbacks$'
	fi
	if kernel_at_least 5 11; then
		assert_grep check_task_storage "$p.out" '^  ok +BPF task storage \(Linux 5\.11\)$'
	else
		assert_grep check_task_storage "$p.out" '^  fallback +BPF task storage \(Linux 5\.11\)'
	fi
	assert_grep check_tracepoints "$p.out" '^tracepoints attached'
	assert_grep check_perf_event "$p.out" '^perf_event +cpu-clock at 99 Hz opened on [0-9]+ CPUs, sampler attached$'
	# One screen.
	assert_le check_lines "$(wc -l <"$p.out")" 24
}

# A kernel before 5.8: no ringbuf. One line says so and what bpfprof needs; nothing is written.
test_no_ringbuf() {
	local p=$TEST_TMP/noringbuf

	no_features ringbuf "$p" -o "$p.folded" -- "$TARGETS/chain" 0.2
	assert_eq no_ringbuf_exit "$BP_RC" 1
	assert_eq no_ringbuf_one_line "$(wc -l <"$p.err")" 1
	assert_grep no_ringbuf_message "$p.err" \
		"^bpfprof: load BPF programs: this kernel \($(uname -r)\) has no BPF ringbuf \(Linux 5\.8\): bpfprof needs Linux >= 5\.10"
	assert_true no_ringbuf_no_output "no $p.folded" test ! -e "$p.folded"

	p=$TEST_TMP/noringbuf-check
	no_features ringbuf "$p" check
	assert_eq no_ringbuf_check_exit "$BP_RC" 1
	assert_grep no_ringbuf_check_row "$p.out" '^  MISSING +BPF ringbuf \(Linux 5\.8\): required$'
	assert_grep no_ringbuf_check_result "$p.out" '^result +bpfprof CANNOT run here: no BPF ringbuf$'
}

# A kernel built without CONFIG_DEBUG_INFO_BTF.
test_no_btf() {
	local p=$TEST_TMP/nobtf

	no_features btf "$p" -o "$p.folded" -- "$TARGETS/chain" 0.2
	assert_eq no_btf_exit "$BP_RC" 1
	assert_eq no_btf_one_line "$(wc -l <"$p.err")" 1
	assert_grep no_btf_message "$p.err" 'has no BTF \(/sys/kernel/btf/vmlinux\): .*CONFIG_DEBUG_INFO_BTF=y'
}

# A kernel without bpf_find_vma() whose fallback cannot run either (no mm_rb: what a vendor
# kernel >= 6.1 without the helper would be).
test_no_fallback() {
	local p=$TEST_TMP/nofallback

	no_features find_vma,vma_tree "$p" -o "$p.folded" -- "$TARGETS/chain" 0.2
	assert_eq no_fallback_exit "$BP_RC" 1
	assert_eq no_fallback_one_line "$(wc -l <"$p.err")" 1
	# The first feature with a fallback this kernel lacks: bpf_find_vma() at least.
	assert_grep no_fallback_message "$p.err" \
		'has no [A-Za-z_ ]+(\(\))? \(Linux 5\.1[0-9]\), and its fallback needs mm->mm_rb'
}

# lacks ERE FILE: no line of FILE matches ERE.
lacks() {
	! grep -Eq -- "$1" "$2"
}

# Root without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (a container started without them): the
# probes the kernel refuses are unknown, not missing; one line names the capabilities, nothing
# starts, nothing is written.
test_no_capabilities() {
	local p=$TEST_TMP/nocaps drop=-bpf,-perfmon,-sys_admin

	run_limited 60 "$p" setpriv --inh-caps=$drop --bounding-set=$drop -- \
		"$BPFPROF" -o "$p.folded" -- touch "$p.ran"
	assert_eq no_caps_exit "$BP_RC" 1
	assert_eq no_caps_one_line "$(wc -l <"$p.err")" 1
	assert_grep no_caps_names_caps "$p.err" \
		'^bpfprof: load BPF programs: .*CAP_BPF.*CAP_PERFMON.*; grant CAP_BPF and CAP_PERFMON'
	assert_true no_caps_not_kernel "no kernel blamed" lacks 'has no|needs Linux' "$p.err"
	assert_true no_caps_cmd_not_started "no $p.ran" test ! -e "$p.ran"
	assert_true no_caps_no_output "no $p.folded" test ! -e "$p.folded"

	p=$TEST_TMP/nocaps-check
	run_limited 60 "$p" setpriv --inh-caps=$drop --bounding-set=$drop -- "$BPFPROF" check
	sed 's/^/  > /' "$p.out"
	assert_eq no_caps_check_exit "$BP_RC" 1
	assert_grep no_caps_check_privileges "$p.out" '^privileges .*NOT ENOUGH: .*CAP_BPF'
	assert_grep no_caps_check_unknown "$p.out" \
		'^  UNKNOWN +BPF programs on perf_events \(Linux 4\.9\): no privilege to probe$'
	assert_grep no_caps_check_unknown_ringbuf "$p.out" '^  UNKNOWN +BPF ringbuf '
	assert_true no_caps_check_no_missing "no MISSING row" lacks 'MISSING' "$p.out"
	assert_grep no_caps_check_result "$p.out" '^result +bpfprof CANNOT run with these privileges$'
}

test_check
test_no_capabilities
test_no_ringbuf
test_no_btf
test_no_fallback

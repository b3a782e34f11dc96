#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-stats.sh: --stats telemetry on stderr: per process (samples, % to root, stops by reason),
# per module (frames, stops), totals. nocfi spins in libnocfi.so, a library without CFI: its
# module line must blame "no CFI"; chain unwinds to root, which its process line must say.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
RUN_S=2
CHAIN=$("$TARGETS/chain" --print-chain)
MIN_ROOT_PCT=95
# Under qemu's TCG ld.so's start-up takes 6% of a 2 s run's samples (131 of 2076 on 5.10), and
# a walk from there ends at RTLD_START, which has no CFI: a "no CFI" stop, not a root.
emulated && MIN_ROOT_PCT=90
# "no CFI" stops in libnocfi.so against nocfi's samples in it: one stop per such sample.
NO_CFI_TOLERANCE_PCT=10
# A process line's samples against the folded output's for that comm.
SAMPLES_TOLERANCE_PCT=5
# The first totals line, whole: "N ELF files open (M opened in all), ..." (tests/lib.sh).
TOTALS_RE=$STATS_TOTALS_RE

# The awk part of the queries below: proc() parses "bpfprof: process PID (COMM): N samples,
# P% to root; stops: ..." into pid, pcomm, psamples, proot, pstops; mod() parses
# "bpfprof:   module PATH: N frames (METHOD N, ...), N stops (REASON N, ...)" into mpath,
# mframes, mmethods, mstops, mreasons; reason(LIST, NAME) is NAME's count in "REASON N, REASON N"
# (0 if absent), for methods too.
STATS_AWK='
function proc(line,    s) {
	if (line !~ /^bpfprof: process [0-9]+ \(.*\): [0-9]+ samples, [0-9.]+% to root/)
		return 0
	s = line
	sub(/^bpfprof: process /, "", s)
	pid = s
	sub(/ .*/, "", pid)
	pcomm = s
	sub(/^[0-9]+ \(/, "", pcomm)
	sub(/\): [0-9]+ samples, .*/, "", pcomm)
	psamples = s
	sub(/.*\): /, "", psamples)
	sub(/ samples, .*/, "", psamples)
	proot = s
	sub(/.* samples, /, "", proot)
	sub(/% to root.*/, "", proot)
	pstops = s
	if (!sub(/.*% to root; stops: /, "", pstops))
		pstops = ""
	return 1
}
function mod(line,    s) {
	if (line !~ /^bpfprof:   module .*: [0-9]+ frames \(.*\), [0-9]+ stops/)
		return 0
	s = line
	sub(/^bpfprof:   module /, "", s)
	mpath = s
	sub(/: [0-9]+ frames \(.*$/, "", mpath)
	s = substr(s, length(mpath) + 3)
	mframes = s
	sub(/ frames .*/, "", mframes)
	mmethods = s
	sub(/^[0-9]+ frames \(/, "", mmethods)
	sub(/\), [0-9]+ stops.*$/, "", mmethods)
	mstops = s
	sub(/.*\), /, "", mstops)
	sub(/ stops.*/, "", mstops)
	mreasons = ""
	if (s ~ / stops \(.*\)$/) {
		mreasons = s
		sub(/.* stops \(/, "", mreasons)
		sub(/\)$/, "", mreasons)
	}
	return 1
}
function reason(list, name,    n, parts, i, r) {
	n = split(list, parts, /, /)
	for (i = 1; i <= n; i++) {
		r = parts[i]
		sub(/ [0-9]+$/, "", r)
		if (r == name) {
			sub(/.* /, "", parts[i])
			return parts[i] + 0
		}
	}
	return 0
}
'

# process_stats FILE COMM: "SAMPLES ROOT_PCT NO_CFI_STOPS" of the first process line of COMM,
# or nothing.
process_stats() {
	Q_COMM=$2 awk "$STATS_AWK"'
		proc($0) && pcomm == ENVIRON["Q_COMM"] {
			print psamples, proot, reason(pstops, "no CFI")
			exit
		}' "$1"
}

# module_stats FILE COMM MODULE: "FRAMES STOPS NO_CFI_STOPS CFI_FRAMES FP_FRAMES" of the module
# line whose path ends in /MODULE, below the first process line of COMM (CFI_FRAMES unwound by
# the CFI rows, FP_FRAMES by libdwfl's frame-pointer guess); or nothing.
module_stats() {
	Q_COMM=$2 Q_MODULE=$3 awk "$STATS_AWK"'
		proc($0) { if (inside) exit; inside = pcomm == ENVIRON["Q_COMM"]; next }
		inside && mod($0) {
			n = length(ENVIRON["Q_MODULE"]) + 1
			if (substr(mpath, length(mpath) - n + 1) == "/" ENVIRON["Q_MODULE"]) {
				print mframes, mstops, reason(mreasons, "no CFI"),
					reason(mmethods, "CFI"), reason(mmethods, "frame pointer")
				exit
			}
		}' "$1"
}

# events_lost FILE: N of the totals line's "N events lost".
events_lost() {
	awk -v re="$TOTALS_RE" '
		$0 ~ re { sub(/ events lost.*/, ""); sub(/.* /, ""); print; exit }' "$1"
}

# check_process_line LABEL PREFIX COMM: COMM's process line is there and counts the samples
# that the folded output has for COMM. Sets PROC (SAMPLES ROOT_PCT NO_CFI_STOPS).
check_process_line() {
	local label=$1 prefix=$2 comm=$3 folded_n

	read -r -a PROC <<<"$(process_stats "$prefix.err" "$comm")"
	folded_n=$(folded_samples "$prefix.folded" "$comm")
	echo "  $comm: process line ${PROC[*]:-missing} (samples, % to root, no CFI stops); $folded_n samples in the folded output"
	assert_grep "${label}_process_line" "$prefix.err" \
		"^bpfprof: process [0-9]+ \\($comm\\): [0-9]+ samples, [0-9.]+% to root; stops:"
	assert_within "${label}_process_samples" "$(ratio_pct "${PROC[0]:-x}" "$folded_n")" 100 \
		"$SAMPLES_TOLERANCE_PCT" %
}

# nocfi spins in libnocfi.so (no CFI): the unwinds stop there, for want of CFI.
test_no_cfi() {
	local p=$TEST_TMP/nocfi lib_samples mod

	run_bpfprof $((RUN_S + 40)) "$p" --stats -F "$HZ" -o "$p.folded" -- \
		"$TARGETS/nocfi" "$RUN_S"
	assert_eq stats_nocfi_exit "$BP_RC" 0
	grep -E '^bpfprof: (process|  module|[0-9]+ ELF files)' "$p.err" | sed 's/^/  > /'
	check_process_line stats_nocfi "$p" nocfi
	# nocfi's samples in libnocfi.so: a frame named ncf_* or libnocfi.so+0xOFF.
	lib_samples=$(Q_COMM=nocfi Q_FRAME_RE='ncf_.*|libnocfi[.]so[+]0x[0-9a-f]+' \
		awk "$FOLDED_AWK"'
		parse($0) && selected() {
			for (i = 1; i <= nfr; i++)
				if (fr[i] ~ frame_re) {
					n += cnt
					break
				}
		}
		END { print n + 0 }' "$p.folded")
	read -r -a mod <<<"$(module_stats "$p.err" nocfi libnocfi.so)"
	echo "  libnocfi.so: module line ${mod[*]:-missing} (frames, stops, no CFI stops, by CFI, by frame pointer); $lib_samples samples in it"
	assert_ge stats_nocfi_lib_samples "$lib_samples" "$(cpu_floor "$p" 1 4)"
	assert_grep stats_nocfi_module_line "$p.err" \
		'^bpfprof:   module /.*/libnocfi\.so: [0-9]+ frames \(.*\), [0-9]+ stops'
	assert_within stats_nocfi_module_no_cfi_stops \
		"$(ratio_pct "${mod[2]:-x}" "$lib_samples")" 100 "$NO_CFI_TOLERANCE_PCT" %
	# Each of them left libnocfi.so by libdwfl's frame-pointer guess: --stats says so.
	assert_within stats_nocfi_module_fp_frames \
		"$(ratio_pct "${mod[4]:-x}" "$lib_samples")" 100 "$NO_CFI_TOLERANCE_PCT" %
	assert_within stats_nocfi_process_no_cfi_stops \
		"$(ratio_pct "${PROC[2]:-x}" "$lib_samples")" 100 "$NO_CFI_TOLERANCE_PCT" %
	assert_grep stats_nocfi_totals_line "$p.err" "$TOTALS_RE"
}

# chain unwinds to _start: its process line says so; libchain.so's module line counts the
# 8 frames of each sample, and the totals show no lost event.
test_chain() {
	local p=$TEST_TMP/chain lib_frames samples mod

	run_bpfprof $((RUN_S + 40)) "$p" --stats -F "$HZ" -o "$p.folded" -- \
		"$TARGETS/chain" "$RUN_S"
	assert_eq stats_chain_exit "$BP_RC" 0
	grep -E '^bpfprof: (process|  module|[0-9]+ ELF files)' "$p.err" | sed 's/^/  > /'
	check_process_line stats_chain "$p" chain
	assert_ge stats_chain_to_root "${PROC[1]:-missing}" "$MIN_ROOT_PCT" %
	# libchain.so frames per chain_leaf sample, from the chain itself.
	lib_frames=$(tr ';' '\n' <<<"$CHAIN" | grep -c '^lib_f')
	samples=$(chain_stats "$p.folded" chain '^_start;' "$CHAIN")
	samples=${samples%% *}
	read -r -a mod <<<"$(module_stats "$p.err" chain libchain.so)"
	echo "  libchain.so: module line ${mod[*]:-missing} (frames, stops, no CFI stops, by CFI, by frame pointer); $samples samples in chain_leaf, $lib_frames frames each"
	assert_grep stats_chain_module_line "$p.err" \
		'^bpfprof:   module /.*/libchain\.so: [0-9]+ frames \(.*\), [0-9]+ stops'
	assert_ge stats_chain_module_frames "${mod[0]:-missing}" $((samples * lib_frames))
	# Unwound by the CFI rows (the fast path): all but a few (8 of 15,096 on 6.1 under TCG
	# went to libdwfl: rows the fast path does not express, at the instructions sampled).
	assert_ge stats_chain_module_cfi_frames "$(ratio_pct "${mod[3]:-x}" "${mod[0]:-x}")" 99 %
	assert_grep stats_chain_totals_line "$p.err" "$TOTALS_RE"
	assert_eq stats_chain_events_lost "$(events_lost "$p.err")" 0
}

test_no_cfi
test_chain

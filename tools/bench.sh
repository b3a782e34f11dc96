#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: bpfprof against perf, measured in the same run on the same machine.
#  1. Unwinding throughput: the same workload captured by bpfprof (--raw-capture) and by
#     perf record --call-graph dwarf; then N runs each of "bpfprof report" and "perf script"
#     (both unwind every sample with DWARF CFI offline). ns per sample and per frame.
#  3. End-to-end CPU per sample: bpfprof's own CPU and its BPF programs' run time against
#     perf record's own CPU plus perf script's, for the same fixed work at 999 Hz.
#  2. Overhead on the profiled program: its own CPU time (its own getrusage) for a fixed
#     amount of work, alone, under bpfprof and under perf record --call-graph dwarf, at 99 and
#     999 Hz.
# Distributions are p25/p50/p75 over N runs; ratios compare medians. Writes JSON.
set -eu
BIN=$(realpath "${1:-build/bpfprof}")
TARGETS=$(realpath "${2:-build/tests/targets}")
OUT=$(realpath -m "${3:-build/bench}")
N=${BENCH_RUNS:-9}
mkdir -p "$OUT"
TMP=$(mktemp -d /tmp/bpfprof-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

command -v perf >/dev/null || { echo "bench: perf is missing (apt-get install linux-perf)" >&2; exit 1; }

# quartiles: reads numbers on stdin, prints "p25 p50 p75".
quartiles() {
	sort -g | awk '{ v[NR] = $1 } END {
		q(0.25); q(0.5); q(0.75); printf "\n" }
		function q(p,   i) { i = int(p * (NR - 1) + 1.5); printf "%s ", v[i] }'
}

# seconds CMD...: wall seconds of CMD (output discarded).
seconds() {
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", e - s }'
}

json="{\"runs\": $N, \"unwind\": ["
sep=""
printf '%-10s %-14s %8s %26s %26s\n' workload tool samples "ns/sample p25 p50 p75" "ns/frame p25 p50 p75"
for w in chain python; do
	case $w in
	chain) cmd=("$TARGETS/chain" 3) ;;
	python) cmd=(/usr/bin/python3 -c 'import json, re
for i in range(600000):
    json.loads(json.dumps({"k": re.findall("[a-z]+", "word %d of the bench" % i)}))') ;;
	esac
	"$BIN" -q -F 999 --raw-capture "$TMP/$w.raw" -o "$TMP/$w.folded" -- "${cmd[@]}" 2>/dev/null
	perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$TMP/$w.perf" -- \
		"${cmd[@]}" >/dev/null 2>&1
	bp_samples=$(awk '{ n += $NF } END { print n }' "$TMP/$w.folded")
	bp_frames=$(awk '{ n += $NF * (split($1, f, ";") - 1) } END { print n }' "$TMP/$w.folded")
	perf script -i "$TMP/$w.perf" >"$TMP/$w.script" 2>/dev/null
	pf_samples=$(awk 'BEGIN { RS = "" } NF { n++ } END { print n }' "$TMP/$w.script")
	pf_frames=$(awk 'BEGIN { RS = "" } { n += split($0, l, "\n") - 1 } END { print n }' "$TMP/$w.script")
	for tool in bpfprof perf; do
		for ((i = 0; i < N; i++)); do
			if [ $tool = bpfprof ]; then
				seconds "$BIN" report "$TMP/$w.raw" -q -o /dev/null
			else
				seconds perf script -i "$TMP/$w.perf"
			fi
		done >"$TMP/$w.$tool.t"
		if [ $tool = bpfprof ]; then s=$bp_samples f=$bp_frames; else s=$pf_samples f=$pf_frames; fi
		read -r a b c <<<"$(awk -v n="$s" '{ print $1 * 1e9 / n }' "$TMP/$w.$tool.t" | quartiles)"
		read -r d e g <<<"$(awk -v n="$f" '{ print $1 * 1e9 / n }' "$TMP/$w.$tool.t" | quartiles)"
		printf '%-10s %-14s %8s %8.0f %8.0f %8.0f %8.1f %8.1f %8.1f\n' "$w" "$tool" "$s" "$a" "$b" "$c" "$d" "$e" "$g"
		json+="$sep{\"workload\": \"$w\", \"tool\": \"$tool\", \"samples\": $s, \"frames\": $f, \"ns_per_sample\": [$a, $b, $c], \"ns_per_frame\": [$d, $e, $g]}"
		sep=", "
		eval "med_${w}_${tool}=$b"
	done
	awk -v p="$(eval echo \$med_${w}_perf)" -v b="$(eval echo \$med_${w}_bpfprof)" -v w="$w" \
		'BEGIN { printf "%-10s perf script / bpfprof report, per sample (medians): %.1fx\n", w, p / b }'
done
json+="], \"overhead\": ["

# Overhead: the profiled program's own CPU time (its getrusage, printed on its stdout) for a
# fixed amount of work, so the profiler's start, stop and own CPU are not counted.
WORK=(/usr/bin/python3 -c 'import resource
sum(i * i for i in range(30000000))
r = resource.getrusage(resource.RUSAGE_SELF)
print("%.4f" % (r.ru_utime + r.ru_stime))')
printf '\n%-26s %24s %10s\n' "overhead (fixed work)" "own CPU s p25 p50 p75" "vs none"
sep=""
for mode in none bpfprof-99 perf-99 bpfprof-999 perf-999; do
	for ((i = 0; i < N; i++)); do
		case $mode in
		none) "${WORK[@]}" ;;
		bpfprof-*) "$BIN" -q -F "${mode#*-}" -o /dev/null -- "${WORK[@]}" 2>/dev/null ;;
		perf-*) perf record -q -e cpu-clock -F "${mode#*-}" --call-graph dwarf,16384 \
			-o "$TMP/o.perf" -- "${WORK[@]}" 2>/dev/null ;;
		esac | tail -n 1
	done >"$TMP/$mode.t"
	read -r a b c <<<"$(quartiles <"$TMP/$mode.t")"
	[ $mode = none ] && base=$b
	printf '%-26s %8.3f %7.3f %7.3f %9.1f%%\n' "$mode" "$a" "$b" "$c" \
		"$(awk -v b="$b" -v base="$base" 'BEGIN { print (b / base - 1) * 100 }')"
	json+="$sep{\"mode\": \"$mode\", \"own_cpu_s\": [$a, $b, $c]}"
	sep=", "
done
json+="], \"cpu_per_sample\": ["

# End-to-end CPU per sample, fixed work at 999 Hz: bpfprof's own CPU plus its BPF programs' run
# time (kernel.bpf_stats_enabled), against perf record's own CPU (less the program's) plus
# perf script's. perf's in-kernel stack copies are charged to the program (see overhead).
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
printf '\n%-26s %24s\n' "CPU per sample (999 Hz)" "us p25 p50 p75"
for ((i = 0; i < N; i++)); do
	"$BIN" --stats -F 999 -o /dev/null -- "${WORK[@]}" 2>"$TMP/bp.err" >/dev/null
	awk '/samples received/ { for (i = 1; i <= NF; i++) if ($i == "samples") n = $(i - 1) }
	     /own CPU/ { own = $4; for (i = 1; i <= NF; i++) if ($i == "programs") bpf = $(i + 1) }
	     END { printf "%.3f\n", (own + bpf) * 1e6 / n }' "$TMP/bp.err"
done >"$TMP/cps.bpfprof"
sysctl -q -w kernel.bpf_stats_enabled="$old_stats"
for ((i = 0; i < N; i++)); do
	work=$(/usr/bin/time -f '%U %S' -o "$TMP/rec.time" perf record -q -e cpu-clock -F 999 \
		--call-graph dwarf,16384 -o "$TMP/cps.data" -- "${WORK[@]}" 2>/dev/null | tail -n 1)
	/usr/bin/time -f '%U %S' -o "$TMP/script.time" perf script -i "$TMP/cps.data" \
		>"$TMP/cps.script" 2>/dev/null
	n=$(awk 'BEGIN { RS = "" } NF { n++ } END { print n }' "$TMP/cps.script")
	awk -v w="$work" -v n="$n" 'FNR == 1 { t += $1 + $2 } END { printf "%.3f\n", (t - w) * 1e6 / n }' \
		"$TMP/rec.time" "$TMP/script.time"
done >"$TMP/cps.perf"
sep=""
for tool in bpfprof perf; do
	read -r a b c <<<"$(quartiles <"$TMP/cps.$tool")"
	printf '%-26s %8.1f %7.1f %7.1f\n' "$tool" "$a" "$b" "$c"
	json+="$sep{\"tool\": \"$tool\", \"us_per_sample\": [$a, $b, $c]}"
	sep=", "
	eval "cps_$tool=$b"
done
awk -v p="$cps_perf" -v b="$cps_bpfprof" 'BEGIN { printf "perf / bpfprof CPU per sample (medians): %.1fx\n", p / b }'
json+="]}"
echo "$json" >"$OUT/bench.json"
echo
echo "bench: wrote $OUT/bench.json (N=$N runs per figure; unwind times include each tool's"
echo "       start-up: bpfprof loads and verifies BPF and reads kallsyms, ~0.15 s; perf reads its"
echo "       headers; CPU per sample is for ~1 s of work, start-up included)"

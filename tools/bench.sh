#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: bpfprof against perf and against itself, measured in the same run on the same
# machine. Usage: tools/bench.sh [BPFPROF [TARGETS_DIR [OUT_DIR]]] (root; perf, /usr/bin/time).
#  1. Offline unwinding throughput per unwinder: a short and a long capture of each workload
#     (chain: 31 frames without frame pointers; python3 running a pure-Python loop) by bpfprof
#     --raw-capture and by perf record --call-graph dwarf, replayed N times each by "bpfprof
#     report --unwinder=fast", "--unwinder=dwfl" and "perf script". Unwind time from --stats
#     (stage "unwind"), whole-process wall time, frames from --stats' per-module frame counts;
#     per frame of the long capture, and marginal (long - short: no start-up, no one-time work).
#  2. Overhead on the profiled program: its own CPU time (its getrusage) for fixed work, alone,
#     under bpfprof and under perf record --call-graph dwarf, at 99 and 999 Hz, and under perf
#     record without call graphs at 999 Hz (the sampling interrupt's own cost).
#  3. End-to-end CPU per sample at 999 Hz: bpfprof's own CPU plus its BPF programs' run time
#     (kernel.bpf_stats_enabled) against perf record's own CPU plus perf script's; whole runs,
#     and marginal (a long run less a short one: no start-up or one-time work).
#  4. bpfprof's own CPU per second of profiling, both CPUs busy (one chain per CPU, -p), at 99
#     and 999 Hz, and with no samples (two sleeping processes): user space in a steady window
#     (/proc/PID/task/*/schedstat: on-CPU ns) plus BPF run time, as % of one core; and over the
#     whole run, start-up included.
#  5. Memory: bpfprof's max RSS and open file descriptors with 1, 50 and 200 processes of
#     chain started together by crowd (--realtime 1, as tests/integration/run-crowd.sh).
#  6. Start-up: "bpfprof -- true" against "perf record -- true" (with and without DWARF
#     call graphs), and perf script on that file: wall and CPU time.
#  7. Python frames' BPF cost: the sampler's run time per sample (kernel.bpf_stats_enabled) on
#     python3 running tests/targets/pychain.py (a 5-frame Python chain), with Python frames
#     and with --no-python, at 999 Hz; the Python frames and code objects per run. The same
#     on sid's python3.14 run as a container's in the tests' container root
#     (tests/container.sh: made once and cached; without it, the machine's python3 only).
#  8. Go binaries: bpfprof -a for 3 s at 99 Hz beside 50 processes running 50 distinct builds
#     of tests/targets/gochain.go (-ldflags='-s -w', no symbols: names from .gopclntab), and
#     beside 50 processes of one build: max RSS of each (the difference is the memory 49 more
#     Go files cost), and the time to read one file's .gopclntab names (--stats stage).
#  9. Off-CPU: the run time of a context-switch-heavy program (tests/targets/wake pingpong: two
#     threads passing a byte over two pipes, ~2 switches a round) alone, under bpfprof --off-cpu
#     and under --wakers; the own CPU time of fixed work that never blocks, alone and under
#     --off-cpu; and the sched_switch program's cost per switch (bpf_stats) for processes that
#     are not targets (the same pingpong while bpfprof --off-cpu -p profiles a sleeping
#     process). The peer: bcc's offcputime (bpfcc-tools) on the same pingpong, attached to its
#     PID with bpfprof's default minimum (-m 5): it compiles its program against the kernel's
#     headers (/lib/modules/<kver>/build, or BCC_KERNEL_SOURCE) and attaches a kprobe, so it
#     runs only where both exist; this VM's kernel has neither (make bench-vm runs the section
#     on a Debian kernel, whose headers it fetches). Debian's perf 6.1 ignores --off-cpu (built
#     without BUILD_BPF_SKEL): no peer. Python frames' cost beside it: python3 running
#     tests/targets/pyoffcpu.py --pingpong (two processes passing a byte over two pipes, each
#     read blocked under Python frames; both on one CPU: a hand-over is a switch there, not a
#     cross-CPU wakeup whose cost swings with the other CPU's load, x5 here) alone, under
#     --off-cpu and under --off-cpu --no-python, both with --off-cpu-max-rate 1000000 and
#     --off-cpu-min-us 1 (every blocked period written, most of them shorter than 5 us on one
#     CPU: the walks are most of the BPF time, not other processes' system calls, which run
#     the same program): its hand-overs' wall time (its own clock), and the system-call exit
#     program's BPF time per blocked stack (kernel.bpf_stats_enabled).
# The sections run in the order unwind, overhead, start-up, memory (BPF statistics off), then
# CPU per sample and own CPU (kernel.bpf_stats_enabled=1, restored at exit).
# Runs of different modes are interleaved (run i of every mode, then run i + 1), so slow drift
# of a noisy machine reaches them all alike. Every measured value is appended to OUT/raw.txt
# ("KEY VALUE"); tools/bench/summarize.py turns it into quartiles (p25/p50/p75, n stated),
# ratios of medians and the targets' verdicts: OUT/bench.txt (printed) and OUT/bench.json
# (fields: docs/performance.md).
# Environment: BENCH_RUNS (N of the expensive figures, default 9), BENCH_RUNS_CHEAP (default 11),
# BENCH_RUNS_LONG (own CPU, memory, Go binaries, default 5), BENCH_SECTIONS (some of "unwind
# overhead startup memory cps own python go offcpu"; default all), BENCH_PINGPONG_ROUNDS
# (section 9, default 200000), BENCH_PY_PINGPONG (its Python hand-overs per thread, default
# 50000), BENCH_GO_BINS (Go builds and processes, default 50). About 15
# minutes on 2 vCPUs with defaults.
set -eu
BIN=$(realpath "${1:-build/bpfprof}")
TARGETS=$(realpath "${2:-build/tests/targets}")
OUT=$(realpath -m "${3:-build/bench}")
HERE=$(dirname "$(realpath "$0")")
N=${BENCH_RUNS:-9}
N_CHEAP=${BENCH_RUNS_CHEAP:-11}
N_LONG=${BENCH_RUNS_LONG:-5}
# Sections to run, in this order (start-up needs no BPF statistics; cps and own turn them on).
SECTIONS=${BENCH_SECTIONS:-unwind overhead startup memory cps own python go offcpu}
# Debian's interpreter, not one a user put first in PATH (pyenv): the workload is a real
# Debian program and the summarizer needs nothing beyond the standard library.
PY=/usr/bin/python3
# Own CPU: profile this long (s), measure user space in a window from OWN_SKIP_S on.
OWN_D=10
OWN_SKIP_S=2
OWN_WINDOW_S=7
CROWD_SIZES="1 50 200"
# Go binaries (section 8).
GO_BINS=${BENCH_GO_BINS:-50}

die() {
	echo "bench: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "run as root (BPF, perf_event_open, kernel.bpf_stats_enabled)"
command -v perf >/dev/null || die "perf is missing (apt-get install linux-perf)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
[ -x "$PY" ] || die "$PY is missing (apt-get install python3)"
for t in chain crowd wake libchain.so libchain_dl.so; do
	[ -x "$TARGETS/$t" ] || die "$TARGETS/$t is missing (make $TARGETS/$t)"
done
[ -r /proc/self/schedstat ] || die "/proc/PID/schedstat is missing (CONFIG_SCHED_INFO)"

mkdir -p "$OUT"
RAW=$OUT/raw.txt
: >"$RAW"
OLD_BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled)
BG=()
TMP=$(mktemp -d /tmp/bpfprof-bench.XXXXXX)

cleanup() {
	local pid

	for pid in "${BG[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_BPF_STATS" || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Private copies: a rebuild during the bench (make in the same tree) cannot swap or remove the
# binaries measured, and every run measures the same ones. chain finds libchain.so next to
# itself ($ORIGIN).
mkdir "$TMP/targets"
cp "$BIN" "$TMP/bpfprof"
cp "$TARGETS"/{chain,crowd,wake,libchain.so,libchain_dl.so} "$TMP/targets/"
BIN=$TMP/bpfprof
TARGETS=$TMP/targets

# put KEY VALUE: one measured value.
put() {
	echo "$1 $2" >>"$RAW"
}

now_ns() {
	date +%s%N
}

# timed STDOUT STDERR CMD...: runs CMD, prints its wall time in seconds.
timed() {
	local out=$1 err=$2 s e

	shift 2
	s=$(now_ns)
	"$@" >"$out" 2>"$err" || die "failed ($?): $* (stderr: $(tail -n 3 "$err"))"
	e=$(now_ns)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", (e - s) / 1e9 }'
}

# stat_value FILE REGEX FIELD: FIELD (awk number) of the first line of --stats output matching.
stat_value() {
	awk -v re="$2" -v f="$3" '$0 ~ re { print $f; exit }' "$1"
}

# stage_ms FILE NAME: total ms of --stats' line "stage NAME: N items, ..., total X ms".
stage_ms() {
	awk -v n="stage $2:" 'index($0, n) {
		for (i = 1; i <= NF; i++) if ($i == "total") print $(i + 1)
	}' "$1"
}

# schedstat_ns PID: on-CPU ns of every thread of PID (first field of schedstat).
schedstat_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%d\n", n }'
}

machine() {
	put meta/kernel "$(uname -r)"
	put meta/cpus "$(nproc)"
	put meta/cpu_model "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo | tr ' ' _)"
	put meta/perf_version "$(perf --version | awk '{ print $3 }')"
	put meta/bpfprof_commit "$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
	put meta/date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	put meta/runs "$N"
	put meta/runs_cheap "$N_CHEAP"
	put meta/runs_long "$N_LONG"
}

# --- 1. offline unwinding -------------------------------------------------------------------

# Seconds of the short and the long capture of each workload: the difference between their
# replays is the cost of the extra samples alone (marginal), without start-up or one-time
# per-binary work (CFI tables, symbol tables, module reporting).
UNWIND_SHORT_S=1
UNWIND_LONG_S=6

# py_loop SECONDS: a pure-Python loop for SECONDS (wall).
py_loop() {
	echo "import time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def outer(deadline):
    while time.monotonic() < deadline:
        inner(1000)
outer(time.monotonic() + $1)"
}

# perf_counts SCRIPT: "samples frames" of perf script output: user frames only (no kernel
# frames, no inline frames), as bpfprof's --stats counts them.
perf_counts() {
	awk 'BEGIN { RS = "" } NF {
		s++; m = split($0, l, "\n")
		for (i = 2; i <= m; i++)
			if (l[i] !~ /\[kernel\.kallsyms\]\)$/ && l[i] !~ /\(inlined\)$/ && l[i] ~ /[^ \t]/)
				f++
	} END { print s + 0, f + 0 }' "$1"
}

# capture WORKLOAD LEN SECONDS: bpfprof and perf captures of WORKLOAD (chain, python) running
# SECONDS, in $TMP/WORKLOAD-LEN.raw and .perf; perf's sample and frame counts recorded.
capture() {
	local w=$1 len=$2 sec=$3 cmd f=$TMP/$1-$2 s fr

	case $w in
	chain) cmd=("$TARGETS/chain" "$sec") ;;
	python) cmd=("$PY" -c "$(py_loop "$sec")") ;;
	esac
	"$BIN" -q -F 999 --raw-capture "$f.raw" -o /dev/null -- "${cmd[@]}" 2>"$TMP/cap.err" ||
		die "bpfprof capture of $w failed: $(tail -n 3 "$TMP/cap.err")"
	perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$f.perf" -- "${cmd[@]}" \
		>/dev/null 2>"$TMP/cap.err" || die "perf record of $w failed: $(tail -n 3 "$TMP/cap.err")"
	perf script -i "$f.perf" >"$TMP/cap.script" 2>/dev/null
	read -r s fr <<<"$(perf_counts "$TMP/cap.script")"
	put "unwind/$w/perf/$len/samples" "$s"
	put "unwind/$w/perf/$len/frames" "$fr"
}

# replay_bpfprof WORKLOAD LEN UNWINDER: one bpfprof report of a capture: wall time, unwind
# stage time (--stats), samples and frames unwound (the per-module frame counts).
replay_bpfprof() {
	local k=unwind/$1/$3/$2 t

	t=$(timed /dev/null "$TMP/rep.err" "$BIN" report "$TMP/$1-$2.raw" --unwinder="$3" --stats \
		-o /dev/null)
	put "$k/wall_s" "$t"
	put "$k/unwind_ms" "$(stage_ms "$TMP/rep.err" unwind)"
	put "$k/samples" "$(awk '/^bpfprof: stage unwind:/ { print $4 }' "$TMP/rep.err")"
	put "$k/frames" "$(awk '/^bpfprof:   module .*: [0-9]+ frames/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^frames,?$/) n += $(i - 1)
	} END { print n + 0 }' "$TMP/rep.err")"
}

bench_unwind() {
	local w i u len t

	for w in chain python; do
		echo "bench: unwind: capturing $w for $UNWIND_SHORT_S and $UNWIND_LONG_S s" \
			"(bpfprof --raw-capture, perf record --call-graph dwarf)"
		capture "$w" short "$UNWIND_SHORT_S"
		capture "$w" long "$UNWIND_LONG_S"
		echo "bench: unwind: $N replays of each by bpfprof report (fast, dwfl) and perf script"
		for ((i = 0; i < N; i++)); do
			for len in short long; do
				for u in fast dwfl; do
					replay_bpfprof "$w" "$len" "$u"
				done
				t=$(timed /dev/null /dev/null perf script -i "$TMP/$w-$len.perf")
				put "unwind/$w/perf/$len/wall_s" "$t"
			done
		done
	done
}

# --- 2. overhead on the profiled program ----------------------------------------------------

# work_cmd ITERATIONS: sets WORK to fixed work that prints its own CPU time (its getrusage):
# the profiler's start, stop and own CPU are not counted, only what sampling costs the program.
work_cmd() {
	WORK=("$PY" -c "import resource
sum(i * i for i in range($1))
r = resource.getrusage(resource.RUSAGE_SELF)
print('%.4f' % (r.ru_utime + r.ru_stime))")
}
# About 1.5 s of CPU here. Section 3 runs 1.75 times as much and a quarter as much: the
# difference, ~2.3 s at 999 Hz, is thousands of samples, above the noise of start-up.
WORK_ITERATIONS=40000000
CPS_ITERATIONS=70000000
CPS_SHORT_ITERATIONS=10000000

bench_overhead() {
	local i mode v

	work_cmd $WORK_ITERATIONS
	echo "bench: overhead: $N runs of fixed work alone, under bpfprof and perf at 99 and 999 Hz"
	for ((i = 0; i < N; i++)); do
		for mode in none bpfprof-99 perf-99 bpfprof-999 perf-999 perf-ip-999; do
			case $mode in
			none) v=$("${WORK[@]}" | tail -n 1) ;;
			# The timer interrupt and one IP per sample, no stack: the floor of any
			# sampling profiler at this rate on this machine.
			perf-ip-*) v=$(perf record -q -e cpu-clock -F "${mode##*-}" -o "$TMP/o.perf" \
				-- "${WORK[@]}" 2>/dev/null | tail -n 1) ;;
			bpfprof-*) v=$("$BIN" -q -F "${mode#*-}" -o /dev/null -- "${WORK[@]}" \
				2>/dev/null | tail -n 1) ;;
			perf-*) v=$(perf record -q -e cpu-clock -F "${mode#*-}" --call-graph \
				dwarf,16384 -o "$TMP/o.perf" -- "${WORK[@]}" 2>/dev/null | tail -n 1) ;;
			esac
			[ -n "$v" ] || die "overhead: no CPU time from the work under $mode"
			put "overhead/$mode/own_cpu_s" "$v"
		done
	done
}

# --- 6. start-up ----------------------------------------------------------------------------

# startup_run NAME CMD...: one start-up of CMD: wall time, and CPU time (user + system, its
# children's included) from /usr/bin/time.
startup_run() {
	local name=$1 t

	shift
	t=$(timed /dev/null "$TMP/st.err" /usr/bin/time -f '%U %S' -o "$TMP/st.time" "$@")
	put "startup/$name/wall_s" "$t"
	put "startup/$name/cpu_s" "$(awk '{ printf "%.3f\n", $1 + $2 }' "$TMP/st.time")"
}

bench_startup() {
	local i

	echo "bench: start-up: $N_CHEAP runs each of bpfprof -- true, perf record -- true"
	for ((i = 0; i < N_CHEAP; i++)); do
		startup_run bpfprof "$BIN" -q -o /dev/null -- true
		startup_run perf perf record -q -e cpu-clock -o "$TMP/st.perf" -- true
		startup_run perf-dwarf perf record -q -e cpu-clock --call-graph dwarf \
			-o "$TMP/st.perf" -- true
		# perf script's fixed cost: the file of that run (next to no samples).
		startup_run perf-script perf script -i "$TMP/st.perf"
	done
}

# --- 5. memory with many processes ----------------------------------------------------------

bench_memory() {
	local i n

	echo "bench: memory: $N_LONG runs each with $CROWD_SIZES processes of chain (crowd)"
	for ((i = 0; i < N_LONG; i++)); do
		for n in $CROWD_SIZES; do
			"$BIN" --stats --realtime 1 -F 999 -o /dev/null -- "$TARGETS/crowd" -n "$n" \
				"$TARGETS/chain" 2 >/dev/null 2>"$TMP/mem.err" ||
				die "crowd of $n failed: $(tail -n 3 "$TMP/mem.err")"
			put "memory/$n/max_rss_kib" "$(stat_value "$TMP/mem.err" '^bpfprof: max RSS' 4)"
			put "memory/$n/fds" "$(stat_value "$TMP/mem.err" '^bpfprof: max RSS' 6)"
			put "memory/$n/samples" "$(stat_value "$TMP/mem.err" 'samples received' 8)"
		done
	done
}

# --- 3. end-to-end CPU per sample -----------------------------------------------------------

# bpf_s_or_nan FILE: BPF programs' run time (s) from --stats' "own CPU" line; "nan" (a value
# missing from its distribution) with a warning when it was not counted: something else turned
# kernel.bpf_stats_enabled off during the run.
bpf_s_or_nan() {
	local v

	v=$(awk '/^bpfprof: own CPU/ {
		for (i = 1; i <= NF; i++) if ($i == "programs") print $(i + 1) }' "$1")
	if [ -z "$v" ]; then
		echo "bench: BPF run time not counted in one run (kernel.bpf_stats_enabled turned off" \
			"by something else?); left out" >&2
		v=nan
	fi
	echo "$v"
}

# cps_run LEN: one run of each tool on the work of this length (short, long).
cps_run() {
	local k=cps/bpfprof/$1 work n own bpf rec scr

	sysctl -q -w kernel.bpf_stats_enabled=1
	"$BIN" --stats -F 999 -o /dev/null -- "${WORK[@]}" >/dev/null 2>"$TMP/bp.err"
	n=$(stat_value "$TMP/bp.err" 'samples received' 8)
	own=$(stat_value "$TMP/bp.err" '^bpfprof: own CPU' 4)
	[ -n "$n" ] && [ -n "$own" ] ||
		die "CPU per sample: no samples or own CPU in bpfprof --stats:" \
			"$(grep -E 'profiled|own CPU' "$TMP/bp.err")"
	bpf=$(bpf_s_or_nan "$TMP/bp.err")
	put "$k/samples" "$n"
	put "$k/own_cpu_s" "$own"
	put "$k/bpf_s" "$bpf"

	# perf record's CPU includes the work it runs (time counts children): less the work's own
	# CPU. perf's in-kernel stack copies are charged to the work.
	k=cps/perf/$1
	work=$(/usr/bin/time -f '%U %S' -o "$TMP/rec.time" perf record -q -e cpu-clock -F 999 \
		--call-graph dwarf,16384 -o "$TMP/cps.data" -- "${WORK[@]}" 2>/dev/null | tail -n 1)
	[ -n "$work" ] || die "CPU per sample: no CPU time from the work under perf record"
	/usr/bin/time -f '%U %S' -o "$TMP/script.time" perf script -i "$TMP/cps.data" \
		>"$TMP/cps.script" 2>/dev/null
	n=$(perf_counts "$TMP/cps.script" | awk '{ print $1 }')
	rec=$(awk -v w="$work" '{ printf "%.3f\n", $1 + $2 - w }' "$TMP/rec.time")
	scr=$(awk '{ printf "%.3f\n", $1 + $2 }' "$TMP/script.time")
	put "$k/samples" "$n"
	put "$k/record_cpu_s" "$rec"
	put "$k/script_cpu_s" "$scr"
}

bench_cpu_per_sample() {
	local i

	echo "bench: CPU per sample: $N runs each of bpfprof and perf record + perf script, 999 Hz," \
		"on long and short fixed work"
	for ((i = 0; i < N; i++)); do
		work_cmd $CPS_SHORT_ITERATIONS
		cps_run short
		work_cmd $CPS_ITERATIONS
		cps_run long
	done
}

# --- 4. own CPU, both CPUs busy -------------------------------------------------------------

# Modes: 99 and 999 (Hz, one busy chain per CPU), idle (99 Hz, one sleeping process: the cost
# of profiling with no samples, the drain timer's).
bench_own_cpu() {
	local i mode hz c1 c2 bp s0 s1 t0 t1 dur own bpf

	echo "bench: own CPU: $N_LONG runs each of ${OWN_D} s: 99 and 999 Hz with one chain per CPU" \
		"(-p), 99 Hz on a sleeping process"
	for ((i = 0; i < N_LONG; i++)); do
		for mode in 99 999 idle; do
			if [ "$mode" = idle ]; then
				hz=99
				sleep $((OWN_D + 5)) &
				c1=$!
				sleep $((OWN_D + 5)) &
				c2=$!
			else
				hz=$mode
				"$TARGETS/chain" $((OWN_D + 5)) &
				c1=$!
				"$TARGETS/chain" $((OWN_D + 5)) &
				c2=$!
			fi
			BG+=("$c1" "$c2")
			sysctl -q -w kernel.bpf_stats_enabled=1
			"$BIN" --stats -F "$hz" -d "$OWN_D" -p "$c1,$c2" -o /dev/null 2>"$TMP/own.err" &
			bp=$!
			BG+=("$bp")
			sleep "$OWN_SKIP_S"
			t0=$(now_ns)
			s0=$(schedstat_ns "$bp")
			sleep "$OWN_WINDOW_S"
			s1=$(schedstat_ns "$bp")
			t1=$(now_ns)
			wait "$bp" || die "own CPU ($mode): bpfprof failed: $(tail -n 3 "$TMP/own.err")"
			kill "$c1" "$c2" 2>/dev/null || true
			wait "$c1" "$c2" 2>/dev/null || true
			BG=()
			dur=$(stat_value "$TMP/own.err" '^bpfprof: profiled' 3)
			own=$(stat_value "$TMP/own.err" '^bpfprof: own CPU' 4)
			[ -n "$dur" ] && [ -n "$own" ] ||
				die "own CPU ($mode): no duration or own CPU in bpfprof --stats:" \
					"$(grep -E 'profiled|own CPU' "$TMP/own.err")"
			bpf=$(bpf_s_or_nan "$TMP/own.err")
			put "own/$mode/window_user_pct" "$(awk -v a="$s0" -v b="$s1" -v t0="$t0" \
				-v t1="$t1" 'BEGIN { printf "%.4f\n", (b - a) * 100 / (t1 - t0) }')"
			if [ "$bpf" = nan ]; then
				put "own/$mode/bpf_pct" nan
				put "own/$mode/whole_run_pct" nan
			else
				put "own/$mode/bpf_pct" "$(awk -v b="$bpf" -v d="$dur" \
					'BEGIN { printf "%.4f\n", b * 100 / d }')"
				put "own/$mode/whole_run_pct" "$(awk -v o="$own" -v b="$bpf" \
					-v d="$dur" 'BEGIN { printf "%.4f\n", (o + b) * 100 / d }')"
			fi
			put "own/$mode/samples_per_s" "$(awk -v d="$dur" '/samples received/ {
				printf "%.1f\n", $8 / d; exit }' "$TMP/own.err")"
			# Each program's share: runs x us each (finer than the rounded seconds).
			awk -v d="$dur" -v m="$mode" '/^bpfprof: BPF program [^ ]+: [0-9]+ runs,/ {
				sub(/:$/, "", $4)
				printf "own/%s/bpf_prog/%s_pct %.4f\n", m, $4, $5 * $7 / 1e6 * 100 / d
			}' "$TMP/own.err" >>"$RAW"
		done
	done
}

# --- 7. Python frames' BPF cost ----------------------------------------------------------

# The sampler's run time per run (us) from --stats' "BPF program handle_perf_event...: N runs,
# X us each" line.
sampler_us() {
	awk '/^bpfprof: BPF program handle_perf_event[a-z_]*: [0-9]+ runs,/ { print $7; exit }' "$1"
}

# python_interpreters: "KEY COMMAND..." lines, one per CPython section 7 measures (KEY: its
# figures' prefix): the machine's python3 ("python"), and sid's python3.14 ("python_py314") in
# the tests' container root
# (tests/container.sh: made once, cached) run as a container's, when that root can be had.
python_interpreters() {
	local root

	echo "python $PY"
	root=$("$HERE/../tests/container.sh" prepare 2>"$TMP/ct.err") || {
		echo "bench:   no container root ($(tail -n 1 "$TMP/ct.err")): host python3 only" >&2
		return 0
	}
	# shellcheck source=../tests/container.sh
	. "$HERE/../tests/container.sh"
	container_cmd CT_CMD "$root" "$(realpath "$HERE/../tests/targets")"
	echo "python_py314 ${CT_CMD[*]@Q} python3.14"
}

bench_python() {
	local i mode us label cmd script

	echo "bench: Python frames: $N runs each of pychain.py 3 on each CPython (the machine's" \
		"python3; sid's 3.14 in a container root), 999 Hz, with Python frames and with" \
		"--no-python"
	python_interpreters >"$TMP/pys"
	while read -r label cmd; do
		# The container's command (quoted words) sees the targets on /mnt.
		script=$(realpath "$HERE/../tests/targets/pychain.py")
		[ "$label" = python ] || script=/mnt/pychain.py
		for ((i = 0; i < N; i++)); do
			for mode in py native; do
				sysctl -q -w kernel.bpf_stats_enabled=1
				eval "\"\$BIN\" --stats -F 999 $([ $mode = native ] && echo --no-python) \
					-o /dev/null -- $cmd \"\$script\" 3 plain" >/dev/null 2>"$TMP/py.err" ||
					die "Python frames ($label, $mode): bpfprof failed:" \
						"$(tail -n 3 "$TMP/py.err")"
				us=$(sampler_us "$TMP/py.err")
				[ -n "$us" ] || us=nan
				put "$label/$mode/bpf_us_per_sample" "$us"
				put "$label/$mode/samples" \
					"$(stat_value "$TMP/py.err" 'samples received' 8)"
				if [ $mode = py ]; then
					awk -v k="$label/py" '/^bpfprof: Python: / {
						printf "%s/python_frames_per_sample %.2f\n", k,
							$9 / ($6 ? $6 : 1)
						printf "%s/code_objects %d\n", k, $12
						printf "%s/code_ms %s\n", k, $20 }' "$TMP/py.err" >>"$RAW"
				fi
			done
		done
	done <"$TMP/pys"
}

# stage_items FILE NAME: the item count of --stats' line "stage NAME: N items, ...".
stage_items() {
	awk -v n="stage $2:" 'index($0, n) { sub(/.*: /, ""); print $1; exit }' "$1"
}

# go_builds: GO_BINS builds of gochain.go, distinct files, in $TMP/go (Debian's Go, GOPATH
# mode: nothing downloaded).
go_builds() {
	local i src

	src=$(realpath "$HERE/../tests/targets/gochain.go")
	mkdir -p "$TMP/go"
	for ((i = 1; i <= GO_BINS; i++)); do
		HOME=$TMP/go GOCACHE=$TMP/go/cache GO111MODULE=off go build \
			-ldflags="-s -w -X main.variant=$i" -o "$TMP/go/gochain_$i" "$src" ||
			die "go build of gochain.go failed"
	done
}

# go_run MODE: bpfprof -a beside GO_BINS gochain processes: of one build (same) or of all.
go_run() {
	local mode=$1 i bin pids=() k=go/$1

	for ((i = 1; i <= GO_BINS; i++)); do
		bin=$TMP/go/gochain_$([ "$mode" = same ] && echo 1 || echo "$i")
		"$bin" 30 &
		pids+=($!)
	done
	sleep 1
	"$BIN" --stats -a -d 3 -F 99 -o /dev/null >/dev/null 2>"$TMP/go.err" ||
		die "Go binaries ($mode): bpfprof failed: $(tail -n 3 "$TMP/go.err")"
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null || true
	put "$k/max_rss_kib" "$(stat_value "$TMP/go.err" '^bpfprof: max RSS' 4)"
	put "$k/samples" "$(stat_value "$TMP/go.err" 'samples received' 8)"
	put "$k/go_files" "$(stage_items "$TMP/go.err" 'Go table (per .gopclntab)')"
	put "$k/go_table_ms" "$(stage_ms "$TMP/go.err" 'Go table (per .gopclntab)')"
}

bench_go() {
	local i

	echo "bench: Go binaries: $N_LONG runs each of bpfprof -a -d 3 -F 99 beside $GO_BINS" \
		"gochain processes of $GO_BINS distinct builds, and of one build"
	command -v go >/dev/null || die "go is missing (make deps installs golang-go)"
	put meta/go_bins "$GO_BINS"
	go_builds
	for ((i = 0; i < N_LONG; i++)); do
		go_run distinct
		go_run same
	done
}

# --- 9. off-CPU -----------------------------------------------------------------------------

# Rounds of wake pingpong: about 1.5 s alone here.
PINGPONG_ROUNDS=${BENCH_PINGPONG_ROUNDS:-200000}
# Hand-overs per process of pyoffcpu.py --pingpong: about 0.5 s alone here; the CPU both run on.
PY_PINGPONG=${BENCH_PY_PINGPONG:-50000}
PY_PINGPONG_CPU=$(($(nproc) - 1))
# bcc's offcputime, section 9's peer where it can run (offcputime_usable).
OFFCPUTIME=offcputime-bpfcc
OFF_CPU_MIN_US=5

# offcputime_usable: whether offcputime compiles and attaches here; says why not on stderr.
offcputime_usable() {
	if ! command -v "$OFFCPUTIME" >/dev/null; then
		echo "bench:   no $OFFCPUTIME (apt-get install bpfcc-tools): no peer" >&2
		return 1
	fi
	if PYTHONUNBUFFERED=1 timeout 600 "$OFFCPUTIME" -p $$ 1 >"$TMP/oc.out" 2>"$TMP/oc.err" &&
		grep -q '^Tracing' "$TMP/oc.out"; then
		return 0
	fi
	echo "bench:   $OFFCPUTIME cannot run here ($(grep -v '^ *$' "$TMP/oc.err" | tail -n 1)):" \
		"no peer (kernel headers: make bench-vm)" >&2
	return 1
}

# pingpong_offcputime: wake pingpong's seconds with offcputime attached to its PID (kernel and
# user stacks, its default; -m as bpfprof's default --off-cpu-min-us). bcc compiles with clang
# before it attaches: the rounds start (SIGUSR2) once it says it is tracing.
pingpong_offcputime() {
	local pid oc w rc

	"$TARGETS/wake" pingpong "$PINGPONG_ROUNDS" wait >"$TMP/pp.out" &
	pid=$!
	PYTHONUNBUFFERED=1 "$OFFCPUTIME" -m $OFF_CPU_MIN_US -p "$pid" >"$TMP/oc.out" \
		2>"$TMP/oc.err" &
	oc=$!
	for ((w = 0; w < 6000; w++)); do
		grep -q '^Tracing' "$TMP/oc.out" && break
		kill -0 "$oc" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q '^Tracing' "$TMP/oc.out"; then
		kill "$pid" "$oc" 2>/dev/null
		echo "bench: $OFFCPUTIME did not start: $(tail -n 1 "$TMP/oc.err")" >&2
		return 1
	fi
	kill -USR2 "$pid"
	wait "$pid"
	rc=$?
	# TERM, on every path: a job started with & ignores SIGINT (python never sees Ctrl-C),
	# and a tracer left behind would weigh on every later run.
	kill "$oc" 2>/dev/null
	wait "$oc" 2>/dev/null
	[ "$rc" -eq 0 ] && cat "$TMP/pp.out"
}

# py_pingpong MODE: one run of pyoffcpu.py --pingpong alone (none), under --off-cpu with Python
# frames (py) and with --no-python (native): its wall time, and under bpfprof the blocked
# stacks written and the system-call exit program's BPF ns per stack.
py_pingpong() {
	local mode=$1 k=offcpu/pypingpong/$1 script n s
	local cmd=(taskset -c "$PY_PINGPONG_CPU" "$PY")

	script=$(realpath "$HERE/../tests/targets/pyoffcpu.py")
	if [ "$mode" = none ]; then
		"${cmd[@]}" "$script" --pingpong "$PY_PINGPONG" >"$TMP/pyp.out" 2>"$TMP/pyp.err"
	else
		"$BIN" --stats --off-cpu --off-cpu-max-rate 1000000 --off-cpu-min-us 1 \
			$([ "$mode" = native ] && echo --no-python) -o /dev/null -- "${cmd[@]}" \
			"$script" --pingpong "$PY_PINGPONG" >"$TMP/pyp.out" 2>"$TMP/pyp.err"
	fi || die "off-CPU, Python pingpong ($mode): failed: $(tail -n 3 "$TMP/pyp.err")"
	put "$k/wall_s" "$(awk '/^pingpong: / { print $5 }' "$TMP/pyp.out")"
	[ "$mode" = none ] && return
	n=$(sed -n 's/^bpfprof: profiled .* off CPU: \([0-9]*\) blocked stacks received.*/\1/p' \
		"$TMP/pyp.err")
	s=$(awk '/BPF program handle_off_cpu_sys_exit:/ { print $(NF - 3) }' "$TMP/pyp.err")
	put "$k/stacks" "${n:-nan}"
	put "$k/sys_exit_ns_per_stack" "$(awk -v n="${n:-0}" -v s="${s:-nan}" \
		'BEGIN { print (n > 0 && s == s + 0) ? s * 1e9 / n : "nan" }')"
}

bench_offcpu() {
	local i w mode v pid modes="none off-cpu wakers"

	echo "bench: off-CPU: $N runs each of wake pingpong alone, under --off-cpu, --wakers and" \
		"$OFFCPUTIME; fixed work alone and under --off-cpu; sched_switch's cost for" \
		"processes not profiled; Python pingpong alone, under --off-cpu and --no-python"
	offcputime_usable && modes+=" offcputime"
	work_cmd $WORK_ITERATIONS
	put meta/pingpong_rounds "$PINGPONG_ROUNDS"
	for ((i = 0; i < N; i++)); do
		for mode in $modes; do
			case $mode in
			none) v=$("$TARGETS/wake" pingpong "$PINGPONG_ROUNDS") ;;
			offcputime) v=$(pingpong_offcputime) ;;
			*) v=$("$BIN" -q --$mode -o /dev/null -- "$TARGETS/wake" pingpong \
				"$PINGPONG_ROUNDS" 2>/dev/null) ;;
			esac
			[ -n "$v" ] || die "off-CPU: no time from wake pingpong under $mode"
			put "offcpu/pingpong/$mode/wall_s" "$v"
		done
		for mode in none off-cpu; do
			case $mode in
			none) v=$("${WORK[@]}" | tail -n 1) ;;
			*) v=$("$BIN" -q --off-cpu -o /dev/null -- "${WORK[@]}" 2>/dev/null | tail -n 1) ;;
			esac
			[ -n "$v" ] || die "off-CPU: no CPU time from the work under $mode"
			put "offcpu/work/$mode/own_cpu_s" "$v"
		done
		# Not a target: sched_switch runs for every switch of the machine all the same.
		sleep 60 &
		pid=$!
		BG+=("$pid")
		"$BIN" --stats --off-cpu -p "$pid" -d 30 -o /dev/null 2>"$TMP/off.err" &
		v=$!
		for ((w = 0; w < 200; w++)); do
			grep -q '^bpfprof: profiling' "$TMP/off.err" && break
			sleep 0.05
		done
		"$TARGETS/wake" pingpong "$PINGPONG_ROUNDS" >/dev/null
		kill -INT "$v"
		wait "$v" || true
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		v=$(awk '/BPF program handle_sched_switch:/ {
			for (i = 1; i <= NF; i++) if ($i == "us") print $(i - 1) * 1000 }' "$TMP/off.err")
		put "offcpu/untargeted/switch_ns" "${v:-nan}"
		for mode in none py native; do
			py_pingpong $mode
		done
	done
}

# section FUNCTION: runs one section, says how long it took.
section() {
	local s=$SECONDS

	"$1"
	echo "bench:   done in $((SECONDS - s)) s"
}

START=$SECONDS
machine
for s in $SECTIONS; do
	case $s in
	unwind) section bench_unwind ;;
	overhead) section bench_overhead ;;
	startup) section bench_startup ;;
	memory) section bench_memory ;;
	cps)
		sysctl -q -w kernel.bpf_stats_enabled=1
		section bench_cpu_per_sample
		;;
	own)
		sysctl -q -w kernel.bpf_stats_enabled=1
		section bench_own_cpu
		;;
	python)
		sysctl -q -w kernel.bpf_stats_enabled=1
		section bench_python
		;;
	go) section bench_go ;;
	offcpu)
		sysctl -q -w kernel.bpf_stats_enabled=1
		section bench_offcpu
		;;
	*) die "unknown section '$s' in BENCH_SECTIONS" ;;
	esac
done
put meta/bench_s $((SECONDS - START))
sysctl -q -w kernel.bpf_stats_enabled="$OLD_BPF_STATS"
echo
"$PY" "$HERE/bench/summarize.py" "$RAW" "$OUT/bench.json" "$OUT/bench.txt"
cat "$OUT/bench.txt"
echo
echo "bench: wrote $OUT/bench.json, $OUT/bench.txt and the raw values in $RAW"

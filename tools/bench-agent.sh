#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench-agent.sh BPFPROF OUTDIR [SECONDS [CHURN_SECONDS]]: the agent's own cost over a long run
# (default 600 s) at 19 Hz with both CPUs busy (two busy loops): its CPU time (user + system
# from /proc/PID/stat, plus its BPF programs' run time with kernel.bpf_stats_enabled) as % of
# one core, and its RSS, sampled every 30 s to show whether they stay flat. Then a second run
# (CHURN_SECONDS, default 300 s; 0 skips it) adds a node's process churn: every second a C
# compile (cc1, a large binary with a large symbol table) and a short python3 start, so new
# processes, new ELF files and their symbol tables come and go. Profiles go to a temporary
# --output-dir (the exporters' cost is included). Writes OUTDIR/agent.json.
set -eu
bin=$(realpath "$1")
out=$2
secs=${3:-${BENCH_AGENT_S:-600}}
churn_secs=${4:-${BENCH_AGENT_CHURN_S:-300}}
step=30
mkdir -p "$out"
tmp=$(mktemp -d /tmp/bpfprof-bench-agent.XXXXXX)
hz=$(getconf CLK_TCK)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	sysctl -q -w kernel.bpf_stats_enabled="$old_stats" >/dev/null || true
	rm -rf "$tmp"
}
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null

# cpu_ticks PID: utime + stime (fields 14, 15 after the comm).
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
# bpf_ns PID: run time of the BPF programs whose fds this process holds (fdinfo prog_id), ns.
bpf_ns() {
	local ids

	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u)
	bpftool -j prog show 2>/dev/null | /usr/bin/python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1:]}
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p.get("id") in ids))' $ids
}
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# A C file that keeps cc1 busy for a fraction of a second.
gen_c() {
	local i

	for ((i = 0; i < 300; i++)); do
		echo "int f$i(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * $i ^ (s >> 3); return s; }"
	done
}

# churn: what the second run adds, every second until killed.
churn() {
	while :; do
		gcc -O2 -c -o "$tmp/churn.o" "$tmp/churn.c"
		/usr/bin/python3 -c 'sum(i * i for i in range(200000))'
		sleep 1
	done
}

# run_phase NAME SECONDS CHURN: one agent run; its series into $tmp/NAME.series, one line
# "t_s user_sys_pct with_bpf_pct rss_mb" per step.
run_phase() {
	local name=$1 phase_secs=$2 with_churn=$3 phase_step=$step agent churn_pid=
	local t0 c0 b0 now c b r line w u a m t

	[ "$phase_secs" -lt $((2 * phase_step)) ] && phase_step=$((phase_secs / 2))
	"$bin" agent -F 19 --interval 60 --output-dir "$tmp/profiles-$name" --metrics-addr off \
		2>"$tmp/agent-$name.err" &
	agent=$!
	pids+=("$agent")
	if [ "$with_churn" = 1 ]; then
		churn >/dev/null 2>&1 &
		churn_pid=$!
		pids+=("$churn_pid")
	fi
	sleep 3
	t0=$(date +%s.%N)
	c0=$(cpu_ticks "$agent")
	b0=$(bpf_ns "$agent")
	echo "bench-agent: $name: bpfprof agent at 19 Hz, both CPUs busy$([ "$with_churn" = 1 ] &&
		echo ', a compile and a python3 start every second'), ${phase_secs} s (a line every ${phase_step} s)"
	printf '  %6s  %12s  %12s  %9s\n' "t (s)" "user+sys %" "with BPF %" "RSS (MB)"
	: >"$tmp/$name.series"
	for ((t = phase_step; t <= phase_secs; t += phase_step)); do
		sleep "$phase_step"
		now=$(date +%s.%N)
		c=$(cpu_ticks "$agent")
		b=$(bpf_ns "$agent")
		r=$(rss_kb "$agent")
		line=$(awk -v c0="$c0" -v c="$c" -v b0="$b0" -v b="$b" -v t0="$t0" -v t1="$now" \
			-v hz="$hz" -v r="$r" 'BEGIN { w = t1 - t0; u = (c - c0) / hz;
			printf "%.1f %.4f %.4f %.1f", w, 100 * u / w, 100 * (u + (b - b0) / 1e9) / w, r / 1024 }')
		echo "$line" >>"$tmp/$name.series"
		read -r w u a m <<<"$line"
		printf '  %6.0f  %12.3f  %12.3f  %9.1f\n' "$w" "$u" "$a" "$m"
	done
	[ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null
	kill -TERM "$agent"
	wait "$agent" || true
	echo "bench-agent: $name: $(ls "$tmp/profiles-$name" | wc -l) profiles written"
}

for i in 1 2; do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
gen_c >"$tmp/churn.c"
run_phase steady "$secs" 0
[ "$churn_secs" -gt 0 ] && run_phase churn "$churn_secs" 1

/usr/bin/python3 - "$out/agent.json" "$secs" "$tmp/steady.series" "$churn_secs" \
	"$tmp/churn.series" <<'PY'
import json, os, sys
path, secs, steady, churn_secs, churn = sys.argv[1:6]

def series(f):
    if not os.path.exists(f):
        return []
    return [dict(zip(("t_s", "user_sys_pct", "with_bpf_pct", "rss_mb"), map(float, l.split())))
            for l in open(f) if l.strip()]

def summary(rows, secs):
    return {"seconds": int(secs), "series": rows,
            "cpu_pct_one_core": rows[-1]["with_bpf_pct"], "rss_mb_first": rows[0]["rss_mb"],
            "rss_mb_last": rows[-1]["rss_mb"], "rss_mb_max": max(r["rss_mb"] for r in rows)}

rows = series(steady)
res = {"freq_hz": 19, "cpus_busy": 2, **summary(rows, secs),
       "targets": {"cpu_pct_one_core_max": 0.2, "rss_mb_max": 64}}
res["cpu_met"] = res["cpu_pct_one_core"] < 0.2
res["rss_met"] = res["rss_mb_max"] < 64
crows = series(churn)
if crows:
    res["churn"] = summary(crows, churn_secs)
json.dump(res, open(path, "w"), indent=1)
print(f"bench-agent: CPU {res['cpu_pct_one_core']:.3f}% of one core with BPF (target < 0.2%: "
      f"{'met' if res['cpu_met'] else 'NOT met'}); RSS {res['rss_mb_first']:.1f} -> "
      f"{res['rss_mb_last']:.1f} MB, at most {res['rss_mb_max']:.1f} (target < 64 MB: "
      f"{'met' if res['rss_met'] else 'NOT met'})")
if crows:
    c = res["churn"]
    print(f"bench-agent: with churn: CPU {c['cpu_pct_one_core']:.3f}% of one core with BPF; RSS "
          f"{c['rss_mb_first']:.1f} -> {c['rss_mb_last']:.1f} MB, at most {c['rss_mb_max']:.1f}")
print(f"bench-agent: wrote {path}")
PY

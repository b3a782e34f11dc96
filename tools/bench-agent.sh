#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench-agent.sh BPFPROF OUTDIR [SECONDS]: the agent's own cost over a long run (default 600 s)
# at 19 Hz with both CPUs busy (two busy loops): its CPU time (user + system from
# /proc/PID/stat, plus its BPF programs' run time with kernel.bpf_stats_enabled) as % of one
# core, and its RSS, sampled every 30 s to show whether they stay flat. Profiles go to a
# temporary --output-dir (the exporters' cost is included). Writes OUTDIR/agent.json.
set -eu
bin=$(realpath "$1")
out=$2
secs=${3:-${BENCH_AGENT_S:-600}}
step=30
[ "$secs" -lt $((2 * step)) ] && step=$((secs / 2))
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

for i in 1 2; do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
"$bin" agent -F 19 --interval 60 --output-dir "$tmp/profiles" --metrics-addr off \
	2>"$tmp/agent.err" &
agent=$!
pids+=("$agent")
sleep 3

# cpu_ticks PID: utime + stime (fields 14, 15 after the comm).
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
# bpf_ns PID: run time of the BPF programs whose fds this process holds (fdinfo prog_id), ns.
bpf_ns() {
	local ids

	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u)
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1:]}
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p.get("id") in ids))' $ids
}
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

t0=$(date +%s.%N)
c0=$(cpu_ticks "$agent")
b0=$(bpf_ns "$agent")
echo "bench-agent: bpfprof agent at 19 Hz, both CPUs busy, ${secs} s (a line every ${step} s)"
printf '  %6s  %12s  %12s  %9s\n' "t (s)" "user+sys %" "with BPF %" "RSS (MB)"
series=()
for ((t = step; t <= secs; t += step)); do
	sleep "$step"
	now=$(date +%s.%N)
	c=$(cpu_ticks "$agent")
	b=$(bpf_ns "$agent")
	r=$(rss_kb "$agent")
	line=$(awk -v c0="$c0" -v c="$c" -v b0="$b0" -v b="$b" -v t0="$t0" -v t1="$now" \
		-v hz="$hz" -v r="$r" 'BEGIN { w = t1 - t0; u = (c - c0) / hz;
		printf "%.1f %.4f %.4f %.1f", w, 100 * u / w, 100 * (u + (b - b0) / 1e9) / w, r / 1024 }')
	series+=("$line")
	read -r w u a m <<<"$line"
	printf '  %6.0f  %12.3f  %12.3f  %9.1f\n' "$w" "$u" "$a" "$m"
done
kill -TERM "$agent"
wait "$agent" || true
first=${series[0]}
last=${series[${#series[@]} - 1]}
python3 - "$out/agent.json" "$secs" "$first" "$last" "${series[@]}" <<'PY'
import json, sys
path, secs, first, last = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
rows = [dict(zip(("t_s", "user_sys_pct", "with_bpf_pct", "rss_mb"), map(float, r.split())))
        for r in sys.argv[5:]]
res = {"freq_hz": 19, "seconds": secs, "cpus_busy": 2, "series": rows,
       "cpu_pct_one_core": float(last[2]), "rss_mb_first": float(first[3]),
       "rss_mb_last": float(last[3]),
       "targets": {"cpu_pct_one_core_max": 0.2, "rss_mb_max": 64}}
res["cpu_met"] = res["cpu_pct_one_core"] < 0.2
res["rss_met"] = max(r["rss_mb"] for r in rows) < 64
json.dump(res, open(path, "w"), indent=1)
print(f"bench-agent: CPU {res['cpu_pct_one_core']:.3f}% of one core with BPF (target < 0.2%: "
      f"{'met' if res['cpu_met'] else 'NOT met'}); RSS {res['rss_mb_first']:.1f} -> "
      f"{res['rss_mb_last']:.1f} MB (target < 64 MB: {'met' if res['rss_met'] else 'NOT met'})")
print(f"bench-agent: wrote {path}")
PY

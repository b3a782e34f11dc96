#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-agent.sh: bpfprof agent against a loopback mock of Pyroscope's /ingest (tests/mock/
# pyroscope.py): within three 5 s intervals it delivers profiles of two test programs, each
# under its own service_name, each body a pprof that go tool pprof opens and that holds the
# program's chain; 503s are retried (visible in /metrics) and nothing is lost; SIGTERM flushes
# and exits within 10 s. --pyroscope-api push: the mock decodes each PushRequest (labels,
# __name__, a UUID per profile) and its raw_profile holds the chain. With the backend gone for
# longer than the queue holds, drops are counted, sampling goes on and memory stays bounded.
# SIGHUP rereads the --config file.
# The agent takes no --raw-capture: no differential replay of its runs (lib.sh).
BPFPROF_DIFF=0
. "$(dirname "$0")/../lib.sh"
require_bpf

here=$(cd "$(dirname "$0")" && pwd)
MOCK=$here/../mock/pyroscope.py
INTERVAL_S=5
export HOME=${HOME:-$TEST_TMP} GOCACHE=$TEST_TMP/gocache

# start_mock DIR: the mock on a free loopback port; sets MOCK_PID, MOCK_URL.
start_mock() {
	local dir=$1 i

	mkdir -p "$dir"
	python3 "$MOCK" --dir "$dir" --port-file "$dir/port" >"$dir/mock.out" 2>"$dir/mock.err" &
	MOCK_PID=$!
	BG_PIDS+=("$MOCK_PID")
	for ((i = 0; i < 100; i++)); do
		[ -s "$dir/port" ] && break
		sleep 0.05
	done
	MOCK_URL=http://127.0.0.1:$(cat "$dir/port" 2>/dev/null)
}

# metric FILE NAME: the value of the first sample of NAME in a /metrics scrape (0 if none).
metric() {
	awk -v n="$2" '$1 == n || index($1, n "{") == 1 { print $2; f = 1; exit } END { if (!f) print 0 }' "$1"
}

# metrics_port ERRFILE: the port the agent says it serves /metrics on.
metrics_port() {
	sed -n 's/.*on 127.0.0.1:0 (port \([0-9]*\)).*/\1/p' "$1" | head -1
}

# wait_agent ERRFILE: until the agent says it profiles, its programs loaded and attached (60 s
# at most). Its /healthz answers from before: under qemu's TCG loading took 4.7 s on 7.2
# against 2.3 s on 6.12 (the verifier on handle_perf_event: 2.7 s against 0.7 s), and more
# with the machine busy, which fixed sleeps from the start did not allow for.
wait_agent() {
	local end=$((SECONDS + 60))

	until grep -q '^bpfprof: agent: profiling' "$1" 2>/dev/null; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# services DIR: "SERVICE SEQ" per delivered profile (name=SERVICE{labels} in the query).
services() {
	python3 - "$1" <<'PY'
import glob, os, sys, urllib.parse
for q in sorted(glob.glob(os.path.join(sys.argv[1], '*.query'))):
    seq = os.path.basename(q)[:-6]
    if not os.path.exists(os.path.join(sys.argv[1], seq + '.body')):
        continue
    qs = urllib.parse.parse_qs(open(q).read())
    name = qs.get('name', ['?'])[0]
    print(name.split('{')[0], seq, qs.get('format', ['?'])[0], name)
PY
}

# --- delivery, labels, content -------------------------------------------------------------
m=$TEST_TMP/mock
start_mock "$m"
assert_true agent_mock_started "mock Pyroscope on $MOCK_URL" test -s "$m/port"
cd "$TEST_TMP" || exit 1
# They outlive the 503 wait (up to 45 s) and the SIGTERM check, then are stopped.
"$TARGETS/chain" 120 >/dev/null &
CHAIN_PID=$!
BG_PIDS+=("$CHAIN_PID")
"$TARGETS/sysread" 120 >/dev/null &
SYSREAD_PID=$!
BG_PIDS+=("$SYSREAD_PID")
cd - >/dev/null || exit 1

p=$TEST_TMP/agent
start_bpfprof_bg 90 "$p" agent -F 49 --interval "$INTERVAL_S" --pyroscope-url "$MOCK_URL" \
	--metrics-addr 127.0.0.1:0 --queue-size 512
wait_agent "$p.err"
# Three intervals, and a delivery.
sleep $((3 * INTERVAL_S + 3))
services "$m" >"$p.services"
sed 's/^/  delivered: /' "$p.services" | head -20
for svc in chain sysread; do
	# Ours: other programs of that name may run on the machine.
	seq=$(awk -v s="$svc" -v e="exe=$TARGETS/$svc" '$1 == s && index($0, e) { print $2; exit }' \
		"$p.services")
	if [ -z "$seq" ]; then
		fail "agent_${svc}_delivered" "no profile with service_name $svc"
		continue
	fi
	pass "agent_${svc}_delivered" "profile $seq"
	assert_grep "agent_${svc}_format" "$m/$seq.query" 'format=pprof'
	assert_grep "agent_${svc}_hostname_label" "$p.services" "^$svc $seq pprof $svc\\{.*hostname="
	assert_grep "agent_${svc}_build_id_label" "$p.services" "^$svc $seq pprof $svc\\{.*build_id=[0-9a-f]{40}"
	go tool pprof -raw "$m/$seq.body" >"$p.$svc.raw" 2>"$p.$svc.raw.err"
	assert_eq "agent_${svc}_pprof_opens" "$?" 0
	go tool pprof -traces "$m/$seq.body" >"$p.$svc.traces" 2>/dev/null
	if [ "$svc" = chain ]; then
		assert_grep agent_chain_holds_chain "$p.$svc.traces" 'chain_leaf'
		assert_grep agent_chain_holds_lib "$p.$svc.traces" 'lib_f08'
	else
		assert_grep agent_sysread_holds_chain "$p.$svc.traces" 'sys_leaf'
	fi
	# One group per profile: no other program's frames.
	other=$([ "$svc" = chain ] && echo sys_leaf || echo chain_leaf)
	if grep -q "$other" "$p.$svc.traces"; then
		fail "agent_${svc}_only_its_own" "holds $other"
	else
		pass "agent_${svc}_only_its_own" "no $other"
	fi
done

# --- a backend answering 503 for a while: retried, nothing lost -----------------------------
port=$(metrics_port "$p.err")
assert_true agent_metrics_port "port ${port:-none}" test -n "$port"
before=$(grep -c ' 200 ' "$m/requests.log")
curl -s -X POST "$MOCK_URL/control?mode=503&count=4" >/dev/null
# Backoff doubles from 1 s with full jitter: the fourth retry can take ~15 s to come.
for ((i = 0; i < 45; i++)); do
	sleep 1
	curl -s "http://127.0.0.1:$port/metrics" >"$p.metrics"
	[ "$(metric "$p.metrics" bpfprof_export_retries_total)" -ge 4 ] 2>/dev/null &&
		[ "$(grep -c ' 200 ' "$m/requests.log")" -ge $((before + 2)) ] && break
done
retries=$(metric "$p.metrics" bpfprof_export_retries_total)
dropped=$(metric "$p.metrics" bpfprof_export_profiles_dropped_total)
n503=$(grep -c ' 503 ' "$m/requests.log")
echo "  503 answers: $n503, retries: $retries, dropped: $dropped, 200s before: $before, after: $(grep -c ' 200 ' "$m/requests.log")"
assert_ge agent_503_seen "$n503" 4
assert_ge agent_retries_in_metrics "$retries" 4
assert_eq agent_nothing_dropped "$dropped" 0
assert_ge agent_delivers_after_503 "$(grep -c ' 200 ' "$m/requests.log")" $((before + 2))
assert_ge agent_samples_metric "$(metric "$p.metrics" bpfprof_samples_total)" 100
curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz" >"$p.health"
assert_grep agent_healthz "$p.health" '^200$'

# --- SIGTERM: the interval under way is flushed, exit 0 within 10 s -------------------------
before=$(grep -c ' 200 ' "$m/requests.log")
t0=$(date +%s.%N)
kill -TERM "$BP_PID"
wait_bpfprof_bg "$p"
took=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%d", e - s }')
assert_eq agent_sigterm_exit "$BP_RC" 0
assert_le agent_sigterm_seconds "$took" 10 s
assert_ge agent_sigterm_flushed "$(grep -c ' 200 ' "$m/requests.log")" $((before + 2))
kill "$CHAIN_PID" "$SYSREAD_PID" 2>/dev/null
wait "$CHAIN_PID" "$SYSREAD_PID" 2>/dev/null

# --- the push API (--pyroscope-api push, here from the environment) -------------------------
pm=$TEST_TMP/mock-push
curl -s -X POST "$MOCK_URL/reset?dir=$pm" >/dev/null
# Two programs, two groups in every interval: the batching below needs more than one
# profile a request, whatever else the machine runs.
cd "$TEST_TMP" || exit 1
"$TARGETS/chain" 30 >/dev/null &
BG_PIDS+=("$!")
"$TARGETS/sysread" 30 >/dev/null &
BG_PIDS+=("$!")
cd - >/dev/null || exit 1
p=$TEST_TMP/agent-push
BPFPROF_PYROSCOPE_API=push start_bpfprof_bg 60 "$p" agent -F 49 --interval 2 \
	--pyroscope-url "$MOCK_URL" --metrics-addr off --tenant-id team-a
sleep 7
kill -TERM "$BP_PID"
wait_bpfprof_bg "$p"
assert_eq agent_push_exit "$BP_RC" 0
# The first delivered profile of our chain: "SEQ.N" (request, sample) and its labels as
# name=value lines in SEQ.N.pairs.
seq=$(python3 - "$pm" "exe=$TARGETS/chain" <<'PY'
import glob, json, os, sys
def order(f):
    return tuple(int(x) for x in os.path.basename(f).split('.')[:2])
for f in sorted(glob.glob(os.path.join(sys.argv[1], '*.*.labels')), key=order):
    base = f[:-7]
    if not os.path.exists(base + '.body'):
        continue
    labels = json.load(open(f))
    if ['service_name', 'chain'] in labels and sys.argv[2].split('=', 1) in labels:
        with open(base + '.pairs', 'w') as out:
            out.writelines(f'{k}={v}\n' for k, v in labels)
        print(os.path.basename(base))
        break
PY
)
requests=$(grep -c ' 200 ' "$pm/requests.log" 2>/dev/null)
profiles=$(ls "$pm" | grep -c '\.body$')
echo "  push: $requests requests answered 200 with $profiles profiles; chain's: ${seq:-none}"
# Several groups per interval (chain, sysread, this machine's own processes): batched.
assert_ge agent_push_batched "$profiles" $((requests + 1))
if [ -z "$seq" ]; then
	fail agent_push_delivered "no PushRequest with service_name chain and exe $TARGETS/chain"
else
	pass agent_push_delivered "request $seq"
	sed 's/^/  label: /' "$pm/$seq.pairs"
	assert_grep agent_push_name_label "$pm/$seq.pairs" '^__name__=process_cpu$'
	assert_grep agent_push_delta_label "$pm/$seq.pairs" '^__delta__=false$'
	assert_grep agent_push_hostname_label "$pm/$seq.pairs" '^hostname=.'
	assert_grep agent_push_build_id_label "$pm/$seq.pairs" '^build_id=[0-9a-f]{40}$'
	assert_grep agent_push_content_type "$pm/${seq%.*}.headers" '"Content-Type": "application/proto"'
	assert_grep agent_push_connect_header "$pm/${seq%.*}.headers" '"Connect-Protocol-Version": "1"'
	assert_grep agent_push_tenant "$pm/${seq%.*}.headers" '"X-Scope-OrgID": "team-a"'
	assert_grep agent_push_uuid "$pm/$seq.id" '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
	go tool pprof -traces "$pm/$seq.body" >"$p.traces" 2>"$p.traces.err"
	assert_eq agent_push_pprof_opens "$?" 0
	assert_grep agent_push_holds_chain "$p.traces" 'chain_leaf'
	assert_grep agent_push_holds_lib "$p.traces" 'lib_f08'
fi
assert_eq agent_push_rejected "$(grep -c ' 400 ' "$pm/requests.log" 2>/dev/null)" 0
# One ID per profile (awk 1: the files end without a newline).
assert_ge agent_push_ids "$(awk 1 "$pm"/*.id 2>/dev/null | wc -l)" 2
assert_eq agent_push_ids_unique "$(awk 1 "$pm"/*.id 2>/dev/null | sort | uniq -d | wc -l)" 0

# --- backend gone longer than the queue holds ------------------------------------------------
kill "$MOCK_PID" 2>/dev/null
wait "$MOCK_PID" 2>/dev/null
p=$TEST_TMP/agent-down
"$TARGETS/chain" 20 >/dev/null &
BG_PIDS+=("$!")
start_bpfprof_bg 90 "$p" agent -F 49 --interval 2 --pyroscope-url "$MOCK_URL" \
	--metrics-addr 127.0.0.1:0 --queue-size 2
sleep 5
port=$(metrics_port "$p.err")
curl -s "http://127.0.0.1:$port/metrics" >"$p.m1"
sleep 8
curl -s "http://127.0.0.1:$port/metrics" >"$p.m2"
s1=$(metric "$p.m1" bpfprof_samples_total)
s2=$(metric "$p.m2" bpfprof_samples_total)
rss1=$(metric "$p.m1" process_resident_memory_bytes)
rss2=$(metric "$p.m2" process_resident_memory_bytes)
dropped=$(metric "$p.m2" bpfprof_export_profiles_dropped_total)
depth=$(metric "$p.m2" bpfprof_export_queue_depth)
echo "  backend down: samples $s1 -> $s2, dropped $dropped, queue depth $depth, RSS $rss1 -> $rss2"
assert_ge agent_down_dropped "${dropped%.*}" 1
assert_le agent_down_queue_bounded "${depth%.*}" 2
assert_ge agent_down_sampling_goes_on "${s2%.*}" $(( ${s1%.*} + 100 ))
# ASan (make SANITIZE=1) keeps up to 256 MiB of freed memory in its quarantine (its default
# quarantine_size_mb) before reusing it: resident on top of what bpfprof holds.
rss_max_mib=150
sanitized && rss_max_mib=$((150 + 256))
assert_le agent_down_rss_mib "$(( ${rss2%.*} / 1048576 ))" "$rss_max_mib" MiB
kill -TERM "$BP_PID"
wait_bpfprof_bg "$p"
assert_eq agent_down_exit "$BP_RC" 0

# --- /healthz: idle connections cannot lock it out; 503 when the sampling loop stalls --------
# --output-dir: each file is named after its service and its pprof carries the group's labels.
p=$TEST_TMP/agent-health
HEALTH_INTERVAL_S=2
cd "$TEST_TMP" || exit 1
"$TARGETS/chain" 40 >/dev/null &
CHAIN_PID=$!
BG_PIDS+=("$CHAIN_PID")
cd - >/dev/null || exit 1
start_bpfprof_bg 90 "$p" agent -F 49 --interval "$HEALTH_INTERVAL_S" --output-dir "$p.dir" \
	--metrics-addr 127.0.0.1:0
for ((i = 0; i < 100; i++)); do
	port=$(metrics_port "$p.err")
	[ -n "$port" ] && break
	sleep 0.1
done
assert_true agent_health_port "port ${port:-none}" test -n "$port"
wait_agent "$p.err"
# More idle connections than the endpoint keeps open, held until killed.
python3 - "$port" 40 >"$p.idle" 2>&1 <<'PY' &
import socket, sys, time
socks = [socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)
         for _ in range(int(sys.argv[2]))]
print(len(socks), 'open', flush=True)
time.sleep(60)
PY
IDLE_PID=$!
BG_PIDS+=("$IDLE_PID")
for ((i = 0; i < 100; i++)); do
	grep -q open "$p.idle" && break
	sleep 0.1
done
sed 's/^/  idle: /' "$p.idle"
curl -s -m 2 -o "$p.healthz" -w '%{http_code} %{time_total}\n' \
	"http://127.0.0.1:$port/healthz" >"$p.code"
echo "  /healthz with 40 idle connections: $(cat "$p.code")"
assert_grep agent_healthz_with_idle_connections "$p.code" '^200 '
kill "$IDLE_PID" 2>/dev/null
wait "$IDLE_PID" 2>/dev/null

# The sampling loop (bpfprof's main thread, its pid) stopped for real, by ptrace, while the
# HTTP server's thread runs on: /healthz must notice within 3 intervals.
python3 - "$BP_PID" >"$p.tracer" 2>&1 <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)
tid = int(sys.argv[1])
for req in (0x4206, 0x4207):  # PTRACE_SEIZE, PTRACE_INTERRUPT: this thread alone stops
    if libc.ptrace(req, tid, None, None):
        sys.exit(f'ptrace {req:#x} {tid}: {os.strerror(ctypes.get_errno())}')
os.waitpid(tid, 0x40000000)  # __WALL
print('stopped', flush=True)
time.sleep(60)  # the kernel detaches (the thread runs on) when this process ends
PY
TRACER_PID=$!
BG_PIDS+=("$TRACER_PID")
for ((i = 0; i < 50; i++)); do
	[ -s "$p.tracer" ] && break
	sleep 0.1
done
sed 's/^/  tracer: /' "$p.tracer"
assert_grep agent_loop_stopped "$p.tracer" '^stopped$'
sleep $((3 * HEALTH_INTERVAL_S + 1))
curl -s -m 2 -o "$p.stalled" -w '%{http_code}\n' "http://127.0.0.1:$port/healthz" >"$p.code"
echo "  /healthz with the loop stopped: $(cat "$p.code") $(cat "$p.stalled")"
assert_grep agent_healthz_loop_stalled "$p.code" '^503$'
assert_grep agent_healthz_stalled_reason "$p.stalled" 'no ringbuf drain for [0-9.]+ s'
kill "$TRACER_PID" 2>/dev/null
wait "$TRACER_PID" 2>/dev/null
for ((i = 0; i < 30; i++)); do
	curl -s -m 2 -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$port/healthz" >"$p.code"
	grep -q '^200$' "$p.code" && break
	sleep 0.1
done
assert_grep agent_healthz_recovers "$p.code" '^200$'
kill -TERM "$BP_PID"
wait_bpfprof_bg "$p"
assert_eq agent_health_exit "$BP_RC" 0
kill "$CHAIN_PID" 2>/dev/null
wait "$CHAIN_PID" 2>/dev/null

# Our chain's files: other programs named chain may run here (then the name gets a hash).
ours=()
for f in "$p.dir"/*_chain*.pb.gz; do
	[ -e "$f" ] || continue
	go tool pprof -raw "$f" >"$f.raw" 2>/dev/null
	grep -q "exe:\[$TARGETS/chain\]" "$f.raw" && ours+=("$f")
done
echo "  files: $(ls "$p.dir" | grep -c '') in $p.dir, ${#ours[@]} of our chain: ${ours[*]##*/}"
assert_ge agent_dir_labelled_files "${#ours[@]}" 1
if [ ${#ours[@]} -gt 0 ]; then
	f=${ours[0]}
	assert_true agent_dir_file_name "${f##*/}" \
		grep -Eq '^[0-9]{8}T[0-9]{6}Z_chain(_[0-9a-f]{8})?(\.[0-9]+)?\.pb\.gz$' <<<"${f##*/}"
	assert_grep agent_dir_service_label "$f.raw" 'service_name:\[chain\]'
	assert_grep agent_dir_build_id_label "$f.raw" 'build_id:\[[0-9a-f]{40}\]'
	assert_grep agent_dir_hostname_label "$f.raw" "hostname:\\[$(cat /proc/sys/kernel/hostname)\\]"
	go tool pprof -comments "$f" >"$f.comments" 2>/dev/null
	assert_grep agent_dir_comment "$f.comments" '^service_name=chain$'
fi

# --- SIGHUP rereads --config; a broken file keeps the running configuration -----------------
h=$TEST_TMP/hup
mkdir -p "$h/a" "$h/b"
printf 'output-dir = %s\ninterval = 2\nmetrics-addr = off\n' "$h/a" >"$h/conf"
# A program of our own to sample: the earlier targets may have exited, and an idle VM gives
# almost no cpu-clock samples, so an interval could hold none and write no file.
"$TARGETS/chain" 15 >/dev/null &
BG_PIDS+=("$!")
start_bpfprof_bg 60 "$h/agent" agent -F 49 --config "$h/conf"
wait_agent "$h/agent.err"
sleep 4
printf 'output-dir = %s\ninterval = 2\nmetrics-addr = off\n' "$h/b" >"$h/conf"
kill -HUP "$BP_PID"
sleep 3
echo 'no-such-option = 1' >"$h/conf"
kill -HUP "$BP_PID"
sleep 3
kill -TERM "$BP_PID"
wait_bpfprof_bg "$h/agent"
assert_eq agent_hup_exit "$BP_RC" 0
assert_ge agent_hup_old_dir "$(ls "$h/a" | wc -l)" 1
assert_ge agent_hup_new_dir "$(ls "$h/b" | wc -l)" 1
assert_grep agent_hup_reread "$h/agent.err" 'SIGHUP: configuration reread'
assert_grep agent_hup_bad_kept "$h/agent.err" 'keeping the running one'
n=$(ls "$h/b" | wc -l)
sleep 0.1
assert_ge agent_hup_bad_still_writes "$n" 2

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-deploy.sh: the deployment files (deploy/) at work: the agent as the systemd unit starts it
# (its agent.conf), confined to the least-privilege capabilities (docs/deploy.md). Root with
# BPF; CI=true fails without. The offline checks of the files are make check-deploy
# (tests/deploy/check-deploy.sh).
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# --- the unit's configuration and capabilities, live ------------------------------------------
# The agent as the unit starts it (its agent.conf, --output-dir), confined by setpriv to uid 0
# with only the least-privilege capabilities in its bounding set, profiles a program of another
# user (nobody) whose executable was deleted after it started, as after a package upgrade:
# /healthz, /metrics, a profile with the program's function names (another user's maps:
# CAP_SYS_PTRACE; the deleted file through /proc/PID/map_files: CAP_CHECKPOINT_RESTORE), a clean
# stop on SIGTERM. Run again without CAP_CHECKPOINT_RESTORE, the names must be lost: that
# capability is needed.
if ! has_bpf_caps || ! bpf_works || ! command -v go >/dev/null || ! command -v setpriv >/dev/null
then
	reason="live agent checks need root with BPF, go and setpriv"
	if [ "${CI:-}" = true ]; then
		fail deploy_live_require "$reason; CI=true makes this a failure"
	else
		skip "$reason"
	fi
	exit 0
fi
export HOME=$TEST_TMP GOCACHE=$TEST_TMP/gocache GOFLAGS=-mod=mod
# nobody runs the copied interpreter from inside TEST_TMP.
chmod 711 "$TEST_TMP"

# http_get PORT PATH: the HTTP response (status line, headers, body) of 127.0.0.1:PORT.
http_get() {
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	timeout 5 cat <&3
	exec 3>&-
}

# live_run LABEL CAPS...: the agent under setpriv with bounding set CAPS (setpriv names) against
# a spinning copy of /usr/bin/python3 (Debian's, not a pyenv shim) run by nobody, deleted once
# started. Leaves LIVE_DIR (profiles/, err),
# LIVE_PORT, LIVE_RC (after SIGTERM), LIVE_STOP_S and LIVE_PROFILE (the last profile of it).
live_run() {
	local label=$1 bset=-all c spin tpid i start

	shift
	for c in "$@"; do
		bset+=",+$c"
	done
	LIVE_DIR=$TEST_TMP/live-$label
	mkdir -p "$LIVE_DIR/profiles"
	chmod 755 "$LIVE_DIR"
	cp "$(readlink -f /usr/bin/python3)" "$LIVE_DIR/py3spin"
	chmod 755 "$LIVE_DIR/py3spin"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LIVE_DIR/py3spin" -c 'while True: pass' &
	spin=$!
	BG_PIDS+=("$spin")
	for ((i = 0; i < 100; i++)); do
		[[ "$(readlink "/proc/$spin/exe")" == */py3spin ]] && break
		sleep 0.05
	done
	rm "$LIVE_DIR/py3spin"
	echo "+ setpriv --bounding-set $bset bpfprof agent --config deploy/systemd/agent.conf ..."
	timeout -k 5 60 setpriv --bounding-set "$bset" --inh-caps -all -- "$BPFPROF" agent \
		--config "$ROOT/deploy/systemd/agent.conf" --output-dir "$LIVE_DIR/profiles" \
		--interval 2s --metrics-addr 127.0.0.1:0 >"$LIVE_DIR/out" 2>"$LIVE_DIR/err" &
	tpid=$!
	BG_PIDS+=("$tpid")
	LIVE_PORT=
	LIVE_PROFILE=
	for ((i = 0; i < 150; i++)); do
		[ -n "$LIVE_PORT" ] ||
			LIVE_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$LIVE_DIR/err" | head -1)
		LIVE_PROFILE=$(ls "$LIVE_DIR"/profiles/*py3spin* 2>/dev/null | tail -1)
		[ -n "$LIVE_PROFILE" ] && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	http_get "${LIVE_PORT:-1}" /healthz >"$LIVE_DIR/healthz" 2>&1
	http_get "${LIVE_PORT:-1}" /metrics >"$LIVE_DIR/metrics" 2>&1
	start=$(date +%s.%N)
	kill -TERM "$tpid"
	wait "$tpid"
	LIVE_RC=$?
	LIVE_STOP_S=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	forget_pid "$tpid"
	stop_target "$spin"
	echo "  exit $LIVE_RC ${LIVE_STOP_S}s after SIGTERM; profile $(basename "${LIVE_PROFILE:-none}")"
	sed -n '1,6s/^/  | /p' "$LIVE_DIR/err"
}

# live_names FILE: the function names of a profile's samples (go tool pprof -top).
live_names() {
	[ -n "$1" ] && go tool pprof -top -sample_index=samples "$1" 2>/dev/null |
		awk 'NR > 6 { print $NF }'
}

# Debian's and Ubuntu's kernels default to kernel.perf_event_paranoid=3 (a patch of theirs):
# perf_events only with CAP_SYS_ADMIN, CAP_PERFMON is not enough. There the agent without
# CAP_SYS_ADMIN says so; docs/deploy.md tells those nodes to set 2, as the runs below do.
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	live_run paranoid bpf perfmon sys_resource sys_ptrace checkpoint_restore dac_read_search syslog
	assert_grep live_paranoid_message "$LIVE_DIR/err" \
		'perf_event_paranoid is above 2 .*only CAP_SYS_ADMIN may open perf_events.*set it to 2'
	assert_eq live_paranoid_exit "$LIVE_RC" 1
fi
paranoid_at_most_2

live_run caps bpf perfmon sys_resource sys_ptrace checkpoint_restore dac_read_search syslog
assert_eq live_config_accepted "$(grep -c 'agent: profiling every process' "$LIVE_DIR/err")" 1
assert_grep live_healthz "$LIVE_DIR/healthz" '^HTTP/1\.[01] 200'
assert_ge live_metrics_samples \
	"$(awk '$1 == "bpfprof_samples_total" { print $2 }' "$LIVE_DIR/metrics")" 1 " samples"
live_names "$LIVE_PROFILE" >"$LIVE_DIR/names"
assert_grep live_deleted_binary_symbols "$LIVE_DIR/names" '^_PyEval_EvalFrameDefault$'
assert_eq live_sigterm_exit "$LIVE_RC" 0
assert_le live_sigterm_seconds "$LIVE_STOP_S" 10 " s"

live_run no_checkpoint_restore bpf perfmon sys_resource sys_ptrace dac_read_search syslog
live_names "$LIVE_PROFILE" >"$LIVE_DIR/names"
assert_true live_checkpoint_restore_needed \
	"without CAP_CHECKPOINT_RESTORE the deleted binary's frames are unnamed ($(head -3 \
"$LIVE_DIR/names" | tr '\n' ' '))" \
	eval "grep -q '^py3spin+0x' '$LIVE_DIR/names' && ! grep -q '^_PyEval' '$LIVE_DIR/names'"

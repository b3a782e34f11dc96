#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-debuginfod.sh: a stripped program (no .symtab, no DWARF, no debuglink, no installed debug
# file) gets its function names and inlined frames from the debug file only a local debuginfod
# serves; without DEBUGINFOD_URLS its frames stay "inline_stripped+0xOFF". Also runs
# test_dwarf_lines' fetch test against the same server. A server that never answers: progress
# says so with the wait limit, and Ctrl-C ends the wait at exit. Debian's debuginfod 0.188 binds every
# interface (--listen-address came in 0.193): the script re-runs itself in a network namespace
# of its own, where only its loopback exists, and bpfprof runs there too.

# Before lib.sh: its temp dir and exit trap belong to the run inside the namespace.
if [ "${BPFPROF_DEBUGINFOD_NETNS:-}" != 1 ] && unshare -n true 2>/dev/null; then
	BPFPROF_DEBUGINFOD_NETNS=1 exec unshare -n bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
require_bpf

RUN_S=2
HZ=999
PORT=18003
URL=http://127.0.0.1:$PORT
BUILD=$(dirname "$BPFPROF")
UNIT_TEST=$BUILD/tests/unit/test_dwarf_lines
FIXTURE_DEBUG=$BUILD/tests/fixtures/inline.debug
# main;inline_spin;inline_outer_[i];inline_inner_[i];inline_leaf, from the program itself.
FULL=$("$TARGETS/inline" --print-chain)
MIN_COMPLETE_PCT=90

# require_env NAME CONDITION DESCRIPTION: what this test cannot run without; under CI=true
# its absence is a failure.
require_env() {
	local name=$1 desc=$3

	eval "$2" && return 0
	if [ "${CI:-}" = true ]; then
		fail "debuginfod_requires_$name" "$desc; CI=true makes this a failure"
		exit 1
	fi
	skip "$desc"
	exit 0
}

require_env netns '[ "${BPFPROF_DEBUGINFOD_NETNS:-}" = 1 ]' \
	"cannot create a network namespace (unshare -n needs CAP_SYS_ADMIN)"
require_env tools 'command -v debuginfod >/dev/null && command -v ip >/dev/null' \
	"needs debuginfod and ip (iproute2; tools/install-deps.sh)"
require_env files '[ -x "$UNIT_TEST" ] && [ -r "$FIXTURE_DEBUG" ] &&
	[ -x "$TARGETS/inline_stripped" ] && [ -r "$TARGETS/inline.debug" ]' \
	"needs $UNIT_TEST, its fixtures and the inline targets (make unit; make integration)"

# metrics: the server's /metrics (Prometheus text), through bash's /dev/tcp.
metrics() {
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
		printf "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 && cat <&3' \
		metrics "$PORT" 2>/dev/null
}

# Serves the two debug files; waits until both are indexed (scanning is asynchronous).
start_server() {
	local i scanned=0

	ip link set lo up
	mkdir -p "$TEST_TMP/srv"
	cp "$FIXTURE_DEBUG" "$TEST_TMP/srv/fixture-inline.debug"
	cp "$TARGETS/inline.debug" "$TEST_TMP/srv/target-inline.debug"
	debuginfod -F -p "$PORT" -d "$TEST_TMP/db.sqlite" "$TEST_TMP/srv" \
		>"$TEST_TMP/srv.log" 2>&1 &
	BG_PIDS+=("$!")
	for ((i = 0; i < 100; i++)); do
		scanned=$(metrics |
			awk '/^scanned_files_total\{source="file"\}/ { sub(/\r$/, ""); print $2 }')
		[ "${scanned:-0}" -ge 2 ] && break
		sleep 0.1
	done
	assert_ge debuginfod_server_scanned "${scanned:-0}" 2 " files"
	[ "${scanned:-0}" -ge 2 ] || { sed 's/^/  | /' "$TEST_TMP/srv.log"; exit 1; }
}

# test_dwarf_lines' test_debuginfod_server: module_symbols__request_debuginfo(), debuginfod__wait(),
# frames and symbols of a fetched file, a build-id the server does not know.
test_unit_fetch() {
	local out=$TEST_TMP/unit.out rc

	BPFPROF_TEST_DEBUGINFOD=1 BPFPROF_TEST_FILTER=test_debuginfod_server DEBUGINFOD_URLS=$URL \
		DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache-unit timeout 120 "$UNIT_TEST" >"$out" 2>&1
	rc=$?
	sed 's/^/  | /' "$out"
	assert_eq debuginfod_unit_exit "$rc" 0
	assert_grep debuginfod_unit_ran "$out" '^\[ +OK +\] test_debuginfod_server$'
}

# The stripped program profiled with and without DEBUGINFOD_URLS.
test_profile() {
	local p=$TEST_TMP/with q=$TEST_TMP/without stats

	run_limited $((RUN_S + 60)) "$q" env -u DEBUGINFOD_URLS "$BPFPROF" -F "$HZ" \
		-o "$q.folded" -- "$TARGETS/inline_stripped" "$RUN_S"
	assert_eq debuginfod_without_exit "$BP_RC" 0
	# Enough samples for the shares to mean something.
	assert_ge debuginfod_without_samples "$(folded_samples "$q.folded" inline_stripped)" 100
	assert_ge debuginfod_without_offsets \
		"$(frame_share "$q.folded" inline_stripped 'inline_stripped\+0x[0-9a-f]+')" 90 %
	assert_eq debuginfod_without_names \
		"$(frame_share "$q.folded" inline_stripped 'main|inline_spin|inline_leaf')" 0 %

	run_limited $((RUN_S + 60)) "$p" env DEBUGINFOD_URLS="$URL" \
		DEBUGINFOD_CACHE_PATH="$TEST_TMP/cache-bpfprof" "$BPFPROF" -F "$HZ" \
		-o "$p.folded" -- "$TARGETS/inline_stripped" "$RUN_S"
	assert_eq debuginfod_with_exit "$BP_RC" 0
	assert_grep debuginfod_with_progress "$p.err" \
		'fetched debug info of .*inline_stripped \(build-id [0-9a-f]+\): [0-9]+ bytes'
	read -r -a stats <<<"$(complete_share "$p.folded" inline_stripped '^_start;' \
		"${FULL%;*}")"
	echo "  inline_stripped samples: ${stats[0]}, through $FULL minus its leaf: ${stats[1]}"
	assert_ge debuginfod_with_named_chain "${stats[2]}" "$MIN_COMPLETE_PCT" %
	assert_eq debuginfod_with_offsets \
		"$(frame_share "$p.folded" inline_stripped 'inline_stripped\+0x[0-9a-f]+')" 0 %
}

# A server that accepts and never answers: progress says so (no made-up byte counts), with the
# wait limit, and Ctrl-C during the wait at exit ends it at once, the profile written.
test_stalled_server() {
	local p=$TEST_TMP/stalled port i t0 took

	python3 - "$p.port" >"$p.srv.out" 2>&1 <<'PY' &
import socket, sys
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(16)
open(sys.argv[1], 'w').write(str(s.getsockname()[1]))
held = []
while True:
    held.append(s.accept()[0])
PY
	BG_PIDS+=("$!")
	for ((i = 0; i < 50; i++)); do
		[ -s "$p.port" ] && break
		sleep 0.1
	done
	port=$(cat "$p.port" 2>/dev/null)
	DEBUGINFOD_URLS=http://127.0.0.1:${port:-1} DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache-stalled \
		start_bpfprof_bg 150 "$p" -F "$HZ" -o "$p.folded" -- "$TARGETS/inline_stripped" 1
	# The end-of-run wait, then a progress line (every 5 s).
	for ((i = 0; i < 200; i++)); do
		grep -q 'debuginfod: no answer' "$p.err" && break
		sleep 0.1
	done
	t0=$(date +%s.%N)
	kill -INT "$BP_PID"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$BP_PID" 2>/dev/null || break
		sleep 0.1
	done
	took=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%d", e - s }')
	wait_bpfprof_bg "$p"
	assert_eq debuginfod_stalled_exit "$BP_RC" 0
	assert_le debuginfod_stalled_ctrl_c_seconds "$took" 3 s
	assert_grep debuginfod_stalled_wait_limit "$p.err" \
		'debuginfod: waiting up to 120 s for [0-9]+ debug files? \(Ctrl-C skips the wait\)'
	assert_grep debuginfod_stalled_no_answer "$p.err" \
		"no answer from http://127.0.0.1:$port after [0-9]+ s for .*inline_stripped"
	assert_grep debuginfod_stalled_waits_more "$p.err" 'bpfprof waits [0-9]+ s more, Ctrl-C skips'
	# No bytes arrived: no byte count (libdebuginfod passes its call count until then).
	if grep -Eq '(fetching debug info of|debuginfod: ).*[0-9]+ bytes' "$p.err"; then
		fail debuginfod_stalled_no_bytes \
			"$(grep -Em1 '(fetching debug info of|debuginfod: ).*[0-9]+ bytes' "$p.err")"
	else
		pass debuginfod_stalled_no_bytes "no byte count before any byte came"
	fi
	assert_ge debuginfod_stalled_profile "$(folded_samples "$p.folded" inline_stripped)" 1
}

start_server
test_unit_fetch
test_profile
test_stalled_server

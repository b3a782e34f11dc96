#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-exec.sh: bpfprof --exec -- CMD, the PID-preserving wrapper for services: CMD runs with
# the PID the caller started and exits with its own status; a detached profiler writes -o or
# exports (--output-dir) after CMD exits; without the privileges to profile, CMD still runs
# (one warning), unless --strict.
BPFPROF_DIFF=0	# --exec takes no --raw-capture
. "$(dirname "$0")/../lib.sh"
require_bpf

export HOME=${HOME:-$TEST_TMP} GOCACHE=$TEST_TMP/gocache

# wait_file FILE SECONDS: until FILE exists (the detached profiler writes after CMD exits).
wait_file() {
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# The same PID, the same exit status, the profile written once CMD is gone.
p=$TEST_TMP/exec
echo "+ bpfprof --exec -F 999 -o $p.folded -- sh -c 'echo \$\$ >PIDFILE; exec chain 1'"
"$BPFPROF" --exec -F 999 -o "$p.folded" -- sh -c "echo \$\$ >'$p.pid'; exec '$TARGETS/chain' 1" \
	2>"$p.err" &
bp=$!
wait "$bp"
rc=$?
assert_eq exec_exit "$rc" 0
assert_eq exec_same_pid "$(cat "$p.pid" 2>/dev/null || echo 0)" "$bp"
assert_true exec_output_written "$p.folded" wait_file "$p.folded" 20
assert_ge exec_chain_samples "$(awk '/chain_leaf/ { n += $NF } END { print n + 0 }' "$p.folded")" \
	"$(cpu_floor "$p" 1 3)"

"$BPFPROF" --exec -q -o "$p.status.folded" -- sh -c 'exit 7' 2>/dev/null
assert_eq exec_exit_status_kept "$?" 7

# Exported as the agent does: a gzipped pprof in --output-dir that go tool pprof opens.
d=$TEST_TMP/profiles
"$BPFPROF" --exec -F 999 --output-dir "$d" -- "$TARGETS/chain" 1 2>"$p.dir.err"
assert_eq exec_export_cmd_exit "$?" 0
for ((i = 0; i < 200; i++)); do
	f=$(ls "$d"/*chain*.pb.gz 2>/dev/null | head -1)
	[ -n "$f" ] && break
	sleep 0.1
done
if [ -n "$f" ]; then
	pass exec_exported "$(basename "$f")"
	go tool pprof -traces "$f" >"$p.traces" 2>"$p.traces.err"
	assert_eq exec_export_opens "$?" 0
	assert_grep exec_export_chain "$p.traces" 'chain_leaf'
else
	fail exec_exported "no *chain*.pb.gz in $d: $(ls "$d" 2>&1 | head -3)"
fi

# Fail open: as nobody (no CAP_BPF, no CAP_PERFMON) CMD still runs, with one warning. The
# binary is copied where nobody can run it, whatever the checkout's permissions.
bindir=$TEST_TMP/bin
mkdir -p "$bindir"
cp "$BPFPROF" "$bindir/bpfprof"
chmod 755 "$bindir" "$bindir/bpfprof"
chmod 711 "$TEST_TMP"
q=$TEST_TMP/unpriv
run_limited 30 "$q" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all --bounding-set=-all \
	"$bindir/bpfprof" --exec -o /tmp/never.folded -- sh -c 'echo ran; exit 3'
assert_eq exec_failopen_status "$BP_RC" 3
assert_grep exec_failopen_ran "$q.out" '^ran$'
assert_grep exec_failopen_warns "$q.err" 'running sh unprofiled'
run_limited 30 "$q.strict" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all --bounding-set=-all \
	"$bindir/bpfprof" --exec --strict -o /tmp/never.folded -- sh -c 'echo ran; exit 3'
assert_eq exec_strict_status "$BP_RC" 1
if grep -q '^ran$' "$q.strict.out"; then
	fail exec_strict_not_run "CMD ran"
else
	pass exec_strict_not_run "CMD did not run"
fi

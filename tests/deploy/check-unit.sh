#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check-unit.sh: checks deploy/systemd/bpfprof-agent.service offline, run by
# tests/deploy/check-deploy.sh (make check-deploy).
#
# Usage: check-unit.sh UNIT BPFPROF TMPDIR
# Environment: EXPECTED_CAPS (capability names without CAP_, space-separated).
# Prints one "PASS|FAIL NAME: DETAIL" line per check; exit 0 unless the script itself broke.
# Checks:
#   systemd_verify      systemd-analyze verify accepts a copy whose ExecStart runs BPFPROF (verify
#                       requires the binary to exist) and prints nothing: it exits 0 on unknown
#                       keys or values ("ignoring"), so any output fails
#   systemd_exposure    systemd-analyze security --offline: overall exposure at most 4.0 (of 10)
#   systemd_caps        CapabilityBoundingSet and AmbientCapabilities are exactly EXPECTED_CAPS
#   systemd_settings    the settings the agent's deployment relies on (ExecStart, memlock, ...)
#   systemd_agent_works no setting that would break the agent (/proc/kallsyms, other users'
#                       processes, CAP_SYSLOG hidden or removed; a non-root user)
set -u

UNIT=$1
BIN=$2
WORK=$3
EXPOSURE_MAX=4.0

out() { echo "$1 $2: $3"; }
check() {	# check NAME OK_DETAIL FAIL_DETAIL BAD...: PASS when no BAD is given
	local name=$1 ok=$2 ko=$3

	shift 3
	if [ $# -eq 0 ]; then
		out PASS "$name" "$ok"
	else
		out FAIL "$name" "$ko: $*"
	fi
}

copy=$WORK/bpfprof-agent.service
sed "s|^ExecStart=/usr/local/bin/bpfprof |ExecStart=$BIN |" "$UNIT" >"$copy"

bad=()
grep -q "^ExecStart=$BIN " "$copy" ||
	bad+=("no ExecStart=/usr/local/bin/bpfprof to point at $BIN")
verify=$(cd "$WORK" && systemd-analyze verify "$copy" 2>&1)
rc=$?
[ "$rc" -eq 0 ] || bad+=("exit $rc")
[ -z "$verify" ] || bad+=("$(tr '\n' '|' <<<"$verify")")
check systemd_verify 'systemd-analyze verify: no error, no warning' 'systemd-analyze verify' \
	"${bad[@]}"

bad=()
sec=$(cd "$WORK" && systemd-analyze security --offline=true --no-pager "$copy" 2>&1)
level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$sec")
if [ -z "$level" ]; then
	bad+=("no exposure level in: $(tail -3 <<<"$sec" | tr '\n' '|')")
elif ! awk -v l="$level" -v m="$EXPOSURE_MAX" 'BEGIN { exit !(l <= m) }'; then
	bad+=("exposure $level > $EXPOSURE_MAX; not met: $(grep '✗' <<<"$sec" |
		awk '{ print $2 }' | head -12 | tr '\n' ' ')...")
fi
check systemd_exposure "systemd-analyze security: exposure ${level:-?} <= $EXPOSURE_MAX" \
	'sandbox too weak' "${bad[@]}"

# svc KEY: its value in [Service], continuation lines joined; the last assignment wins, as
# systemd does for single values. svc_all KEY: all assignments joined (capability sets merge).
svc() {
	awk -v k="$1" -v all="${2:-}" '
		/\\$/ { sub(/\\$/, ""); cont = cont $0 " "; next }
		{ $0 = cont $0; cont = "" }
		/^\[/ { s = ($0 == "[Service]") }
		s && index($0, k "=") == 1 {
			x = substr($0, length(k) + 2)
			gsub(/[ \t]+/, " ", x)
			v = all && v != "" ? v " " x : x
		}
		END { print v }' "$UNIT"
}
svc_all() { svc "$1" all; }
sorted() { tr ' ' '\n' | grep . | sort | tr '\n' ' '; }

bad=()
want=$(for c in ${EXPECTED_CAPS:-}; do echo "CAP_$c"; done | sorted)
for k in CapabilityBoundingSet AmbientCapabilities; do
	have=$(svc_all "$k" | sorted)
	[ -n "$want" ] && [ "$have" = "$want" ] || bad+=("$k '$have', expected '$want'")
done
check systemd_caps "bounding and ambient sets exactly $want" 'capabilities' "${bad[@]}"

bad=()
expect() {	# expect KEY REGEX
	[[ "$(svc "$1")" =~ $2 ]] || bad+=("$1='$(svc "$1")' !~ /$2/")
}
expect ExecStart '^/usr/local/bin/bpfprof agent --config /etc/bpfprof/agent.conf( |$)'
expect EnvironmentFile '^-/etc/default/bpfprof-agent$'
expect Restart '^on-failure$'
expect LimitMEMLOCK '^infinity$'
expect NoNewPrivileges '^yes$'
expect ProtectSystem '^strict$'
expect ProtectHome '^read-only$'
expect PrivateTmp '^yes$'
expect StateDirectory '(^| )bpfprof( |$)'
check systemd_settings "ExecStart, EnvironmentFile, Restart=on-failure, LimitMEMLOCK=infinity, \
NoNewPrivileges, ProtectSystem=strict, ProtectHome=read-only, PrivateTmp, StateDirectory=bpfprof" \
	'settings' "${bad[@]}"

bad=()
refuse() {	# refuse KEY REGEX WHY
	[[ "$(svc "$1")" =~ $2 ]] && bad+=("$1=$(svc "$1") ($3)")
}
refuse ProtectKernelTunables '^(yes|true|on|1)$' 'makes /proc/kallsyms inaccessible'
refuse ProtectKernelLogs '^(yes|true|on|1)$' 'removes CAP_SYSLOG'
refuse ProtectProc '^(invisible|noaccess|ptraceable)$' 'hides processes'
refuse ProcSubset '^pid$' 'hides /proc/kallsyms'
refuse DynamicUser '^(yes|true|on|1)$' 'not root'
refuse User '.' 'not root'
refuse PrivateUsers '^(yes|true|on|1)$' 'capabilities only in a user namespace'
check systemd_agent_works 'root, /proc/kallsyms and every process visible, CAP_SYSLOG kept' \
	'settings that break the agent' "${bad[@]}"
exit 0

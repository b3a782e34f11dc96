#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every tests/integration/run-*.sh (sorted) against $BPFPROF and $TARGETS, then prints
# "integration: N passed, N failed" over all named assertions; non-zero exit on any failure.
# INTEGRATION_ONLY="chain all agent" runs only those scripts (run-NAME.sh), e.g. a smoke run
# on another kernel (make vmtest).
set -u

# A whole script may take this long (its bpfprof runs have their own, shorter limits); more
# under emulation (make vmtest), where node, go and chromium run 5-20 times slower.
SCRIPT_LIMIT_S=${INTEGRATION_SCRIPT_LIMIT_S:-180}

here=$(cd "$(dirname "$0")" && pwd)
results=$(mktemp /tmp/bpfprof-integration.XXXXXX)
trap 'rm -f "$results"' EXIT

# A broken setup fails loudly instead of looking like a run with nothing to test.
check_env() {
	local ok=0

	if [ -z "${BPFPROF:-}" ] || [ ! -x "$BPFPROF" ]; then
		echo "FAIL integration_setup: BPFPROF='${BPFPROF:-}' is not an executable" | tee -a "$results"
		ok=1
	fi
	if [ -z "${TARGETS:-}" ] || [ ! -x "${TARGETS:-}/chain" ]; then
		echo "FAIL integration_setup: TARGETS='${TARGETS:-}' lacks the test programs" | tee -a "$results"
		ok=1
	fi
	return $ok
}

# run_script FILE: runs one script; a script that dies without recording a failure (syntax
# error, unbound variable, time limit) still counts as one.
run_script() {
	local script=$1 name before rc start=$SECONDS

	name=$(basename "$script" .sh)
	before=$(grep -c '^FAIL ' "$results")
	echo "=== $name ($(date -u +%H:%M:%S))"
	INTEGRATION_RESULTS=$results BPFPROF=$BPFPROF TARGETS=$TARGETS \
		timeout -k 10 "$SCRIPT_LIMIT_S" bash "$script"
	rc=$?
	echo "=== $name: $((SECONDS - start)) s, exit status $rc"
	if [ "$rc" -ne 0 ] && [ "$(grep -c '^FAIL ' "$results")" -eq "$before" ]; then
		echo "FAIL $name: the script exited with status $rc" | tee -a "$results"
	fi
}

# The container roots the selected scripts (those that source tests/container.sh) run programs
# in, made before them, outside SCRIPT_LIMIT_S: a cold one takes minutes (debootstrap, apt), a
# cached one a second. A root that cannot be made fails the script that needs it, not this.
prepare_containers() {
	local start=$SECONDS rc=0

	# shellcheck disable=SC2086 # the scripts' paths are words
	grep -qs '^\. .*/container\.sh"$' $1 || return 0
	echo "=== container roots ($(date -u +%H:%M:%S))"
	"$here/container.sh" prepare >/dev/null || rc=$?
	echo "=== container roots: $((SECONDS - start)) s, exit status $rc"
}

main() {
	local script scripts passed failed start

	start=$SECONDS
	scripts=$(LC_ALL=C ls "$here"/integration/run-*.sh 2>/dev/null)
	if [ -n "${INTEGRATION_ONLY:-}" ]; then
		scripts=$(for name in $INTEGRATION_ONLY; do
			ls "$here/integration/run-$name.sh" 2>/dev/null ||
				echo "FAIL integration_setup: no tests/integration/run-$name.sh" >>"$results"
		done)
	fi
	[ -n "$scripts" ] || echo "FAIL integration_setup: no tests/integration/run-*.sh" >>"$results"
	if check_env; then
		prepare_containers "$scripts"
		for script in $scripts; do
			run_script "$script"
		done
	fi
	passed=$(grep -c '^PASS ' "$results")
	failed=$(grep -c '^FAIL ' "$results")
	echo "=== summary ($((SECONDS - start)) s)"
	grep '^SKIP ' "$results"
	grep '^FAIL ' "$results"
	echo "integration: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

main "$@"

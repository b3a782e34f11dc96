#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-pycodes.sh: Python code objects made and freed in a hot loop (tests/targets/pycodes.py:
# exec'd functions with the same first line and size, whose memory the next ones take, under
# a known chain) are each named after their own code object, not after a freed one that was at
# its address: make_a's churn_a_N is never under make_b. -p on Debian's python3, each pyenv
# CPython 3.10-3.13 present and Debian sid's 3.13-3.15 in a container (tests/container.sh);
# -a on Debian's and the newest pyenv one. (Its own script: the
# other Python frame cases fill run-pyframes.sh's time.)
# Before code objects were told apart by more than their address and first line, 6-25% of the
# churned functions' samples were under the wrong maker (3.10-3.13; about as many again were
# named after a function of the same maker, which this cannot see).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../container.sh"
require_bpf

# Debian's python3, whatever its version (comm: its file's name, python3.X; not a pyenv shim
# that PATH may have first).
PYTHON=$(readlink -f /usr/bin/python3)
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
CODES_SCRIPT=$(cd "$(dirname "$0")/../targets" && pwd)/pycodes.py
HZ=499
RUN_S=4

# codes_share FILE COMM: "TOTAL NAMED BAD PCT_NAMED PCT_BAD NAMES" over COMM's samples of
# pycodes.py with a Python frame below make_[py] (Python frames only: 3.10 has native frames
# between): NAMED of them name a churned function, BAD of those under the other maker (make_a
# -> make -> churn_b_N, or b -> a), NAMES distinct churned functions.
codes_share() {
	Q_COMM=$2 awk "$FOLDED_AWK"'
		parse($0) && selected() {
			np = 0
			for (i = 1; i <= nuser; i++)
				if (fr[i] ~ /_\[py\]$/)
					py[++np] = fr[i]
			for (i = 3; i <= np; i++) {
				if (py[i - 1] != "make_[py]")
					continue
				total += cnt
				if (py[i] !~ /^churn_[ab]_[0-9]+_\[py\]$/)
					break
				named += cnt
				if (py[i - 2] != "make_" substr(py[i], 7, 1) "_[py]")
					bad += cnt
				names[py[i]] = 1
				break
			}
		}
		END {
			for (n in names)
				nn++
			print total + 0, named + 0, bad + 0, pct(named, total), pct(bad, named), nn + 0
		}' "$1"
}

# test_codes: each CPython here, -p; Debian's and the newest pyenv one, -a too.
test_codes() {
	local v py label p pid mode i share pys=("$PYTHON") newest=""

	if [ ! -x "$PYTHON" ]; then
		fail python3_available "/usr/bin/python3 is missing (make deps installs python3)"
		return
	fi
	for v in 3.10 3.12 3.13; do
		py=$(ls -d "$PYENV/$v".*/bin/python"$v" 2>/dev/null | grep -v -- '-dev/\|[0-9]t/' |
			tail -1)
		if [ -n "$py" ] && [ -x "$py" ]; then
			pys+=("$py")
			newest=$py
		fi
	done
	for py in "${pys[@]}"; do
		for mode in p a; do
			[ "$mode" = a ] && [ "$py" != "$PYTHON" ] && [ "$py" != "$newest" ] && continue
			v=$(basename "$py")
			v=${v#python}
			label=py${v/./}_codes_$mode
			p=$TEST_TMP/$label
			PYCHAIN_READY=$p.ready start_target pid "$py" "$CODES_SCRIPT" 0
			for ((i = 0; i < 1200; i++)); do
				[ -e "$p.ready" ] && break
				sleep 0.1
			done
			if [ ! -e "$p.ready" ]; then
				stop_target "$pid"
				fail "${label}_started" "pycodes.py did not start its work in 120 s"
				continue
			fi
			if [ "$mode" = p ]; then
				run_bpfprof 60 "$p" -F "$HZ" -d "$RUN_S" -o "$p.folded" -p "$pid"
			else
				# 6 s, as test_all: a process that ran before is armed late.
				run_bpfprof 60 "$p" -a -F "$HZ" -d 6 -o "$p.folded"
			fi
			stop_target "$pid"
			check_codes "$label" "$p" "$(basename "$py")"
		done
	done
}

# check_codes LABEL PREFIX COMM: the run's exit status and COMM's samples in PREFIX.folded.
check_codes() {
	local label=$1 p=$2 share

	assert_eq "${label}_exit" "$BP_RC" 0
	read -r -a share <<<"$(codes_share "$p.folded" "$3")"
	assert_ge "${label}_samples" "${share[1]}" 50
	assert_ge "${label}_names" "${share[5]}" 20
	# Named, not [unknown]: each new code object is copied.
	assert_ge "${label}_named" "${share[3]}" 90 % \
		"${share[1]} of ${share[0]} samples below make"
	assert_le "${label}_misnamed" "${share[4]}" 2 % \
		"${share[2]} of ${share[1]} samples of a churned function under the other maker"
}

# test_codes_container: Debian sid's python3.13-3.15 in a container (tests/container.sh), -p
# (the interpreter's host pid). A root that cannot be made: a failure with CI=true.
test_codes_container() {
	local v py label p pid dir=$TEST_TMP/ct root cmd

	# shellcheck disable=SC2086 # the packages are words
	if ! container_root root "$CONTAINER_PY_RELEASE" $CONTAINER_PY_PACKAGES; then
		if [ "${CI:-}" = true ]; then
			fail pycodes_container_root "tools/fresh-root.sh could not make the sid root"
		else
			echo "  no sid root (tools/fresh-root.sh failed): sid's CPythons not tested"
		fi
		return
	fi
	mkdir -p "$dir"
	cp "$CODES_SCRIPT" "$dir/pycodes.py"
	container_cmd cmd "$root" "$dir" PYCHAIN_READY=/mnt/ready
	for v in 3.13 3.14 3.15; do
		py=python$v
		label=sid_py${v/./}_codes_p
		p=$TEST_TMP/$label
		if [ ! -x "$root/usr/bin/$py" ]; then
			fail "${label}_available" "$root/usr/bin/$py is missing"
			continue
		fi
		if ! container_start pid "$dir/ready" "$py" "${cmd[@]}" "$py" /mnt/pycodes.py 0; then
			container_stop "$pid"
			fail "${label}_started" "pycodes.py did not start its work in the container"
			continue
		fi
		run_bpfprof 60 "$p" -F "$HZ" -d "$RUN_S" -o "$p.folded" -p "$pid"
		container_stop "$pid"
		check_codes "$label" "$p" "$py"
	done
}

test_codes
test_codes_container

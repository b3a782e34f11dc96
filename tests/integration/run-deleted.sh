#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-deleted.sh: chain and libchain.so copied to a temp dir, deleted while chain runs (and
# other files put at their paths): still unwound and named, from the files the process maps,
# under "-p PID" and "-- CMD".
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999
RUN_S=2
# -- CMD's chain runs longer: its files are deleted once it maps its library, and under qemu's
# TCG on 5.10 its dynamic loading and the set-up's forks took all of 2 s (the process was gone
# when the deletion was checked).
CMD_RUN_S=$((RUN_S + 3))
CHAIN=$("$TARGETS/chain" --print-chain)
MIN_COMPLETE_PCT=95
MIN_LEAF_PCT=90

# copy_chain DIR: a private copy of chain and of the library it links with.
copy_chain() {
	mkdir "$1"
	cp "$TARGETS/chain" "$TARGETS/libchain.so" "$1/"
}

# delete_chain DIR HOW PID: removes the copies, and says whether PID's maps show both deleted
# (checked at once: under qemu's TCG a 2 s chain could end while cp ran); HOW=replaced then
# puts other ELF files at their paths (sysread as chain, libnocfi.so as libchain.so), which a
# profiler opening the paths would read.
delete_chain() {
	local ok=1

	rm -f "$1/chain" "$1/libchain.so"
	mapped_deleted "$3" || ok=0
	if [ "$2" = replaced ]; then
		cp "$TARGETS/sysread" "$1/chain"
		cp "$TARGETS/libnocfi.so" "$1/libchain.so"
	fi
	[ "$ok" = 1 ]
}

# mapped_deleted PID: /proc/PID/maps shows both the executable and the library as deleted.
mapped_deleted() {
	grep -q '/chain (deleted)$' "/proc/$1/maps" 2>/dev/null &&
		grep -q '/libchain\.so (deleted)$' "/proc/$1/maps" 2>/dev/null
}

# wait_mapped PID FILE: waits (up to 30 s of wall time: under qemu's TCG each pass forks
# slowly) until PID maps FILE, i.e. until its dynamic loader mapped the library: deleting it
# before would make chain fail to start.
wait_mapped() {
	local deadline=$((SECONDS + 30))

	while [ "$SECONDS" -lt "$deadline" ]; do
		grep -q " $2\$" "/proc/$1/maps" 2>/dev/null && return 0
		sleep 0.005
	done
	return 1
}

# check_chain FOLDED LABEL: the usual chain, complete from _start, with the usual names; the
# run's maps reads and re-scans (its stderr next to FOLDED).
check_chain() {
	local folded=$1 label=$2 stats

	read -r -a stats <<<"$(chain_stats "$folded" chain '^_start;' "$CHAIN")"
	echo "  chain: $(folded_samples "$folded" chain) samples, ${stats[1]} of ${stats[0]} in chain_leaf complete"
	sort -t' ' -k2 -rn "$folded" | head -3 | cut -c1-300 | sed 's/^/    /'
	check_rescans "$label" "${folded%.folded}" "chain ${stats[2]}%"
	assert_ge "${label}_samples" "$(folded_samples "$folded" chain)" \
		"$(cpu_floor "${folded%.folded}" 1 4)"
	assert_ge "${label}_leaf_share" "$(leaf_share "$folded" chain chain_leaf)" "$MIN_LEAF_PCT" %
	assert_ge "${label}_complete" "${stats[2]}" "$MIN_COMPLETE_PCT" %
}

# test_pid HOW: -p on a chain whose files were deleted (HOW: deleted or replaced) before.
test_pid() {
	local how=$1 dir=$TEST_TMP/pid-$1-bin p=$TEST_TMP/pid-$1 pid ok=0

	copy_chain "$dir"
	start_target pid "$dir/chain" $((RUN_S + 30))
	wait_mapped "$pid" "$dir/libchain.so"
	delete_chain "$dir" "$how" "$pid" && ok=1
	run_bpfprof $((RUN_S + 40)) "$p" --stats -p "$pid" -d "$RUN_S" -F "$HZ" -o "$p.folded"
	stop_target "$pid"

	assert_eq "deleted_pid_${how}_files_deleted" "$ok" 1
	assert_eq "deleted_pid_${how}_exit" "$BP_RC" 0
	check_chain "$p.folded" "deleted_pid_$how"
}

# test_cmd HOW: -- CMD on the copy, deleted (HOW: deleted or replaced) as soon as the command
# has mapped both files (its library must be mapped before it goes). bpfprof reads its ringbuf
# every 200 ms only: it learns of the mappings, and opens their files, after they are deleted.
test_cmd() {
	local how=$1 dir=$TEST_TMP/cmd-$1-bin p=$TEST_TMP/cmd-$1 child='' deadline ok=0

	copy_chain "$dir"
	start_bpfprof_bg $((RUN_S + 40)) "$p" --stats --drain-interval 200 -F "$HZ" \
		-o "$p.folded" -- \
		"$dir/chain" "$CMD_RUN_S"
	# bpfprof starts CMD once its programs are loaded: 5.10's under qemu's TCG took seconds.
	deadline=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$deadline" ]; do
		[ -n "$BP_PID" ] || break
		child=$(cat "/proc/$BP_PID/task/$BP_PID/children" 2>/dev/null)
		child=${child%% *}
		[ -n "$child" ] && break
		sleep 0.005
	done
	if [ -z "$child" ]; then
		echo "  no child of bpfprof (PID ${BP_PID:-none}) seen in 60 s"
	elif ! wait_mapped "$child" "$dir/libchain.so"; then
		echo "  child $child did not map libchain.so in 30 s"
	fi
	delete_chain "$dir" "$how" "${child:-0}" && ok=1
	[ "$ok" = 1 ] || echo "  child ${child:-none}'s maps after rm:" \
		"$(grep chain "/proc/${child:-0}/maps" 2>&1 | tr -s ' ' | cut -d' ' -f6- | tr '\n' ' ')"
	wait_bpfprof_bg "$p"

	assert_eq "deleted_cmd_${how}_files_deleted" "$ok" 1
	assert_eq "deleted_cmd_${how}_exit" "$BP_RC" 0
	check_chain "$p.folded" "deleted_cmd_$how"
}

test_pid deleted
test_pid replaced
test_cmd deleted
test_cmd replaced

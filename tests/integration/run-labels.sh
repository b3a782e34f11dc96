#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-labels.sh: container and pod labels from real cgroup v2 directories. A sleeping process is
# moved into cgroups named as kubelet (systemd and cgroupfs drivers), CRI-O's conmon, Docker
# in Docker and a systemd service name them; cgroup__read() ($TARGETS/cgroup_read, the --read
# mode of test_cgroup) must give back each one's container id, runtime, pod UID and unit. A
# zombie whose cgroup was removed reads as " (deleted)". Needs root and a cgroup2 mount; the
# cgroups are removed at exit.
. "$(dirname "$0")/../lib.sh"

CGROUP_READ=$TARGETS/cgroup_read

# Without root or cgroup v2 the test cannot run: skipped, a failure under CI=true.
require() {
	local reason=$1

	if [ "${CI:-}" = true ]; then
		fail "${TEST_NAME}_require" "$reason; CI=true makes this a failure"
		exit 1
	fi
	skip "$reason"
	exit 0
}

[ "$(id -u)" = 0 ] || require "needs root to create cgroups (uid $(id -u))"
[ -x "$CGROUP_READ" ] || require "$CGROUP_READ is not built (make $CGROUP_READ)"
# Pure v2 hosts mount it at /sys/fs/cgroup, v1 hybrid ones at /sys/fs/cgroup/unified.
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || require "no cgroup2 file system mounted (/proc/self/mounts)"
echo "cgroup2 at $CG2"

TOP=bpfprof-test-$$.slice
CREATED=()

# Moves our processes back to the root cgroup and removes the test's cgroups, deepest first.
labels_cleanup() {
	local rc=$? pid i

	for pid in $(cat "$CG2/$TOP"/cgroup.procs "$CG2/$TOP"/*/cgroup.procs \
		"$CG2/$TOP"/*/*/cgroup.procs "$CG2/$TOP"/*/*/*/cgroup.procs 2>/dev/null); do
		echo "$pid" >"$CG2/cgroup.procs" 2>/dev/null
	done
	for ((i = ${#CREATED[@]} - 1; i >= 0; i--)); do
		rmdir "${CREATED[i]}" 2>/dev/null
	done
	if [ -d "$CG2/$TOP" ]; then
		echo "left behind: $(find "$CG2/$TOP" -type d | tr '\n' ' ')" >&2
	fi
	return "$rc"
}
trap 'labels_cleanup; lib_cleanup' EXIT

# mkcg REL: creates $CG2/REL and its parents, remembered for cleanup in creation order.
mkcg() {
	local rel=$1 path=$CG2 comp

	IFS=/ read -ra comps <<<"$rel"
	for comp in "${comps[@]}"; do
		path=$path/$comp
		if [ ! -d "$path" ]; then
			mkdir "$path" || return 1
			CREATED+=("$path")
		fi
	done
}

# assert_str NAME ACTUAL EXPECTED
assert_str() {
	if [ "$2" = "$3" ]; then
		pass "$1" "'$2'"
	else
		fail "$1" "actual '$2', expected '$3'"
	fi
}

# read_labels PID: cgroup_read's fields into CG_PATH, CG_ID, CG_RUNTIME, CG_POD_UID, CG_UNIT,
# CG_ERROR (empty on success).
read_labels() {
	local out

	out=$("$CGROUP_READ" --read "$1")
	CG_PATH=$(sed -n 's/^path=//p' <<<"$out")
	CG_ID=$(sed -n 's/^container_id=//p' <<<"$out")
	CG_RUNTIME=$(sed -n 's/^runtime=//p' <<<"$out")
	CG_POD_UID=$(sed -n 's/^pod_uid=//p' <<<"$out")
	CG_UNIT=$(sed -n 's/^unit=//p' <<<"$out")
	CG_ERROR=$(sed -n 's/^error=//p' <<<"$out")
}

# check_layout NAME REL ID RUNTIME POD_UID UNIT: moves the sleeper into $CG2/$TOP/REL, then
# asserts what the kernel's /proc/PID/cgroup says and what cgroup__read() makes of it.
check_layout() {
	local name=$1 rel=$TOP/$2 id=$3 runtime=$4 uid=$5 unit=$6 line

	if ! mkcg "$rel" || ! echo "$SLEEPER" >"$CG2/$rel/cgroup.procs"; then
		fail "${name}_move" "could not move pid $SLEEPER into $CG2/$rel"
		return
	fi
	line=$(grep '^0::' "/proc/$SLEEPER/cgroup")
	echo "  $name: /proc/$SLEEPER/cgroup has '$line'"
	read_labels "$SLEEPER"
	assert_str "${name}_error" "$CG_ERROR" ""
	assert_str "${name}_path" "$CG_PATH" "/$rel"
	assert_str "${name}_container_id" "$CG_ID" "$id"
	assert_str "${name}_runtime" "$CG_RUNTIME" "$runtime"
	assert_str "${name}_pod_uid" "$CG_POD_UID" "$uid"
	assert_str "${name}_unit" "$CG_UNIT" "$unit"
}

hex64() {
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n'
}

ID1=$(hex64)
ID2=$(hex64)
ID3=$(hex64)
POD_UID=$(cat /proc/sys/kernel/random/uuid)
POD_UID_=${POD_UID//-/_}

mkcg "$TOP" || { fail "${TEST_NAME}_mkdir" "mkdir $CG2/$TOP failed"; exit 1; }
start_target SLEEPER sleep 60

SLICE=kubepods-besteffort.slice/kubepods-besteffort-pod$POD_UID_.slice
check_layout systemd_containerd "$SLICE/cri-containerd-$ID1.scope" \
	"$ID1" containerd "$POD_UID" ""
check_layout cgroupfs_kubepods "kubepods/burstable/pod$POD_UID/$ID2" "$ID2" "" "$POD_UID" ""
check_layout crio_conmon \
	"kubepods-burstable.slice/kubepods-burstable-pod$POD_UID_.slice/crio-conmon-$ID3.scope" \
	"" "" "$POD_UID" ""
check_layout crio \
	"kubepods-burstable.slice/kubepods-burstable-pod$POD_UID_.slice/crio-$ID3.scope" \
	"$ID3" cri-o "$POD_UID" ""
check_layout docker_in_docker "docker-$ID1.scope/docker/$ID2" "$ID2" docker "" ""
check_layout service "bpfprof-labels-test.service" "" "" "" "bpfprof-labels-test.service"

# A process gone: the error, not labels.
read_labels "$(unused_pid)"
assert_str gone_pid_error "$CG_ERROR" "-2"

# A zombie in a removed cgroup: the kernel appends " (deleted)" to the v2 path. The subshell
# moves itself into the cgroup and becomes a short sleep whose parent (a long sleep) never
# reaps it.
ZREL=$TOP/zombie/docker-$ID3.scope
mkcg "$ZREL"
bash -c '( echo $BASHPID >"$1/cgroup.procs"; exec sleep 0.3 ) & exec sleep 30' _ "$CG2/$ZREL" &
ZPARENT=$!
BG_PIDS+=("$ZPARENT")
ZOMBIE=
for ((i = 0; i < 100; i++)); do
	ZOMBIE=$(cat "/proc/$ZPARENT/task/$ZPARENT/children" 2>/dev/null)
	ZOMBIE=${ZOMBIE%% *}
	[ -n "$ZOMBIE" ] && [ "$(awk '{ print $3 }' "/proc/$ZOMBIE/stat" 2>/dev/null)" = Z ] &&
		break
	sleep 0.05
done
if [ -n "$ZOMBIE" ] && rmdir "$CG2/$ZREL"; then
	echo "  zombie $ZOMBIE: /proc/$ZOMBIE/cgroup has '$(grep '^0::' "/proc/$ZOMBIE/cgroup")'"
	assert_grep zombie_kernel_deleted "/proc/$ZOMBIE/cgroup" '^0::/.* \(deleted\)$'
	read_labels "$ZOMBIE"
	assert_str zombie_path "$CG_PATH" "/$ZREL"
	assert_str zombie_container_id "$CG_ID" "$ID3"
	assert_str zombie_runtime "$CG_RUNTIME" docker
else
	fail zombie_setup "no zombie (pid '${ZOMBIE}') in $CG2/$ZREL, or its rmdir failed"
fi

stop_target "$SLEEPER"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# container.sh: container roots for the integration tests (sourced, or run: see the end). A
# root is a Debian release with extra packages (sid's python3.13-3.15), made by the project's
# one root-making tool (tools/fresh-root.sh -m -p), kept between test runs, and a program runs
# in it as a container runs on a host: its own mount and PID namespaces, the root entered with
# pivot_root (as fresh-root.sh's in_root: /proc/PID/maps seen from the host then names files
# the host's root cannot reach, the case bpfprof must resolve through /proc/PID/root), its own
# /proc.
#
# What is cached, and where: $CONTAINER_CACHE (default /var/cache/bpfprof/container, outside the
# clone: it survives CI runs on one machine) holds each made root, NAME (a directory), its key
# NAME.key and NAME.lock. The key is the release, the packages, the sha256 of tools/fresh-root.sh
# and that of the release's cached base's dpkg status (fresh-root.sh -u remakes that base): a
# root is made again when one of them changed, or when it is older than CONTAINER_MAX_DAYS (7:
# sid moves; apt then fetches only the .debs fresh-root.sh's cache lacks). A remake that fails
# (no network) keeps the older root, and says so. fresh-root.sh keeps its own caches (the
# debootstrap'ed base and the .debs, /var/cache/bpfprof/fresh-root).
# Times (2 shared vCPUs, sid's python3.13-3.15 and libpython3.14-dev, 650 MB): cold (no base,
# no .debs: debootstrap and every download) 76 s, of which debootstrap 49 s (114 s and 78 s
# beside a test run); the base and the .debs cached, the root made again (a key changed) 14 s;
# warm (the root cached) under a second. A remake that fails keeps the old key: the next run
# tries again.

CONTAINER_CACHE=${CONTAINER_CACHE:-/var/cache/bpfprof/container}
CONTAINER_MAX_DAYS=${CONTAINER_MAX_DAYS:-7}
CONTAINER_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The roots the integration tests use: sid's CPythons (run-pycontainer.sh; libpython3.14-dev
# for the internal headers whose _Py_DebugOffsets its swap case reads).
CONTAINER_PY_RELEASE=sid
CONTAINER_PY_PACKAGES='python3.13 python3.14 python3.15 libpython3.14-dev'

# container_key RELEASE PKGS: the inputs a root of RELEASE with PKGS is made from, one line.
container_key() {
	local base=${FRESH_ROOT_CACHE:-/var/cache/bpfprof/fresh-root}/$1

	printf '%s|%s|%s|%s\n' "$1" "$2" \
		"$(sha256sum <"$CONTAINER_REPO/tools/fresh-root.sh" | cut -c1-16)" \
		"$(sha256sum 2>/dev/null <"$base/var/lib/dpkg/status" | cut -c1-16)"
}

# container_root VAR RELEASE PKGS...: the path of a root of RELEASE with PKGS installed in VAR,
# made first when none of the same key is cached (minutes: see above), reused otherwise (a
# second). Holds a shared lock on the root until the caller exits (another test run remakes it
# only after); waits up to 15 minutes for a run making it. Returns 1 (the reason on stderr) when
# no root could be made.
container_root() {
	local _cr_var=$1 release=$2 pkgs name dir key fd old made=0 start=$SECONDS

	shift 2
	pkgs="$*"
	name=$release-$(echo "$pkgs" | tr -c 'a-zA-Z0-9.\n' '_' | cut -c1-60)
	dir=$CONTAINER_CACHE/$name
	mkdir -p "$CONTAINER_CACHE"
	exec {fd}>"$dir.lock"
	if ! flock -w 900 -x "$fd"; then
		echo "container: $dir.lock held for 15 minutes" >&2
		return 1
	fi
	old=$(find "$dir.key" -mtime "+$CONTAINER_MAX_DAYS" 2>/dev/null || true)
	key=$(container_key "$release" "$pkgs")
	if [ -d "$dir/etc" ] && [ "$(cat "$dir.key" 2>/dev/null)" = "$key" ] && [ -z "$old" ]; then
		:
	else
		echo "container: making $dir ($release: $pkgs) with tools/fresh-root.sh" >&2
		rm -rf --one-file-system "$dir.new"
		if "$CONTAINER_REPO/tools/fresh-root.sh" -m -p "$pkgs" "$release" "$dir.new" \
			>/dev/null; then
			rm -rf --one-file-system "$dir"
			mv "$dir.new" "$dir"
			# Read again: fresh-root.sh may have made the base meanwhile.
			container_key "$release" "$pkgs" >"$dir.key"
			made=1
		elif [ -d "$dir/etc" ]; then
			rm -rf --one-file-system "$dir.new"
			echo "container: making $dir again failed: the older root kept" >&2
		else
			rm -rf --one-file-system "$dir.new"
			echo "container: tools/fresh-root.sh could not make $dir" >&2
			flock -u "$fd"
			return 1
		fi
	fi
	flock -s "$fd"
	echo "container: root $dir ($([ "$made" = 1 ] && echo made || echo cached)," \
		"$((SECONDS - start)) s)" >&2
	printf -v "$_cr_var" '%s' "$dir"
}

# container_cmd VAR ROOT DIR [NAME=VALUE...]: sets the array VAR to the command prefix that
# runs a program (the words after it: a path in ROOT, or a name found in its PATH) in ROOT as a
# container: new mount and PID namespaces (unshare --mount --pid --fork: the program is the
# namespace's pid 1, its host pid the unshare process's only child, killed with it:
# --kill-child, as a namespace's init ignores SIGTERM from outside), ROOT rbind-mounted on
# itself and made "/" by pivot_root, the old root detached (from the root's /tmp, left empty),
# a /proc of the namespace's own, and the host directory DIR bind-mounted (read-write) on the
# container's /mnt: the test's scripts and files go there. The environment is emptied but for PATH, HOME, LANG and the
# NAME=VALUE given. Nothing of this outlives the program: the mounts are the namespace's.
container_cmd() {
	local -n _cc_var=$1

	# shellcheck disable=SC2016 # expanded by the namespace's sh
	_cc_var=(unshare --mount --pid --fork --kill-child --propagation private /bin/sh -ec '
		root=$1 dir=$2
		shift 2
		mount --rbind "$root" "$root"
		mount --bind "$dir" "$root/mnt"
		mount -t proc proc "$root/proc"
		cd "$root"
		# The old root lands on the root'"'"'s /tmp, detached at once (umount reads the new
		# /proc): no directory of the cached root is made for it.
		pivot_root . tmp
		cd /
		umount -l /tmp
		exec /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"' \
		sh "$2" "$3" "${@:4}")
}

# container_child VAR PID COMM: the host pid of the program a container_cmd started as PID (the
# unshare process) runs, in VAR, once it exec'd the program named COMM (up to 10 s; the
# kernel's 15 characters); VAR empty and 1 returned when it did not.
container_child() {
	# Locals prefixed: printf -v must reach the caller's variable, not one of these.
	local _cc_out=$1 _cc_pid=$2 _cc_comm=${3:0:15} _cc_child _cc_i

	printf -v "$_cc_out" '%s' ''
	for ((_cc_i = 0; _cc_i < 200; _cc_i++)); do
		_cc_child=$(cat "/proc/$_cc_pid/task/$_cc_pid/children" 2>/dev/null)
		_cc_child=${_cc_child%% *}
		if [ -n "$_cc_child" ] &&
			[ "$(cat "/proc/$_cc_child/comm" 2>/dev/null)" = "$_cc_comm" ]; then
			printf -v "$_cc_out" '%s' "$_cc_child"
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# container_start VAR READY COMM CMD...: CMD (a container_cmd prefix and its program) in the
# background (lib.sh's start_target: killed at exit); VAR gets the host pid of the program,
# named COMM, once it runs and, READY given (a host path, removed first), once that file
# exists (up to 120 s); VAR empty and 1 returned when it did not. CONTAINER_PID: the unshare
# process's pid, for container_stop.
container_start() {
	local _cs_var=$1 _cs_ready=$2 _cs_comm=$3 _cs_child _cs_i

	shift 3
	printf -v "$_cs_var" '%s' ''
	[ -z "$_cs_ready" ] || rm -f "$_cs_ready"
	start_target CONTAINER_PID "$@"
	container_child _cs_child "$CONTAINER_PID" "$_cs_comm" || return 1
	for ((_cs_i = 0; _cs_i < 1200; _cs_i++)); do
		[ -z "$_cs_ready" ] || [ -e "$_cs_ready" ] && break
		sleep 0.1
	done
	[ -z "$_cs_ready" ] || [ -e "$_cs_ready" ] || return 1
	printf -v "$_cs_var" '%s' "$_cs_child"
}

# container_stop PID: ends the container container_start started (PID: its program's host
# pid, or empty). The program is its namespace's init, which ignores SIGTERM without a handler,
# and unshare passes SIGTERM on to it: SIGKILL to both, then unshare is reaped.
container_stop() {
	[ -n "$1" ] && kill -KILL "$1" 2>/dev/null
	kill -KILL "$CONTAINER_PID" 2>/dev/null
	wait "$CONTAINER_PID" 2>/dev/null
	forget_pid "$CONTAINER_PID"
}

# Run, not sourced: tests/container.sh root RELEASE PKGS... prints the root's path (making it);
# tests/container.sh prepare makes (or finds cached) the roots the tests use, as
# tests/run-integration.sh does before the scripts, and prints the Python root's path;
# tests/container.sh run RELEASE PKGS --
# CMD... runs CMD there with the current directory on /mnt.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -eu
	case "${1:-}" in
	root)
		container_root CT_ROOT "${@:2}"
		echo "$CT_ROOT" ;;
	prepare)
		# shellcheck disable=SC2086 # the packages are words
		container_root CT_ROOT "$CONTAINER_PY_RELEASE" $CONTAINER_PY_PACKAGES
		echo "$CT_ROOT" ;;
	run)
		shift
		args=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			args+=("$1")
			shift
		done
		[ $# -gt 0 ] && shift
		container_root CT_ROOT "${args[@]}"
		container_cmd CT_CMD "$CT_ROOT" "$PWD"
		"${CT_CMD[@]}" "$@" ;;
	*)
		echo "usage: $0 root RELEASE PKGS... | prepare | run RELEASE PKGS... -- CMD..." >&2
		exit 2 ;;
	esac
fi

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-rootfs.sh: a process whose root is its own, as in a container: dlswap in a private root
# directory, made the root of a new mount namespace with pivot_root. Its maps and mmap records
# name its files relative to that root, which bpfprof cannot reach by those paths once the
# process is gone: a report of the run's capture must name its frames as the live run does
# (the capture says where the root was).
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=199
PHASE_S=1
LIMIT_S=60
LEAF_RE='^(dla|dlb)_leaf$'

for tool in unshare mount pivot_root ldd; do
	if ! command -v "$tool" >/dev/null; then
		fail rootfs_tools "$tool (util-linux, libc-bin) is needed"
		exit 1
	fi
done

# make_rootfs DIR: dlswap in /app with its libraries next to it ($ORIGIN), the C library and
# the dynamic loader at their usual paths, an empty /proc to mount.
make_rootfs() {
	local dir=$1 lib

	mkdir -p "$dir/proc" "$dir/old" "$dir/app"
	cp "$TARGETS/dlswap" "$TARGETS/libdla.so" "$TARGETS/libdlb.so" "$dir/app/"
	for lib in $(ldd "$TARGETS/dlswap" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }'); do
		mkdir -p "$dir$(dirname "$lib")"
		cp -L "$lib" "$dir$lib"
	done
}

ROOT=$TEST_TMP/rootfs
make_rootfs "$ROOT"
# Run in a new mount namespace: ROOT (a bind mount of itself) becomes its root, with a /proc
# (dlswap reads its own maps), the old root moved away under /old.
cat >"$TEST_TMP/pivot.sh" <<EOF
set -e
mount --make-rprivate /
mount --bind "$ROOT" "$ROOT"
mount -t proc proc "$ROOT/proc"
cd "$ROOT"
pivot_root . old
exec /app/dlswap "\$@"
EOF

p=$TEST_TMP/live
r=$TEST_TMP/report
run_bpfprof "$LIMIT_S" "$p" -F "$HZ" --raw-capture "$p.cap" -o "$p.folded" -- \
	unshare -m sh "$TEST_TMP/pivot.sh" "$PHASE_S" "$PHASE_S"
assert_eq rootfs_live_exit "$BP_RC" 0
live=$(frame_share "$p.folded" dlswap "$LEAF_RE")
assert_ge rootfs_live_leaf_named "$live" 90 %

run_limited "$LIMIT_S" "$r" "$BPFPROF" report "$p.cap" -o "$r.folded"
assert_eq rootfs_report_exit "$BP_RC" 0
assert_eq rootfs_report_samples "$(folded_samples "$r.folded" dlswap)" \
	"$(folded_samples "$p.folded" dlswap)"
assert_within rootfs_report_leaf_named "$(frame_share "$r.folded" dlswap "$LEAF_RE")" "$live" 1 %

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-vmfetch.sh: make vmtest's sid kernel (tools/vmtest/fetch-kernel.sh 7.2) when sid cannot
# give it (an archive that does not answer: VMTEST_MIRROR), offline. With a cached set of
# split packages (linux-binary-unsigned, linux-modules, linux-base: small stand-ins built
# here) it unpacks that set, laid out as the older packages are, and says so; with none cached
# (or a cache whose list names a removed file) it exits 3, and vmtest.sh 123 without booting
# anything: CI skips the phase instead of failing on a sid upload.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FETCH=$ROOT/tools/vmtest/fetch-kernel.sh
KVER=7.2.99+deb14-amd64
# Nothing listens on port 9 (discard) here: apt's connection is refused at once.
MIRROR=http://127.0.0.1:9/debian

# make_deb NAME DIR: a package NAME (version 7.2.99-1) of the tree DIR into $TEST_TMP/debs.
make_deb() {
	local name=$1 dir=$2

	mkdir -p "$dir/DEBIAN" "$TEST_TMP/debs"
	printf '%s\n' "Package: $name" "Version: 7.2.99-1" "Architecture: amd64" \
		"Maintainer: bpfprof tests <root@localhost>" "Description: run-vmfetch stand-in" \
		>"$dir/DEBIAN/control"
	dpkg-deb --root-owner-group -Zgzip -b "$dir" "$TEST_TMP/debs/${name}_7.2.99-1_amd64.deb" \
		>/dev/null
	echo "$TEST_TMP/debs/${name}_7.2.99-1_amd64.deb"
}

# The three packages of a split 7.x kernel, as sid has them (usr/lib/modules/<kver>/...).
make_split_set() {
	local t=$TEST_TMP/trees m=usr/lib/modules/$KVER

	mkdir -p "$t/binary/$m" "$t/modules/$m/kernel/fs/9p" "$t/base/$m"
	echo 'not a kernel' >"$t/binary/$m/vmlinuz.unsigned"
	: >"$t/base/$m/modules.builtin"
	: >"$t/base/$m/modules.order"
	make_deb "linux-binary-unsigned-$KVER" "$t/binary"
	make_deb "linux-modules-$KVER" "$t/modules"
	make_deb "linux-base-$KVER" "$t/base"
}

# fetch CACHE OUT: fetch-kernel.sh 7.2 against the dead mirror; BP_RC its exit status, its
# stdout in OUT.out, stderr in OUT.err.
fetch() {
	BP_RC=0
	VMTEST_CACHE=$1 VMTEST_MIRROR=$MIRROR "$FETCH" 7.2 "$2" >"$2.out" 2>"$2.err" || BP_RC=$?
	echo "  fetch-kernel.sh 7.2: exit status $BP_RC; stderr: $(tr '\n' '|' <"$2.err")"
}

test_cached_fallback() {
	local cache=$TEST_TMP/cache out=$TEST_TMP/vm1 root debs

	debs=$(make_split_set)
	mkdir -p "$cache/7.2"
	# shellcheck disable=SC2086 # one path a word
	cp $debs "$cache/7.2/"
	{ echo 2026-11-20T10:00Z; for d in $debs; do echo "${d##*/}"; done; } >"$cache/7.2/current"
	fetch "$cache" "$out"
	assert_eq vmfetch_cached_exit "$BP_RC" 0
	assert_true vmfetch_cached_kver "prints $KVER" grep -qxF "$KVER" "$out.out"
	assert_grep vmfetch_cached_says_so "$out.err" \
		"could not be fetched.*booting the one cached on 2026-11-20T10:00Z"
	assert_grep vmfetch_cached_notice "$out/notice-7.2" "booting the one cached"
	root=$out/$KVER/root
	assert_true vmfetch_layout_vmlinuz "boot/vmlinuz-$KVER leads to the image" \
		grep -q 'not a kernel' "$root/boot/vmlinuz-$KVER"
	assert_true vmfetch_layout_modules "lib/modules/$KVER/modules.dep (depmod through lib)" \
		test -f "$root/lib/modules/$KVER/modules.dep"
	assert_eq vmfetch_cache_kept "$(find "$cache/7.2" -name '*.deb' | wc -l)" 3 " packages"
}

test_nothing_cached() {
	local cache=$TEST_TMP/empty out=$TEST_TMP/vm2 rc=0

	fetch "$cache" "$out"
	assert_eq vmfetch_none_exit "$BP_RC" 3
	assert_grep vmfetch_none_says_so "$out/notice-7.2" "none is cached.*no 7.2 kernel to boot"
	# A list naming a package since removed is no cache either.
	mkdir -p "$cache/7.2"
	printf '%s\n' 2026-11-20T10:00Z gone.deb >"$cache/7.2/current"
	fetch "$cache" "$TEST_TMP/vm3"
	assert_eq vmfetch_stale_list_exit "$BP_RC" 3
	# vmtest.sh: 123 (CI's "skipped"), before any guest.
	(cd "$ROOT" && VMTEST_DIR=$TEST_TMP/vm4 VMTEST_CACHE=$cache VMTEST_MIRROR=$MIRROR \
		tools/vmtest/vmtest.sh 7.2 true >"$TEST_TMP/vm4.out" 2>&1) || rc=$?
	echo "  vmtest.sh 7.2: exit status $rc; $(tail -n 1 "$TEST_TMP/vm4.out")"
	assert_eq vmfetch_vmtest_exit "$rc" 123
}

# What vmtest.sh installs first (depmod: kmod; apt, the keyring), as root.
if [ "$(id -u)" = 0 ]; then
	"$ROOT/tools/vmtest/install-deps.sh" >/dev/null ||
		fail vmfetch_setup "tools/vmtest/install-deps.sh failed"
fi
for tool in dpkg-deb apt-get depmod; do
	if ! command -v "$tool" >/dev/null; then
		if [ "${CI:-}" = true ]; then
			fail vmfetch_setup "no $tool (tools/vmtest/install-deps.sh, as root)"
		else
			skip "no $tool (tools/vmtest/install-deps.sh, as root)"
		fi
		exit 0
	fi
done
test_cached_fallback
test_nothing_cached

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-memcheck.sh: "bpfprof report" of a capture of short-lived processes, and of the same
# capture with every maps record written twice, under valgrind's memcheck (a normal build) or
# the sanitizers (a SANITIZE=1 build, docs/sanitizers.md): no invalid access, no leak, in every
# output format and with both unwinders; the duplicated records change no stack.
. "$(dirname "$0")/../lib.sh"
require_bpf

if sanitized; then
	MEMCHECK="ASan, UBSan and LSan (SANITIZE=1 build)"
elif command -v valgrind >/dev/null; then
	MEMCHECK="valgrind's memcheck"
else
	fail memcheck_valgrind "valgrind is not installed (tools/install-deps.sh installs it)"
	exit 1
fi
echo "  checked by $MEMCHECK"

# checked_report NAME ARGS...: bpfprof report ARGS, checked for memory errors and leaks;
# asserts NAME_exit (0) and NAME_clean (no report).
checked_report() {
	local name=$1 p=$TEST_TMP/$1 before after

	shift
	if sanitized; then
		before=$(find "$SANITIZER_LOG_DIR" -type f | wc -l)
		run_limited 120 "$p" "$BPFPROF" report "$@"
		after=$(find "$SANITIZER_LOG_DIR" -type f | wc -l)
		assert_eq "${name}_clean" "$((after - before))" 0 " sanitizer reports"
	else
		# Every leak counts: a report run frees everything it allocated.
		run_limited 300 "$p" valgrind -q --error-exitcode="$SANITIZER_EXIT" \
			--leak-check=full --errors-for-leak-kinds=definite,indirect \
			--log-file="$p.vg" "$BPFPROF" report "$@"
		if [ -s "$p.vg" ]; then
			sed -n '1,40s/^/  vg| /p' "$p.vg"
			fail "${name}_clean" "$(grep -m1 -E '(Invalid|uninitialised|definitely lost|indirectly lost|Mismatched)' "$p.vg")"
		else
			pass "${name}_clean" "no memcheck error"
		fi
	fi
	assert_eq "${name}_exit" "$BP_RC" 0
}

p=$TEST_TMP/live
run_bpfprof 60 "$p" -F 999 --raw-capture "$p.raw" -o "$p.folded" -- \
	"$TARGETS/shortlived" -n 10 "$TARGETS/blip" 20
assert_eq live_exit "$BP_RC" 0
live=$(folded_samples "$p.folded" "")
assert_ge live_samples "$live" 50

# Each RECORD_CAPTURE_MAPS entry (type 100, tests/integration/run-replay.sh has the layout)
# written twice in a row: the replay queues the second copy behind the first.
dup=$TEST_TMP/dup.raw
maps=$(python3 - "$p.raw" "$dup" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
off = struct.unpack_from('<I', data, 12)[0]
out, n = [data[:off]], 0
while off + 8 <= len(data):
    end = off + (4 + struct.unpack_from('<I', data, off)[0] + 7) // 8 * 8
    out.append(data[off:end])
    if struct.unpack_from('<I', data, off + 4)[0] == 100:
        out.append(data[off:end])
        n += 1
    off = end
open(sys.argv[2], 'wb').write(b''.join(out))
print(n)
PY
)
echo "  $maps maps records duplicated"
assert_ge dup_maps_records "${maps:-0}" 2

checked_report report_folded "$p.raw" -o "$TEST_TMP/report.folded"
assert_true report_same "the live run's stacks" cmp -s "$p.folded" "$TEST_TMP/report.folded"
checked_report dup_folded "$dup" -o "$TEST_TMP/dup.folded"
assert_eq dup_samples "$(folded_samples "$TEST_TMP/dup.folded" "")" "$live"
# The other outputs and unwinders: user-space code the kernel does not change, checked on the
# host only (make vmtest's emulated guests run valgrind 10-20 times slower).
if emulated; then
	echo "  emulated: pprof, SVG and --unwinder=diff reports checked on the host only"
	exit 0
fi
checked_report report_pprof "$p.raw" -o "$TEST_TMP/report.pb.gz"
checked_report report_svg "$p.raw" -o "$TEST_TMP/report.svg"
checked_report report_diff "$p.raw" --unwinder=diff -o "$TEST_TMP/diff.folded"

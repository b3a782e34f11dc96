#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-replay.sh: --raw-capture writes every record (mode 0600, with a warning), and
# "bpfprof report FILE" replays it through the same pipeline to the same folded stacks as the
# live run, and a pprof with the same start time; version 1 captures still replay; a damaged
# capture is reported up to the damage, a foreign file refused.
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=999

# test_replay LABEL CMD...: live folded output == replayed folded output, byte for byte.
test_replay() {
	local label=$1 p=$TEST_TMP/$1 mode

	shift
	run_bpfprof 60 "$p.live" -F "$HZ" --raw-capture "$p.raw" -o "$p.live.folded" -- "$@"
	assert_eq "${label}_live_exit" "$BP_RC" 0
	assert_grep "${label}_warns" "$p.live.err" 'will hold the targets. stack memory'
	mode=$(stat -c %a "$p.raw" 2>/dev/null)
	assert_eq "${label}_mode" "${mode:-none}" 600
	run_bpfprof 60 "$p.replay" report "$p.raw" -o "$p.replay.folded"
	assert_eq "${label}_report_exit" "$BP_RC" 0
	assert_ge "${label}_samples" "$(folded_samples "$p.live.folded" "")" 100
	if cmp -s "$p.live.folded" "$p.replay.folded"; then
		pass "${label}_same" "$(wc -l <"$p.live.folded") stacks, identical"
	else
		fail "${label}_same" "replay differs: $(diff "$p.live.folded" "$p.replay.folded" | head -4 | tr '\n' '|')"
	fi
}

test_replay chain "$TARGETS/chain" 1
test_replay dlswap "$TARGETS/dlswap" 0.7 0.7
test_replay shortlived "$TARGETS/shortlived" -n 40 "$TARGETS/blip" 20
test_replay python /usr/bin/python3 -c '
import time
end = time.monotonic() + 1
while time.monotonic() < end:
    sum(i * i for i in range(1000))'

# pprof: the replay carries the capture's start time (capture version 2), as the live run.
p=$TEST_TMP/time
run_bpfprof 60 "$p.live" -F "$HZ" --raw-capture "$p.raw" -o "$p.live.pb.gz" -- "$TARGETS/chain" 0.5
run_bpfprof 60 "$p.replay" report "$p.raw" -o "$p.replay.pb.gz"
go tool pprof -raw "$p.live.pb.gz" 2>/dev/null | grep '^Time:' >"$p.live.time"
go tool pprof -raw "$p.replay.pb.gz" 2>/dev/null | grep '^Time:' >"$p.replay.time"
echo "  live $(cat "$p.live.time"), replay $(cat "$p.replay.time")"
assert_grep pprof_time_live "$p.live.time" "^Time: $(date -u +%Y)-"
assert_true pprof_time_replayed "the same Time: line" cmp -s "$p.live.time" "$p.replay.time"

# A version 1 capture (no start time in its 48-byte header) still replays, to the same stacks.
python3 - "$TEST_TMP/chain.raw" "$TEST_TMP/v1.raw" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
version, hdr_sz = struct.unpack_from('<II', data, 8)
assert version == 2 and hdr_sz == 56, (version, hdr_sz)
open(sys.argv[2], 'wb').write(data[:8] + struct.pack('<II', 1, 48) + data[16:48] + data[56:])
PY
run_bpfprof 60 "$TEST_TMP/v1" report "$TEST_TMP/v1.raw" -o "$TEST_TMP/v1.folded"
assert_eq v1_report_exit "$BP_RC" 0
assert_true v1_same "the v2 capture's live stacks" cmp -s "$TEST_TMP/chain.live.folded" "$TEST_TMP/v1.folded"

# A capture cut in the middle of a record: what came before is reported, with a warning.
cut=$TEST_TMP/cut.raw
# Cut 3 bytes into the record of the middle entry (__u32 size, record, padding to 8 bytes): by
# entries, not bytes, as the kallsyms text at the start can be most of the file.
python3 - "$TEST_TMP/chain.raw" "$cut" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
off, starts = struct.unpack_from('<I', data, 12)[0], []
while off + 4 <= len(data):
    starts.append(off)
    off += (4 + struct.unpack_from('<I', data, off)[0] + 7) // 8 * 8
open(sys.argv[2], 'wb').write(data[:starts[len(starts) // 2] + 4 + 3])
PY
run_bpfprof 60 "$TEST_TMP/cut" report "$cut" -o "$TEST_TMP/cut.folded"
assert_eq cut_exit "$BP_RC" 0
assert_grep cut_warns "$TEST_TMP/cut.err" "read .*cut.raw"
assert_ge cut_samples "$(folded_samples "$TEST_TMP/cut.folded" "")" 100

# Not a capture: refused, nothing written.
run_bpfprof 60 "$TEST_TMP/foreign" report /etc/passwd -o "$TEST_TMP/foreign.folded"
assert_eq foreign_exit "$BP_RC" 1
assert_grep foreign_message "$TEST_TMP/foreign.err" 'not a bpfprof raw capture'
assert_true foreign_no_output "no output file" test ! -e "$TEST_TMP/foreign.folded"

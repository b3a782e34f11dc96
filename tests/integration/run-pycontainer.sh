#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# run-pycontainer.sh: Python frames of the CPythons users run now, in a container: Debian sid's
# python3.13, python3.14 and python3.15 in a sid root (tests/container.sh: made by
# tools/fresh-root.sh, cached between runs), each run as a container runs on a host (its own
# mount and PID namespaces, pivot_root), profiled from the host. Each shows pychain.py's chain
# (<module> -> main -> Worker.run -> middle -> leaf_spin, in order, under native frames reaching
# _start) in >= 95% of its samples with -- CMD (the container's command: threads, asyncio and a
# Python -> C -> Python callback too, as run-pyframes.sh's cases on the host's CPythons), -p
# (the interpreter's host pid) and -a. And the offsets come from the target: a copy of sid's
# python3.14 whose _Py_DebugOffsets (its .PyRuntime section) has code_object.qualname and
# code_object.name swapped shows run where the unmodified one shows Worker.run; one whose
# free_threaded is set gets native frames and one line saying so.
# With CI=true a root that cannot be made, or an interpreter missing from it, is a failure.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../python.sh"
. "$(dirname "$0")/../container.sh"
require_bpf

VERSIONS=${PYCONTAINER_VERSIONS:-3.13 3.14 3.15}
PACKAGES=$CONTAINER_PY_PACKAGES
CT_DIR=$TEST_TMP/ct
# A thread's root there: sid's libc is stripped and its debug files (libc6-dbg) would be the
# root's, not the host's /usr/lib/debug that bpfprof searches: clone3 and start_thread show as
# two libc.so.6+0x... frames (named on the host, where libc6-dbg is installed).
CT_THREAD_ROOT_RE='^libc\.so\.6\+0x[0-9a-f]+;libc\.so\.6\+0x[0-9a-f]+;'
mkdir -p "$CT_DIR"
cp "$SCRIPT" "$CT_DIR/pychain.py"

# The root (made here when not cached: minutes), and the commands that run a program in it.
setup_root() {
	# shellcheck disable=SC2086 # the packages are words
	if ! container_root CT_ROOT "$CONTAINER_PY_RELEASE" $PACKAGES; then
		if [ "${CI:-}" = true ]; then
			fail pycontainer_root "tools/fresh-root.sh could not make the sid root (above)"
			exit 1
		fi
		skip "no sid root (tools/fresh-root.sh failed, above): sid's CPythons not tested"
		exit 0
	fi
	container_cmd CT_CMD "$CT_ROOT" "$CT_DIR"
	container_cmd CT_READY_CMD "$CT_ROOT" "$CT_DIR" PYCHAIN_READY=/mnt/ready
}

# test_attach LABEL PYTHON: -p (the interpreter's host pid) and -a, the interpreter started
# before bpfprof.
test_attach() {
	local label=$1 py=$2 mode p pid nspid

	for mode in pid all; do
		p=$TEST_TMP/${label}_$mode
		if ! container_start pid "$CT_DIR/ready" "$py" "${CT_READY_CMD[@]}" "$py" \
			/mnt/pychain.py 0 plain; then
			container_stop "$pid"
			fail "${label}_${mode}_started" "$py did not start its work in the container"
			continue
		fi
		if [ "$mode" = pid ]; then
			# The pid namespace: the interpreter is pid 1 inside, $pid on the host.
			nspid=$(awk '/^NSpid:/ { print $2 " " $3 }' "/proc/$pid/status")
			assert_eq "${label}_pidns" "$(echo "$nspid" | awk '{ print ($1 != $2 && $2 == 1) }')" 1
			run_bpfprof 60 "$p" -F "$HZ" -d "$RUN_S" -o "$p.folded" -p "$pid"
		else
			# 6 s, as run-pyframes.sh's -a: a process that ran before is armed late.
			run_bpfprof 60 "$p" -a -F "$HZ" -d 6 -o "$p.folded"
		fi
		container_stop "$pid"
		assert_eq "${label}_${mode}_exit" "$BP_RC" 0
		check_chain "${label}_$mode" "$p.folded" "$py" "$ROOT_RE" "$CHAIN"
	done
}

# test_version V: sid's python$V: the -- CMD cases, -p, -a.
test_version() {
	local v=$1 py=python$1 label=sid_py${1/./}

	if [ ! -x "$CT_ROOT/usr/bin/$py" ]; then
		fail "${label}_available" "$CT_ROOT/usr/bin/$py is missing (installed by the root's packages: $PACKAGES)"
		return
	fi
	THREAD_ROOT_RE=$CT_THREAD_ROOT_RE SCRIPT=/mnt/pychain.py test_cases "$label" "$py" -- "${CT_CMD[@]}"
	test_attach "$label" "$py"
}

# debug_offset HEADER FIELD: the offset in _Py_DebugOffsets of FIELD (e.g. code_object.name),
# from the struct's declaration in HEADER (CPython's pycore_debug_offsets.h: char cookie[8],
# then uint64_t members, grouped in named structs); empty when not found.
debug_offset() {
	python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
body = text[text.index("typedef struct _Py_DebugOffsets {"):]
body = body[:body.index("} _Py_DebugOffsets;")]
off, group, fields = 0, [], {}
for line in body.splitlines()[1:]:
    line = re.sub(r"//.*", "", line).strip()
    if m := re.match(r"struct \w*\s*\{", line):
        group.append(None)
    elif m := re.match(r"\}\s*(\w+);", line):
        group.pop()
        for k in list(fields):
            if k.startswith("?."):
                fields[m.group(1) + k[1:]] = fields.pop(k)
    elif m := re.match(r"char (\w+)\[(\d+)\]", line):
        fields[m.group(1)] = off
        off += int(m.group(2))
    elif m := re.match(r"uint64_t (\w+);", line):
        fields[("?." if group else "") + m.group(1)] = off
        off += 8
    elif line:
        sys.exit("unexpected line in _Py_DebugOffsets: " + line)
print(fields.get(sys.argv[2], ""))
PY
}

# edit_debug_offsets FILE swap OFF_A OFF_B | set OFF VALUE: edits FILE's _Py_DebugOffsets (the
# start of its .PyRuntime section, found through the ELF section headers; the cookie xdebugpy
# checked): swaps the two 8-byte fields at OFF_A and OFF_B (prints the two values swapped), or
# writes VALUE as the 8-byte field at OFF (prints the old value). Fails on anything unexpected.
edit_debug_offsets() {
	python3 - "$@" <<'PY'
import struct, sys
path, op, args = sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]
data = bytearray(open(path, "rb").read())
assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit LE ELF file"
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
def sect(i):
    return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
strtab = sect(shstrndx)[4]
start = None
for i in range(shnum):
    s = sect(i)
    name = data[strtab + s[0]:data.index(b"\0", strtab + s[0])]
    if name == b".PyRuntime":
        start, size = s[4], s[5]
assert start is not None, "no .PyRuntime section"
assert data[start:start + 8] == b"xdebugpy", "no _Py_DebugOffsets cookie"
assert op in ("swap", "set") and len(args) == 2, "usage: FILE swap A B | set OFF VALUE"
a, b = args
if op == "swap":
    assert max(a, b) + 8 <= size
    va, = struct.unpack_from("<Q", data, start + a)
    vb, = struct.unpack_from("<Q", data, start + b)
    struct.pack_into("<Q", data, start + a, vb)
    struct.pack_into("<Q", data, start + b, va)
    print(va, vb)
else:
    assert a + 8 <= size
    old, = struct.unpack_from("<Q", data, start + a)
    struct.pack_into("<Q", data, start + a, b)
    print(old)
open(path, "wb").write(data)
PY
}

# The offsets come from the target: sid's python3.14 (the interpreter is in the executable, not
# a libpython: its .PyRuntime is the file's), copied with code_object.qualname and
# code_object.name swapped in its _Py_DebugOffsets. The process runs normally (CPython itself
# reads neither from there), and a reader that takes the offsets from it reads co_name where
# it means co_qualname: run, where the unmodified interpreter's Worker.run (test_version).
test_swapped_offsets() {
	local hdr=$CT_ROOT/usr/include/python3.14/internal/pycore_debug_offsets.h name qual vals
	local p=$TEST_TMP/sid_py314_swapped

	if [ ! -r "$hdr" ] || [ ! -x "$CT_ROOT/usr/bin/python3.14" ]; then
		fail sid_py314_swapped_setup "$hdr or python3.14 missing from the root ($PACKAGES)"
		return
	fi
	name=$(debug_offset "$hdr" code_object.name)
	qual=$(debug_offset "$hdr" code_object.qualname)
	mkdir -p "$CT_DIR/swapped"
	cp "$CT_ROOT/usr/bin/python3.14" "$CT_DIR/swapped/python3.14"
	if ! vals=$(edit_debug_offsets "$CT_DIR/swapped/python3.14" swap "$name" "$qual" 2>&1); then
		fail sid_py314_swapped_setup "swapping the fields at $name and $qual: $vals"
		return
	fi
	echo "  python3.14's _Py_DebugOffsets: code_object.name at $name, .qualname at $qual;" \
		"their values ($vals) swapped in the copy"
	SCRIPT=/mnt/pychain.py test_cmd sid_py314_swapped /mnt/swapped/python3.14 plain "$ROOT_RE" \
		'<module>_[py];main_[py];run_[py];middle_[py];leaf_spin_[py]' -- "${CT_CMD[@]}"
	assert_eq sid_py314_swapped_no_qualname "$(grep -c 'Worker\.run_\[py\]' "$p.folded")" 0
}

# A free-threaded build (--disable-gil: Debian has none) is told by its _Py_DebugOffsets'
# free_threaded: a copy of sid's python3.14 with it set (the interpreter itself runs as
# before, it never reads it) gets native frames and the one line saying why, never a wrong
# frame.
test_free_threaded() {
	local hdr=$CT_ROOT/usr/include/python3.14/internal/pycore_debug_offsets.h off old
	local p=$TEST_TMP/sid_py314_ft

	off=$(debug_offset "$hdr" free_threaded)
	if [ -z "$off" ]; then
		fail sid_py314_ft_setup "no free_threaded in $hdr's _Py_DebugOffsets"
		return
	fi
	mkdir -p "$CT_DIR/ft"
	cp "$CT_ROOT/usr/bin/python3.14" "$CT_DIR/ft/python3.14"
	if ! old=$(edit_debug_offsets "$CT_DIR/ft/python3.14" set "$off" 1 2>&1) || [ "$old" != 0 ]; then
		fail sid_py314_ft_setup "setting free_threaded (at $off, was $old)"
		return
	fi
	run_bpfprof $((RUN_S + 60)) "$p" -F "$HZ" -o "$p.folded" -- "${CT_CMD[@]}" \
		/mnt/ft/python3.14 /mnt/pychain.py "$RUN_S" plain
	assert_eq sid_py314_ft_exit "$BP_RC" 0
	assert_ge sid_py314_ft_samples "$(folded_samples "$p.folded" python3.14)" 50
	assert_eq sid_py314_ft_no_python_frames "$(grep -c '_\[py\]' "$p.folded")" 0
	assert_eq sid_py314_ft_said_once "$(grep -c 'free-threaded CPython' "$p.err")" 1
}

setup_root
for v in $VERSIONS; do
	test_version "$v"
done
test_swapped_offsets
test_free_threaded

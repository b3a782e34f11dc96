#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""gen_python_lines_seeds.py OUT_DIR PYTHON...: fuzz_python_lines's seeds, the real line tables
(co_linetable) of tests/fixtures/python_linetable.py's code objects as each CPython given
compiles them (3.10 to 3.13, with and without columns).

A seed (tests/fuzz/fuzz_python_lines.c): the minor version - 10, co_firstlineno (i32), the cut
(u16: where the table is cut for the prefix check), then co_linetable.
"""
import os
import struct
import subprocess
import sys

FIXTURE = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'python_linetable.py')
# Per interpreter and column mode: these code objects (of every kind of entry, not all alike).
NAMES = ('loops', 'gaps', 'wide', 'handlers', 'coro', 'matching', 'late', 'long_body')


def main():
    out = sys.argv[1]
    for py in sys.argv[2:]:
        text = subprocess.run([py, FIXTURE], check=True, capture_output=True, text=True).stdout
        seen = set()
        for line in text.splitlines():
            f = line.split(' ', 5)
            if f[0] != 'code' or f[5] not in NAMES:
                continue
            minor, first, tab, name = int(f[1]), int(f[2]), f[4], f[5]
            tab = b'' if tab == '-' else bytes.fromhex(tab)
            mode = 'cols' if (minor, name) not in seen else 'nocols'
            seen.add((minor, name))
            with open(f'{out}/3.{minor}-{name}-{mode}', 'wb') as fp:
                fp.write(struct.pack('<BiH', minor - 10, first, len(tab) // 2) + tab)


if __name__ == '__main__':
    main()

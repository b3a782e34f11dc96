#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make check-functions: fails on a function of user/**/*.c longer than MAX_LINES (120) and
# prints "FILE:LINE NAME LENGTH" for each.
#
# Usage: tools/check-functions.py [--max N] [ROOT]   (ROOT: the directory holding user/,
# default the repository this script is in). Exit 0 when none is longer, 1 when one is, 2 on a
# usage error.
#
# Kernel style (.clang-format) is what makes a scanner enough: a function's body opens with "{"
# alone at column 0 and closes with "}" at column 0 (initializers open with "= {" at the end of
# a line). LENGTH counts the body's lines from that "{" to that "}", both included; LINE is the
# line of the function's name.
import argparse
import os
import re
import sys

MAX_LINES = 120
NAME = re.compile(r'([A-Za-z_]\w*)\s*\(')
NOT_NAMES = {'__attribute__', '__attribute', 'if', 'for', 'while', 'switch', 'return', 'sizeof'}


def function_name(lines, brace):
    """(name, line number) of the declarator above lines[brace], the first identifier followed
    by "(" in the lines since the previous blank line, ";", "}" or comment end."""
    first = brace
    while first > 0:
        prev = lines[first - 1].rstrip()
        if not prev or prev.endswith((';', '}', '*/')) or prev.startswith('#'):
            break
        first -= 1
    for i in range(first, brace):
        for match in NAME.finditer(lines[i]):
            if match.group(1) not in NOT_NAMES:
                return match.group(1), i + 1
    return '?', brace + 1


def scan(path, rel, max_lines):
    """[(rel, line, name, length)] of path's functions longer than max_lines."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    long_ones, start = [], None
    for i, line in enumerate(lines):
        if start is None and line.rstrip() == '{':
            start = i
        elif start is not None and line.startswith('}'):
            length = i - start + 1
            if length > max_lines:
                name, at = function_name(lines, start)
                long_ones.append((rel, at, name, length))
            start = None
    return long_ones


def main():
    ap = argparse.ArgumentParser(description='functions of user/**/*.c over N lines')
    ap.add_argument('--max', type=int, default=MAX_LINES, help='longest body allowed (lines)')
    ap.add_argument('root', nargs='?', default=os.path.join(os.path.dirname(__file__), '..'))
    args = ap.parse_args()
    user = os.path.join(args.root, 'user')
    if not os.path.isdir(user):
        print(f'check-functions: no directory {user}', file=sys.stderr)
        return 2
    found, files = [], 0
    for d, _, names in sorted(os.walk(user)):
        for n in sorted(names):
            if n.endswith('.c'):
                path = os.path.join(d, n)
                files += 1
                found += scan(path, os.path.relpath(path, args.root), args.max)
    for rel, line, name, length in found:
        print(f'{rel}:{line} {name} {length}')
    print(f'check-functions: {files} files, {len(found)} function{"" if len(found) == 1 else "s"} '
          f'over {args.max} lines')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())

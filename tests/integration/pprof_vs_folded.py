#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pprof_vs_folded.py TRACES FOLDED RAW: compares `go tool pprof -traces -sample_index=samples`
# output with folded stacks of the same samples. Folded suffixes (_[k], _[i], _[j]) are dropped,
# since pprof has no frame kinds, and names shortened where pprof shortens them: only a function
# whose system_name is its name (RAW, `go tool pprof -raw` of the profile, tells which are not);
# the comm label is the root. Prints "SAMPLES_PPROF SAMPLES_FOLDED STACKS_PPROF STACKS_FOLDED
# DIFFERENT" and the first differences on stderr.
import collections
import re
import sys


def pprof_frame(text):
    # -traces marks inlined functions "name (inline)"; folded marks them "name_[i]" (dropped).
    return re.sub(r' \(inline\)$', '', text.strip()).replace(';', ':')


def pprof_stacks(path):
    stacks = collections.Counter()
    comm, frames, count = None, [], None
    sep = re.compile(r'^-+\+-+$')

    def flush():
        if count is not None:
            stacks[';'.join([comm or '?'] + frames[::-1])] += count

    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        if sep.match(line):
            flush()
            comm, frames, count = None, [], None
            continue
        m = re.match(r'^\s+comm:\s+(.*)$', line)
        if m:
            comm = m.group(1).strip().replace(' ', '_')
            continue
        if re.match(r'^\s+(pid|tid):', line):
            continue
        m = re.match(r'^\s*(\d+)\s{3}(\S.*)$', line)
        if m and count is None:
            count = int(m.group(1))
            frames.append(pprof_frame(m.group(2)))
            continue
        if count is not None and line.strip():
            frames.append(pprof_frame(line))
    flush()
    return stacks


def demangled_names(path):
    # Names of functions with a system_name of their own (bpfprof puts the mangled symbol
    # there): -raw prints their locations' lines as "NAME FILE:LINE s=N(SYSTEM_NAME)".
    names = set()
    for line in open(path, encoding='utf-8', errors='replace'):
        m = re.match(r'^\s+(?:\d+: 0x[0-9a-f]+ (?:M=\d+ )?)?(.*) \S*:\d+ s=\d+\(.*\)$', line)
        if m:
            names.add(m.group(1))
    return names


def shorten(name, demangled):
    # What pprof's symbolizer does to a name (demangleSingleFunction in Go 1.19's vendored
    # pprof): one with a system_name of its own counts as demangled already and stays as is;
    # else, if it looks like demangled C++ (looksLikeDemangledCPlusPlus: "::" or one of "<>[]",
    # not Java's ".<" nor Go's "])."), template arguments and parameter lists go, innermost
    # groups first; any other name is kept as is. go tool pprof -raw keeps the full names.
    if name in demangled:
        return name
    if '.<' in name or ']).' in name or not (re.search(r'[<>\[\]]', name) or '::' in name):
        return name
    prev = None
    while prev != name:
        prev = name
        name = re.sub(r'<[^<>]*>|\([^()]*\)', '', name)
    return name


def folded_stacks(path, demangled):
    stacks = collections.Counter()
    for line in open(path, encoding='utf-8', errors='replace'):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        frames = [stack.split(';')[0]] + \
            [shorten(re.sub(r'_\[([kij]|py)\]$', '', f), demangled) for f in stack.split(';')[1:]]
        stacks[';'.join(frames)] += int(n)
    return stacks


def main():
    p, f = pprof_stacks(sys.argv[1]), folded_stacks(sys.argv[2], demangled_names(sys.argv[3]))
    diff = [k for k in set(p) | set(f) if p[k] != f[k]]
    for k in sorted(diff)[:3]:
        print(f'differs: pprof {p[k]} folded {f[k]}: {k[:300]}', file=sys.stderr)
    print(sum(p.values()), sum(f.values()), len(p), len(f), len(diff))


main()

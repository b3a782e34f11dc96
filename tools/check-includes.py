#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make check-includes: fails on an include cycle among the modules of user/ and prints it.
#
# Usage: tools/check-includes.py [ROOT]   (ROOT: the directory holding user/, default the
# repository this script is in). Exit 0 without a cycle, 1 with one, 2 on a usage error.
#
# A module is a .c/.h pair (user/process/proc_table.[ch]): module A depends on module B when a
# file of A includes "B.h". Includes are resolved as the compiler does for quoted names: next to
# the including file, then -Iuser ("process/proc_table.h"); names found elsewhere (-I.,
# build/, system headers) are not user/'s and are left out. A cycle of modules is a cycle even
# when the include guards of each header keep the compiler from looping: it is two modules that
# cannot be understood, built or tested one without the other.
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def modules(user):
    """{module: [source files]} for every user/**/*.[ch], module = path without extension."""
    mods = {}
    for d, _, files in os.walk(user):
        for f in files:
            if f.endswith(('.c', '.h')):
                path = os.path.relpath(os.path.join(d, f), user)
                mods.setdefault(path[:-2], []).append(path)
    return mods


def dependencies(user, mods):
    """{module: {module: (file, line)}}: the first include line that makes each edge."""
    deps = {m: {} for m in mods}
    for m, files in mods.items():
        for path in sorted(files):
            with open(os.path.join(user, path), encoding='utf-8', errors='replace') as f:
                for n, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    name = match.group(1)
                    for cand in (os.path.join(os.path.dirname(path), name), name):
                        cand = os.path.normpath(cand)
                        if cand.endswith('.h') and os.path.isfile(os.path.join(user, cand)):
                            to = cand[:-2]
                            if to != m and to in mods:
                                deps[m].setdefault(to, (path, n))
                            break
    return deps


def components(deps):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = 0
    for root in sorted(deps):
        if root in index:
            continue
        work = [(root, iter(sorted(deps[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(deps[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def shortest_cycle(deps, comp):
    """A shortest cycle through comp's first module, inside comp (breadth-first)."""
    start, members = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(deps[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [start]


def main():
    if len(sys.argv) > 2:
        print('usage: check-includes.py [ROOT]', file=sys.stderr)
        return 2
    root = sys.argv[1] if len(sys.argv) == 2 else os.path.join(os.path.dirname(__file__), '..')
    user = os.path.join(root, 'user')
    if not os.path.isdir(user):
        print(f'check-includes: no directory {user}', file=sys.stderr)
        return 2
    mods = modules(user)
    deps = dependencies(user, mods)
    comps = components(deps)
    for comp in comps:
        cycle = shortest_cycle(deps, comp)
        print(f'include cycle: {" -> ".join(cycle)}')
        for a, b in zip(cycle, cycle[1:]):
            path, line = deps[a][b]
            print(f'  user/{path}:{line}: includes "{b}.h"')
        if len(comp) > len(cycle) - 1:
            print(f'  (the cycle is part of a loop of {len(comp)} modules: {" ".join(comp)})')
    edges = sum(len(d) for d in deps.values())
    print(f'check-includes: {len(mods)} modules, {edges} module dependencies, '
          f'{len(comps)} include cycle{"" if len(comps) == 1 else "s"}')
    return 1 if comps else 0


if __name__ == '__main__':
    sys.exit(main())

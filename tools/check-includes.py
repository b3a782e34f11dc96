#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make check-includes: fails on an include cycle among the modules of user/, on an include that
# goes against the one order of folders, and on a cycle among folders; prints each.
#
# Usage: tools/check-includes.py [--order F1,F2,...] [--print-order] [ROOT]
#   ROOT: the directory holding user/ (default: the repository this script is in).
#   --order: another order of folders than ORDER below (also CHECK_INCLUDES_ORDER=F1,F2,...;
#   the option wins), to try an order out; --print-order prints the order in use and exits.
# Exit 0 when clean, 1 on a module cycle, an include against the order or a folder cycle, 2 on
# a usage error.
#
# A module is a .c/.h pair (user/process/proc_table.[ch]): module A depends on module B when a
# file of A includes "B.h". Includes are resolved as the compiler does for quoted names: next to
# the including file, then -Iuser ("process/proc_table.h"), then -I. for "bpf/record.h"; names
# found elsewhere (build/, system headers) are not user/'s and are left out. A cycle of modules
# is a cycle even when the include guards of each header keep the compiler from looping: it is
# two modules that cannot be understood, built or tested one without the other.
#
# Folders: a file under user/F/ is in folder F; user/runtime/<name>/ counts as folder runtime.
# A file may include only from its own folder or a folder before it in ORDER; "bpf/record.h"
# (the records BPF sends, outside user/) is the folder bpf. Within user/runtime/, one runtime's
# folder (runtime/go/) must not include another's (runtime/python/); runtime/runtime.h and the
# table beside it are the runtime folder itself.
import os
import re
import sys

# The one order of folders, the order the data flows in (docs/design.md draws it).
ORDER = ['util', 'bpf', 'process', 'unwind', 'symbols', 'profile', 'runtime', 'signal',
         'sampling', 'output', 'pipeline', 'agent', 'cmd']

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


def resolve(root, user, path, name):
    """The header a quoted include of user/path names: ('user', 'process/x.h'), ('root',
    'bpf/record.h') or None when it is not the project's (generated, system)."""
    for cand in (os.path.join(os.path.dirname(path), name), name):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(user, cand)):
            return ('user', cand)
    cand = os.path.normpath(name)
    if cand.startswith('bpf/') and os.path.isfile(os.path.join(root, cand)):
        return ('root', cand)
    return None


def includes(root, user, mods):
    """[(file, line, ('user'|'root', header))] for every include of user/ that resolves."""
    out = []
    for m in sorted(mods):
        for path in sorted(mods[m]):
            with open(os.path.join(user, path), encoding='utf-8', errors='replace') as f:
                for n, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    to = resolve(root, user, path, match.group(1))
                    if to:
                        out.append((path, n, to))
    return out


def dependencies(mods, incs):
    """{module: {module: (file, line)}}: the first include line that makes each edge."""
    deps = {m: {} for m in mods}
    for path, n, (where, header) in incs:
        if where != 'user' or not header.endswith('.h'):
            continue
        m, to = path[:-2], header[:-2]
        if to != m and to in mods:
            deps[m].setdefault(to, (path, n))
    return deps


def components(deps):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
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
    """A shortest cycle through comp's first node, inside comp (breadth-first)."""
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


def folder_of(where, header):
    """(folder, runtime name or None) of a file: user/runtime/go/x.c is ('runtime', 'go'),
    user/process/x.h ('process', None), bpf/record.h ('bpf', None)."""
    if where == 'root':
        return ('bpf', None)
    parts = header.split(os.sep)
    if len(parts) == 1:
        return ('', None)
    if parts[0] == 'runtime' and len(parts) > 2:
        return ('runtime', parts[1])
    return (parts[0], None)


def order_violations(incs, order):
    """[(file, line, include, message)] of the includes against the order of folders."""
    rank = {f: i for i, f in enumerate(order)}
    out = []
    for path, n, (where, header) in incs:
        (src, src_rt), (dst, dst_rt) = folder_of('user', path), folder_of(where, header)
        shown = header if where == 'root' else header
        if src not in rank:
            out.append((path, n, shown, f'folder {src or "user/"} is not in the order'))
        elif dst not in rank:
            out.append((path, n, shown, f'folder {dst or "user/"} is not in the order'))
        elif rank[dst] > rank[src]:
            out.append((path, n, shown, f'folder {dst} after {src}'))
        elif src_rt and dst_rt and src_rt != dst_rt:
            out.append((path, n, shown,
                        f'runtime {dst_rt} beside runtime {src_rt}: one runtime\'s folder '
                        f'must not include another\'s'))
    return out


def folder_graph(incs):
    """{folder: {folder: (file, line)}}: the first include that makes each folder edge."""
    graph = {}
    for path, n, (where, header) in incs:
        src, dst = folder_of('user', path)[0], folder_of(where, header)[0]
        graph.setdefault(src, {})
        graph.setdefault(dst, {})
        if src != dst:
            graph[src].setdefault(dst, (path, n))
    return graph


def parse_args(argv):
    """(order, root, print_order) from the command line and CHECK_INCLUDES_ORDER, or None."""
    order, root, print_order = ORDER, None, False
    env = os.environ.get('CHECK_INCLUDES_ORDER')
    if env:
        order = [f for f in env.split(',') if f]
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--order' and args:
            order = [f for f in args.pop(0).split(',') if f]
        elif a.startswith('--order='):
            order = [f for f in a[len('--order='):].split(',') if f]
        elif a == '--print-order':
            print_order = True
        elif a.startswith('-') or root is not None:
            return None
        else:
            root = a
    if root is None:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    if not order or len(set(order)) != len(order):
        return None
    return order, root, print_order


def main():
    parsed = parse_args(sys.argv[1:])
    if parsed is None:
        print('usage: check-includes.py [--order F1,F2,...] [--print-order] [ROOT]',
              file=sys.stderr)
        return 2
    order, root, print_order = parsed
    if print_order:
        print(' < '.join(order))
        return 0
    user = os.path.join(root, 'user')
    if not os.path.isdir(user):
        print(f'check-includes: no directory {user}', file=sys.stderr)
        return 2
    mods = modules(user)
    incs = includes(root, user, mods)
    deps = dependencies(mods, incs)
    comps = components(deps)
    for comp in comps:
        cycle = shortest_cycle(deps, comp)
        print(f'include cycle: {" -> ".join(cycle)}')
        for a, b in zip(cycle, cycle[1:]):
            path, line = deps[a][b]
            print(f'  user/{path}:{line}: includes "{b}.h"')
        if len(comp) > len(cycle) - 1:
            print(f'  (the cycle is part of a loop of {len(comp)} modules: {" ".join(comp)})')

    bad = order_violations(incs, order)
    for path, n, header, why in bad:
        print(f'user/{path}:{n}: includes "{header}" ({why})')
    graph = folder_graph(incs)
    fcomps = components(graph)
    for comp in fcomps:
        cycle = shortest_cycle(graph, comp)
        print(f'folder cycle: {" -> ".join(cycle)}')
        for a, b in zip(cycle, cycle[1:]):
            path, line = graph[a][b]
            print(f'  user/{path}:{line}: includes from {b}/')
        if len(comp) > len(cycle) - 1:
            print(f'  (the cycle is part of a loop of {len(comp)} folders: {" ".join(comp)})')

    edges = sum(len(d) for d in deps.values())
    print(f'check-includes: {len(mods)} modules, {edges} module dependencies, '
          f'{len(comps)} include cycle{"" if len(comps) == 1 else "s"}; '
          f'order {" < ".join(order)}: {len(bad)} include{"" if len(bad) == 1 else "s"} '
          f'against it, {len(fcomps)} folder cycle{"" if len(fcomps) == 1 else "s"}')
    return 1 if comps or bad or fcomps else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""gen_gopclntab_seed.py GO_BINARY OUT_DIR: seeds of fuzz_gopclntab from a real Go binary.

A real .gopclntab is hundreds of KiB (the whole runtime's functions); a seed is a few: the main
package's functions and some of the runtime's that the unwinder treats apart (runtime.goexit,
TOPFRAME; runtime.systemstack, mcall, morestack, SPWRITE), with their names, pc-value tables
(pcsp, pcfile, pcln, pcdata), compilation units' file lists and inline trees copied from the
binary, every offset rewritten. Written in the three layouts gopclntab.c reads (Go 1.16, 1.18,
1.20: runtime/symtab.go pcHeader, _func, inlinedCall), whatever the binary's own. The fuzz
input (tests/fuzz/fuzz_gopclntab.c): u32 length of the table, the table (.gopclntab at
FUZZ_PCLN_ADDR), then .noptrdata at FUZZ_DATA_ADDR: a moduledata (pcHeader, funcnametab, text,
gofunc) and go.func.* (the inline trees).
"""
import os
import struct
import sys

# fuzz_gopclntab.c's section addresses.
FUZZ_PCLN_ADDR = 0x600000
FUZZ_DATA_ADDR = 0x700000
GOFUNC_AT = 1024  # go.func.* in .noptrdata, after the moduledata

MAGIC = {116: 0xFFFFFFFA, 118: 0xFFFFFFF0, 120: 0xFFFFFFF1}
KEEP = ('runtime.goexit', 'runtime.systemstack', 'runtime.systemstack_switch',
        'runtime.mcall', 'runtime.morestack', 'runtime.rt0_go', 'runtime.mstart',
        'runtime.efaceeq', 'runtime.cgoIsGoPointer', 'internal/cpu.doinit')  # inline trees


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]


def cstr(b, o):
    return b[o:b.index(b'\0', o)]


def sections(d):
    shoff, n, si = u64(d, 0x28), struct.unpack_from('<H', d, 0x3c)[0], \
        struct.unpack_from('<H', d, 0x3e)[0]
    sh = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + 64 * i) for i in range(n)]
    strs = sh[si][4]
    return {cstr(d, strs + s[0]).decode(): s for s in sh}


def uvarint(b, o):
    v = shift = 0
    while True:
        c = b[o]
        o += 1
        v |= (c & 0x7f) << shift
        if not c & 0x80:
            return v, o
        shift += 7


def table(b, o):
    """A pc-value table at o: its bytes and its values (runtime/symtab.go step)."""
    start, vals, v, first = o, [], -1, True
    while True:
        uv, o = uvarint(b, o)
        if uv == 0 and not first:
            return b[start:o], vals
        first = False
        v += -((uv >> 1) + 1) if uv & 1 else uv >> 1
        _, o = uvarint(b, o)
        vals.append(v)


class Pcln:
    def __init__(self, d):
        s = sections(d)
        a = s['.gopclntab']
        self.d = d
        self.p = d[a[4]:a[4] + a[5]]
        self.addr = a[3]
        p = self.p
        self.ver = {v: k for k, v in MAGIC.items()}.get(u32(p, 0))
        if self.ver not in (118, 120):
            sys.exit('gen_gopclntab_seed: only Go 1.18+ binaries are read')
        self.min_lc = p[6]
        (self.nfunc, _, self.text, self.funcname, self.cutab, self.filetab, self.pctab,
         self.functab) = struct.unpack_from('<8Q', p, 8)
        self.fixed = 40 if self.ver == 118 else 44
        self.gofunc = self.find_gofunc(s)

    def find_gofunc(self, s):
        """moduledata.gofunc as a file offset (as gopclntab.c finds it), or None."""
        nd = s['.noptrdata']
        b = self.d[nd[4]:nd[4] + nd[5]]
        off = 304 if self.ver == 118 else 320
        for i in range(0, len(b) - off - 8, 8):
            if u64(b, i) == self.addr and u64(b, i + 8) == self.addr + self.funcname and \
                    u64(b, i + 176) == self.text:
                va = u64(b, i + off)
                for sec in s.values():
                    if sec[1] == 1 and sec[3] <= va < sec[3] + sec[5]:
                        return sec[4] + va - sec[3]
        return None

    def entry(self, i):
        return self.text + u32(self.p, self.functab + 8 * i)

    def func(self, i):
        """Function i's _func, as fields."""
        p, fo = self.p, self.functab + u32(self.p, self.functab + 8 * i + 4)
        npcdata, nfuncdata = u32(p, fo + 28), p[fo + self.fixed - 1]
        f = {
            'entry': self.entry(i), 'end': self.entry(i + 1),
            'name': cstr(p, self.funcname + u32(p, fo + 4)),
            'args': u32(p, fo + 8), 'deferreturn': u32(p, fo + 12),
            'cu': u32(p, fo + 32), 'startline': u32(p, fo + 36) if self.ver == 120 else 0,
            'funcid': p[fo + self.fixed - 4], 'flag': p[fo + self.fixed - 3],
            'tabs': {}, 'pcdata': [], 'files': [], 'inl': [],
        }
        for k, at in (('pcsp', 16), ('pcfile', 20), ('pcln', 24)):
            o = u32(p, fo + at)
            f['tabs'][k] = table(p, self.pctab + o) if o else None
        for k in range(npcdata):
            o = u32(p, fo + self.fixed + 4 * k)
            f['pcdata'].append(table(p, self.pctab + o) if o else None)
        if f['tabs']['pcfile']:
            for fileno in range(max(f['tabs']['pcfile'][1]) + 1):
                fn = u32(p, self.cutab + 4 * (f['cu'] + fileno))
                n = cstr(p, self.filetab + fn) if fn != 0xFFFFFFFF else None
                # The checkout's path: relative, as in the tree.
                f['files'].append(n and n.replace(os.getcwd().encode() + b'/', b''))
        inl = f['pcdata'][2] if len(f['pcdata']) > 2 else None
        if nfuncdata > 3 and inl and max(inl[1]) >= 0 and self.gofunc is not None:
            o = u32(p, fo + self.fixed + 4 * npcdata + 12)
            esz = 20 if self.ver == 118 else 16
            for ix in range(max(inl[1]) + 1):
                e = self.d[self.gofunc + o + ix * esz:self.gofunc + o + (ix + 1) * esz]
                if self.ver == 118:
                    parent, fid, nameoff, ppc = struct.unpack_from('<hB', e, 0) + \
                        struct.unpack_from('<iI', e, 12)
                    line = u32(e, 8)
                else:
                    fid, nameoff, ppc, line = e[0], *struct.unpack_from('<iIi', e, 4)
                    parent = 0
                f['inl'].append({'parent': parent, 'funcid': fid, 'line': line, 'ppc': ppc,
                                 'name': cstr(p, self.funcname + nameoff)})
        return f


def build(funcs, text, ver, min_lc):
    """A .gopclntab of layout ver with funcs, and the .noptrdata that goes with it."""
    names, name_off = bytearray(), {}
    pctab, pc_off = bytearray(b'\0'), {}
    files, file_off = bytearray(), {}
    cutab = []
    gofunc = bytearray()

    def name(n):
        if n not in name_off:
            name_off[n] = len(names)
            names.extend(n + b'\0')
        return name_off[n]

    def tab(t):
        if not t:
            return 0
        if t[0] not in pc_off:
            pc_off[t[0]] = len(pctab)
            pctab.extend(t[0])
        return pc_off[t[0]]

    def file(n):
        if n is None:
            return 0xFFFFFFFF
        if n not in file_off:
            file_off[n] = len(files)
            files.extend(n + b'\0')
        return file_off[n]

    ptr = 8 if ver == 116 else 4
    fixed = {116: 44, 118: 40, 120: 44}[ver]
    blobs = []
    for f in funcs:
        cu = len(cutab)
        cutab.extend(file(n) for n in f['files'])
        inl_off = 0xFFFFFFFF
        if f['inl'] and ver != 116:
            inl_off = len(gofunc)
            for c in f['inl']:
                if ver == 118:
                    gofunc.extend(struct.pack('<hBxiiiI', c['parent'], c['funcid'], 0, c['line'],
                                              name(c['name']), c['ppc']))
                else:
                    gofunc.extend(struct.pack('<B3xiIi', c['funcid'], name(c['name']), c['ppc'],
                                              c['line']))
        npcdata, nfuncdata = len(f['pcdata']), 4 if f['inl'] else 0
        entry = f['entry'] if ver == 116 else f['entry'] - text
        if ver == 116:
            b = struct.pack('<QiIIIIIII', entry, name(f['name']), f['args'], f['deferreturn'],
                            tab(f['tabs']['pcsp']), tab(f['tabs']['pcfile']),
                            tab(f['tabs']['pcln']), npcdata, cu)
            b += struct.pack('<BxxB', f['funcid'], nfuncdata)
        else:
            b = struct.pack('<IiIIIIIII', entry, name(f['name']), f['args'], f['deferreturn'],
                            tab(f['tabs']['pcsp']), tab(f['tabs']['pcfile']),
                            tab(f['tabs']['pcln']), npcdata, cu)
            if ver == 120:
                b += struct.pack('<i', f['startline'])
            b += struct.pack('<BBxB', f['funcid'], f['flag'], nfuncdata)
        assert len(b) == fixed
        b += b''.join(struct.pack('<I', tab(t)) for t in f['pcdata'])
        b += struct.pack('<I', inl_off) * nfuncdata
        blobs.append(b)

    hdr = 64 if ver == 116 else 72
    o_names = hdr
    o_cutab = o_names + len(names)
    o_files = o_cutab + 4 * len(cutab)
    o_pctab = o_files + len(files)
    o_functab = (o_pctab + len(pctab) + 7) & ~7
    esz = 2 * ptr
    ftab = bytearray()
    fo = esz * (len(funcs) + 1)
    fo = (fo + 7) & ~7
    body = bytearray()
    for f, b in zip(funcs, blobs):
        entry = f['entry'] if ver == 116 else f['entry'] - text
        ftab += struct.pack('<QQ' if ver == 116 else '<II', entry, fo + len(body))
        body += b
        body += b'\0' * (-len(body) % 8)
    end = funcs[-1]['end'] if ver == 116 else funcs[-1]['end'] - text
    ftab += struct.pack('<QQ' if ver == 116 else '<II', end, 0)
    ftab += b'\0' * (fo - len(ftab))
    out = bytearray(struct.pack('<IBBBBQ', MAGIC[ver], 0, 0, min_lc, 8, len(funcs)))
    if ver == 116:
        out += struct.pack('<6Q', len(file_off), o_names, o_cutab, o_files, o_pctab, o_functab)
    else:
        out += struct.pack('<7Q', len(file_off), text, o_names, o_cutab, o_files, o_pctab,
                           o_functab)
    out += names + b''.join(struct.pack('<I', c) for c in cutab) + files + pctab
    out += b'\0' * (o_functab - len(out))
    out += ftab + body

    # .noptrdata: moduledata {pcHeader, funcnametab...; text at 176; gofunc at 304 or 320}.
    data = bytearray(GOFUNC_AT)
    struct.pack_into('<QQ', data, 0, FUZZ_PCLN_ADDR, FUZZ_PCLN_ADDR + o_names)
    struct.pack_into('<Q', data, 176, text)
    if ver != 116:
        struct.pack_into('<Q', data, 304 if ver == 118 else 320, FUZZ_DATA_ADDR + GOFUNC_AT)
    data += gofunc
    return struct.pack('<I', len(out)) + bytes(out) + bytes(data)


def main():
    t = Pcln(open(sys.argv[1], 'rb').read())
    idx = [i for i in range(t.nfunc)
           if (n := t.func(i)['name']).startswith(b'main.') or n.decode() in KEEP]
    funcs = [t.func(i) for i in idx]
    for ver in (116, 118, 120):
        seed = build(funcs, t.text, ver, t.min_lc)
        with open(f'{sys.argv[2]}/go{ver}', 'wb') as fp:
            fp.write(seed)
        print(f'{sys.argv[2]}/go{ver}: {len(funcs)} functions, {len(seed)} bytes')


if __name__ == '__main__':
    main()

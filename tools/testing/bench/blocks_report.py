#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Report of scripts/tcg-blocks: per round trip of a latency test, the
translated blocks the guest executed (the driver's, the rest of the
kernel's, user space's), the driver functions entered, and the driver
code pages touched, side by side per system; then the driver functions
and the user-space functions by blocks. User space includes the
perftest processes' polling, which spins for as long as a round trip
takes: its blocks follow time, not work.

usage: blocks_report.py COUNTS OUTDIR
COUNTS is the tcg_blocks plugin's output, OUTDIR what the guest half
(tools/testing/bench/blocks) wrote."""
import bisect
import collections
import os
import subprocess
import sys

# x86-64 kernel addresses, with four or five paging levels (tcg_blocks.c).
KERNEL_START = 0xff00000000000000
# What tcg_blocks.c counts per vCPU at a mark: blocks, instructions,
# memory accesses, locked instructions, interrupt flag changes, misses of
# its model of the software TLB, blocks entered by a lookup, misses of
# its model of the jump cache.
NR_SEEN = 8


def load_counts(path):
    blocks = collections.defaultdict(collections.Counter)
    data = collections.defaultdict(collections.Counter)
    misses = collections.defaultdict(collections.Counter)
    events = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] == 'M':
                n = [int(x) for x in p[4:]]
                events[int(p[1])].append(
                    (int(p[2]), int(p[3]),
                     [tuple(n[i:i + NR_SEEN])
                      for i in range(0, len(n), NR_SEEN)]))
                continue
            tag, w, key, n = p
            table = {'B': blocks, 'D': data, 'J': misses}[tag]
            table[int(w)][int(key, 16)] += int(n)
    return blocks, data, misses, events


def load_marks(path):
    try:
        with open(path) as f:
            return [line.split()[1] for line in f if len(line.split()) == 2]
    except OSError:
        return []


# A message's way, mark to mark, on the vCPU that sends it (over a veth
# the receiving end's kernel work runs there too), and the leg before:
# from the completion its sender answers to, posted by the other vCPU,
# to its doorbell.
LEGS = (('cq_post', 'write', 'user space: completion seen to doorbell'),
        ('write', 'post_send', 'write() to the post_send verb'),
        ('post_send', 'tcp_sendmsg', 'post_send to tcp_sendmsg'),
        ('tcp_sendmsg', 'tcp_v4_rcv', 'TCP, IP and veth out'),
        ('tcp_v4_rcv', 'data_ready', 'TCP in, to the data_ready callback'),
        ('data_ready', 'cq_post', 'data_ready to the receive completion'))


def median(x):
    return sorted(x)[len(x) // 2]


def chains(events, names, skip):
    """Each message's way through the marks of one window, the first
    @skip messages left out (connection setup): a list of (vCPU, the
    other vCPU's completion before the doorbell, then the events of
    LEGS[1:]'s marks), each an index into @events, which holds (mark,
    vCPU, value) in the order they happened."""
    idx = {n: i for i, n in enumerate(names)}
    if not names or any(a not in idx or b not in idx for a, b, _ in LEGS):
        return []
    nxt = {}
    # For each event, the index of the next event of each mark on its vCPU.
    for i in range(len(events) - 1, -1, -1):
        m, v, _ = events[i]
        nxt[i] = dict(nxt.get(('v', v), {}))
        nxt[('v', v)] = dict(nxt[i])
        nxt[('v', v)][m] = i
    out = []
    last_cq = {}
    msgs = 0
    for i, (m, v, _) in enumerate(events):
        if m == idx['cq_post']:
            last_cq[v] = i
        if m != idx['write']:
            continue
        msgs += 1
        other = [last_cq[u] for u in last_cq if u != v]
        if msgs <= skip or not other:
            continue
        chain = [other[0], i]
        for _, b, _ in LEGS[1:]:
            j = nxt[chain[-1]].get(idx[b])
            if j is None:
                break
            chain.append(j)
        else:
            nw = nxt[i].get(idx['write'])
            if nw is None or nw > chain[-1]:
                out.append((v, chain))
    return out


def legs(events, names, skip):
    """Median counts (NR_SEEN) of each leg."""
    found = collections.defaultdict(list)
    for v, chain in chains(events, names, skip):
        for k, (_, _, label) in enumerate(LEGS):
            b, a = events[chain[k + 1]][2][v], events[chain[k]][2][v]
            found[label].append(tuple(b[i] - a[i] for i in range(NR_SEEN)))
    if not found:
        return None
    return {label: '/'.join('%d' % median([d[i] for d in x])
                            for i in range(NR_SEEN))
            for label, x in found.items()}


def idle_between(idle, v, t0, t1):
    """Nanoseconds vCPU @v spent idle between @t0 and @t1."""
    return sum(max(0, min(b, t1) - max(a, t0)) for a, b in idle.get(v, ())
               if a < t1 and b > t0)


def times(outdir, counts):
    """The report of tcg_times.c's log: each leg's median time, and the
    sending vCPU's idle time in it, per system."""
    marks = collections.defaultdict(list)
    idle_at = collections.defaultdict(dict)
    idle = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(counts) as f:
        for line in f:
            p = line.split()
            w = int(p[1])
            if p[0] == 'T':
                marks[w].append((int(p[2]), int(p[3]), int(p[4])))
            elif p[0] == 'I':
                idle_at[w][int(p[2])] = int(p[3])
            elif p[0] == 'R' and int(p[2]) in idle_at[w]:
                idle[w][int(p[2])].append((idle_at[w].pop(int(p[2])),
                                           int(p[3])))
    res = {}
    with open(os.path.join(outdir, 'windows')) as f:
        wins = [line.split() for line in f]
    for w, system, iters, _, status in wins:
        w = int(w)
        if status != 'ok' or w not in marks:
            continue
        names = load_marks(os.path.join(outdir, system + '.marks'))
        ev = marks[w]
        found = collections.defaultdict(list)
        for v, chain in chains(ev, names, int(iters) // 10):
            for k, (_, _, label) in enumerate(LEGS):
                t0, t1 = ev[chain[k]][2], ev[chain[k + 1]][2]
                found[label].append((t1 - t0,
                                     idle_between(idle[w], v, t0, t1)))
        if found:
            res[(system, int(iters))] = found
    if not res:
        sys.exit('no window with timed marks')
    keys = sorted(res, key=lambda k: (k[0] != 'siw2', k[0], k[1]))
    print('per message, median microseconds of each leg (mean idle time of'
          ' the sending vCPU in it)')
    print('%-40s' % '' + ''.join('%20s' % ('%s x%d' % k) for k in keys))
    for _, _, label in LEGS:
        cells = []
        for k in keys:
            x = res[k].get(label, [])
            cells.append('%.2f (%.2f)' % (
                median([d for d, _ in x]) / 1e3,
                sum(i for _, i in x) / len(x) / 1e3) if x else '-')
        print('%-40s' % label + ''.join('%20s' % c for c in cells))
    cells = []
    for k in keys:
        n = min(len(res[k][label]) for _, _, label in LEGS)
        tot = sorted(sum(res[k][label][j][0] for _, _, label in LEGS)
                     for j in range(n))
        cells.append('%.2f' % (tot[len(tot) // 2] / 1e3))
    print('%-40s' % 'the whole way' + ''.join('%20s' % c for c in cells))


def load_syms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in 'tTW':
                continue
            addr = int(p[0], 16)
            if addr:
                mod = p[3].strip('[]') if len(p) > 3 else ''
                syms.append((addr, p[2], mod))
    syms.sort()
    return syms, [s[0] for s in syms]


def load_maps(path):
    """The executable mappings of a /proc/PID/maps: (start, end, offset,
    file), sorted."""
    maps = []
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 6 or 'x' not in p[1]:
                    continue
                start, end = (int(x, 16) for x in p[0].split('-'))
                maps.append((start, end, int(p[2], 16), p[5]))
    except OSError:
        pass
    return sorted(maps)


def elf_syms(path):
    """A file's function symbols by virtual address, and the (offset,
    vaddr) of its executable segment; nothing for a file unreadable here."""
    syms = {}
    seg = (0, 0)
    for args in (['nm', '--defined-only', path],
                 ['nm', '-D', '--defined-only', path]):
        try:
            out = subprocess.run(args, capture_output=True, text=True).stdout
        except OSError:
            return [], [], seg
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'tTW':
                syms.setdefault(int(p[0], 16), p[2])
        if syms:
            break
    try:
        out = subprocess.run(['readelf', '-lW', path], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if p and p[0] == 'LOAD' and 'E' in p[6:-1]:
                seg = (int(p[1], 16), int(p[2], 16))
                break
    except (OSError, IndexError, ValueError):
        pass
    table = sorted(syms.items())
    return table, [a for a, _ in table], seg


class UserSyms:
    """User addresses to (file, function), by one process's map."""

    def __init__(self, maps):
        self.maps = maps
        self.starts = [m[0] for m in maps]
        self.files = {}

    def name(self, va):
        i = bisect.bisect_right(self.starts, va) - 1
        if i < 0 or va >= self.maps[i][1]:
            return '?', '?'
        start, _, off, path = self.maps[i]
        if path not in self.files:
            self.files[path] = elf_syms(path)
        table, addrs, (seg_off, seg_va) = self.files[path]
        fva = va - start + off - seg_off + seg_va
        j = bisect.bisect_right(addrs, fva) - 1
        return os.path.basename(path), table[j][1] if j >= 0 else '?'


def per_trip(a, b, trips):
    return {k: (b.get(k, 0) - a.get(k, 0)) / trips for k in set(a) | set(b)}


def ksym(syms, va):
    """The kernel symbol at or before @va: (start, name, module), or
    None."""
    table, addrs = syms
    i = bisect.bisect_right(addrs, va) - 1
    return table[i] if i >= 0 else None


def analyse(blocks, data, misses, syms, usyms, mod, wa, wb, trips):
    blk = per_trip(blocks[wa], blocks[wb], trips)
    jc = collections.Counter()
    for va, n in per_trip(misses[wa], misses[wb], trips).items():
        sym = ksym(syms, va) if va >= KERNEL_START else None
        if va < KERNEL_START:
            jc['user space'] += n
        elif not sym:
            jc['?'] += n
        else:
            jc[sym[1] + (' [%s]' % sym[2] if sym[2] else '')] += n
    res = {'driver': 0.0, 'kernel': 0.0, 'modules': 0.0, 'entered': 0.0,
           'user': 0.0, 'pages': set(), 'fn': collections.Counter(),
           'ent': collections.Counter(), 'ufile': collections.Counter(),
           'ufn': collections.Counter()}
    for va, n in blk.items():
        if va < KERNEL_START:
            f, fn = usyms.name(va)
            res['user'] += n
            res['ufile'][f] += n
            res['ufn'][f + ':' + fn] += n
            continue
        sym = ksym(syms, va)
        if not sym:
            res['kernel'] += n
            continue
        start, name, m = sym
        if m == mod:
            res['driver'] += n
            res['fn'][name] += n
            if va == start:
                res['entered'] += n
                res['ent'][name] += n
            if n >= 0.5:
                res['pages'].add(va >> 12)
        elif m:
            res['modules'] += n
        else:
            res['kernel'] += n
    acc = per_trip(data[wa], data[wb], trips)
    res['data_pages'] = sum(1 for n in acc.values() if n >= 0.5)
    res['jc'] = jc
    return res


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    outdir = sys.argv[2]
    with open(sys.argv[1]) as f:
        if f.readline().startswith(('T', 'I', 'R')):
            times(outdir, sys.argv[1])
            return
    blocks, data, misses, events = load_counts(sys.argv[1])
    runs = collections.defaultdict(list)
    with open(os.path.join(outdir, 'windows')) as f:
        for line in f:
            w, system, iters, mod, status = line.split()
            if status != 'ok':
                print('%s: a client run failed, not reported' % system)
                runs[system].append(None)
                continue
            runs[system].append((int(iters), int(w), mod))
    results = {}
    for system, r in runs.items():
        if len(r) != 2 or None in r:
            print('%s: %d windows, need 2' % (system, len(r)))
            continue
        (na, wa, mod), (nb, wb, _) = sorted(r)
        if wa not in blocks or wb not in blocks:
            # The plugin keeps MAX_WINDOWS windows.
            print('%s: the plugin counted no window %d or %d' % (system, wa, wb))
            continue
        syms = load_syms(os.path.join(outdir, system + '.kallsyms'))
        usyms = UserSyms(load_maps(os.path.join(outdir, system + '.maps')))
        results[system] = analyse(blocks, data, misses, syms, usyms, mod,
                                  wa, wb, nb - na)
        results[system]['legs'] = legs(
            events.get(wb, []),
            load_marks(os.path.join(outdir, system + '.marks')), na)
    if not results:
        sys.exit('no system with two windows')
    names = list(results)
    rows = (('blocks in the driver', lambda r: '%.0f' % r['driver']),
            ('blocks in other modules', lambda r: '%.0f' % r['modules']),
            ('blocks in the rest of the kernel', lambda r: '%.0f' % r['kernel']),
            ('blocks in user space', lambda r: '%.0f' % r['user']),
            ('driver functions entered', lambda r: '%.0f' % r['entered']),
            ('driver code pages touched', lambda r: '%d' % len(r['pages'])),
            ('kernel pages with data accesses', lambda r: '%d' % r['data_pages']))
    print('per round trip' + ''.join('%12s' % n for n in names))
    for label, fmt in rows:
        print('%-34s' % label + ''.join('%12s' % fmt(results[n]) for n in names))
    if any(results[n]['legs'] for n in names):
        print('\nper message, on the sending vCPU, medians of blocks/'
              'instructions/memory accesses/locked instructions/'
              'interrupt flag changes/TLB misses/lookups/jump cache '
              'misses')
        print('%-40s' % '' + ''.join('%36s' % n for n in names))
        for _, _, label in LEGS:
            print('%-40s' % label + ''.join(
                '%36s' % (results[n]['legs'] or {}).get(label, '-')
                for n in names))
    for n in names:
        print('\n%s: driver functions by blocks per round trip (entries)' % n)
        r = results[n]
        for fn, b in r['fn'].most_common(25):
            print('  %8.1f %5.1f  %s' % (b, r['ent'][fn], fn))
    for n in names:
        r = results[n]
        print('\n%s: jump cache misses (model) per round trip, %.0f in all, '
              'by the function entered' % (n, sum(r['jc'].values())))
        for fn, b in r['jc'].most_common(30):
            print('  %8.1f  %s' % (b, fn))
    for n in names:
        print('\n%s: user space by file, blocks per round trip' % n)
        r = results[n]
        for f, b in r['ufile'].most_common(10):
            print('  %8.1f  %s' % (b, f))
        print('%s: user functions by blocks per round trip' % n)
        for fn, b in r['ufn'].most_common(20):
            print('  %8.1f  %s' % (b, fn))


if __name__ == '__main__':
    main()

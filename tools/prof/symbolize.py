#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reads vkcu-prof reports (tools/prof/vkcu-prof.c) and prints where the
threads waited: the contended locks by time waited, the condition-variable
waits by time, and each thread's sampled stacks, with function names and
source lines from the unstripped binaries of the same build.

  symbolize.py [--dir DIR]... [--top N] [--markdown] REPORT...

DIR: folders holding the unstripped modules (default: build/ and
build-sm90/ beside this script, and their lib/); a module found nowhere
keeps its module+offset. Several reports (one per run) are added up.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for line in f:
                if line.startswith('#') or not line.strip():
                    continue
                kind, count, ns, *rest = line.split()
                # A thread's name may hold spaces (the driver's "[vkrt] Analysis"):
                # the frames are the trailing module+0xOFFSET words.
                n = len(rest)
                while n > 1 and re.fullmatch(r'\S+\+0x[0-9a-f]+', rest[n - 1]):
                    n -= 1
                thread, frames = ' '.join(rest[:n]), rest[n:]
                rows.append((kind, int(count), int(ns), thread, tuple(frames)))
    return rows


def find_module(name, dirs):
    for d in dirs:
        for sub in ('', 'lib', 'tests', 'bin'):
            p = os.path.join(d, sub, name)
            if os.path.isfile(p):
                return p
        # a soname link's target: libvkcu.so.1 -> libvkcu.so.1.0.0
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.startswith(name) and os.path.isfile(os.path.join(d, f)):
                    return os.path.join(d, f)
    return None


def symbolize(rows, dirs):
    by_module = collections.defaultdict(set)
    for r in rows:
        for fr in r[4]:
            m, _, off = fr.rpartition('+')
            by_module[m].add(off)
    names = {}
    for m, offs in by_module.items():
        path = find_module(m, dirs)
        offs = sorted(offs)
        if not path or m == '?':
            for o in offs:
                names[m + '+' + o] = m + '+' + o
            continue
        # The return address points after the call: one byte back is inside it.
        q = ['0x%x' % max(int(o, 16) - 1, 0) for o in offs]
        out = subprocess.run(['addr2line', '-f', '-C', '-e', path] + q, capture_output=True, text=True).stdout.split('\n')
        for i, o in enumerate(offs):
            fn = out[2 * i] if 2 * i < len(out) else '??'
            loc = out[2 * i + 1] if 2 * i + 1 < len(out) else '??'
            loc = re.sub(r' \(discriminator \d+\)', '', loc)
            loc = loc.replace(ROOT + '/', '')
            if fn == '??':
                names[m + '+' + o] = m + '+' + o
            else:
                names[m + '+' + o] = '%s (%s)' % (fn, os.path.basename(loc) if '/.cache/' in loc else loc)
    return names


def thread_class(name):
    """vkcu-dec3 and vkcu-dec5 are one kind of thread: digits go."""
    return re.sub(r'\d+', 'N', name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('reports', nargs='+')
    ap.add_argument('--dir', action='append', default=[])
    ap.add_argument('--top', type=int, default=12)
    ap.add_argument('--frames', type=int, default=5)
    args = ap.parse_args()
    dirs = args.dir or [os.path.join(ROOT, 'build-sm90'), os.path.join(ROOT, 'build')]
    rows = parse(args.reports)
    names = symbolize(rows, dirs)

    def stack(frames, n=args.frames):
        return ' <- '.join(names.get(f, f) for f in frames[:n])

    for kind, title, unit in (('lock', 'Contended mutexes (a lock that found the mutex taken)', 'waited'),
                              ('cond', 'Condition-variable waits', 'waited')):
        agg = collections.defaultdict(lambda: [0, 0, set()])
        for k, c, ns, th, fr in rows:
            if k == kind:
                a = agg[fr[:args.frames]]
                a[0] += c
                a[1] += ns
                a[2].add(thread_class(th))
        total = sum(a[1] for a in agg.values())
        print('## %s: %d sites, %.1f ms %s in all\n' % (title, len(agg), total / 1e6, unit))
        print('| count | ms %s | us each | threads | stack |' % unit)
        print('| ---: | ---: | ---: | --- | --- |')
        for fr, (c, ns, th) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print('| %d | %.1f | %.1f | %s | %s |' % (c, ns / 1e6, ns / 1e3 / max(c, 1), ' '.join(sorted(th)), stack(fr)))
        print()

    def entry(frames):
        """The outermost frame outside libc: the function the thread runs
        (threads of one name do different jobs: vkcu names none)."""
        for f in reversed(frames):
            if not f.startswith('libc.so') and not f.startswith('?'):
                return re.sub(r' \(.*', '', names.get(f, f))
        return '?'

    samples = collections.defaultdict(collections.Counter)
    for k, c, ns, th, fr in rows:
        if k == 'sample':
            samples[thread_class(th) + ': ' + entry(fr)][fr[:args.frames]] += c
    print('## Sampled stacks, by thread name and the function it runs (share of its samples)\n')
    for th, ctr in sorted(samples.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(ctr.values())
        print('### %s: %d samples\n' % (th, n))
        inner = collections.Counter()
        for fr, c in ctr.items():
            inner[names.get(fr[0], fr[0]) if fr else '?'] += c
        print('innermost: ' + '; '.join('%s %.0f%%' % (f, 100.0 * c / n) for f, c in inner.most_common(5)) + '\n')
        for fr, c in ctr.most_common(min(args.top, 6)):
            print('- %.1f%% %s' % (100.0 * c / n, stack(fr)))
        print()
    return 0


if __name__ == '__main__':
    sys.exit(main())

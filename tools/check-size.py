#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The size rules of the source tree (issue 34: files that hold one job):
- no function of src/ or kernels/ over MAX_FN lines (about 100: 120 with its
  braces and a little slack) unless the comment just above it gives the
  reason after "Long:";
- no source file over MAX_FILE lines: a file that grows past it holds more
  than one job and is split (as compare*.c, sink_encode*.c, batch*.c).
A function is counted from its opening brace in column 0 to its closing
brace in column 0, the style of the whole tree.
Usage: check-size.py [ROOT]. Prints each violation, exit 1 if any.
"""
import glob
import os
import re
import sys

MAX_FN = 120
MAX_FILE = 1200
NAME = re.compile(r'(\w+)\s*\(')


def functions(lines):
    """(name, first line, length, comment above) of each function."""
    i = 0
    while i < len(lines):
        if lines[i].startswith('{') and i > 0:
            j = i - 1  # the signature's first line
            while j > 0 and lines[j - 1].strip() and not lines[j - 1].rstrip().endswith(('*/', ';', '}')) \
                    and not lines[j - 1].startswith(('#', '/*', ' *')):
                j -= 1
            k = i + 1
            while k < len(lines) and not lines[k].startswith('}'):
                k += 1
            c = j - 1  # the comment block above the signature
            comment = []
            if c >= 0 and lines[c].rstrip().endswith('*/'):
                while c >= 0:
                    comment.insert(0, lines[c])
                    if lines[c].lstrip().startswith('/*'):
                        break
                    c -= 1
            m = NAME.search(lines[j])
            yield (m.group(1) if m else lines[j].strip()[:40]), j + 1, k - i + 1, comment
            i = k
        i += 1


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    bad, nfn = [], 0
    files = sorted(glob.glob(os.path.join(root, 'src', '*', '*.c')) + glob.glob(os.path.join(root, 'kernels', '*.cu')))
    for path in files:
        rel = os.path.relpath(path, root)
        lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
        if len(lines) - 1 > MAX_FILE:
            bad.append('%s: %d lines (at most %d: split it by job)' % (rel, len(lines) - 1, MAX_FILE))
        for name, line, n, comment in functions(lines):
            nfn += 1
            if n > MAX_FN and not any('Long:' in c for c in comment):
                bad.append('%s:%d: %s is %d lines (at most %d, or a "Long:" line in the comment above it saying '
                           'why)' % (rel, line, name, n, MAX_FN))
    for b in bad:
        print(b)
    if not bad:
        print('%d files, %d functions: the sizes hold' % (len(files), nfn))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

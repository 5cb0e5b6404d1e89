#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The layering rules of the source tree, checked over its #include lines.

Layers, bottom to top (each may include only itself and what is below it):
  include/vkcu (public headers) < kernels < util < ops < gpu < core < batch < regress < cli
- kernels/ is device code and the shared per-pixel math: it includes nothing
  from src/ (nor the public headers: it is below the library);
- nothing outside src/cli/ includes src/cli/;
- src/cli/ is a client of the public API: it includes only include/vkcu
  and its own files (and system headers, but not FFmpeg's: the library's
  FFmpeg is inside libvkcu.so), never the library's internals;
- every quoted include resolves to a file of the tree, and the include graph
  of those files has no cycle.
Usage: check-layers.py [ROOT]; prints each violation, exit 1 if any.
"""
import os
import re
import sys

ORDER = ['include', 'kernels', 'util', 'ops', 'gpu', 'core', 'batch', 'regress', 'cli']
SRC_EXT = ('.c', '.h', '.cu', '.cuh')
CLI_MAY = ('include', 'cli')
# FFmpeg's headers, which src/cli/ may not include
FFMPEG_HEADERS = ('libavcodec/', 'libavformat/', 'libavutil/', 'libavfilter/', 'libavdevice/', 'libswscale/',
                  'libswresample/')
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer(rel):
    parts = rel.split('/')
    if parts[0] == 'include':
        return 'include'
    if parts[0] == 'kernels':
        return 'kernels'
    if parts[0] == 'src' and len(parts) > 2:
        return parts[1]
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    files = []
    for top in ('src', 'kernels', 'include'):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith(SRC_EXT)]
    bad = []
    edges = {}
    for rel in sorted(files):
        me = layer(rel)
        if me is None:
            bad.append('%s: source file outside the layer folders' % rel)
            continue
        if me not in ORDER:
            bad.append('%s: folder src/%s is not a known layer (%s)' % (rel, me, ', '.join(ORDER)))
            continue
        text = open(os.path.join(root, rel), encoding='utf-8', errors='replace').read()
        edges[rel] = []
        for m in INCLUDE.finditer(text):
            kind, name = m.group(1), m.group(2)
            if kind == '<':
                # the public headers as an installed user sees them
                if name.startswith('vkcu/') and os.path.exists(os.path.join(root, 'include', name)):
                    target = os.path.join('include', name)
                elif me == 'cli' and name.startswith(FFMPEG_HEADERS):
                    bad.append('%s: includes <%s> (src/cli/ is a client of the public API: FFmpeg is inside the '
                               'library, which says what the CLI needs of it)' % (rel, name))
                    continue
                else:
                    continue
            else:
                cands = [os.path.normpath(os.path.join(os.path.dirname(rel), name)),
                         os.path.join('src', name), name]
                target = next((c for c in cands if os.path.isfile(os.path.join(root, c))), None)
                if target is None:
                    bad.append('%s: #include "%s" resolves to no file of the tree' % (rel, name))
                    continue
            to = layer(target)
            if to is None or to not in ORDER:
                bad.append('%s: includes %s, outside the layers' % (rel, target))
                continue
            edges[rel].append(target)
            if me == 'kernels' and to != 'kernels':
                bad.append('%s: kernels/ includes %s (kernels/ includes nothing from src/)' % (rel, target))
            elif to == 'cli' and me != 'cli':
                bad.append('%s: includes %s (nothing outside src/cli/ includes src/cli/)' % (rel, target))
            elif me == 'cli' and to not in CLI_MAY:
                bad.append('%s: includes %s (src/cli/ is a client of the public API: include/vkcu '
                           'and its own files only)' % (rel, target))
            elif ORDER.index(to) > ORDER.index(me):
                bad.append('%s (%s) reaches up to %s (%s)' % (rel, me, target, to))
    # cycles, file by file
    state = {}
    def visit(f, path):
        state[f] = 1
        for t in edges.get(f, []):
            if state.get(t) == 1:
                cyc = path[path.index(t):] + [t] if t in path else [f, t]
                bad.append('include cycle: ' + ' -> '.join(cyc))
            elif t not in state:
                visit(t, path + [t])
        state[f] = 2
    for f in sorted(edges):
        if f not in state:
            visit(f, [f])
    for b in bad:
        print(b)
    if not files:
        print('no sources under', root)
        return 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

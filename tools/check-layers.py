#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The layering rules of the source tree, checked over its #include lines and
over the symbols its built objects define and use.

Layers, bottom to top (each may use only itself and what is below it):
  include/vkcu (public headers) < kernels < util < ops < gpu < core < batch < regress < cli
Includes:
- no file includes a file of a layer above its own;
- kernels/ is device code and the shared per-pixel math: it includes nothing
  from src/ (nor the public headers: it is below the library);
- nothing outside src/cli/ includes src/cli/;
- src/cli/ is a client of the public API: it includes only include/vkcu
  and its own files (and system headers, but not FFmpeg's: the library's
  FFmpeg is inside libvkcu.so), never the library's internals;
- every quoted include resolves to a file of the tree, and the include graph
  of those files has no cycle.
Macros:
- one convention for a failed call: no macro checks an API's result (a
  cudaError_t, VkResult, an AVERROR's string) and jumps to a label, except
  CU_CHECK (kernels/check.h) and VK_CHECK (src/gpu/check.h).
Symbols (`nm` on the objects of one build: an include rule cannot see a
header of a low layer that declares what a higher one defines, nor a
declaration written out by hand):
- no object uses (nm's U) a symbol that only objects of higher layers
  define: what a layer calls lives in its own layer or below;
- no call loop between the files of one layer: where X.c uses a symbol
  that Y.c defines (a function, or a table such as an operator's class),
  Y.c, and whatever Y.c uses in turn, does not use X.c's. A table and the
  files it lists, or a dispatcher and what it dispatches to, call one way.
  Each source's object is looked up by its name (src/L/X.c: OBJ/src/L/X.o,
  kernels/X.cu: CU_OBJ/kernels/X.cu.o), so an object whose source is gone
  (moved or deleted since that build) is never read; an object that is
  missing, or older than its source, is an error (build first).
Usage: check-layers.py [ROOT] [--objects OBJ] [--cu-objects CU_OBJ] [--no-symbols]
  OBJ: the build's object folder (default ROOT/build/obj); CU_OBJ: the
  folder of its CUDA objects (default OBJ; sanitizer builds reuse
  build/obj's, tests/sanitize.mk). --no-symbols: the include rules only.
Prints each violation, exit 1 if any.
"""
import argparse
import os
import re
import subprocess
import sys

# The one convention for a failed call: the only macros that check an API's
# result and jump to a label.
CHECK_HEADERS = ('kernels/check.h', 'src/gpu/check.h')
API_RESULT = re.compile(r'\b(cudaError_t|CUresult|VkResult|cudaGetErrorString|cuGetErrorString|vkcu_vk_result_str|'
                        r'vkcu_err_str|av_strerror|av_err2str)\b')
JUMP_MACRO = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)\(((?:[^\n]*\\\n)*[^\n]*)', re.M)
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


def symbol_rules(root, files, obj_dir, cu_dir):
    """The symbol direction over the objects of `files` (sources relative to
    root); returns (violations, number of objects read)."""
    bad = []
    objs = {}
    for rel in files:
        if rel.endswith('.c'):
            obj = os.path.join(obj_dir, rel[:-2] + '.o')
        elif rel.endswith('.cu'):
            obj = os.path.join(cu_dir, rel + '.o')
        else:
            continue
        if layer(rel) not in ORDER:
            continue  # refused by the include rules already
        if not os.path.isfile(obj):
            bad.append('%s: no object %s (build first, or name the build with --objects)' % (rel, obj))
        elif os.path.getmtime(obj) < os.path.getmtime(os.path.join(root, rel)):
            bad.append('%s: its object %s is older than it (build first)' % (rel, obj))
        else:
            objs[obj] = rel
    if not objs:
        return bad, 0
    try:
        run = subprocess.run(['nm', '-A', '-P'] + sorted(objs), capture_output=True, text=True)
    except OSError as e:
        return bad + ['cannot run nm (%s): the symbol rules need binutils' % e], 0
    if run.returncode != 0:
        return bad + ['nm failed: ' + run.stderr.strip().replace('\n', '; ')], 0
    defined = {}  # symbol -> the sources whose objects define it (strong or weak)
    used = []     # (source, symbol)
    for line in run.stdout.splitlines():
        # nm -A -P: "OBJ: NAME TYPE [VALUE [SIZE]]"
        obj, _, rest = line.rpartition(': ')
        fields = rest.split()
        if obj not in objs or len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind in ('U', 'w', 'v'):  # undefined (w, v: weak and undefined in this object)
            used.append((objs[obj], name))
        elif (kind.isupper() and kind != 'N') or kind in ('u', 'i'):
            defined.setdefault(name, []).append(objs[obj])
    calls = {}  # (caller, callee) of one layer -> the symbols
    for rel, name in used:
        where = defined.get(name)
        if not where:
            continue  # from outside the tree: libc, FFmpeg, CUDA
        low = min(where, key=lambda d: ORDER.index(layer(d)))
        me = layer(rel)
        if ORDER.index(layer(low)) > ORDER.index(me):
            bad.append('%s (%s) uses %s, defined above it in %s (%s)' % (rel, me, name, low, layer(low)))
        for d in where:
            if d != rel and layer(d) == me:
                calls.setdefault((rel, d), set()).add(name)
    bad += call_loops(calls)
    return bad, len(objs)


def call_loops(calls):
    """The call loops among the files of one layer: each strongly connected
    set of files, with the calls that make it."""
    graph = {}
    for a, b in calls:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, loops = {}, {}, [], set(), []
    def connect(v):  # Tarjan's, iterative: the tree's depth is not bounded
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    loops.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    bad = []
    for comp in sorted(loops):
        how = ['%s -> %s (%s)' % (a, b, ', '.join(sorted(calls[(a, b)])[:3]) +
                                  (', ...' if len(calls[(a, b)]) > 3 else ''))
               for a in comp for b in comp if (a, b) in calls]
        bad.append('call loop in %s/: %s: %s' % (os.path.dirname(comp[0]), ' <-> '.join(comp), '; '.join(how)))
    return bad


def main():
    ap = argparse.ArgumentParser(description='the layering rules of the source tree')
    ap.add_argument('root', nargs='?', default='.')
    ap.add_argument('--objects', metavar='OBJ', help="the build's object folder (default ROOT/build/obj)")
    ap.add_argument('--cu-objects', metavar='CU_OBJ', help='the folder of its CUDA objects (default OBJ)')
    ap.add_argument('--no-symbols', action='store_true', help='check the include rules only')
    args = ap.parse_args()
    root = os.path.abspath(args.root)
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
        for m in JUMP_MACRO.finditer(text):
            if rel not in CHECK_HEADERS and re.search(r'\bgoto\b', m.group(2)) and API_RESULT.search(m.group(2)):
                bad.append('%s: macro %s checks a call and jumps (a failed call has one convention: CU_CHECK in '
                           'kernels/check.h, VK_CHECK in src/gpu/check.h)' % (rel, m.group(1)))
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
    nobj = 0
    if files and not args.no_symbols:
        obj_dir = os.path.abspath(args.objects or os.path.join(root, 'build', 'obj'))
        cu_dir = os.path.abspath(args.cu_objects or obj_dir)
        sym_bad, nobj = symbol_rules(root, sorted(files), obj_dir, cu_dir)
        bad += sym_bad
    for b in bad:
        print(b)
    if not files:
        print('no sources under', root)
        return 1
    if not bad:
        print('%d files, %d objects: the layers hold' % (len(files), nobj) if nobj else
              '%d files: the layers hold (includes only)' % len(files))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""List the GPU code a file carries: one line per kind and architecture,
'elf sm_90' (machine code) or 'ptx sm_120' (PTX a newer GPU compiles at
first start), like `cuobjdump --list-elf/--list-ptx`, which this machine
and CI do not have (the CUDA toolkit here is nvcc alone).

Works on objects, archives, executables and shared libraries: nvcc embeds
each translation unit's code as a fat-binary container (magic 0xBA55ED50, a
16-byte header whose last 8 bytes give the size of the entries that follow).
Each entry starts with a header: kind (u16: 1 PTX, 2 ELF) at 0, the header's
size (u32) at 4, the payload's size (u64) at 8 and the architecture (u32,
e.g. 90) at 28; the next entry follows the payload.

usage: tools/cuda-archs.py [--each] FILE...   (exit 1 when a file holds no GPU code)
  --each: one line per container (per CUDA source), its code on one line,
          so that one source built for fewer GPUs shows
"""
import struct
import sys

MAGIC = struct.pack('<I', 0xBA55ED50)
KINDS = {1: 'ptx', 2: 'elf'}


def containers(data):
    pos = data.find(MAGIC)
    while pos >= 0:
        if pos + 16 <= len(data):
            version, hsize, fat_size = struct.unpack_from('<HHQ', data, pos + 4)
            if version == 1 and hsize == 16 and pos + 16 + fat_size <= len(data):
                yield pos + 16, pos + 16 + fat_size
                pos = data.find(MAGIC, pos + 16 + fat_size)
                continue
        pos = data.find(MAGIC, pos + 4)


def entries(data, start, end):
    pos = start
    while pos + 32 <= end:
        kind, hsize, size = struct.unpack_from('<HxxIQ', data, pos)
        arch, = struct.unpack_from('<I', data, pos + 28)
        if kind not in KINDS or hsize < 32 or pos + hsize + size > end:
            raise ValueError('malformed fat-binary entry at offset %d' % pos)
        yield KINDS[kind], arch
        pos += hsize + size


def main(args):
    each = bool(args) and args[0] == '--each'
    paths = args[1:] if each else args
    if not paths:
        sys.stderr.write(__doc__.split('usage: ')[1])
        return 2
    rc = 0
    for path in paths:
        with open(path, 'rb') as f:
            data = f.read()
        found = set()
        lines = []
        try:
            for start, end in containers(data):
                code = set(entries(data, start, end))
                found.update(code)
                lines.append(' '.join('%s sm_%d' % e for e in sorted(code)))
        except ValueError as e:
            sys.stderr.write('cuda-archs: %s: %s\n' % (path, e))
            return 1
        if not found:
            sys.stderr.write('cuda-archs: %s: no GPU code (no fat-binary container)\n' % path)
            rc = 1
        prefix = path + ': ' if len(paths) > 1 else ''
        if each:
            for line in lines:
                print(prefix + line)
            continue
        for kind, arch in sorted(found):
            print('%s%s sm_%d' % (prefix, kind, arch))
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

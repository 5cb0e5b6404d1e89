#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The cases of a golden manifest that process their input with a chain
(not a preset), for the GPU suites that pair an input with its processed
self (tests/gpu.d/metrics.sh, vmaf.sh): one line per case, "NAME<TAB>
INPUT<TAB>CHAIN", with ${VKCU_MEDIA:-gen} expanded to MEDIA (other
variables are left for the caller to skip).
Usage: manifest_cases.py MANIFEST MEDIA"""
import re
import sys


def main():
    case, fields = None, {}

    def flush():
        if case and 'chain' in fields and 'input' in fields and 'pipeline' not in fields:
            print('%s\t%s\t%s' % (case, fields['input'], fields['chain']))

    for line in open(sys.argv[1]):
        line = line.strip()
        m = re.match(r'\[case (.+)\]$', line)
        if m:
            flush()
            case, fields = m.group(1), {}
        elif '=' in line and not line.startswith('#'):
            k, v = (s.strip() for s in line.split('=', 1))
            fields[k] = v.replace('${VKCU_MEDIA:-gen}', sys.argv[2])
    flush()


if __name__ == '__main__':
    main()

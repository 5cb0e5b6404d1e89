#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The library never names a command-line option (issue 14): no string
literal in src/ outside src/cli/, in kernels/ or in include/ may spell one
("--backend", "-y", "vkcu verify --update"). Library text names a setting
through VKCU_SETTING() (util/log.h), which the CLI prints as its option.

Usage: check-flags.py ROOT   (exit 1 and one line per offence when found)

A flag here is a dash or two and a letter at the start of a literal or after
a space, '(', '[', '/', ',' or a quote: "-y", "(--strict", "or --encoder".
Comments are not text a user sees, so they are not read."""
import os
import re
import sys

FLAG = re.compile(r"(?:^|[\s(\[/,'`])(--?[A-Za-z][A-Za-z0-9-]*)")


def literals(text):
    """(line, body) of each string literal, skipping comments and char literals."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j, body = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    body.append(text[j:j + 2])
                    j += 2
                    continue
                if text[j] == "\n":  # not C; keep line numbers right anyway
                    break
                body.append(text[j])
                j += 1
            if c == '"':
                yield line, "".join(body)
            i = j + 1
        else:
            i += 1


def sources(root):
    for top in ("src", "kernels", "include"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(d, root)
            if rel == os.path.join("src", "cli") or rel.startswith(os.path.join("src", "cli") + os.sep):
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu", ".cuh")):
                    yield os.path.join(d, f)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    for path in sources(root):
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        lines = text.split("\n")
        for line, body in literals(text):
            if "pragma" in lines[line - 1].lower():  # compiler switches, not text
                continue
            m = FLAG.search(body)
            if m:
                bad += 1
                print(f"{os.path.relpath(path, root)}:{line}: names the option {m.group(1)} in \"{body[:80]}\": "
                      "name the setting with VKCU_SETTING() (util/log.h) instead")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

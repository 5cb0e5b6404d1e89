#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every source file (C, CUDA, headers, shell, Python, Makefiles) carries the
# SPDX line of the licence in LICENSE (tools/spdx.sh), and the checker finds
# a file without one.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

# The identifier names the licence LICENSE holds: GPL version 2, with the
# "or any later version" grant README states.
if head -n3 "$root/LICENSE" | grep -q 'GNU GENERAL PUBLIC LICENSE' && grep -q 'Version 2, June 1991' "$root/LICENSE" &&
   grep -q 'GPL-2.0-or-later' "$root/README.md" && grep -q '^SPDX_ID=GPL-2.0-or-later$' "$root/tools/spdx.sh"; then
  pass "spdx: the identifier matches LICENSE (GPL v2) and README (or later)"
else
  fail "spdx: tools/spdx.sh's SPDX_ID, LICENSE and README.md name different licences"
fi

n=$(bash "$root/tools/spdx.sh" --list | wc -l)
if bash "$root/tools/spdx.sh" --check > "$TMP/check" 2>&1; then
  # a tree of a few files would pass trivially: the list must hold the sources
  if [ "$n" -ge 150 ] && bash "$root/tools/spdx.sh" --list | grep -qx 'Makefile' &&
     bash "$root/tools/spdx.sh" --list | grep -q '\.cu$'; then
    pass "spdx: all $n source files carry the SPDX line"
  else
    fail "spdx: only $n source files listed (expected the C, CUDA, shell, Python and Makefile sources)"
  fi
else
  fail "spdx: $(wc -l < "$TMP/check") files lack the SPDX line: $(head -3 "$TMP/check" | tr '\n' ' ')"
fi

# The checker fails on a file without the line, and --add puts it where the
# check looks (after a #! line), leaving the rest of the file as it was.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mkdir -p "$TMP/tree/tools" "$TMP/tree/src"
  cp "$root/tools/spdx.sh" "$TMP/tree/tools/"
  printf '/* a.c */\nint a;\n' > "$TMP/tree/src/a.c"
  printf '#!/bin/sh\necho hi\n' > "$TMP/tree/run"; chmod +x "$TMP/tree/run"
  (cd "$TMP/tree" && git init -q && git add -A) >/dev/null 2>&1
  out=$(bash "$TMP/tree/tools/spdx.sh" --check 2>&1); rc=$?
  bash "$TMP/tree/tools/spdx.sh" --add > /dev/null
  if [ "$rc" = 1 ] && grep -q 'src/a.c' <<< "$out" && grep -q '^run:' <<< "${out//spdx: /}" &&
     bash "$TMP/tree/tools/spdx.sh" --check &&
     [ "$(sed -n 1p "$TMP/tree/src/a.c")" = '/* SPDX-License-Identifier: GPL-2.0-or-later */' ] &&
     [ "$(sed -n 2p "$TMP/tree/run")" = '# SPDX-License-Identifier: GPL-2.0-or-later' ] &&
     [ "$(sed -n 1p "$TMP/tree/run")" = '#!/bin/sh' ] && [ -x "$TMP/tree/run" ] &&
     [ "$(tail -n +2 "$TMP/tree/src/a.c")" = "$(printf '/* a.c */\nint a;')" ]; then
    pass "spdx: a file without the line fails the check; --add fixes C and #! scripts"
  else
    fail "spdx: the checker missed a file without the line or --add misplaced it (rc $rc: $out)"
  fi
else
  skip "spdx: checker self-test needs git (not a git checkout)"
fi

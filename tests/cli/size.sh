#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The size rules of the tree (tools/check-size.py, issue 34): no function
# over about 100 lines without the reason on a "Long:" line of its comment,
# no source file over 1,200 lines. Each rule is also broken in a copy of the
# tree, so that the checker is seen to catch it.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$ROOT/tools/check-size.py"
if out=$(python3 "$CHECK" "$ROOT" 2>&1); then
  pass "size: $(echo "$out" | tail -1)"
else
  fail "size: $(echo "$out" | head -3 | tr '\n' ';')"
fi
mkdir -p "$TMP/tree/src/util" "$TMP/tree/kernels"
long() { # NAME LINES [COMMENT]: a C function of that many lines (the comment just above it)
  [ -n "${3:-}" ] && printf '/* %s */\n' "$3"
  printf 'int %s(int x)\n{\n' "$1"
  for _ in $(seq 1 "$(($2 - 3))"); do echo '    x += 1;'; done
  printf '    return x;\n}\n'
}
long planted 130 > "$TMP/tree/src/util/planted.c"
if out=$(python3 "$CHECK" "$TMP/tree" 2>&1); then
  fail "size catches a 130-line function: the tree passed"
else
  echo "$out" | grep -q 'src/util/planted.c:.*planted is 130 lines' && pass "size catches a 130-line function" ||
    fail "size catches a 130-line function: $out"
fi
long planted 130 'What it does. Long: the reason.' > "$TMP/tree/src/util/planted.c"
python3 "$CHECK" "$TMP/tree" > /dev/null 2>&1 && pass "size: a long function with its reason passes" ||
  fail "size: a long function with a Long: reason is refused"
long planted 118 > "$TMP/tree/src/util/planted.c"
python3 "$CHECK" "$TMP/tree" > /dev/null 2>&1 && pass "size: a 118-line function passes" ||
  fail "size: a 118-line function is refused"
for i in $(seq 1 12); do long "f$i" 100; done > "$TMP/tree/src/util/planted.c"
if out=$(python3 "$CHECK" "$TMP/tree" 2>&1); then
  fail "size catches a file of 1,200+ lines: the tree passed"
else
  echo "$out" | grep -q 'src/util/planted.c: .* lines (at most 1200' && pass "size catches a file of 1,200+ lines" ||
    fail "size catches a file of 1,200+ lines: $out"
fi

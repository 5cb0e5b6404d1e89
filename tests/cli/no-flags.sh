#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The library never names a command-line option (issue 14): no string
# literal in src/ outside src/cli/, kernels/ or include/ spells one
# (tools/check-flags.py); library text names settings through VKCU_SETTING,
# which the CLI prints as its options. The checker is also shown a copy of
# the tree with a flag put back, and must catch it.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$ROOT/tools/check-flags.py"

bad=$(python3 "$CHECK" "$ROOT" 2>&1)
if [ -z "$bad" ]; then
  pass "no-flags: no library source names a command-line option ($(find "$ROOT/src" "$ROOT/kernels" "$ROOT/include" -name '*.[ch]' -not -path '*/src/cli/*' | wc -l) files)"
else
  fail "no-flags: $(echo "$bad" | head -3 | tr '\n' ';')"
fi

# The checker catches a flag put back, in a message and in a report line,
# and leaves comments and the CLI alone.
mkdir -p "$TMP/tree"
cp -r "$ROOT/src" "$ROOT/kernels" "$ROOT/include" "$TMP/tree/"
try_broken() { # name file line pattern
  local name=$1 file=$2 line=$3 pat=$4
  cp "$ROOT/$file" "$TMP/tree/$file"
  printf '%s\n' "$line" >> "$TMP/tree/$file"
  local o
  o=$(python3 "$CHECK" "$TMP/tree" 2>&1)
  if echo "$o" | grep -q -- "$pat"; then
    pass "no-flags catches $name"
  else
    fail "no-flags catches $name: $(echo "${o:-nothing reported}" | head -2 | tr '\n' ';')"
  fi
  cp "$ROOT/$file" "$TMP/tree/$file"
}
try_broken "a short flag in a message" src/core/outfile.c \
  'static const char *m_ = "%s: already exists (use -y to overwrite)";' 'src/core/outfile.c:.*the option -y'
try_broken "a long flag after concatenation" src/regress/manifest.c \
  'static const char *m_ = "FAIL: " "--update rewrites it";' 'src/regress/manifest.c:.*the option --update'
try_broken "a flag in a kernel header" kernels/frame.h 'static const char *m_ = "(pass --backend cpu)";' \
  'kernels/frame.h:.*the option --backend'
cp "$ROOT/src/core/outfile.c" "$TMP/tree/src/core/outfile.c"
printf '%s\n' '/* a comment may say "-y" */' >> "$TMP/tree/src/core/outfile.c"
printf '%s\n' 'static const char *m_ = "use -y";' >> "$TMP/tree/src/cli/cli.c"
o=$(python3 "$CHECK" "$TMP/tree" 2>&1)
[ -z "$o" ] && pass "no-flags leaves comments and src/cli/ alone" || fail "no-flags: false alarm: $(echo "$o" | head -2 | tr '\n' ';')"

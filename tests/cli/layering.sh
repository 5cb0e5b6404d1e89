#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The source tree's layering rules (tools/check-layers.py): kernels/ includes
# nothing from src/, nothing outside src/cli/ includes src/cli/, src/cli/
# includes only the public headers and itself (not util/, not FFmpeg), no
# layer reaches up, no include cycle. Each rule is also broken on purpose in a copy
# of the tree, so that the checker is seen to catch it.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$ROOT/tools/check-layers.py"

if out=$(python3 "$CHECK" "$ROOT" 2>&1); then
  pass "layering: the tree keeps its layers ($(find "$ROOT/src" "$ROOT/kernels" -name '*.[ch]' -o -name '*.cu*' | wc -l) files)"
else
  fail "layering: $(echo "$out" | head -3 | tr '\n' ';')"
fi

# broken copies: each must be refused, naming the offending file
mkdir -p "$TMP/tree"
cp -r "$ROOT/src" "$ROOT/kernels" "$TMP/tree/"
[ -d "$ROOT/include" ] && cp -r "$ROOT/include" "$TMP/tree/"
try_broken() { # name file line pattern
  local name=$1 file=$2 line=$3 pat=$4
  cp "$ROOT/$file" "$TMP/tree/$file"
  printf '%s\n' "$line" >> "$TMP/tree/$file"
  local o
  if o=$(python3 "$CHECK" "$TMP/tree" 2>&1); then
    fail "layering catches $name: the broken tree passed"
  elif echo "$o" | grep -q -- "$pat"; then
    pass "layering catches $name"
  else
    fail "layering catches $name: $(echo "$o" | head -2 | tr '\n' ';')"
  fi
  cp "$ROOT/$file" "$TMP/tree/$file"
}
try_broken "kernels including src/" kernels/frame.h '#include "util/log.h"' 'kernels/frame.h: kernels/ includes'
try_broken "a layer reaching up" src/util/number.c '#include "core/stage.h"' 'src/util/number.c (util) reaches up'
try_broken "src/cli/ included from below" src/regress/compare.c '#include "cli/cli.h"' 'nothing outside src/cli/'
try_broken "src/cli/ reaching past the public API" src/cli/cli_batch.c '#include "core/stage.h"' \
  'src/cli/cli_batch.c: includes src/core/stage.h (src/cli/ is a client of the public API'
try_broken "src/cli/ reaching past the public API (a header)" src/cli/cli.h '#include "batch/preset.h"' \
  'src/cli/cli.h: includes src/batch/preset.h'
try_broken "src/cli/ including util/" src/cli/opts.c '#include "util/number.h"' \
  'src/cli/opts.c: includes src/util/number.h (src/cli/ is a client of the public API'
try_broken "src/cli/ including FFmpeg" src/cli/cli_formats.c '#include <libavcodec/avcodec.h>' \
  'src/cli/cli_formats.c: includes <libavcodec/avcodec.h>'
# a cycle: number.h -> log.h (added here) -> number.h (added by try_broken)
cp "$ROOT/src/util/number.h" "$TMP/tree/src/util/number.h"; echo '#include "log.h"' >> "$TMP/tree/src/util/number.h"
try_broken "an include cycle" src/util/log.h '#include "number.h"' 'include cycle: src/util/'
cp "$ROOT/src/util/number.h" "$TMP/tree/src/util/number.h"
try_broken "an include that resolves to nothing" src/ops/chain.c '#include "nowhere.h"' 'resolves to no file'

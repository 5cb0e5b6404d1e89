#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The source tree's layering rules (tools/check-layers.py). Includes:
# kernels/ includes nothing from src/, nothing outside src/cli/ includes
# src/cli/, src/cli/ includes only the public headers and itself (not util/,
# not FFmpeg), no layer reaches up, no include cycle. Macros: none checks a
# call and jumps besides CU_CHECK and VK_CHECK (kernels/check.h and
# src/gpu/check.h). Symbols (nm on this build's objects): no object uses a
# symbol that only a higher layer defines, and no two files of one layer
# call each other (directly or round a loop). Each rule is also broken on
# purpose in a copy of the tree, so that the checker is seen to catch it.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$ROOT/tools/check-layers.py"
# This build's objects; its CUDA objects are build/'s when it has none of its
# own (the sanitizer builds reuse them: tests/sanitize.mk).
OBJ=${VKCU_BUILD:-$ROOT/build}/obj
CU_OBJ=$OBJ
ls "$OBJ"/kernels/*.cu.o > /dev/null 2>&1 || CU_OBJ=$ROOT/build/obj

if out=$(python3 "$CHECK" "$ROOT" --objects "$OBJ" --cu-objects "$CU_OBJ" 2>&1); then
  pass "layering: the tree keeps its layers, in its includes and its objects' symbols ($(echo "$out" | tail -1))"
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
  if o=$(python3 "$CHECK" "$TMP/tree" --no-symbols 2>&1); then
    fail "layering catches $name: the broken tree passed"
  elif echo "$o" | grep -q -- "$pat"; then
    pass "layering catches $name"
  else
    fail "layering catches $name: $(echo "$o" | head -2 | tr '\n' ';')"
  fi
  cp "$ROOT/$file" "$TMP/tree/$file"
}
try_broken "kernels including src/" kernels/frame.h '#include "util/log.h"' 'kernels/frame.h: kernels/ includes'
try_broken "a layer reaching up" src/util/number.c '#include "core/outfile.h"' 'src/util/number.c (util) reaches up'
try_broken "src/cli/ included from below" src/regress/compare.c '#include "cli/cli.h"' 'nothing outside src/cli/'
try_broken "src/cli/ reaching past the public API" src/cli/cli_batch.c '#include "core/outfile.h"' \
  'src/cli/cli_batch.c: includes src/core/outfile.h (src/cli/ is a client of the public API'
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
try_broken "a second spelling of a failed call" src/gpu/outring_vk.c \
  '#define PLANTED_TRY(call) do { VkResult r_ = (call); if (r_ != VK_SUCCESS) goto fail; } while (0)' \
  'src/gpu/outring_vk.c: macro PLANTED_TRY checks a call and jumps'

# The symbol rules, on a copy of the tree (sources with their times) and of
# this build's objects (links), with objects planted by the C compiler: each
# calls, by a declaration of its own, what a higher layer defines, which no
# include line shows.
S=$TMP/sym
mkdir -p "$S/tree" "$S/obj"
cp -rp "$ROOT/src" "$ROOT/kernels" "$ROOT/include" "$S/tree/"
(cd "$ROOT" && find src kernels -name '*.c' -o -name '*.cu') | while read -r f; do
  case $f in *.c) o=$OBJ/${f%.c}.o l=$S/obj/${f%.c}.o ;; *) o=$CU_OBJ/$f.o l=$S/obj/$f.o ;; esac
  mkdir -p "$(dirname "$l")" && ln -s "$o" "$l"
done
symcheck() { python3 "$CHECK" "$S/tree" --objects "$S/obj" 2>&1; }
if out=$(symcheck); then
  pass "layering: the copy of the tree and its objects pass as the tree does"
else
  fail "layering: the copy of the tree fails: $(echo "$out" | head -2 | tr '\n' ';')"
fi
# plant SOURCE C-TEXT: the source (its text does not matter to the symbol
# rules) and its object, compiled from C-TEXT
plant() {
  echo "/* SPDX-License-Identifier: GPL-2.0-or-later */" > "$S/tree/$1"
  printf '%s\n' "$2" > "$S/planted.c"
  case $1 in *.c) o=$S/obj/${1%.c}.o ;; *) o=$S/obj/$1.o ;; esac
  mkdir -p "$(dirname "$o")"
  ${CC:-cc} -c -o "$o" "$S/planted.c"
}
unplant() { rm -f "$S/tree/$1" "$S/obj/${1%.c}.o" "$S/obj/$1.o"; }
try_symbol() { # name pattern: the planted tree must be refused with a line matching pattern
  local o
  if o=$(symcheck); then
    fail "layering catches $1: the planted objects passed"
  elif echo "$o" | grep -q -- "$2"; then
    pass "layering catches $1"
  else
    fail "layering catches $1: $(echo "$o" | head -2 | tr '\n' ';')"
  fi
}
plant src/util/planted.c 'int vkcu_compare_run(const void *p, void *r); int planted(void); int planted(void) { return vkcu_compare_run(0, 0); }'
try_symbol "util/ calling a function of regress/" 'src/util/planted.c (util) uses vkcu_compare_run, defined above it in src/regress/'
unplant src/util/planted.c
# the tie the hash sink made while it lived in regress/: core/ picking a sink defined above it
plant src/regress/planted_sink.c 'int planted_sink_class[4] = {1, 2, 3, 4};'
plant src/core/planted_pick.c 'extern int planted_sink_class[4]; int *planted_pick(void); int *planted_pick(void) { return planted_sink_class; }'
try_symbol "core/ using a variable of regress/" \
  'src/core/planted_pick.c (core) uses planted_sink_class, defined above it in src/regress/planted_sink.c (regress)'
unplant src/core/planted_pick.c
unplant src/regress/planted_sink.c
plant src/regress/planted_down.c 'void vkcu_log(int level, const char *fmt, ...); void planted(void); void planted(void) { vkcu_log(0, "x"); }'
if out=$(symcheck); then
  pass "layering: a layer calling a lower one (regress/ into util/) is no violation"
else
  fail "layering: regress/ calling util/ is refused: $(echo "$out" | head -2 | tr '\n' ';')"
fi
unplant src/regress/planted_down.c
# a call loop between two files of one layer (what session, handoff and the
# download of src/gpu/ were, issue 34): each calls the other
plant src/util/planted_a.c 'int planted_b(void); int planted_a(void); int planted_a(void) { return planted_b(); }'
plant src/util/planted_b.c 'int planted_a(void); int planted_b(void); int planted_b(void) { return 1; } int planted_c(void); int planted_c(void) { return planted_a(); }'
try_symbol "a call loop between two files of util/" \
  'call loop in src/util/: src/util/planted_a.c <-> src/util/planted_b.c: src/util/planted_a.c -> src/util/planted_b.c (planted_b)'
unplant src/util/planted_b.c
plant src/util/planted_b.c 'int planted_b(void); int planted_b(void) { return 1; }'
if out=$(symcheck); then
  pass "layering: files of one layer calling one way are no loop"
else
  fail "layering: a one-way call is refused: $(echo "$out" | head -2 | tr '\n' ';')"
fi
unplant src/util/planted_a.c
unplant src/util/planted_b.c
plant kernels/planted.cu 'void vkcu_log(int level, const char *fmt, ...); void planted(void); void planted(void) { vkcu_log(0, "x"); }'
try_symbol "kernels/ calling into src/" 'kernels/planted.cu (kernels) uses vkcu_log, defined above it in src/util/'
unplant kernels/planted.cu
# an object whose source is gone (a file moved since that build) is not read
mkdir -p "$S/obj/src/util"
printf '%s\n' 'int vkcu_compare_run(const void *p, void *r); int gone(void); int gone(void) { return vkcu_compare_run(0, 0); }' > "$S/planted.c"
${CC:-cc} -c -o "$S/obj/src/util/gone.o" "$S/planted.c"
if out=$(symcheck); then
  pass "layering: an object without a source (another build's leftover) is not read"
else
  fail "layering: a leftover object without a source confused the check: $(echo "$out" | head -2 | tr '\n' ';')"
fi
rm -f "$S/obj/src/util/gone.o"
# a source newer than its object, and a source without one: build first
touch "$S/tree/src/util/number.c"
try_symbol "an object older than its source" 'src/util/number.c: its object .* is older than it (build first)'
cp -p "$ROOT/src/util/number.c" "$S/tree/src/util/number.c"
mv "$S/obj/src/util/number.o" "$S/number.o"
try_symbol "a source without an object" 'src/util/number.c: no object .* (build first'
mv "$S/number.o" "$S/obj/src/util/number.o"

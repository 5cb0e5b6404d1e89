#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Replays every fuzz target (tests/fuzz) over its regression inputs
# (tests/fuzz/regress/TARGET: what `make fuzz` once crashed on) and its seed
# corpus, with the replayers `make` builds beside vkcu (BUILD/fuzz/TARGET).
# Under `make test-asan` the replayers are the sanitizer build's.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${VKCU_BUILD:-$(dirname "$VKCU")}/fuzz
for src in "$root"/tests/fuzz/*.c; do
  t=$(basename "$src" .c)
  [ "$t" = replay ] && continue
  dirs=("$root/tests/fuzz/corpus/$t")
  [ -d "$root/tests/fuzz/regress/$t" ] && dirs+=("$root/tests/fuzz/regress/$t")
  want=$(find "${dirs[@]}" -maxdepth 1 -type f ! -name '.*' | wc -l)
  if [ ! -x "$bin/$t" ]; then
    fail "fuzz-regress $t: $bin/$t is missing (make builds it)"
    continue
  fi
  if [ "$want" -eq 0 ]; then
    fail "fuzz-regress $t: no seed corpus in tests/fuzz/corpus/$t"
    continue
  fi
  out=$("$bin/$t" "${dirs[@]}" 2> "$TMP/$t.err")
  rc=$?
  if [ "$rc" != 0 ]; then
    fail "fuzz-regress $t: exit $rc on $(grep '^replay ' "$TMP/$t.err" | tail -1 | cut -d' ' -f2-): $(grep -v '^replay ' "$TMP/$t.err" | head -2 | tr '\n' ' ' | cut -c1-200)"
  elif [ "$out" != "replayed $want inputs" ]; then
    fail "fuzz-regress $t: '$out', expected $want inputs"
  else
    pass "fuzz-regress $t ($want inputs)"
  fi
done

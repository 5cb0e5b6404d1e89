#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hashes and comparisons must repeat exactly on every run, damaged streams
# included (the regression verbs decode with one thread: docs/hash.md).
source "$(dirname "$0")/lib.sh"
in=$MEDIA/corrupt.h264
for i in 1 2 3 4 5; do
  "$VKCU" hash --backend cpu -q "$in" -o "$TMP/h$i" 2> /dev/null
done
n=$(cat "$TMP"/h[1-5] | md5sum | cut -c1-8; for i in 1 2 3 4 5; do md5sum < "$TMP/h$i"; done | sort -u | wc -l)
lines=$(grep -vc '^#' "$TMP/h1")
if [ "$(echo "$n" | tail -1)" = 1 ] && [ "$lines" -gt 0 ]; then
  pass "hash: a damaged stream hashes the same in 5 runs ($lines frames)"
else
  fail "hash: a damaged stream gave $(echo "$n" | tail -1) different hash lists in 5 runs"
fi
ok=0
for i in 1 2 3 4 5; do
  # -q: the verdict alone
  "$VKCU" compare --backend cpu -q "$in" "$in" > "$TMP/cmp" 2>&1 && grep -q '^IDENTICAL: [0-9]* frames$' "$TMP/cmp" && ok=$((ok + 1))
done
[ $ok = 5 ] && pass "compare: a damaged stream against itself is identical in 5 runs" ||
  fail "compare: a damaged stream against itself differed in $((5 - ok)) of 5 runs: $(tail -1 "$TMP/cmp")"

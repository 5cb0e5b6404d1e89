#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --ring-size (issue 14): one owner of its range (VKCU_RING_SIZE_MIN..MAX in
# vkcu.h), checked where it enters: every verb refuses a value outside 3..16
# with exit 2 and one line that names the option and the range, and writes
# nothing; the ends of the range are taken. (The library's own -EINVAL for
# ring_size is tests/unit/test_ring_size.c; the GPU side of 3 and 12 is
# tests/gpu.sh ring-size-3/-12.)
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
V=$VKCU
[ -s "$in" ] || { skip "ring-size: $in missing (make media)"; exit 0; }
msg() { printf -- "--ring-size: '%s' is not an integer in \\\\[3, 16\\\\]" "$1"; }
for v in 2 17 0 -4 x 3.5; do
  expect "--ring-size $v refused (transcode)" 2 "$(msg "$v")" -- "$V" --backend cpu "$in" -o "$TMP/o.mkv" --ring-size "$v"
  expect "--ring-size $v refused (hash)" 2 "$(msg "$v")" -- "$V" hash --backend cpu "$in" --ring-size "$v"
  expect "--ring-size $v refused (batch)" 2 "$(msg "$v")" -- "$V" batch "$MEDIA" "$TMP/batch" --dry-run --ring-size "$v"
  expect "--ring-size $v refused (compare)" 2 "$(msg "$v")" -- "$V" compare "$in" "$in" --ring-size "$v"
done
# One line on stderr, nothing else.
"$V" hash --backend cpu "$in" --ring-size 17 > "$TMP/out" 2> "$TMP/err"
[ "$(wc -l < "$TMP/err")" = 1 ] && [ ! -s "$TMP/out" ] && pass "--ring-size 17: one line on stderr, nothing on stdout" ||
  fail "--ring-size 17: stderr $(wc -l < "$TMP/err") lines, stdout $(wc -c < "$TMP/out") bytes"
[ ! -e "$TMP/o.mkv" ] && [ ! -e "$TMP/batch" ] && pass "no output after a refused --ring-size" || fail "output written: $(ls "$TMP")"
# The ends of the range are taken, and hash the same frames as the default.
"$V" hash --backend cpu "$in" > "$TMP/default" 2>/dev/null
for v in 3 16; do
  "$V" hash --backend cpu "$in" --ring-size "$v" > "$TMP/h$v" 2> "$TMP/err$v"
  rc=$?
  [ $rc = 0 ] && [ -s "$TMP/h$v" ] && cmp -s "$TMP/h$v" "$TMP/default" && pass "--ring-size $v taken (same hashes as the default)" ||
    fail "--ring-size $v: exit $rc, $(head -1 "$TMP/err$v")"
done

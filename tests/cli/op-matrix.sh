#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Which inputs and chains the CPU backend accepts (issue 11): every operator
# and key variant of tools/op-matrix.sh over 4:2:0/4:2:2/4:4:4, 10-bit,
# full-range yuvj (MJPEG, and H.264 as phones record it), gray, planar and
# packed RGB. The exit codes must equal tests/cli/op-matrix.expected; the
# full-range yuvj inputs must be accepted exactly where their yuv twins are
# (they were refused by denoise: "input format yuvj420p is not supported").
# tests/gpu.d/op-matrix.sh runs the same matrix on the GPU backend.
source "$(dirname "$0")/lib.sh"
export VKCU FFMPEG
exp=$(dirname "$0")/op-matrix.expected
bash "$(dirname "$0")/../../tools/op-matrix.sh" cpu "$TMP/m" > "$TMP/matrix.txt"
awk '{printf "%-14s %-38s %s\n", $1, $2, $3}' "$TMP/matrix.txt" > "$TMP/codes.txt"
n=$(wc -l < "$exp")
if cmp -s "$exp" "$TMP/codes.txt"; then
  pass "op-matrix: the CPU backend accepts and refuses the $n cases as expected ($(awk '$3 == 0' "$TMP/codes.txt" | wc -l) accepted)"
else
  fail "op-matrix: $(diff "$exp" "$TMP/codes.txt" | grep -c '^>') of $n cases differ: $(diff "$exp" "$TMP/codes.txt" | grep '^>' | head -3 | tr -s ' ' | tr '\n' ';')"
fi
# yuvj rows against their yuv twins: the same exit code for every chain.
codes_of() { awk -v f="$1" '$1 == f {print $2, $3}' "$TMP/codes.txt"; }
for s in 420 422 444; do
  twin=yuv${s}p.mkv
  if [ -n "$(codes_of yuvj${s}p.avi)" ] && [ "$(codes_of yuvj${s}p.avi)" = "$(codes_of $twin)" ]; then
    pass "op-matrix: yuvj${s}p (full range) is accepted by every operator exactly as yuv${s}p"
  else
    fail "op-matrix: yuvj${s}p differs from yuv${s}p: $(diff <(codes_of yuvj${s}p.avi) <(codes_of $twin) | head -2 | tr '\n' ' ')"
  fi
done
# Full range is kept: convert to limited range changes the picture, to full range does not.
h() { awk -v f="$1" -v c="$2" '$1 == f && $2 == c {print $4}' "$TMP/matrix.txt"; }
if [ "$(h yuvj420p.avi convert=range=full)" = "$(h yuvj420p.avi '(none)')" ] &&
  [ "$(h yuvj420p.avi convert=range=limited)" != "$(h yuvj420p.avi '(none)')" ] && [ "$(h yuvj420p.avi '(none)')" != - ]; then
  pass "op-matrix: yuvj420p frames carry full range (convert=range=full is the identity, range=limited is not)"
else
  fail "op-matrix: yuvj420p range: none $(h yuvj420p.avi '(none)'), full $(h yuvj420p.avi convert=range=full), limited $(h yuvj420p.avi convert=range=limited)"
fi

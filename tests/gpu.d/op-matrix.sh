#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Both backends accept exactly the same inputs and chains (issue 11): the
# operator matrix of tools/op-matrix.sh (every operator and key variant
# over 4:2:0/4:2:2/4:4:4, 10-bit, full-range yuvj from MJPEG and H.264,
# gray, planar and packed RGB) on --backend gpu equals the CPU backend's,
# line by line: the same exit code for every case, and for the accepted
# ones the same frame hashes. Run by tests/gpu.sh.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tool=$(dirname "$0")/../../tools/op-matrix.sh
bash "$tool" cpu "$out/m" > "$out/cpu.txt"
bash "$tool" gpu "$out/m" > "$out/gpu.txt"
n=$(wc -l < "$out/cpu.txt")
accepted=$(awk '$3 == 0' "$out/cpu.txt" | wc -l)
if [ "$n" -gt 100 ] && cmp -s <(awk '{print $1, $2, $3}' "$out/cpu.txt") <(awk '{print $1, $2, $3}' "$out/gpu.txt"); then
  echo "PASS op-matrix-gpu: the GPU backend accepts and refuses the same $n cases as the CPU backend ($accepted accepted)"
else
  echo "FAIL op-matrix-gpu: acceptance differs from the CPU backend: $(diff <(awk '{print $1, $2, $3}' "$out/cpu.txt") <(awk '{print $1, $2, $3}' "$out/gpu.txt") | grep '^[<>]' | head -4 | tr '\n' ' ')"
fi
if [ "$n" -gt 100 ] && cmp -s "$out/cpu.txt" "$out/gpu.txt"; then
  echo "PASS op-matrix-gpu-hashes: the $accepted accepted cases hash the same on both backends"
else
  echo "FAIL op-matrix-gpu-hashes: $(diff "$out/cpu.txt" "$out/gpu.txt" | grep -c '^>') case(s) differ: $(diff "$out/cpu.txt" "$out/gpu.txt" | grep '^>' | head -3 | tr '\n' ' ')"
fi

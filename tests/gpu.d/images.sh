#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Image outputs on the GPU backend (run by tests/gpu.sh; issue 38.9): a
# thumbnail and numbered sequences written with --backend gpu are the CPU
# backend's files byte for byte (the chain, with the convert the image
# encoder asks for, is bit-exact between the backends, and the PNG and JPEG
# encoders are deterministic), on the Vulkan -> CUDA path (H.264, HEVC
# 10-bit), and the GPU run says it ran on the GPU (--stats path).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() { # NAME CLIP PATTERN [vkcu args]
  local name=$1 clip=$2 pat=$3; shift 3
  local in=$MEDIA/$clip
  [ -s "$in" ] || { echo "FAIL images-gpu $name: $in missing (make media)"; return; }
  rm -rf "$out/cpu" "$out/gpu"
  mkdir -p "$out/cpu" "$out/gpu"
  timeout -s KILL 300 "$VKCU" --backend cpu "$in" -o "$out/cpu/$pat" "$@" 2> "$out/cpu.err" ||
    { echo "FAIL images-gpu $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" --backend gpu --stats "$in" -o "$out/gpu/$pat" "$@" 2> "$out/gpu.err" ||
    { echo "FAIL images-gpu $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(find "$out/cpu" -type f | wc -l)
  if [ "$path" = cpu ] || [ -z "$path" ]; then
    echo "FAIL images-gpu $name: did not run on the GPU (path '$path')"
  elif [ "$n" = 0 ] || ! diff -r "$out/cpu" "$out/gpu" > /dev/null; then
    echo "FAIL images-gpu $name: the GPU's $(find "$out/gpu" -type f | wc -l) files differ from the CPU's $n: $(diff -rq "$out/cpu" "$out/gpu" | head -1)"
  else
    echo "PASS images-gpu $name: $n files, the CPU backend's bytes ($path)"
  fi
}
check "png thumbnail" h264-aac.mp4 t.png --start 0.5 --frames 1
check "png sequence" h264-aac.mp4 'f%03d.png' --frames 12
check "jpg sequence" h264-aac.mp4 'f%03d.jpg' --frames 12
check "png sequence, HEVC 10-bit" hevc10.mkv 'f%03d.png' --frames 8
check "png sequence after denoise" h264-aac.mp4 'f%03d.png' --frames 8 --chain denoise=tnr:sigma=4

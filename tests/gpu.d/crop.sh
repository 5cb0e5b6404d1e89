#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exact cropping on the GPU backend (run by tests/gpu.sh): the cropped
# streams of tools/make-media.sh (left/top offsets, odd in crop units) hashed
# with --backend gpu equal the CPU backend and the ffmpeg CLI's framemd5,
# frame by frame (pts, size, hash). The 4:2:0 ones must take the Vulkan ->
# CUDA path, so the ring copy's crop rectangle is what is checked; the
# 4:4:4/4:2:2 H.264 ones take software decode + upload on an H200.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -v '^#' "$1" | awk -F', *' '{print $3, $5, $6}'; }
check() { # clip path-wanted (empty: either) [vkcu args]
  local clip=$1 want=$2; shift 2
  local in=$MEDIA/$clip name="crop-gpu $clip${*:+ $*}"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  "$FFMPEG" -v error -nostdin -i "$in" -f framemd5 - > "$out/ref" 2>/dev/null
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" "$@" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(cols "$out/ref" | wc -l)
  if [ -n "$want" ] && [ "$path" != "$want" ]; then
    echo "FAIL $name: took path '$path', expected '$want'"
  elif [ "$n" = 0 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/ref"); then
    echo "FAIL $name: GPU hashes differ from ffmpeg's framemd5 ($n frames): $(diff <(cols "$out/gpu") <(cols "$out/ref") | sed -n 2p)"
  elif ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL $name: GPU hashes differ from the CPU backend's"
  else
    echo "PASS $name: $n frames equal ffmpeg's framemd5 and the CPU backend ($path)"
  fi
}
check crop-h264.mkv vulkan-decode+cuda
check crop-h264.mkv vulkan-decode+cuda --chain copy
check crop-hevc.mkv vulkan-decode+cuda
check crop-hevc10.mkv vulkan-decode+cuda
check crop-hevc10.mkv vulkan-decode+cuda --chain copy
check crop-hevc-444.mkv ""
check crop-h264-444.mkv sw-decode+upload+cuda
check crop-h264-422.mkv sw-decode+upload+cuda --chain copy
# A container window (MP4 'clap', Matroska PixelCrop) on top of the codec's: the hardware frames'
# crop offsets grow, the ring copy starts there.
check crop-clap-h264.mp4 vulkan-decode+cuda
check crop-clap-hevc10.mp4 vulkan-decode+cuda --chain copy
check crop-clap-444.mp4 sw-decode+upload+cuda
check crop-pixelcrop-h264.mkv vulkan-decode+cuda

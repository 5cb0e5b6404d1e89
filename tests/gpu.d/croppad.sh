#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# crop and pad on the GPU backend (run by tests/gpu.sh): whole jobs with
# --backend gpu hash exactly as the CPU backend and as ffmpeg's crop/pad
# filters, frame by frame (pts, size, hash), on the Vulkan -> CUDA path
# (NV12 from H.264, P010 from 10-bit HEVC, and the crop offsets of
# SPS-cropped streams underneath) and on software decode + upload (4:2:2,
# 4:4:4); a GPU transcode writes the new size. The kernels' bytes over every
# layout and odd sizes: tests/unit/test_croppad_gpu.c.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -v '^#' "$1" | awk -F', *' '{print $3, $5, $6}'; }
check() { # clip path-wanted chain ffmpeg-filter
  local clip=$1 want=$2 chain=$3 vf=$4 in=$MEDIA/$1 name="croppad-gpu $1 $3"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  "$FFMPEG" -v error -nostdin -i "$in" -map 0:v:0 -vf "$vf" -f framemd5 - > "$out/ref" 2> /dev/null
  timeout -s KILL 300 "$VKCU" hash --backend cpu -q "$in" --chain "$chain" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" --chain "$chain" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(cols "$out/ref" | wc -l)
  if [ "$path" != "$want" ]; then
    echo "FAIL $name: took path '$path', expected '$want'"
  elif [ "$n" = 0 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/ref"); then
    echo "FAIL $name: GPU hashes differ from ffmpeg -vf $vf ($n frames): $(diff <(cols "$out/gpu") <(cols "$out/ref") | sed -n 2p)"
  elif ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL $name: GPU hashes differ from the CPU backend's"
  else
    echo "PASS $name: $n frames equal ffmpeg -vf $vf and the CPU backend ($path)"
  fi
}
check h264-aac.mp4 vulkan-decode+cuda crop=w=200:h=120:x=40:y=60 crop=200:120:40:60
check h264-aac.mp4 vulkan-decode+cuda crop=w=126:h=90 crop=126:90
check h264-aac.mp4 vulkan-decode+cuda pad=w=352:h=288:x=16:y=24:color=white pad=352:288:16:24:color=white
check h264-aac.mp4 vulkan-decode+cuda crop=w=300:h=200,pad=w=320:h=240:x=10:y=20:color=navy crop=300:200,pad=320:240:10:20:color=navy
check long.mp4 vulkan-decode+cuda pad=w=336:h=256:x=-1:y=-1:color=orange pad=336:256:-1:-1:color=orange
check hevc10.mkv vulkan-decode+cuda crop=w=128:h=96:x=2:y=4 crop=128:96:2:4
check hevc10.mkv vulkan-decode+cuda pad=w=400:h=300:x=20:y=30:color=red pad=400:300:20:30:color=red
check hdr10.mkv vulkan-decode+cuda pad=w=320:h=260:y=10:color=#80c040 pad=320:260:0:10:color=#80c040
check crop-hevc10.mkv vulkan-decode+cuda pad=w=222:h=190:x=-1:y=-1 pad=222:190:-1:-1
check crop-h264.mkv vulkan-decode+cuda crop=w=100:h=80:x=50:y=40 crop=100:80:50:40
check h264-422.mkv sw-decode+upload+cuda pad=w=330:h=251:x=4:y=7:color=navy pad=330:251:4:7:color=navy
check crop-h264-444.mkv sw-decode+upload+cuda crop=w=101:h=51:x=3:y=7 crop=101:51:3:7
check crop-h264-444.mkv sw-decode+upload+cuda crop=w=1:h=1:x=5:y=5 crop=1:1:5:5
check crop-h264-444.mkv sw-decode+upload+cuda pad=w=211:h=180:x=3:y=5:color=cyan pad=211:180:3:5:color=cyan

# A GPU transcode carries the new size into the file, the same pixels as the CPU (lossless FFV1).
if timeout -s KILL 300 "$VKCU" --backend gpu -q "$MEDIA/h264-aac.mp4" --chain crop=w=256:h=144:x=32:y=48 --encoder ffv1 \
  -o "$out/g.mkv" 2> "$out/err" &&
  timeout -s KILL 300 "$VKCU" --backend cpu -q "$MEDIA/h264-aac.mp4" --chain crop=w=256:h=144:x=32:y=48 --encoder ffv1 \
    -o "$out/c.mkv" 2>> "$out/err"; then
  "$FFMPEG" -v error -i "$out/g.mkv" -map 0:v -f framemd5 - 2> /dev/null | grep -v '^#' > "$out/g.md5"
  "$FFMPEG" -v error -i "$out/c.mkv" -map 0:v -f framemd5 - 2> /dev/null | grep -v '^#' > "$out/c.md5"
  s=$(awk -F', *' '{print $5}' "$out/g.md5" | sort -u)
  if [ "$s" = $((256 * 144 * 3 / 2)) ] && [ "$(wc -l < "$out/g.md5")" = 50 ] && cmp -s "$out/g.md5" "$out/c.md5"; then
    echo "PASS croppad-gpu transcode: 256x144 FFV1 file (50 frames of $s bytes), frames equal the CPU backend's"
  else
    echo "FAIL croppad-gpu transcode: frames of '$s' bytes (256x144 has $((256 * 144 * 3 / 2))), $(wc -l < "$out/g.md5") frames, or they differ from the CPU backend's"
  fi
else
  echo "FAIL croppad-gpu transcode: $(tail -1 "$out/err")"
fi

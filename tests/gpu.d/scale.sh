#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `scale` end to end on the GPU backend (run by tests/gpu.sh): Vulkan-decoded
# NV12 (H.264) and P010 (HEVC 10-bit) frames and software-decoded 4:2:2
# uploads, resized on the GPU, downloaded at the output size, hash frame by
# frame (size, pts, hash) exactly as the CPU backend: every filter, down and
# up, odd sizes down to 1x1, scale in longer chains, 4K -> 1080p and
# 1080p 10-bit -> 720p on the large clips. Then a GPU transcode writes the
# output size and SAR into the file.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -v '^#' "$1" | awk -F', *' '{print $3, $5, $6}'; }
check() { # clip path-wanted chain [vkcu args]
  local in=$1 want=$2 chain=$3; shift 3
  local name="scale-gpu $(basename "$in") $chain${*:+ $*}"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media; large clips: tools/gpu-env.sh)"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" --chain "$chain" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" --chain "$chain" "$@" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n dims
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(cols "$out/cpu" | wc -l)
  dims=$(sed -n 's/^#dimensions 0: //p' "$out/gpu")
  if [ "$path" != "$want" ]; then
    echo "FAIL $name: took path '$path', expected '$want'"
  elif [ "$dims" != "$(sed -n 's/^#dimensions 0: //p' "$out/cpu")" ]; then
    echo "FAIL $name: GPU hashes a $dims picture, the CPU $(sed -n 's/^#dimensions 0: //p' "$out/cpu")"
  elif [ "$n" = 0 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL $name: GPU hashes differ from the CPU backend's ($n frames): $(diff <(cols "$out/gpu") <(cols "$out/cpu") | sed -n 2p)"
  else
    echo "PASS $name: $n frames of $dims equal the CPU backend ($path)"
  fi
}
v=vulkan-decode+cuda
for f in bilinear bicubic lanczos spline36; do
  check "$MEDIA/h264-aac.mp4" $v "scale=w=200:h=-2:filter=$f"
  check "$MEDIA/hevc10.mkv" $v "scale=w=-2:h=100:filter=$f"
done
check "$MEDIA/h264-aac.mp4" $v "scale=w=643:h=481:filter=spline36"
check "$MEDIA/h264-aac.mp4" $v "scale=w=33:h=17:filter=bicubic"
check "$MEDIA/h264-aac.mp4" $v "scale=w=1:h=1"
check "$MEDIA/hevc10.mkv" $v "scale=w=7:h=5:filter=bilinear"
check "$MEDIA/hevc10.mkv" $v "scale=w=1:h=1:filter=lanczos"
check "$MEDIA/h264-422.mkv" sw-decode+upload+cuda "scale=w=100:h=-1:filter=lanczos"
check "$MEDIA/h264-aac.mp4" $v "scale=w=160:h=-2,denoise=tnr"
check "$MEDIA/hevc10.mkv" $v "copy,scale=w=400:h=-2,scale=w=99:h=51:filter=bilinear"
check "$MEDIA/h264-aac.mp4" $v "scale=w=96:h=-2,convert=format=yuv444p10"
check "$BIG/h264-2160p.mp4" $v "scale=w=1920:h=1080" --frames 30
check "$BIG/hevc10-1080p.mp4" $v "scale=w=1280:h=720:filter=spline36" --frames 30

# A GPU transcode: the encoder gets the output size and square pixels.
rm -f "$out/t.mkv"
if timeout -s KILL 300 "$VKCU" --backend gpu "$MEDIA/h264-aac.mp4" --chain scale=w=-2:h=120 -o "$out/t.mkv" 2> "$out/t.err"; then
  got=$("$FFMPEG" -hide_banner -nostdin -i "$out/t.mkv" 2>&1 | grep -o '[0-9]*x[0-9]* \[SAR [0-9:]*' | head -1)
  [ "$got" = "160x120 [SAR 1:1" ] && echo "PASS scale-gpu transcode: 160x120 SAR 1:1 in the file" ||
    echo "FAIL scale-gpu transcode: file has '$got', expected 160x120 SAR 1:1"
else
  echo "FAIL scale-gpu transcode: $(tail -1 "$out/t.err")"
fi

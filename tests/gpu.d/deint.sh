#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The deinterlace operator on the GPU backend (run by tests/gpu.sh): per-frame
# hashes, pts and durations equal the CPU backend's, frame by frame, in both
# modes. Inputs cover the layouts the interop ring carries: NV12 and P010
# from Vulkan decode (H.264 and HEVC 10-bit clips, deinterlaced whatever
# their flags), planar 4:2:0, 4:2:2 10-bit and 4:4:4 12-bit from software
# decode + upload (MPEG-2, ProRes, raw), odd sizes and 4-line planes. The
# interlaced clips are also checked against ffmpeg's bwdif.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -E '^#(tb|dimensions)' "$1"; grep -v '^#' "$1" | awk -F', *' '{print $3, $4, $5, $6}'; }
check() { # input chain [bwdif options: also compare with ffmpeg]
  local in=$1 chain=$2 bw=${3:-} name
  name="deint-gpu $(basename "$in") $chain"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu -q "$in" --chain "$chain" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" --chain "$chain" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(grep -vc '^#' "$out/cpu")
  if [ "$n" -lt 2 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL $name: GPU differs from the CPU backend ($n frames, $path): $(diff <(cols "$out/gpu") <(cols "$out/cpu") | grep '^[<>]' | head -2 | tr '\n' ' ')"
    return
  fi
  if [ -n "$bw" ]; then
    "$FFMPEG" -cpuflags 0 -v error -nostdin -threads 1 -i "$in" -vf "bwdif=$bw" -f framemd5 - > "$out/ref" 2>/dev/null
    if ! cmp -s <(cols "$out/gpu") <(cols "$out/ref"); then
      echo "FAIL $name: GPU differs from ffmpeg bwdif=$bw ($path)"
      return
    fi
  fi
  echo "PASS $name: $n frames equal the CPU backend${bw:+ and ffmpeg bwdif=$bw} ($path)"
}
for mode in frame field; do
  m=$([ $mode = frame ] && echo 0 || echo 1)
  check "$MEDIA/deint-h264-bff.mkv" "deinterlace=mode=$mode" "mode=$m"
  check "$MEDIA/deint-mpeg2.ts" "deinterlace=mode=$mode:parity=bff" "mode=$m:parity=bff"
  check "$MEDIA/deint-mpeg2.ts" "deinterlace=mode=$mode:deint=interlaced" "mode=$m:deint=1"
  check "$MEDIA/deint-prores10.mov" "deinterlace=mode=$mode" "mode=$m"
  check "$MEDIA/h264-aac.mp4" "deinterlace=mode=$mode"
  check "$MEDIA/hevc10.mkv" "deinterlace=mode=$mode:parity=bff"
  check "$MEDIA/h264-aac.mp4" "convert=format=p010,deinterlace=mode=$mode"
  check "$MEDIA/deint-h264-bff.mkv" "copy,deinterlace=mode=$mode" "mode=$m"
  check "$MEDIA/corpus/h264.mp4" "deinterlace=mode=$mode:deint=interlaced"
done
# Odd sizes and planes of 3 and 4 lines (raw y4m with interlaced flags).
for spec in "yuv420p 175x143 tff" "yuv420p10le 17x9 bff" "yuv422p 6x4 tff" "yuv444p12le 3x5 bff" "yuv444p 1x6 tff" \
  "yuv422p10le 9x3 bff"; do
  set -- $spec
  y4m=$out/$1-$2.y4m
  "$FFMPEG" -hide_banner -loglevel error -nostdin -threads 1 \
    -filter_complex "testsrc2=size=$2:rate=50,format=$1,tinterlace=mode=interleave_top,setfield=$3" -frames:v 5 \
    -strict -1 "$y4m" -y || { echo "FAIL deint-gpu $1 $2: cannot make the input"; continue; }
  check "$y4m" "deinterlace=mode=frame"
  check "$y4m" "deinterlace=mode=field"
done

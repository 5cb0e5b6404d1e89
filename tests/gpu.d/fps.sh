#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fps operator on the GPU backend (run by tests/gpu.sh): frame hashes,
# pts and durations with --backend gpu equal the CPU backend's and ffmpeg's
# fps filter (framemd5), on the Vulkan -> CUDA path (H.264, HEVC 10-bit), on
# software decode + upload (4:2:2) and on a VFR input. Repeated frames come
# from the operator's own device copy (the ring slot is reused), and one input
# can give many outputs: fps=2,fps=1000 gives 500 per input, more than the
# session's output queue (64) holds, which must wait for the reader rather
# than fail; --frames stops such a run early and cleanly.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -v '^#' "$1" | awk -F', *' '{print $2, $3, $4, $5, $6}'; }
check() { # clip chain [vkcu args]; ffmpeg's frames are compared without args and unless REF=no
  local clip=$1 chain=$2; shift 2
  local in=$MEDIA/$clip name="fps-gpu $clip --chain $chain${*:+ $*}"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  "$FFMPEG" -v error -nostdin -noautorotate -i "$in" -map 0:v -vf "$chain" -f framemd5 - > "$out/ref" 2>/dev/null
  timeout -s KILL 300 "$VKCU" hash --backend cpu --chain "$chain" "$in" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats --chain "$chain" "$in" "$@" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(cols "$out/gpu" | wc -l)
  if [ "$path" = cpu ] || [ -z "$path" ]; then
    echo "FAIL $name: did not run on the GPU (path '$path')"
  elif [ "$n" = 0 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL $name: GPU frames differ from the CPU backend's ($n frames): $(diff <(cols "$out/gpu") <(cols "$out/cpu") | sed -n 2p)"
  elif [ $# = 0 ] && [ "${REF:-}" != no ] && ! cmp -s <(cols "$out/gpu") <(cols "$out/ref"); then
    echo "FAIL $name: GPU frames differ from ffmpeg's -vf $chain: $(diff <(cols "$out/gpu") <(cols "$out/ref") | sed -n 2p)"
  else
    echo "PASS $name: $n frames equal the CPU backend's$([ $# = 0 ] && [ "${REF:-}" != no ] && echo " and ffmpeg's fps filter") ($path)"
  fi
}
check h264-aac.mp4 fps=30
check h264-aac.mp4 fps=24:round=down
check h264-aac.mp4 fps=60
check h264-aac.mp4 fps=7:round=up:eof_action=pass
check hevc10.mkv fps=30000/1001
check h264-422.mkv fps=50
check vfr.mkv fps=30
check vfr.mkv fps=12:round=down
# many outputs per input: the output queue fills and must drain
check h264-aac.mp4 fps=2,fps=1000
check h264-aac.mp4 fps=1000 --frames 100
# fps between other operators: its frames are the operator's own memory
check h264-aac.mp4 copy,fps=60,copy
REF=no check hevc10.mkv fps=50,convert=format=yuv444p
# Transcode on the GPU: the same frames (lossless) and rate as on the CPU.
in=$MEDIA/h264-aac.mp4
if "$VKCU" --backend gpu -q "$in" --chain fps=30 --encoder ffv1 -o "$out/g.mkv" 2> "$out/e" &&
  "$VKCU" --backend cpu -q "$in" --chain fps=30 --encoder ffv1 -o "$out/c.mkv" 2>> "$out/e"; then
  "$FFMPEG" -v error -i "$out/g.mkv" -map 0:v -f framemd5 - > "$out/g.md5"
  "$FFMPEG" -v error -i "$out/c.mkv" -map 0:v -f framemd5 - > "$out/c.md5"
  rate=$(sed -n 's/^#tb 0: //p' "$out/g.md5")
  if cmp -s <(cols "$out/g.md5") <(cols "$out/c.md5") && [ "$rate" = 1/30 ] && [ "$(cols "$out/g.md5" | wc -l)" -gt 50 ]; then
    echo "PASS fps-gpu transcode --chain fps=30: $(cols "$out/g.md5" | wc -l) frames equal the CPU backend's, time base $rate"
  else
    echo "FAIL fps-gpu transcode --chain fps=30: frames $(cmp -s <(cols "$out/g.md5") <(cols "$out/c.md5") && echo equal || echo differ), time base $rate"
  fi
else
  echo "FAIL fps-gpu transcode --chain fps=30: $(tail -1 "$out/e")"
fi

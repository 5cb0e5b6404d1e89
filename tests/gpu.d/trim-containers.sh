#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exact trims on the GPU backend (run by tests/gpu.sh), as tests/cli/
# trim-containers.sh checks them on the CPU: H.264 and HEVC in MPEG-TS (a
# seek there is a search that lands on any packet), a TS with one key
# frame, and MP4, trimmed by frame number at several places; each trim's
# GPU hashes must be the CPU backend's full decode's frames.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
src="testsrc2=size=640x360:rate=25"
ff -filter_complex "$src" -frames:v 60 -c:v libx264 -g 12 -bf 2 -pix_fmt yuv420p "$out/h264.ts" &&
  ff -i "$out/h264.ts" -c copy "$out/h264.mp4" &&
  ff -filter_complex "$src" -frames:v 40 -c:v libx264 -g 1000 -bf 2 -pix_fmt yuv420p "$out/onekey.ts" &&
  ff -filter_complex "$src" -frames:v 48 -c:v libx265 -x265-params log-level=error:keyint=12:min-keyint=12:bframes=2 \
    -pix_fmt yuv420p "$out/hevc.ts" || { echo "FAIL trim-gpu: could not make the clips"; exit 0; }
for f in h264.ts onekey.ts hevc.ts h264.mp4; do
  p=$out/$f
  timeout -s KILL 120 "$VKCU" hash --backend cpu "$p" 2> "$out/err" | grep -v '^#' | cut -d, -f6 | tr -d ' ' > "$out/all"
  n=$(wc -l < "$out/all")
  bad=()
  for s in 1 8 13 17 $((n - 4)); do
    want=$(sed -n "$((s + 1)),$((s + 3))p" "$out/all" | tr '\n' ' ')
    got=$(timeout -s KILL 120 "$VKCU" hash --backend gpu "$p" --start "${s}f" --duration 3f 2> "$out/err" | grep -v '^#' |
      cut -d, -f6 | tr -d ' ' | tr '\n' ' ')
    [ "$got" = "$want" ] || bad+=("${s}f: $(tail -1 "$out/err")")
  done
  if [ "$n" -gt 20 ] && [ ${#bad[@]} = 0 ]; then
    echo "PASS trim-gpu: $f ($n frames): GPU trims at 5 places are the CPU's full decode's frames"
  else
    echo "FAIL trim-gpu: $f ($n frames): ${bad[*]}"
  fi
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 39 on the GPU: where the time of one file decoded in pieces by
# Vulkan decoders goes. For each clip looped 5 times (3000 frames, as
# tools/bench-decode-parallel.sh makes them): `vkcu hash --algo blake3` with
# one decoder, in pieces (auto: a decoder per decode queue, each worker's
# decoders reusing one frames context), in pieces with a fresh frames
# context per segment (VKCU_DECODE_REUSE_FRAMES=0: FFmpeg creates, binds and
# prepares every image of a new context, the preparation a layout change on
# the compute queue behind the handoff copies), and in pieces with the
# device's compute queues raised (VKCU_VK_COMPUTE_QUEUES=8), and with 600 MiB
# for the frames that wait (so that the pools recycle their images), each once, with -v and
# --stats kept: the workers' decoding, waiting and opening times, the frames
# that waited, and fps. Writes $OUT/pieces-gpu.md and the logs.
#   PIECES_CLIPS="h264-1080p.mp4 hevc10-1080p.mp4" (default)
#   PIECES_LOOPS=5 (the clip's 600 frames looped so many times)
#   PIECES_RUNS="one pieces pieces-fresh pieces-600m one-noexport pieces-noexport" (default; also pieces-cq8)
# The -noexport runs decode into images whose memory cannot be exported
# (VKCU_LANE_EXPORT=0): FFmpeg otherwise allocates every decoded image as
# exportable memory.
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clips=${PIECES_CLIPS:-h264-1080p.mp4 hevc10-1080p.mp4}
# shellcheck disable=SC2086
make_big_clips $clips
md=$out/pieces-gpu.md
{
  echo "| clip (frames: 600 x PIECES_LOOPS) | run | fps | workers: decoding / waiting for room / open+close (s) | frames waited (peak) |"
  echo "| --- | --- | ---: | --- | --- |"
} > "$md"
for c in $clips; do
  loops=${PIECES_LOOPS:-5}
  frames=$((600 * loops))
  f=$BIG/${c%.mp4}-x$loops.mp4
  [ -s "$f" ] || "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop $((loops - 1)) -i "$BIG/$c" -c copy "$f"
  runs=${PIECES_RUNS:-one pieces pieces-fresh pieces-600m one-noexport pieces-noexport}
  for run in $runs; do
    case $run in
      one) env=(); opt=(--decode-parallel off) ;;
      pieces) env=(VKCU_GPU_PIECES_MIN_PIXELS=0); opt=(--decode-parallel auto) ;;
      pieces-fresh) env=(VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_DECODE_REUSE_FRAMES=0); opt=(--decode-parallel auto) ;;
      pieces-cq8) env=(VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_VK_COMPUTE_QUEUES=8); opt=(--decode-parallel auto) ;;
      pieces-600m) env=(VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_DECODE_PARALLEL_MIB=600); opt=(--decode-parallel auto) ;;
      one-noexport) env=(VKCU_LANE_EXPORT=0); opt=(--decode-parallel off) ;;
      pieces-noexport) env=(VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_LANE_EXPORT=0); opt=(--decode-parallel auto) ;;
    esac
    log=$out/${c%.mp4}-$run.log
    t0=$(date +%s.%N)
    env "${env[@]}" timeout -s KILL 120 "$VKCU" hash "$f" --algo blake3 --backend gpu --log-level verbose --stats \
      "${opt[@]}" > "$out/${c%.mp4}-$run.txt" 2> "$log"
    rc=$?
    t1=$(date +%s.%N)
    fps=$(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.1f", n / (b - a)}')
    w=$(sed -n 's/.*the workers spent \([0-9.]*\) s decoding, \([0-9.]*\) s waiting.*, \([0-9.]*\) s opening.*/\1 \/ \2 \/ \3/p' "$log")
    pk=$(sed -n 's/.*at most \([0-9]*\) frames (\([0-9.]*\) MiB.*/\1 (\2 MiB)/p' "$log")
    echo "| $c x$loops | $run (rc $rc) | $fps | ${w:--} | ${pk:--} |" >> "$md"
  done
  same=equal
  for run in $runs; do
    cmp -s "$out/${c%.mp4}-one.txt" "$out/${c%.mp4}-$run.txt" || same="DIFFER ($run)"
  done
  echo "| $c | the runs' hashes | $same | | |" >> "$md"
done
{
  echo
  echo "The workers' and the caller's times at -v:"
  for c in $clips; do
    for log in "$out/${c%.mp4}"-pieces*.log; do
      echo "- $(basename "$log" .log):"
      grep "parallel decode:" "$log" | sed 's/^.*parallel decode: /  - /'
    done
  done
} >> "$md"
cat "$md"

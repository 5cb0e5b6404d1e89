#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# FFmpeg 8.1's Vulkan compute decoders against its software decoders, on the
# GPU machine: for each corpus clip of a compute-decoded codec (FFV1, ProRes,
# DPX), how many frames FFmpeg's own CLI decodes on Vulkan (its own device)
# to the software decoder's bytes, with the PSNR between the two, and what
# vkcu's GPU backend gives when it takes every compute decoder
# (VKCU_COMPUTE_DECODE=all), on its own Vulkan device and on FFmpeg's. This
# is the evidence behind vkcu_vk_compute_decode_ok's rules (docs/transcode.md,
# decoders). One line per clip; each decode under a 30 s KILL timeout.
set -u
source "$(dirname "$0")/gpu-env.sh"
out=${OUT:-$(mktemp -d)}/compute-decode
mkdir -p "$out"
ffprobe=$(dirname "$FFMPEG")/ffprobe
frames() { grep -v '^#' "$1" 2>/dev/null | awk -F', *' '{print $NF}'; }
same() { # a b: frames of b equal to a's, "N/M"
  local n m
  m=$(frames "$1" | wc -l)
  n=$(paste -d' ' <(frames "$1") <(frames "$2") | awk '$1 == $2' | wc -l)
  echo "$n/$m"
}
for clip in "$MEDIA"/corpus/ffv1*.* "$MEDIA"/corpus/prores*.* "$MEDIA"/corpus/dpx*.*; do
  [ -f "$clip" ] || continue
  c=$(basename "$clip")
  timeout -s KILL 15 "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$clip" -map 0:v:0 -f framemd5 "$out/$c.sw" 2> /dev/null
  t0=$(date +%s.%N)
  timeout -s KILL 15 "$FFMPEG" -hide_banner -loglevel error -nostdin -hwaccel vulkan -i "$clip" -map 0:v:0 -f framemd5 \
    "$out/$c.ffvk" 2> "$out/$c.ffvk.err"
  rc=$? t1=$(date +%s.%N)
  psnr=$(timeout -s KILL 15 "$FFMPEG" -hide_banner -nostdin -hwaccel vulkan -i "$clip" -i "$clip" \
    -filter_complex '[0:v][1:v]psnr' -f null - 2>&1 | sed -n 's/.*PSNR .* average:\([^ ]*\).*/\1/p' | tail -1)
  VKCU_COMPUTE_DECODE=all timeout -s KILL 30 "$VKCU" hash "$clip" --backend gpu --stats --log-level debug \
    --stall-timeout 8 -o "$out/$c.vk" -y 2> "$out/$c.vk.err"
  vrc=$?
  VKCU_COMPUTE_DECODE=all VKCU_VULKAN_DEVICE=ffmpeg timeout -s KILL 30 "$VKCU" hash "$clip" --backend gpu --stats \
    --stall-timeout 8 -o "$out/$c.vkff" -y 2> "$out/$c.vkff.err"
  frc=$?
  "$VKCU" hash "$clip" --backend cpu -o "$out/$c.cpu" -y 2> /dev/null
  fmt=$("$ffprobe" -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 "$clip" 2>/dev/null)
  echo "compute-decode $c ($fmt): ffmpeg -hwaccel vulkan rc=$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')s" \
    "$(same "$out/$c.sw" "$out/$c.ffvk") frames = software (PSNR ${psnr:-n/a}) $(tail -1 "$out/$c.ffvk.err" | cut -c1-80);" \
    "vkcu gpu rc=$vrc $(same "$out/$c.cpu" "$out/$c.vk") = cpu, $(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/$c.vk.err" | head -1)" \
    "$( [ $vrc != 0 ] && tail -1 "$out/$c.vk.err" | cut -c1-100);" \
    "vkcu gpu on FFmpeg's device rc=$frc $(same "$out/$c.cpu" "$out/$c.vkff") = cpu $( [ $frc != 0 ] && tail -1 "$out/$c.vkff.err" | cut -c1-100)"
done

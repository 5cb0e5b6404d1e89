#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 without vkcu: prof_encoders_gpu (tests/bench/) runs N contexts of
# prores_ks_vulkan on FFmpeg's own device, each with its own thread, device
# context, frames context and every Nth frame (uploaded by FFmpeg), on
# compute queues of their own or all on queue 0, or on FFmpeg's device as it
# is (execution context i on queue i) with a deeper async_depth. Each run's
# packets against one context's (ProRes is deterministic). Wrong packets
# with own queues here mean the race is FFmpeg's or the driver's, with no
# vkcu code in the process; none where vkcu's instances are wrong
# (tools/prof/prores-queues-gpu.sh) points back at vkcu.
# Writes $OUT/encoders-ffmpeg.md.
#   ENC_CLIP=h264-1080p ENC_FRAMES=300 ENC_RUNS="own-4 own-4 shared-4 ffmpeg-1-d4 ..."
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clip=${ENC_CLIP:-h264-1080p}
frames=${ENC_FRAMES:-300}
make_big_clips "$clip.mp4"
pe=$TESTBIN/prof_encoders_gpu
md=$out/encoders-ffmpeg.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| run | contexts on queues | fps | packets differing (first) |" > "$md"
echo "| --- | --- | ---: | --- |" >> "$md"
timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n 1 > "$tmp/ref" 2> "$out/ref.err"
rc=$?
echo "| one context | $(grep -o 'on compute queues.*' "$out/ref.err" | sed 's/^on compute queues //; s/: [0-9.]* fps//') | $(grep -o '[0-9.]* fps' "$out/ref.err") | (the reference; exit $rc) |" >> "$md"
i=0
for run in ${ENC_RUNS:-own-4 own-4 own-4 shared-4 ffmpeg-1-d4 ffmpeg-1-d4 ffmpeg-2-d4 own-8}; do
  i=$((i + 1))
  IFS=- read -r q n d <<< "$run"
  depth=${d#d}
  timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n "$n" -q "$q" -d "${depth:-1}" > "$tmp/$i" 2> "$out/$run.$i.err"
  rc=$?
  wrong=$(paste -d' ' "$tmp/ref" "$tmp/$i" | awk '$3 != $6 {n++; if (n <= 8) l = l (l ? " " : "") $1} END {printf "%d (%s)", n, l}')
  echo "| $run | $(grep -o 'on compute queues.*' "$out/$run.$i.err" | sed 's/^on compute queues //; s/: [0-9.]* fps//') | $(grep -o '[0-9.]* fps' "$out/$run.$i.err") | $wrong$([ $rc = 0 ] || echo "; exit $rc: $(tail -1 "$out/$run.$i.err")") |" >> "$md"
done
cat "$md"

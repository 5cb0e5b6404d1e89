#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 without vkcu: does FFmpeg's ffv1_vulkan stay lossless when one
# encoder keeps several frames in flight? With async_depth N it has N
# execution contexts, context i on queue i % (the family's queues) of
# FFmpeg's own Vulkan device (libavutil/vulkan.c, ff_vk_exec_pool_init), so
# up to N frames are encoded side by side on as many queues: the FFmpeg-only
# counterpart of vkcu's instances on queues of their own (docs/
# performance.md, "Issue 36, step 4"). The 1080p clip is decoded on the CPU,
# uploaded by FFmpeg (hwupload) and encoded at level 4; each file decodes,
# frame by frame, to the source's frames or it does not (FFV1 is lossless).
# Writes $OUT/ffmpeg-ffv1-async.md.
#   ASYNC_DEPTHS="1 3 8" ASYNC_REPEAT=2 ASYNC_CLIP=h264-1080p ASYNC_FRAMES=600
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clip=${ASYNC_CLIP:-h264-1080p}
frames=${ASYNC_FRAMES:-600}
make_big_clips "$clip.mp4"
md=$out/ffmpeg-ffv1-async.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ff=("$FFMPEG" -hide_banner -loglevel error -nostdin)
md5s() { "${ff[@]}" -i "$1" -frames:v "$frames" -vf format=yuv420p -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}'; }
md5s "$BIG/$clip.mp4" > "$tmp/src.md5"
echo "| async_depth | run | fps | frames | frames not the source's (first) |" > "$md"
echo "| ---: | ---: | ---: | ---: | --- |" >> "$md"
for d in ${ASYNC_DEPTHS:-1 3 8}; do
  for r in $(seq "${ASYNC_REPEAT:-2}"); do
    f=$tmp/d$d-$r.mkv
    t0=$(date +%s.%N)
    timeout -s KILL 200 "${ff[@]}" -y -init_hw_device vulkan=vk:0 -filter_hw_device vk -i "$BIG/$clip.mp4" \
      -frames:v "$frames" -vf format=yuv420p,hwupload -c:v ffv1_vulkan -level 4 -strict experimental -g 1 \
      -async_depth "$d" "$f" 2> "$out/ffv1-async-d$d-$r.err"
    rc=$?
    t1=$(date +%s.%N)
    fps=$(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.1f", n / (b - a)}')
    [ "$rc" = 0 ] || fps="rc $rc"
    md5s "$f" > "$tmp/d$d-$r.md5"
    n=$(wc -l < "$tmp/d$d-$r.md5")
    wrong=$(paste -d' ' "$tmp/src.md5" "$tmp/d$d-$r.md5" |
      awk '$1 != $2 {n++; if (n <= 8) l = l (l ? " " : "") NR - 1} END {printf "%d (%s)", n, l}')
    echo "| $d | $r | $fps | $n | $wrong |" >> "$md"
  done
done
cat "$md"

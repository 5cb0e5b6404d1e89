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
# prores_ks_vulkan (4:2:2 10-bit) has the same async_depth option (which
# in FFmpeg 8.1 changes nothing: one execution context whatever it says,
# so its encoders all submit on compute queue 0): its packets are deterministic, so each run's packets are compared with the
# first async_depth 1 run's. prores2 is two prores_ks_vulkan encoders in one
# ffmpeg (one device, the uploaded frames split to both), each at the
# async_depth, each file compared with that reference: two encoder contexts
# on one queue (list prores, with depth 1, before it).
# Writes $OUT/ffmpeg-ffv1-async.md.
#   ASYNC_CODECS="ffv1 prores" ASYNC_DEPTHS="1 3 8" ASYNC_REPEAT=2
#   ASYNC_CLIP=h264-1080p ASYNC_FRAMES=600
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
pkts() { "${ff[@]}" -i "$1" -map 0:v -c copy -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}'; }
# differ WANT GOT: how many lines differ, and the first eight (frame numbers)
differ() { paste -d' ' "$1" "$2" | awk '$1 != $2 {n++; if (n <= 8) l = l (l ? " " : "") NR - 1} END {printf "%d (%s)", n, l}'; }
echo "| encoder | async_depth | run | fps | frames | frames wrong (first) |" > "$md"
echo "| --- | ---: | ---: | ---: | ---: | --- |" >> "$md"
for codec in ${ASYNC_CODECS:-ffv1 prores}; do
  case $codec in
    ffv1) enc=(-vf format=yuv420p,hwupload -c:v ffv1_vulkan -level 4 -strict experimental -g 1) ;;
    prores) enc=(-vf format=yuv422p10le,hwupload -c:v prores_ks_vulkan) ;;
    prores2) enc=(-filter_complex "[0:v]format=yuv422p10le,hwupload,split=2[a][b]" -map "[a]" -c:v prores_ks_vulkan) ;;
    *) echo "unknown codec $codec" >&2; exit 2 ;;
  esac
  ref=
  for d in ${ASYNC_DEPTHS:-1 3 8}; do
    for r in $(seq "${ASYNC_REPEAT:-2}"); do
      f=$tmp/$codec-d$d-$r.mkv
      t0=$(date +%s.%N)
      second=()
      [ "$codec" = prores2 ] && second=(-map "[b]" -frames:v "$frames" -c:v prores_ks_vulkan -async_depth "$d" "$f.b.mkv")
      timeout -s KILL 200 "${ff[@]}" -y -init_hw_device vulkan=vk:0 -filter_hw_device vk -i "$BIG/$clip.mp4" \
        -frames:v "$frames" "${enc[@]}" -async_depth "$d" "$f" "${second[@]}" 2> "$out/$codec-async-d$d-$r.err"
      rc=$?
      t1=$(date +%s.%N)
      fps=$(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.1f", n / (b - a)}')
      [ "$rc" = 0 ] || fps="rc $rc"
      if [ "$codec" = ffv1 ]; then
        md5s "$f" > "$tmp/$codec-d$d-$r.md5"
        want=$tmp/src.md5
      else
        pkts "$f" > "$tmp/$codec-d$d-$r.md5"
        [ -n "$ref" ] || [ "$codec" = prores2 ] || ref=$tmp/$codec-d$d-$r.md5
        want=${ref:-$tmp/prores-d1-1.md5}
      fi
      n=$(wc -l < "$tmp/$codec-d$d-$r.md5")
      wrong=$(differ "$want" "$tmp/$codec-d$d-$r.md5")
      if [ "$codec" = prores2 ]; then
        pkts "$f.b.mkv" > "$tmp/$codec-d$d-$r.b.md5"
        wrong="$wrong; second: $(differ "$want" "$tmp/$codec-d$d-$r.b.md5")"
      fi
      echo "| $codec | $d | $r | $fps | $n | $wrong |" >> "$md"
    done
  done
done
cat "$md"

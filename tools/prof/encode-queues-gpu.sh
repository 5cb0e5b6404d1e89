#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36: the compute encoders' instances, all on one compute queue (the
# default) against each on a queue of its own (VKCU_ENCODE_INSTANCE_QUEUES=all,
# a measurement: not always exact), 600 frames of the 1080p and 4K clips, chain
# denoise=tnr,convert; one run each, in one call. ProRes: the files must be
# the same bytes for every run; FFV1 (not byte-deterministic): the decoded
# frames (framemd5) of every run the same. Writes $OUT/encode-queues.md.
#   QUEUE_CLIPS="h264-1080p h264-2160p" QUEUE_RUNS="1 4 4:own 8:own"
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clips=${QUEUE_CLIPS:-h264-1080p h264-2160p}
# shellcheck disable=SC2086
make_big_clips $(for c in $clips; do echo "$c.mp4"; done)
md=$out/encode-queues.md
echo "| clip | encoder | instances | queues | fps | encoders busy (of N x wall) | same output as N=1 |" > "$md"
echo "| --- | --- | ---: | --- | ---: | --- | --- |" >> "$md"
tmp=$(mktemp -d)
for c in $clips; do
  for row in "ffv1_vulkan:yuv420p:--encoder-opt level=4" "prores_ks_vulkan:yuv422p10:"; do
    enc=${row%%:*} rest=${row#*:} fmt=${rest%%:*} extra=${rest#*:}
    ext=mkv
    [ "$enc" = prores_ks_vulkan ] && ext=mov
    ref=
    for run in ${QUEUE_RUNS:-1 4 4:own 8:own}; do
      n=${run%%:*} env=()
      [ "$run" != "${run#*:own}" ] && env=(VKCU_ENCODE_INSTANCE_QUEUES=all)
      f=$tmp/$c-$enc-${run/:/-}.$ext
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      env "${env[@]}" timeout -s KILL 150 "$VKCU" "$BIG/$c.mp4" -o "$f" -y --stats --log-level verbose --backend gpu \
        --chain "denoise=tnr,convert=format=$fmt" --frames 600 --encoder "$enc" $extra --encode-workers "$n" \
        > /dev/null 2> "$out/$c-$enc-${run/:/-}.log"
      rc=$?
      t1=$(date +%s.%N)
      fps=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", 600 / (b - a)}')
      [ "$rc" = 0 ] || fps="rc $rc"
      queues=$(grep -o 'on compute queues [0-9 ]*' "$out/$c-$enc-${run/:/-}.log" | head -1 | sed 's/on compute queues //')
      busy=$(grep -o 'encoders at once[^;]*' "$out/$c-$enc-${run/:/-}.log" | head -1)
      if [ "$enc" = prores_ks_vulkan ]; then
        sum=$(md5sum < "$f" | cut -c1-32)
      else
        sum=$("$FFMPEG" -hide_banner -loglevel error -i "$f" -f framemd5 - 2> /dev/null | grep -v '^#' | md5sum | cut -c1-32)
      fi
      same=first
      if [ -n "$ref" ]; then
        [ "$sum" = "$ref" ] && same=yes || same=NO
      else
        ref=$sum
      fi
      echo "| $c | $enc | $n | ${queues:-0} | $fps | ${busy:--} | $same |" >> "$md"
      rm -f "$f"
    done
  done
done
rm -rf "$tmp"
cat "$md"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36: ffv1_vulkan with one instance against four (--encode-workers), 600 frames of the 1080p
# and 4K clips, each twice; whether the files are the same bytes.
source "$(dirname "$0")/../gpu-env.sh"
make_big_clips h264-1080p.mp4 h264-2160p.mp4
for c in h264-1080p h264-2160p; do
  for n in 1 4 1 4; do
    t0=$(date +%s.%N)
    timeout -s KILL 120 $VKCU $BIG/$c.mp4 -o /tmp/f-$n.mkv -y -q --stats --backend gpu --chain 'denoise=tnr,convert=format=yuv420p' --frames 600 --encoder ffv1_vulkan --encoder-opt level=4 --encode-workers $n 2> /tmp/f.log
    rc=$?; t1=$(date +%s.%N)
    echo "$c N=$n rc=$rc fps=$(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.1f", 600/(b-a)}') $(grep -o 'encoders at once.*' /tmp/f.log) $(grep -o 'alone it would run at [0-9.]* fps' /tmp/f.log)"
  done
  cmp /tmp/f-1.mkv /tmp/f-4.mkv && echo "$c: N=4 bytes = N=1 bytes"
done

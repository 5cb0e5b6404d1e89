#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 37, step 1, in one GPU call: where the threads of one process wait
# while it decodes 7 (and 14) 1080p streams (bench_multistream, copy chain),
# measured by vkcu-prof (tools/prof/vkcu-prof.c) at VKCU_PROF_HZ (default
# 200), next to the same run without the profiler (what it costs). Writes
# $OUT/prof-STREAMS-CLIP.txt reports (name them with tools/prof/symbolize.py
# and the unstripped build the bundle came from) and $OUT/prof-summary.txt.
# Usage (GPU machine): timeout -s KILL 300 bash tools/prof/profile-multistream.sh
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
streams=${PROF_STREAMS:-7 14}
clips=${PROF_CLIPS:-h264-1080p}
make_big_clips $(for c in $clips; do echo "$c.mp4"; done)
prof=$(dirname "$VKCU")/../lib/libvkcu-prof.so
[ -f "$prof" ] || prof=$root/build/libvkcu-prof.so
export XDG_RUNTIME_DIR=$(mktemp -d) # this run's queue claims only
sum=$out/prof-summary.txt
: > "$sum"
for clip in $clips; do
  for n in $streams; do
    loops=$(( 14 / n )); [ "$loops" -ge 1 ] || loops=1
    timeout -s KILL 90 "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" "$n" copy "$loops" 4 > "$out/plain-$n-$clip.log" 2>&1
    echo "plain $clip x$n: $(grep -m1 -i 'fps' "$out/plain-$n-$clip.log")" | tee -a "$sum"
    # The preload inside timeout: the report is bench_multistream's, not timeout's.
    timeout -s KILL 90 env LD_PRELOAD="$prof" VKCU_PROF_OUT="$out/prof-$n-$clip.txt" "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" "$n" copy "$loops" 4 > "$out/prof-$n-$clip.log" 2>&1
    echo "profiled $clip x$n: $(grep -m1 -i 'fps' "$out/prof-$n-$clip.log"); $(grep -c . "$out/prof-$n-$clip.txt" 2> /dev/null) rows" | tee -a "$sum"
  done
done
rm -rf "$XDG_RUNTIME_DIR"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35: where `vkcu compare --backend gpu` spends its time, in one GPU
# call. For each clip (make_big_clips) against its denoise=tnr + x264
# transcode (as tools/bench-compare.sh makes it): the compare's wall time
# and --stats, then the same under vkcu-prof (tools/prof/vkcu-prof.c) at
# VKCU_PROF_HZ (default 200), whose report says where each thread (the two
# sources' decoders and hand-off threads, compare's own) sits. Writes
# $OUT/compare-CLIP.txt (the plain run) and $OUT/prof-compare-CLIP.txt (name
# the addresses with tools/prof/symbolize.py and the unstripped build the
# bundle came from), and $OUT/prof-compare-summary.txt.
# Usage (GPU machine): timeout -s KILL 400 bash tools/prof/profile-compare.sh
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
frames=${PROF_FRAMES:-600}
clips=${PROF_CLIPS:-h264-1080p h264-2160p}
make_big_clips $(for c in $clips; do echo "$c.mp4"; done)
prof=$(dirname "$VKCU")/../lib/libvkcu-prof.so
[ -f "$prof" ] || prof=$root/build/libvkcu-prof.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sum=$out/prof-compare-summary.txt
: > "$sum"
now() { date +%s.%N; }
for clip in $clips; do
  a=$BIG/$clip.mp4 b=$BIG/tnr-$clip.mp4
  [ -s "$b" ] || timeout -s KILL 200 "$VKCU" "$a" -o "$b" --chain 'denoise=tnr:sigma=4' --encoder libx264 \
    --preset ultrafast --frames "$frames" -y 2> "$out/tnr-$clip.err" || { echo "$clip: transcode failed" | tee -a "$sum"; continue; }
  t0=$(now)
  timeout -s KILL 120 "$VKCU" compare --backend gpu --stats "$a" "$b" --frames "$frames" --min-psnr 1 > "$out/compare-$clip.txt" 2>&1
  rc=$? t1=$(now)
  echo "plain $clip: rc=$rc $(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.2f s, %.1f pairs/s", b - a, n / (b - a)}') $(grep -m1 'pairs=' "$out/compare-$clip.txt")" | tee -a "$sum"
  t0=$(now)
  # The preload inside timeout: the report is vkcu's, not timeout's.
  timeout -s KILL 120 env LD_PRELOAD="$prof" VKCU_PROF_OUT="$out/prof-compare-$clip.txt" "$VKCU" compare --backend gpu "$a" "$b" --frames "$frames" --min-psnr 1 > "$out/prof-compare-$clip.log" 2>&1
  rc=$? t1=$(now)
  echo "profiled $clip: rc=$rc $(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.2f s, %.1f pairs/s", b - a, n / (b - a)}'); $(grep -c . "$out/prof-compare-$clip.txt" 2> /dev/null) rows" | tee -a "$sum"
  # The same two inputs read at once by two readers on the GPU (vkcu.open,
  # frames left in device memory and dropped): the path of compare's frames
  # (decode, device pool, hand-off) without its metrics.
  lib=$(dirname "$VKCU")/../lib/libvkcu.so; [ -f "$lib" ] || lib=$root/build/libvkcu.so
  for paths in "$a" "$a $b"; do
  # shellcheck disable=SC2086
  VKCU_LIBRARY=$lib PYTHONPATH=$root/python timeout -s KILL 120 python3 - "$frames" $paths > "$out/readers-$clip.txt" 2>&1 <<'PY'
import sys, threading, time
import vkcu
frames, paths = int(sys.argv[1]), sys.argv[2:]
counts = {}
def run(p):
    n = 0
    with vkcu.open(p, backend="gpu", frames=frames) as r:
        for f in r:
            n += 1
            del f
    counts[p] = n
t0 = time.perf_counter()
ts = [threading.Thread(target=run, args=(p,)) for p in paths]
for t in ts: t.start()
for t in ts: t.join()
dt = time.perf_counter() - t0
print(f"{len(paths)} reader(s): {sorted(counts.values())} frames in {dt:.2f} s, {min(counts.values()) / dt:.1f} frames/s each")
PY
  echo "readers $clip: rc=$? $(tail -1 "$out/readers-$clip.txt")" | tee -a "$sum"
  done
  # One stream decoded with its frames dropped on the GPU (null sink): the decode's own pace.
  t0=$(now)
  timeout -s KILL 60 "$VKCU" "$a" --null --chain copy --backend gpu --frames "$frames" -q 2> "$out/null-$clip.err"
  rc=$? t1=$(now)
  echo "null sink $clip: rc=$rc $(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.2f s, %.1f frames/s", b - a, n / (b - a)}')" | tee -a "$sum"
done
# Beside them, per clip: the frames hashed on the GPU (BLAKE3 digests: the
# planar kernel runs, 32 bytes a frame leave) and one compare under -v
# --stats (the sources' rings, pools and stalls).
for clip in $clips; do
  a=$BIG/$clip.mp4 b=$BIG/tnr-$clip.mp4
  t0=$(now)
  timeout -s KILL 60 "$VKCU" hash --backend gpu --algo blake3 "$a" --frames "$frames" -o "$out/hash-$clip.txt" 2> "$out/hash-$clip.err"
  rc=$? t1=$(now)
  echo "hash blake3 $clip: rc=$rc $(awk -v a="$t0" -v b="$t1" -v n="$frames" 'BEGIN {printf "%.2f s, %.1f frames/s", b - a, n / (b - a)}')" | tee -a "$sum"
  [ -s "$b" ] && timeout -s KILL 120 "$VKCU" compare --backend gpu -v --stats "$a" "$b" --frames "$frames" --min-psnr 1 > "$out/compare-v-$clip.txt" 2>&1
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 39 on the GPU: a file in pieces on Vulkan decoders under a small
# budget for the frames that wait (VKCU_DECODE_PARALLEL_MIB, default 600),
# where the pools recycle their images: are the hashes one decoder's, with
# each worker's decoders reusing one frames context and without
# (VKCU_DECODE_REUSE_FRAMES=0)? Each run PIECES_REPEAT times (default 2);
# prints the frames that differ from one decoder's. Writes
# $OUT/pieces-budget.md and the logs.
#   PIECES_CLIPS="hevc10-1080p.mp4 h264-1080p.mp4" (default), PIECES_LOOPS=5
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clips=${PIECES_CLIPS:-hevc10-1080p.mp4 h264-1080p.mp4}
# shellcheck disable=SC2086
make_big_clips $clips
md=$out/pieces-budget.md
mib=${VKCU_DECODE_PARALLEL_MIB:-600}
echo "| clip | run (budget $mib MiB) | rc | fps | frames differing from one decoder's |" > "$md"
echo "| --- | --- | ---: | ---: | --- |" >> "$md"
for c in $clips; do
  loops=${PIECES_LOOPS:-5}
  f=$BIG/${c%.mp4}-x$loops.mp4
  [ -s "$f" ] || "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop $((loops - 1)) -i "$BIG/$c" -c copy "$f"
  timeout -s KILL 120 "$VKCU" hash "$f" --algo blake3 --backend gpu --decode-parallel off > "$out/${c%.mp4}-one.txt" 2> /dev/null
  for run in reuse fresh; do
    for i in $(seq "${PIECES_REPEAT:-2}"); do
      env=(VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_DECODE_PARALLEL_MIB="$mib")
      [ "$run" = fresh ] && env+=(VKCU_DECODE_REUSE_FRAMES=0)
      t0=$(date +%s.%N)
      env "${env[@]}" timeout -s KILL 120 "$VKCU" hash "$f" --algo blake3 --backend gpu --decode-parallel auto \
        --log-level verbose > "$out/${c%.mp4}-$run-$i.txt" 2> "$out/${c%.mp4}-$run-$i.log"
      rc=$?
      t1=$(date +%s.%N)
      bad=$(diff <(grep -v '^#' "$out/${c%.mp4}-one.txt") <(grep -v '^#' "$out/${c%.mp4}-$run-$i.txt") |
            sed -n 's/^> 0, *\([0-9]*\),.*/\1/p' | head -12 | tr '\n' ' ')
      fps=$(awk -v a="$t0" -v b="$t1" -v n=$((600 * loops)) 'BEGIN {printf "%.1f", n / (b - a)}')
      echo "| $c | $run $i | $rc | $fps | ${bad:-none} |" >> "$md"
    done
  done
done
cat "$md"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 37 on the GPU, in one run: streams on threads of one process
# against streams in worker processes, side by side.
#   - bench_multistream CLIP N CHAIN LOOPS (copy: the interop copy and a CUDA
#     copy; none: decode only), threads and VKCU_BENCH_PROCESSES=1;
#   - `vkcu batch --jobs 7 --pipeline regression-blake3 --backend gpu` over 14
#     links to the 1080p clip (600 frames each), threads and --processes:
#     whole run fps (frames / wall, set-up included) and its hashes, which
#     must equal the CPU backend's hash of the clip.
# Writes $OUT/batch-procs.md and the logs.
#   PROCS_CLIPS="h264-1080p.mp4 hevc10-1080p.mp4" (default)
#   PROCS_STREAMS="7 14", PROCS_CHAINS="copy none" (bench_multistream), PROCS_LOOPS=3, PROCS_FILES=14,
#   PROCS_JOBS=7
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clips=${PROCS_CLIPS:-h264-1080p.mp4 hevc10-1080p.mp4}
# shellcheck disable=SC2086
make_big_clips $clips
md=$out/batch-procs.md
loops=${PROCS_LOOPS:-3}
nfiles=${PROCS_FILES:-14}
jobs=${PROCS_JOBS:-7}
ms() { # ENV... -- clip n chain -> aggregate fps
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" timeout -s KILL 300 "$TESTBIN/bench_multistream" "$1" "$2" "$3" "$loops" 2>&1 |
    tee -a "$out/bench_multistream.log" | sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p'
}
{
  echo "| clip | chain | streams | one process fps | N processes fps | processes / one process |"
  echo "| --- | --- | ---: | ---: | ---: | ---: |"
} > "$md"
for c in $clips; do
  for chain in ${PROCS_CHAINS:-copy none}; do
  for n in ${PROCS_STREAMS:-7 14}; do
    one=$(ms -- "$BIG/$c" "$n" "$chain")
    procs=$(ms VKCU_BENCH_PROCESSES=1 -- "$BIG/$c" "$n" "$chain")
    echo "| $c | $chain | $n | ${one:-0} | ${procs:-0} | $(awk -v a="${procs:-0}" -v b="${one:-0}" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}') |" >> "$md"
  done
  done
done
{
  echo
  echo "\`vkcu batch --jobs $jobs --pipeline regression-blake3 --backend gpu\`, $nfiles links to the clip, whole run (set-up included):"
  echo
  echo "| clip | how | files done | frames | wall s | fps | hashes = CPU backend's |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | --- |"
} >> "$md"
for c in $clips; do
  d=$(mktemp -d)
  mkdir -p "$d/in"
  for i in $(seq -w 1 "$nfiles"); do ln -s "$BIG/$c" "$d/in/s$i.mp4"; done
  timeout -s KILL 300 "$VKCU" hash "$BIG/$c" --algo blake3 --backend cpu > "$d/cpu.hash" 2> "$out/${c%.mp4}-cpu.log"
  for how in threads processes; do
    opt=()
    [ "$how" = processes ] && opt=(--processes)
    rm -rf "$d/out" "$d/rep.jsonl"
    t0=$(date +%s.%N)
    timeout -s KILL 300 "$VKCU" batch "$d/in" "$d/out" --backend gpu --jobs "$jobs" --pipeline regression-blake3 \
      "${opt[@]}" --report "$d/rep.jsonl" > /dev/null 2> "$out/${c%.mp4}-batch-$how.log"
    rc=$?
    t1=$(date +%s.%N)
    done_=$(tail -1 "$d/rep.jsonl" 2> /dev/null | sed -n 's/.*"done": \([0-9]*\).*/\1/p')
    frames=$(tail -1 "$d/rep.jsonl" 2> /dev/null | sed -n 's/.*"frames": \([0-9]*\).*/\1/p')
    same=yes
    for f in "$d"/out/*; do
      [ -f "$f" ] || continue
      cmp -s <(grep -v '^#' "$f") <(grep -v '^#' "$d/cpu.hash") || same=no
    done
    [ -n "$(ls "$d/out" 2> /dev/null)" ] || same="no outputs"
    echo "| $c | $how (rc $rc) | ${done_:-0} | ${frames:-0} | $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') | $(awk -v a="$t0" -v b="$t1" -v n="${frames:-0}" 'BEGIN {printf "%.1f", n / (b - a)}') | $same |" >> "$md"
  done
  rm -rf "$d"
done
cat "$md"

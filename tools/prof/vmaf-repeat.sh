#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35: is libvmaf's CUDA score of a pair the same run after run? For
# each pair (A B [compare options]; default: media clips against their crf
# 35 copies, where tests/gpu.d/vmaf.sh found GPU-CPU differences up to 2.9
# in a frame), the CPU score once, then the GPU score RUNS times as it is
# and RUNS times under CUDA_LAUNCH_BLOCKING=1 (every launch and copy waited
# for): one line per run with the pooled mean and the largest per-frame
# difference from the CPU. A GPU score that moves between identical runs
# is a race; one that the blocking runs never show is an ordering missing
# somewhere between vkcu's copies and libvmaf's reads. (Measured on two
# H100s: 5 of 14 runs of the two pairs differed by up to 2.8 in a frame;
# with the whole device waited for after each pair, tried in a build, 5 of
# 10; under CUDA_LAUNCH_BLOCKING=1, 0 of 4, each within 0.0011.)
# Usage (GPU machine): timeout -s KILL 300 bash tools/prof/vmaf-repeat.sh
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=${RUNS:-4}
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
score() { # TAG ENV... -- A B OPTS...: one line
  local tag=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  timeout -s KILL 120 env "${envs[@]}" "$VKCU" compare "$@" --vmaf --json "$out/$tag.json" -y > "$out/$tag.txt" 2> "$out/$tag.err"
  local rc=$?
  python3 - "$out/$tag.json" "$out/cpu.json" "$tag" "$rc" <<'PY'
import json, sys
try:
    g = json.load(open(sys.argv[1]))['frames']
    c = json.load(open(sys.argv[2]))['frames']
except Exception as e:
    print(f"  {sys.argv[3]}: exit {sys.argv[4]}, no scores ({e})"); sys.exit()
d = [abs(a['vmaf'] - b['vmaf']) for a, b in zip(g, c)]
i = max(range(len(d)), key=lambda k: d[k])
print(f"  {sys.argv[3]}: exit {sys.argv[4]}, mean {sum(r['vmaf'] for r in g) / len(g):.6f}, "
      f"largest difference from the CPU {d[i]:.6g} at frame {i}, frames over 0.01: {sum(x > 0.01 for x in d)}")
PY
}
pairs=()
for c in h264-aac.mp4 hevc10.mkv; do
  [ -s "$MEDIA/$c" ] || continue
  ext=${c##*.}
  enc=libx264; [ "$c" = hevc10.mkv ] && enc=libx265
  ff -i "$MEDIA/$c" -map 0:v -c:v $enc -crf 35 "$out/lossy-$c.$ext" || continue
  pairs+=("$MEDIA/$c|$out/lossy-$c.$ext")
done
for p in "${pairs[@]}"; do
  a=${p%%|*} b=${p#*|}
  echo "== $(basename "$a") against its crf 35 copy"
  timeout -s KILL 120 "$VKCU" compare --backend cpu "$a" "$b" --vmaf --json "$out/cpu.json" -y > /dev/null 2>&1
  for k in $(seq "$runs"); do score gpu$k -- --backend gpu "$a" "$b"; done
  for k in $(seq "$runs"); do score blocking$k CUDA_LAUNCH_BLOCKING=1 -- --backend gpu "$a" "$b"; done
done

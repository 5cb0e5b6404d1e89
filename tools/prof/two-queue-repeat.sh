#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35/37: two streams of one process decoded on two decode queues, is
# every frame right? One GPU call on an H100 gave a wrong first GOP (PSNR
# 16-19 dB against the CPU's 45.26) in all three 4K comparisons made with
# VKCU_COMPARE_TWO_QUEUES=1; 12 later ones were right. This repeats that
# comparison RUNS times (default 12) against the CPU backend's figures, and
# hashes both files RUNS/3 times with `vkcu batch --jobs 2` (two streams,
# two queues: the users' path) against the CPU backend's per-frame BLAKE3
# digests. One line per run; the last line counts the wrong ones.
# Usage (GPU machine): timeout -s KILL 400 bash tools/prof/two-queue-repeat.sh
set -u
source "$(dirname "$0")/../gpu-env.sh"
runs=${RUNS:-12}
clip=${CLIP:-h264-2160p.mp4}
frames=${FRAMES:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_big_clips "$clip"
a=$BIG/$clip b=$work/tnr-$clip
"$VKCU" "$a" -o "$b" --chain 'denoise=tnr:sigma=4' --encoder libx264 --preset ultrafast --frames "$frames" -y 2> "$work/tnr.err" ||
  { echo "transcode failed: $(tail -1 "$work/tnr.err")"; exit 1; }
psnr() { sed -n 's/^PSNR .* average:\([0-9.inf]*\) .*/\1/p' "$1"; }
timeout -s KILL 300 "$VKCU" compare --backend cpu "$a" "$b" --frames "$frames" --min-psnr 1 --json "$work/cpu.json" \
  > "$work/cpu.txt" 2> /dev/null
want=$(psnr "$work/cpu.txt")
echo "CPU backend: PSNR average $want ($clip against its tnr + x264 transcode, $frames pairs)"
bad=0 total=0
for k in $(seq "$runs"); do
  VKCU_COMPARE_TWO_QUEUES=1 timeout -s KILL 120 "$VKCU" compare --backend gpu --log-level verbose "$a" "$b" \
    --frames "$frames" --min-psnr 1 --json "$work/g.json" -y > "$work/g.txt" 2> "$work/g.err"
  rc=$? got=$(psnr "$work/g.txt")
  qs=$(sed -n 's/.*stream [0-9]* of CUDA device 0 decodes on queues\{0,1\} \([0-9]*\).*/queue \1/p' "$work/g.err" |
    sort -u | tr '\n' ' ')
  total=$((total + 1))
  if [ "$got" = "$want" ]; then
    echo "compare $k: exit $rc, PSNR $got = CPU (${qs% })"
  else
    bad=$((bad + 1))
    echo "compare $k: exit $rc, PSNR '$got' != CPU $want (${qs% }); $(python3 - "$work/cpu.json" "$work/g.json" <<'PY'
import json, sys
try:
    c, g = (json.load(open(f))['frames'] for f in sys.argv[1:3])
except Exception as e:
    print(f"no per-frame figures ({e})"); sys.exit()
bad = [i for i, (x, y) in enumerate(zip(c, g)) if x['psnr'] != y['psnr'] or x['max_diff'] != y['max_diff']]
print(f"{len(bad)} frames differ: {bad[:3]} ... {bad[-3:]}" if bad else "frames equal")
PY
)"
  fi
done
mkdir -p "$work/in"
ln -s "$a" "$work/in/a.mp4"
ln -s "$b" "$work/in/b.mp4"
"$VKCU" batch "$work/in" "$work/cpuh" --pipeline regression-blake3 --backend cpu --jobs 2 > /dev/null 2>&1
for k in $(seq $(( (runs + 2) / 3 ))); do
  rm -rf "$work/gpuh"
  timeout -s KILL 120 "$VKCU" batch "$work/in" "$work/gpuh" --pipeline regression-blake3 --backend gpu --jobs 2 \
    > /dev/null 2> "$work/b.err"
  rc=$? total=$((total + 1)) same=1
  for f in a b; do
    cmp -s <(grep -v '^#' "$work/cpuh/$f.framemd5") <(grep -v '^#' "$work/gpuh/$f.framemd5" 2> /dev/null) || same=0
  done
  if [ $same = 1 ]; then
    echo "batch --jobs 2 $k: exit $rc, both files' $(grep -vc '^#' "$work/cpuh/a.framemd5") + $(grep -vc '^#' "$work/cpuh/b.framemd5") digests = CPU"
  else
    bad=$((bad + 1))
    echo "batch --jobs 2 $k: exit $rc, digests differ from the CPU's: $(tail -1 "$work/b.err")"
  fi
done
echo "two-queue runs: $total, wrong: $bad"

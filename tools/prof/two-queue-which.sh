#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35/37, after tools/prof/two-queue-repeat.sh: which input, and which
# queue layout, gives the wrong first GOP of a 4K compare with a decode
# queue for each input (VKCU_COMPARE_TWO_QUEUES=1). RUNS (default 5) runs
# each of: A against itself, B against itself (both sides must be
# identical: any PSNR is wrong), and A against B with each decoder on one
# queue of its own (VKCU_DECODE_QUEUES_PER_STREAM=1, the default since this
# ran) and with a decoder's two execution contexts alternating between its
# queue and the other's (=2), against the CPU's figure. (Run before the
# default changed, on an H100: A=A right 4/4, B=B wrong 4/4, A-B one queue
# a decoder right 4/4, A-B spread wrong 4/4, always frames 0-249.) One line per run; the last line counts.
# Usage (GPU machine, after two-queue-repeat.sh made the clips):
#   timeout -s KILL 300 bash tools/prof/two-queue-which.sh
set -u
source "$(dirname "$0")/../gpu-env.sh"
runs=${RUNS:-5}
clip=${CLIP:-h264-2160p.mp4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_big_clips "$clip"
a=$BIG/$clip b=$work/tnr-$clip
"$VKCU" "$a" -o "$b" --chain 'denoise=tnr:sigma=4' --encoder libx264 --preset ultrafast -y 2> "$work/tnr.err" ||
  { echo "transcode failed: $(tail -1 "$work/tnr.err")"; exit 1; }
psnr() { sed -n 's/^PSNR .* average:\([0-9.inf]*\) .*/\1/p' "$1"; }
timeout -s KILL 300 "$VKCU" compare --backend cpu "$a" "$b" --min-psnr 1 > "$work/cpu.txt" 2> /dev/null
want=$(psnr "$work/cpu.txt")
bad=0 total=0
one() { # NAME WANT ENV... -- A B
  local name=$1 want=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env VKCU_COMPARE_TWO_QUEUES=1 "${envs[@]}" timeout -s KILL 120 "$VKCU" compare --backend gpu --log-level verbose "$1" "$2" \
    --min-psnr 1 --json "$work/g.json" -y > "$work/g.txt" 2> "$work/g.err"
  local rc=$? got
  got=$(psnr "$work/g.txt")
  local qs
  qs=$(sed -n 's/.*stream \([0-9]*\) of CUDA device 0 decodes on \(queues\{0,1\} [0-9 and]*\) of family.*/\1:\2/p' \
    "$work/g.err" | tr '\n' ' ')
  total=$((total + 1))
  if [ "$got" = "$want" ]; then
    echo "$name: exit $rc, PSNR $got, right (${qs% })"
  else
    bad=$((bad + 1))
    echo "$name: exit $rc, PSNR '$got', want $want (${qs% }); $(python3 - "$work/g.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))['frames']
bad = [r['frame_a'] for r in f if r['psnr']['avg'] is not None and r['psnr']['avg'] < 30]
print(f"{len(bad)} frames under 30 dB: {bad[:3]} ... {bad[-3:]}")
PY
)"
  fi
}
for k in $(seq "$runs"); do one "A=A $k" inf -- "$a" "$a"; done
for k in $(seq "$runs"); do one "B=B $k" inf -- "$b" "$b"; done
for k in $(seq "$runs"); do one "B=B spread $k" inf VKCU_DECODE_QUEUES_PER_STREAM=2 -- "$b" "$b"; done
for k in $(seq "$runs"); do one "A-B one queue a decoder $k" "$want" VKCU_DECODE_QUEUES_PER_STREAM=1 -- "$a" "$b"; done
for k in $(seq "$runs"); do one "A-B spread $k" "$want" VKCU_DECODE_QUEUES_PER_STREAM=2 -- "$a" "$b"; done
echo "runs: $total, wrong: $bad"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 without vkcu: prof_encoders_gpu (tests/bench/) runs N contexts of
# prores_ks_vulkan on FFmpeg's own device, each with its own thread, device
# context, frames context and every Nth frame (uploaded by FFmpeg), on
# compute queues of their own or all on queue 0, or on FFmpeg's device as it
# is (execution context i on queue i) with a deeper async_depth. Each run's
# packets against one context's (ProRes is deterministic). Wrong packets
# with own queues here mean the race is FFmpeg's or the driver's, with no
# vkcu code in the process; none where vkcu's instances are wrong
# (tools/prof/prores-queues-gpu.sh) points back at vkcu. A run named
# Q-N[-dD][-bpm] sets bits_per_mb=8192 with -bpm: prores_ks_vulkan then never
# enters the over-quantiser loop of its estimate shader (subgroup shuffles
# in a loop the slices leave at different times; performance.md, "Issue
# 36, step 5"); such runs are compared with one context run the same way.
# Writes $OUT/encoders-ffmpeg.md.
#   ENC_CLIP=h264-1080p ENC_FRAMES=300 ENC_RUNS="own-4 own-4 shared-4 ffmpeg-1-d4 own-4-bpm ..."
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clip=${ENC_CLIP:-h264-1080p}
frames=${ENC_FRAMES:-300}
make_big_clips "$clip.mp4"
pe=$TESTBIN/prof_encoders_gpu
md=$out/encoders-ffmpeg.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| run | contexts on queues | fps | packets differing (first) |" > "$md"
echo "| --- | --- | ---: | --- |" >> "$md"
# ref OPTS...: one context's packets with those options (made once)
ref() {
  local name=ref${1:+-bpm}
  if [ ! -s "$tmp/$name" ]; then
    timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n 1 "$@" > "$tmp/$name" 2> "$out/$name.err"
    local rc=$?
    echo "| one context${1:+, $2} | $(grep -o 'on compute queues.*' "$out/$name.err" | sed 's/^on compute queues //; s/: [0-9.]* fps//') | $(grep -o '[0-9.]* fps' "$out/$name.err") | (the reference; exit $rc) |" >> "$md"
  fi
  echo "$tmp/$name"
}
i=0
for run in ${ENC_RUNS:-own-4 own-4 own-4 shared-4 ffmpeg-1-d4 ffmpeg-1-d4 ffmpeg-2-d4 own-8 own-4-bpm own-4-bpm}; do
  i=$((i + 1))
  IFS=- read -r q n rest <<< "$run"
  depth=1 opts=()
  [[ $rest =~ d([0-9]+) ]] && depth=${BASH_REMATCH[1]}
  [[ $rest == *bpm* ]] && opts=(-o bits_per_mb=8192)
  want=$(ref "${opts[@]}")
  timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n "$n" -q "$q" -d "$depth" "${opts[@]}" > "$tmp/$i" 2> "$out/$run.$i.err"
  rc=$?
  wrong=$(paste -d' ' "$want" "$tmp/$i" | awk '$3 != $6 {n++; if (n <= 8) l = l (l ? " " : "") $1} END {printf "%d (%s)", n, l}')
  echo "| $run | $(grep -o 'on compute queues.*' "$out/$run.$i.err" | sed 's/^on compute queues //; s/: [0-9.]* fps//') | $(grep -o '[0-9.]* fps' "$out/$run.$i.err") | $wrong$([ $rc = 0 ] || echo "; exit $rc: $(tail -1 "$out/$run.$i.err")") |" >> "$md"
done
cat "$md"

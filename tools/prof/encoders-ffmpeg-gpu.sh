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
# devices-N: each context on a VkDevice of its own (nothing of FFmpeg's
# shared). locked-N: queues of their own, every submission of every context
# under one process-wide lock on the host (NVIDIA's workaround for a driver
# bug of two queues of one VkDevice submitting at once; the GPU still runs
# the contexts' work side by side). mix-N: queues of their own, the odd contexts ffv1_vulkan, so the
# even frames are ProRes encoded beside another encoder; only those are
# compared. procs-P: P processes of one context each, every one encoding
# all the frames, at once (fps: all their frames over the wall time).
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
  depth=1 opts=() enc=() every=1
  [[ $rest =~ d([0-9]+) ]] && depth=${BASH_REMATCH[1]}
  [[ $rest == *bpm* ]] && opts=(-o bits_per_mb=8192)
  want=$(ref "${opts[@]}")
  if [ "$q" = mix ]; then
    q=own enc=(-e prores_ks_vulkan,ffv1_vulkan) every=2
  fi
  if [ "$q" = procs ]; then
    t0=$(date +%s.%N) pids=()
    for p in $(seq "$n"); do
      timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n 1 -q ffmpeg "${opts[@]}" > "$tmp/$i.$p" 2> "$out/$run.$i.$p.err" &
      pids+=($!)
    done
    rc=0 wrong=
    for p in $(seq "$n"); do
      wait "${pids[$((p - 1))]}" || rc=$?
      wrong+=${wrong:+; }$(paste -d' ' "$want" "$tmp/$i.$p" | awk '$3 != $6 {n++; if (n <= 8) l = l (l ? " " : "") $1} END {printf "%d (%s)", n, l}')
    done
    fps=$(awk -v n="$n" -v f="$frames" -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f fps (all %d processes, from their start; the rate each process reports:", n * f / (b - a), n}')
    fps+="$(cat "$out/$run.$i".*.err | grep -o ' [0-9.]* fps' | tr -d '\n'))"
    echo "| $run | 0 of each process's device | $fps | $wrong$([ $rc = 0 ] || echo "; exit $rc") |" >> "$md"
    continue
  fi
  timeout -s KILL 300 "$pe" "$BIG/$clip.mp4" -f "$frames" -n "$n" -q "$q" -d "$depth" "${enc[@]}" "${opts[@]}" > "$tmp/$i" 2> "$out/$run.$i.err"
  rc=$?
  # with two encoders, only the frames of the even contexts (ProRes) count
  wrong=$(paste -d' ' "$want" "$tmp/$i" | awk -v n="$n" -v every="$every" '($1 % n) % every == 0 && $3 != $6 {w++; if (w <= 8) l = l (l ? " " : "") $1} END {printf "%d (%s)", w, l}')
  echo "| $run | $(grep -o 'on compute queues.*' "$out/$run.$i.err" | sed 's/^on compute queues //; s/: [0-9.]* fps//') | $(grep -o '[0-9.]* fps' "$out/$run.$i.err") | $wrong$([ $rc = 0 ] || echo "; exit $rc: $(tail -1 "$out/$run.$i.err")") |" >> "$md"
done
cat "$md"

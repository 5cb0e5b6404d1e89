#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What one lock over every queue's submissions (VKCU_VK_SUBMIT_LOCK=1;
# docs/performance.md, "Issue 36, step 7") costs the streams of one
# process: bench_multistream CLIP N CHAIN LOOPS without and with it, in
# turns (0 1 0 1 ...), and the rate of each. Writes $OUT/submit-lock.md.
#   LOCK_CLIPS="h264-1080p.mp4 hevc10-1080p.mp4" LOCK_STREAMS="7" LOCK_CHAINS="copy none"
#   LOCK_LOOPS=3 LOCK_REPEAT=2
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clips=${LOCK_CLIPS:-h264-1080p.mp4 hevc10-1080p.mp4}
# shellcheck disable=SC2086
make_big_clips $clips
md=$out/submit-lock.md
{
  echo "| clip | chain | streams | fps without the lock | fps with it | with / without |"
  echo "| --- | --- | ---: | --- | --- | ---: |"
} > "$md"
for c in $clips; do
  for chain in ${LOCK_CHAINS:-copy none}; do
    for n in ${LOCK_STREAMS:-7}; do
      off="" on=""
      for _ in $(seq "${LOCK_REPEAT:-2}"); do
        for l in 0 1; do
          fps=$(VKCU_VK_SUBMIT_LOCK=$l timeout -s KILL 300 "$TESTBIN/bench_multistream" "$BIG/$c" "$n" "$chain" \
            "${LOCK_LOOPS:-3}" 2>&1 | tee -a "$out/submit-lock.log" | sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p')
          if [ "$l" = 0 ]; then off+="${off:+ }${fps:-0}"; else on+="${on:+ }${fps:-0}"; fi
        done
      done
      ratio=$(awk -v a="$on" -v b="$off" 'BEGIN {
        na = split(a, x, " "); nb = split(b, y, " "); for (i = 1; i <= na; i++) sa += x[i]; for (i = 1; i <= nb; i++) sb += y[i]
        printf "%.2f", (sb > 0 ? (sa / na) / (sb / nb) : 0) }')
      echo "| $c | $chain | $n | $off | $on | $ratio |" >> "$md"
    done
  done
done
cat "$md"

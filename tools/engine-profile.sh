#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where the decode engines stop, in one GPU call (issue 27; docs/performance.md).
# For 7 and 14 streams of 1080p H.264 and HEVC Main10:
#   1. one process (bench_multistream, copy chain) with VKCU_ENGINE_STATS=1:
#      aggregate fps, each decode queue's engine busy time against wall time,
#      the GPU time per decode submission, how often a submission found its
#      queue idle, the compute queue's busy time, queue-lock waits; and the
#      same run without the statistics (what timing each submission costs);
#   2. N processes of one stream each, decode only, with queue claims and
#      with claims off (VKCU_QUEUE_CLAIMS=off: every process on queues 0, 1),
#      against N decode-only streams in one process (target: >= 0.9x);
#   3. the lifts, each against the baseline of 1: a compute queue per stream
#      (VKCU_VK_COMPUTE_QUEUES), a decoder's two contexts on its own queue
#      (VKCU_DECODE_QUEUES_PER_STREAM=1), both, an interop ring of 8, frame
#      threads (VKCU_VK_DECODE_THREADS=2, FFmpeg 8.1 only), and with
#      ENGINE_PROFILE_DEPTH=N a patched FFmpeg's FFMPEG_VK_DECODE_DEPTH=N
#      (tools/ffmpeg-patches/);
#   4. 7 `vkcu --decode-only --null` processes on a 3000-frame clip, claims
#      on and off (the issue's measurement: 7 x 200.6 fps before claims);
#   5. `vkcu batch --jobs 7` (regression-blake3) against bench_multistream on
#      the same files.
# Writes $OUT/engine-profile.md (the tables) and $OUT/engine-profile-logs.tar.gz
# (every run's output), or build/ without $OUT. Steps left when
# ENGINE_PROFILE_DEADLINE seconds (default 500) have passed are skipped, with
# a line saying so, so that the tables are written before an outer limit.
# Environment: ENGINE_PROFILE_STREAMS ("7 14"), ENGINE_PROFILE_CLIPS
# ("h264-1080p hevc10-1080p"), ENGINE_PROFILE_DEADLINE, ENGINE_PROFILE_DEPTH.
# Usage (GPU machine): timeout -s KILL 590 bash tools/engine-profile.sh
set -u
source "$(dirname "$0")/gpu-env.sh"
t_start=$SECONDS
deadline=${ENGINE_PROFILE_DEADLINE:-500}
streams=${ENGINE_PROFILE_STREAMS:-7 14}
clips=${ENGINE_PROFILE_CLIPS:-h264-1080p hevc10-1080p}
outdir=${OUT:-$root/build}
mkdir -p "$outdir"
tmp=$(mktemp -d)
logs=$tmp/logs
mkdir -p "$logs"
md=$outdir/engine-profile.md
trap 'tar -C "$tmp" -czf "$outdir/engine-profile-logs.tar.gz" logs 2> /dev/null; rm -rf "$tmp"' EXIT
: > "$md"
say() { echo "$*" | tee -a "$md"; }
time_left() {
  if [ $((SECONDS - t_start)) -ge "$deadline" ]; then
    say "(skipped from here: ENGINE_PROFILE_DEADLINE=$deadline s passed)"
    return 1
  fi
}
if ! timeout -s KILL 60 "$VKCU" probe > "$logs/probe.txt" 2>&1; then
  say "engine-profile: no Vulkan/CUDA GPU pair here (see logs/probe.txt)"
  exit 0
fi
"$VKCU" --version > "$logs/version.txt" 2>&1
make_big_clips $(for c in $clips; do echo "$c.mp4"; done)
ffmajor=$(sed -n 's/.*FFmpeg \([0-9]*\)\..*/\1/p' "$logs/version.txt" | head -1)
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
export XDG_RUNTIME_DIR=$tmp/run # the claims of this profile's processes only
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset VKCU_QUEUE_CLAIMS VKCU_ENGINE_STATS VKCU_VK_COMPUTE_QUEUES VKCU_DECODE_QUEUES_PER_STREAM VKCU_VK_DECODE_THREADS

# One process: NAME LABEL CLIP STREAMS LOOPS RING ENV... -> a table row from logs/NAME.txt
one() {
  local name=$1 label=$2 clip=$3 n=$4 loops=$5 ring=$6
  shift 6
  env "$@" timeout -s KILL 60 "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" "$n" copy "$loops" "$ring" \
    > "$logs/$name.txt" 2>&1
  row "$logs/$name.txt" "$clip | $n | $label"
}
# row FILE LEAD: bench_multistream's line and engine lines as a table row
row() {
  awk -v lead="$2" '
    function kv(   i, a) { delete v; for (i = 1; i <= NF; i++) if (split($i, a, "=") == 2) v[a[1]] = a[2] }
    /aggregate_fps=/ { kv(); fps = v["aggregate_fps"]; lo = v["stream_fps_min"]; hi = v["stream_fps_max"]; cores = v["cores"]; failed = v["failed"] }
    /^engine: queue=decode/ { kv(); split(v["queue"], q, "."); list = list (list ? " " : "") q[3] ":" sprintf("%.0f", v["busy_pct"])
                              busy += v["busy_s"]; subs += v["submissions"] }
    /^engine: summary/ { kv(); pct = v["decode_busy_pct_of_queues"]; idle = v["decode_idle_at_submit_pct"]; nq = v["decode_queues"]
                         win = v["window_s"]; comp = v["compute_busy_s"]; lock = v["queue_lock_wait_s"]; have = 1 }
    END {
      if (fps == "") { printf "| %s | failed (see the log) | | | | | | | | |\n", lead; exit }
      if (!have) { printf "| %s | %.0f%s | %.0f-%.0f | %.2f | | | | | | |\n", lead, fps, (failed ? " (" failed " failed)" : ""), lo, hi, cores; exit }
      printf "| %s | %.0f%s | %.0f-%.0f | %.2f | %d | %.1f | %s | %.3f | %.1f | %.0f | %.1f | %.3f |\n", lead, fps,
        (failed ? " (" failed " failed)" : ""), lo, hi, cores, nq, pct, list, (subs ? 1000 * busy / subs : 0), idle,
        (pct > 0 ? fps * 100 / pct : 0), (win > 0 ? 100 * comp / win : 0), lock }' "$1" | tee -a "$md"
}
head_one() {
  say ""
  say "| clip | streams | variant | fps | stream fps min-max | CPU cores | decode queues | decode busy % (mean) | busy % per queue | GPU ms per decode submission | idle at submit % | fps if the queues were always busy | compute busy % | queue-lock wait s |"
  say "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
}
loops_for() { local l=$((2 * 7 / $1)); [ "$l" -lt 1 ] && l=1; echo "$l"; }

say "# Engine profile ($(date -u +%Y-%m-%dT%H:%MZ), $(sed -n 's/^  CUDA 0 = Vulkan [0-9]* (\(.*\)):.*/\1/p' "$logs/probe.txt" | head -1); $(head -2 "$logs/version.txt" | sed 's/:.*//' | paste -sd, -))"
say ""
say "Each row: bench_multistream CLIP N copy LOOPS RING (loops: 14 / N; ring 4 unless the variant says), its"
say "timed part only. Busy: GPU timestamps around each submission (VKCU_ENGINE_STATS=1), per decode queue, against"
say "the wall time of the run. 'fps if the queues were always busy' = fps x 100 / mean busy %: the engines' own"
say "ceiling for this clip if the busy time per frame stayed as measured."

say ""
say "## 1. One process: baseline, and the cost of the timing itself"
head_one
for clip in $clips; do
  for n in $streams; do
    time_left || break 2
    l=$(loops_for "$n")
    one "base-$clip-$n" "baseline (engine statistics on)" "$clip" "$n" "$l" 4 VKCU_ENGINE_STATS=1
    one "nostats-$clip-$n" "baseline, statistics off" "$clip" "$n" "$l" 4 VKCU_ENGINE_STATS=0
  done
done

# N one-stream processes: NAME CLIP N LOOPS ENV... -> a row
procs() {
  local name=$1 clip=$2 n=$3 loops=$4 i t0 t1
  shift 4
  local f=$name-$clip-$n
  t0=$(date +%s.%N)
  for i in $(seq "$n"); do
    env "$@" VKCU_ENGINE_STATS=1 timeout -s KILL 60 "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" 1 none "$loops" \
      > "$logs/$f.p$i.txt" 2>&1 &
  done
  wait
  t1=$(date +%s.%N)
  cat "$logs/$f".p*.txt | awk -v lead="$clip | $n | $name" -v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" '
    function kv(   i, a) { delete v; for (i = 1; i <= NF; i++) if (split($i, a, "=") == 2) v[a[1]] = a[2] }
    /aggregate_fps=/ { kv(); f = v["aggregate_fps"] + 0; sum += f; frames += v["frames"]; np++; if (v["failed"] > 0) bad++
                       if (np == 1 || f < lo) lo = f; if (f > hi) hi = f }
    /^engine: queue=decode/ { kv(); split(v["queue"], q, "."); busy[q[3]] += v["busy_s"]; users[q[3]]++ }
    /^engine: summary/ { kv(); if (v["window_s"] > win) win = v["window_s"] }
    END {
      for (k in busy) keys = keys " " k
      nk = split(keys, ks, " "); for (i = 1; i <= nk; i++) for (j = i + 1; j <= nk; j++) if (ks[j] + 0 < ks[i] + 0) { t = ks[i]; ks[i] = ks[j]; ks[j] = t }
      for (i = 1; i <= nk; i++) { list = list (list ? " " : "") ks[i] ":" users[ks[i]] "p/" sprintf("%.0f", (win > 0 ? 100 * busy[ks[i]] / win : 0)) }
      printf "| %s | %d%s | %.0f | %.0f-%.0f | %.0f | %s |\n", lead, np, (bad ? " (" bad " failed)" : ""), sum, lo, hi,
        (wall > 0 ? frames / wall : 0), list }' | tee -a "$md" | awk -F'|' '{gsub(/ /, "", $6); print $6}' > "$tmp/sum-$f"
}
say ""
say "## 2. N processes of one decode-only stream each, against N streams in one process"
say ""
say "claims: each process claims the least-claimed decode queue (vkcu's default now); claims off: VKCU_QUEUE_CLAIMS=off,"
say "every process on decode queues 0 and 1 as before. fps: the sum of the processes' own fps (each over its timed"
say "part); frames / wall includes their set-up. Queues: queue:processes/busy % (summed over the processes, against the"
say "longest process's window). The one-process rows are bench_multistream CLIP N none."
say ""
say "| clip | processes | variant | processes reporting | sum of their fps | process fps min-max | frames / wall | decode queues used |"
say "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |"
for clip in $clips; do
  for n in $streams; do
    time_left || break 2
    l=$(loops_for "$n")
    procs "claims" "$clip" "$n" "$l"
    procs "claims-off" "$clip" "$n" "$l" VKCU_QUEUE_CLAIMS=off
  done
done
head_one
for clip in $clips; do
  for n in $streams; do
    time_left || break 2
    l=$(loops_for "$n")
    env VKCU_ENGINE_STATS=1 timeout -s KILL 60 "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" "$n" none "$l" \
      > "$logs/oneproc-$clip-$n.txt" 2>&1
    row "$logs/oneproc-$clip-$n.txt" "$clip | $n | one process, decode only"
  done
done
say ""
say "| clip | N | N processes, claims | N processes, claims off | N streams, one process | claims / one process (target >= 0.9) | claims off / one process |"
say "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for clip in $clips; do
  for n in $streams; do
    [ -s "$tmp/sum-claims-$clip-$n" ] || continue
    one=$(sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p' "$logs/oneproc-$clip-$n.txt" 2> /dev/null)
    awk -v c="$clip" -v n="$n" -v a="$(cat "$tmp/sum-claims-$clip-$n")" -v b="$(cat "$tmp/sum-claims-off-$clip-$n" 2> /dev/null)" \
      -v o="${one:-0}" 'BEGIN {printf "| %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f |\n", c, n, a, b, o, (o > 0 ? a / o : 0), (o > 0 ? b / o : 0)}' |
      tee -a "$md"
  done
done

say ""
say "## 3. Lifts, one at a time (engine statistics on; compare with the baseline rows of 1)"
head_one
for clip in $clips; do
  for n in $streams; do
    time_left || break 2
    l=$(loops_for "$n")
    one "compute-$clip-$n" "a compute queue per stream (VKCU_VK_COMPUTE_QUEUES=$n)" "$clip" "$n" "$l" 4 \
      VKCU_ENGINE_STATS=1 VKCU_VK_COMPUTE_QUEUES="$n"
    one "perstream-$clip-$n" "both contexts on the stream's queue (VKCU_DECODE_QUEUES_PER_STREAM=1)" "$clip" "$n" "$l" 4 \
      VKCU_ENGINE_STATS=1 VKCU_DECODE_QUEUES_PER_STREAM=1
    one "both-$clip-$n" "both of the above" "$clip" "$n" "$l" 4 \
      VKCU_ENGINE_STATS=1 VKCU_VK_COMPUTE_QUEUES="$n" VKCU_DECODE_QUEUES_PER_STREAM=1
    one "ring8-$clip-$n" "interop ring of 8 slots" "$clip" "$n" "$l" 8 VKCU_ENGINE_STATS=1
    if [ "${ffmajor:-0}" -ge 8 ]; then
      one "threads2-$clip-$n" "2 frame threads per decoder (VKCU_VK_DECODE_THREADS=2: 4 contexts)" "$clip" "$n" "$l" 4 \
        VKCU_ENGINE_STATS=1 VKCU_VK_DECODE_THREADS=2
    fi
    if [ -n "${ENGINE_PROFILE_DEPTH:-}" ]; then
      one "depth-$clip-$n" "FFMPEG_VK_DECODE_DEPTH=$ENGINE_PROFILE_DEPTH (patched FFmpeg)" "$clip" "$n" "$l" 4 \
        VKCU_ENGINE_STATS=1 FFMPEG_VK_DECODE_DEPTH="$ENGINE_PROFILE_DEPTH"
    fi
  done
done
[ "${ffmajor:-0}" -ge 8 ] || say "(no frame-thread rows: this build's FFmpeg is ${ffmajor:-?}.x, whose frame threads stall with the Vulkan hwaccel)"

say ""
say "## 4. 7 vkcu --decode-only --null processes, 3000-frame 1080p H.264 (the user's path)"
say ""
say "| variant | processes reporting | sum of fps_steady | min-max | frames / wall | set-up s, mean (max) |"
say "| --- | ---: | ---: | ---: | ---: | ---: |"
long=$BIG/h264-1080p-x5.mp4
if time_left && [[ " $clips " == *" h264-1080p "* ]]; then
  if [ ! -s "$long" ] && "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop 4 -i "$BIG/h264-1080p.mp4" \
    -c copy "$BIG/.tmp-x5.mp4"; then
    mv "$BIG/.tmp-x5.mp4" "$long"
  fi
  for variant in claims claims-off; do
    time_left || break
    extra=()
    [ "$variant" = claims-off ] && extra=(VKCU_QUEUE_CLAIMS=off)
    t0=$(date +%s.%N)
    for i in 1 2 3 4 5 6 7; do
      env "${extra[@]}" timeout -s KILL 60 "$VKCU" "$long" --decode-only --null --backend gpu --stats \
        > "$logs/cli-$variant.p$i.txt" 2>&1 &
    done
    wait
    t1=$(date +%s.%N)
    cat "$logs/cli-$variant".p*.txt | awk -v lead="$variant" -v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" '
      { for (i = 1; i <= NF; i++) { if ($i ~ /^fps_steady=/) { split($i, a, "="); f = a[2] + 0; s += f; n++; if (n == 1 || f < lo) lo = f; if (f > hi) hi = f }
                                    if ($i ~ /^frames_out=/) { split($i, a, "="); fr += a[2] }
                                    if ($i ~ /^setup=/) { split($i, a, "="); t = a[2] + 0; su += t; ns++; if (t > sumax) sumax = t } } }
      END { printf "| %s | %d | %.0f | %.1f-%.1f | %.0f | %.3f (%.3f) |\n", lead, n, s, lo, hi, (wall > 0 ? fr / wall : 0),
            (ns ? su / ns : 0), sumax }' | tee -a "$md"
  done
fi

say ""
say "## 5. vkcu batch --jobs 7 against bench_multistream, the same files"
say ""
say "Batch: 21 links to the clip, regression-blake3 (hashed on the GPU), steady = 21 x (frames - 30) / (wall of the"
say "batch - wall of the same batch with --frames 30). bench_multistream: 7 streams x 3 loops of the clip, copy chain."
say ""
say "| clip | batch steady fps | bench_multistream fps | batch / bench_multistream |"
say "| --- | ---: | ---: | ---: |"
for clip in $clips; do
  time_left || break
  bdir=$tmp/batch-$clip
  mkdir -p "$bdir/in"
  for i in $(seq -w 1 21); do ln -s "$BIG/$clip.mp4" "$bdir/in/s$i.mp4"; done
  frames=$("$VKCU" "$BIG/$clip.mp4" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  wall_of() {
    rm -rf "$bdir/out"
    local a b
    a=$(date +%s.%N)
    timeout -s KILL 60 "$VKCU" batch "$bdir/in" "$bdir/out" --backend gpu --jobs 7 --pipeline regression-blake3 -q "$@" \
      > "$logs/batch-$clip$*.txt" 2>&1 || echo "batch failed: see logs/batch-$clip$*.txt" >&2
    b=$(date +%s.%N)
    awk -v a="$a" -v b="$b" 'BEGIN {print b - a}'
  }
  full=$(wall_of) short=$(wall_of --frames 30)
  timeout -s KILL 60 "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" 7 copy 3 > "$logs/batch-anchor-$clip.txt" 2>&1
  anchor=$(sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p' "$logs/batch-anchor-$clip.txt")
  awk -v c="$clip" -v f="${frames:-0}" -v a="$full" -v b="$short" -v m="${anchor:-0}" 'BEGIN {
    st = a > b ? 21 * (f - 30) / (a - b) : 0
    printf "| %s | %.0f | %.0f | %.2f |\n", c, st, m, (m > 0 ? st / m : 0) }' | tee -a "$md"
done
say ""
say "($((SECONDS - t_start)) s; logs in engine-profile-logs.tar.gz)"

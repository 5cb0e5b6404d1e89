#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Batch memory benchmark (issue 6's target: GPU memory and host RSS flat,
# within 10%, between a 10-file and a 200-file batch). Runs `vkcu batch
# --jobs 7` over folders of 10 and 200 copies (hard links) of one small
# clip, and reports for each the peak host RSS of the vkcu process and its
# peak GPU memory, then the 200/10 ratios.
#
#   tools/bench-batch.sh                 # on the GPU machine (tools/gpu-env.sh finds vkcu)
#
# Environment: BENCH_CLIP (default: $MEDIA/h264-aac.mp4), BENCH_JOBS (7),
# BENCH_COUNTS ("10 200"), BENCH_PIPELINE (regression-hash), BENCH_CHAIN
# (convert=format=yuv420p: the frames go through CUDA), BENCH_BACKEND
# (auto), BENCH_DIR (a temporary folder, removed at the end).
# Peak RSS: /usr/bin/time -v when present (exact), else VmHWM polled from
# /proc/PID/status. GPU memory: nvidia-smi --query-compute-apps polled
# every 0.2 s (the process's entry; all entries if pids are not visible).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/gpu-env.sh
source "$root/tools/gpu-env.sh"
clip=${BENCH_CLIP:-$MEDIA/h264-aac.mp4}
jobs=${BENCH_JOBS:-7}
counts=${BENCH_COUNTS:-10 200}
pipeline=${BENCH_PIPELINE:-regression-hash}
chain=${BENCH_CHAIN-convert=format=yuv420p}
backend=${BENCH_BACKEND:-auto}
[ -x "$VKCU" ] || { echo "bench-batch: no vkcu at $VKCU (build it, or unpack the GPU bundle)" >&2; exit 1; }
[ -s "$clip" ] || { echo "bench-batch: no clip $clip (run tools/make-media.sh, or set BENCH_CLIP)" >&2; exit 1; }
# The GPU bundle carries the binary, not the presets: use this checkout's.
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
has_smi=0
command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1 && has_smi=1
timev=""
[ -x /usr/bin/time ] && /usr/bin/time -v true > /dev/null 2>&1 && timev=/usr/bin/time

gpu_mem() { # pid -> MiB used by it (or by every compute process when pids are not visible)
  local all mine
  all=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2> /dev/null)
  mine=$(echo "$all" | awk -F', *' -v p="$1" '$1 == p {s += $2} END {print s + 0}')
  if [ "$mine" = 0 ]; then echo "$all" | awk -F', *' '{s += $2} END {print s + 0}'; else echo "$mine"; fi
}

run_one() { # count -> "rss_kib gpu_mib files_done seconds"
  local n=$1 in=$work/in-$1 out=$work/out-$1 i
  rm -rf "$in" "$out" "$work/report-$n.jsonl"; mkdir -p "$in"
  local ext=${clip##*.}
  for i in $(seq -w 1 "$n"); do ln "$clip" "$in/clip-$i.$ext" 2> /dev/null || cp "$clip" "$in/clip-$i.$ext"; done
  local args=(batch "$in" "$out" --jobs "$jobs" --backend "$backend" --pipeline "$pipeline" -q --report "$work/report-$n.jsonl")
  [ -n "$chain" ] && args+=(--chain "$chain")
  local t0 t1 pid vpid hwm=0 gpu=0 g h
  t0=$(date +%s.%N)
  if [ -n "$timev" ]; then
    "$timev" -v -o "$work/time-$n.txt" "$VKCU" "${args[@]}" 2> "$work/err-$n.txt" &
    pid=$!
  else
    "$VKCU" "${args[@]}" 2> "$work/err-$n.txt" &
    pid=$!
  fi
  while kill -0 "$pid" 2> /dev/null; do
    vpid=$pid
    [ -n "$timev" ] && vpid=$(pgrep -P "$pid" | head -1)
    if [ -n "$vpid" ] && [ -r "/proc/$vpid/status" ]; then
      h=$(awk '/^VmHWM:/ {print $2}' "/proc/$vpid/status" 2> /dev/null)
      [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
      if [ "$has_smi" = 1 ]; then
        g=$(gpu_mem "$vpid")
        [ "$g" -gt "$gpu" ] && gpu=$g
      fi
    fi
    sleep 0.2
  done
  wait "$pid"
  local rc=$?
  t1=$(date +%s.%N)
  if [ -n "$timev" ] && [ -s "$work/time-$n.txt" ]; then
    h=$(awk -F': *' '/Maximum resident set size/ {print $2}' "$work/time-$n.txt")
    [ -n "$h" ] && hwm=$h
  fi
  local done
  done=$(grep -o '"done": [0-9]*' "$work/report-$n.jsonl" 2> /dev/null | tail -1 | awk '{print $2}')
  if [ "$rc" != 0 ] || [ "${done:-0}" != "$n" ]; then
    echo "bench-batch: the $n-file batch exited $rc with ${done:-0} files done: $(tail -2 "$work/err-$n.txt" | tr '\n' ' ')" >&2
    echo failed > "$work/failed"
  fi
  echo "$hwm $gpu ${done:-0} $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
}

echo "vkcu batch memory: clip $(basename "$clip"), --jobs $jobs, --pipeline $pipeline${chain:+ --chain $chain}, backend $backend"
if [ -n "$timev" ]; then echo "peak host RSS: /usr/bin/time -v"; else echo "peak host RSS: VmHWM polled from /proc/PID/status"; fi
if [ "$has_smi" = 1 ]; then
  echo "peak GPU memory: nvidia-smi --query-compute-apps=used_memory, polled every 0.2 s"
else
  echo "peak GPU memory: not measured (no nvidia-smi or no GPU)"
fi
printf '%8s %8s %14s %14s %10s\n' files done "peak RSS MiB" "peak GPU MiB" seconds
declare -A rss gpu
for n in $counts; do
  read -r r g d s <<< "$(run_one "$n")"
  rss[$n]=$r gpu[$n]=$g
  printf '%8s %8s %14.1f %14s %10.1f\n' "$n" "$d" "$(awk -v r="$r" 'BEGIN {print r / 1024}')" "$g" "$s"
done
if [ -e "$work/failed" ]; then
  echo "bench-batch: a batch failed (above): no ratios" >&2
  exit 1
fi
ratio() { # label small large
  awk -v l="$1" -v a="$2" -v b="$3" -v na="$first" -v nb="$last" 'BEGIN {
    r = b / a
    printf "%s ratio %s/%s files: %.3f (%s)\n", l, nb, na, r, r <= 1.10 ? "flat: within 10%" : "NOT flat: above 10%"
  }'
}
first=${counts%% *}
last=${counts##* }
if [ "$first" != "$last" ] && [ "${rss[$first]:-0}" -gt 0 ]; then
  ratio "host RSS" "${rss[$first]}" "${rss[$last]}"
  if [ "${gpu[$first]:-0}" -gt 0 ]; then
    ratio "GPU memory" "${gpu[$first]}" "${gpu[$last]}"
  else
    echo "GPU memory ratio: not measured (no GPU memory seen; backend $backend)"
  fi
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One call on the GPU machine: named steps run in order, each under
# `timeout -s KILL` (a stalled Vulkan decode ignores SIGTERM) and never past
# the call's deadline, so that the call ends inside its limit with every
# step's log kept. A step's output goes to logs/NAME.log and it runs with
# OUT=logs/NAME/ (where tests/gpu.sh and the benchmarks write their files);
# then everything under logs/ but files over 4 MB goes into one
# $OUT/logs.tar.xz (the device tool brings back at most 8 files), and a
# summary of each step (exit code, seconds, its total line) into
# $OUT/summary.txt and stdout.
#
#   tools/gpu-run.sh DEADLINE_S 'name: command' ['name: command' ...]
#
# The Vulkan loader comes from .gl/ (tools/gpu-env.sh unpacks it) and the
# programs from the bundle (tools/gpu-bundle.sh); large clips are made in
# $VKCU_BIG_MEDIA (default /root/vkcu-big, outside the carried folders, so a
# warm machine keeps them between calls).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
deadline=$(( SECONDS + ${1:?usage: tools/gpu-run.sh DEADLINE_S 'name: command'...} ))
shift
out=${OUT:-$root/build/gpu-run}
mkdir -p "$out/logs"
export VKCU_BIG_MEDIA=${VKCU_BIG_MEDIA:-/root/vkcu-big} VKCU_USE_BUNDLE=1 PYTHONUNBUFFERED=1
summary=$out/summary.txt
: > "$summary"
for step in "$@"; do
  name=${step%%:*} cmd=${step#*:}
  left=$(( deadline - SECONDS - 15 ))
  if [ "$left" -lt 10 ]; then
    echo "$name: not run (deadline)" | tee -a "$summary"
    continue
  fi
  t0=$SECONDS
  mkdir -p "$out/logs/$name"
  ( cd "$root" && OUT=$out/logs/$name timeout -s KILL "$left" bash -c "$cmd" ) > "$out/logs/$name.log" 2>&1
  rc=$? dt=$((SECONDS - t0)) note=
  [ "$rc" = 137 ] && note=" (killed at the deadline)"
  echo "$name: rc=$rc ${dt}s$note $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/logs/$name.log" | tail -1)" | tee -a "$summary"
done
find "$out/logs" -type f -size +4M -delete
tar -C "$out" -cJf "$out/logs.tar.xz" logs && rm -rf "$out/logs"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Set-up to the first decoded frame, step by step (issue 15.1), on the GPU
# machine: `bash tools/setup-profile.sh [N] [clip...]` (N runs of each
# variant, default 5; clips default to the three 600-frame bench clips).
#
# Each run is `vkcu CLIP --backend gpu --decode-only --stats`; its
# "setup timeline" line says when each step started and ended, in ms from
# the job's start: the Vulkan instance (vk_instance, then vk_enumerate: the
# devices and their UUIDs), the chosen device's queue families and
# extensions (vk_caps), vkCreateDevice (vk_device), FFmpeg's init of it
# (vk_hwctx), CUDA's start up to the UUID (cuda_init) and its context
# (cuda_context), and on the job's own thread demux, gpu_open (waiting for
# the device), decoder and first_frame. The table gives the median of each
# start and end over N runs, the median set-up (min-max), steady decode fps
# (the queues' effect on decoding itself), and the wall time of a whole
# process that decodes one frame (exec to exit, what a user waits for).
#
# Variants, each a set of environment variables:
#   default                   vkcu's device: 2 decode queues (one stream), 1 compute
#   VKCU_VK_DECODE_QUEUES=1   one decode queue
#   VKCU_VK_DECODE_QUEUES=7   every decode queue of the H200 (the previous default)
#   VKCU_SETUP_SERIAL=1       CUDA's start and context first, then the Vulkan steps:
#                             each measured without the other running beside it
#   VKCU_VULKAN_DEVICE=ffmpeg FFmpeg's device creation (every queue of every family)
# VKCU_PROFILE_VARIANTS (lines of "NAME=VALUE ...", "default" for none) replaces the list.
set -u
source "$(dirname "$0")/gpu-env.sh"
n=${1:-5}
shift $(($# > 0 ? 1 : 0))
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then
  echo "setup-profile: no Vulkan/CUDA GPU pair here; run it on the GPU machine" >&2
  exit 0
fi
if [ $# -eq 0 ]; then
  make_big_clips
  set -- "$BIG/h264-1080p.mp4" "$BIG/h264-2160p.mp4" "$BIG/hevc10-1080p.mp4"
fi
variants=${VKCU_PROFILE_VARIANTS:-"default
VKCU_VK_DECODE_QUEUES=1
VKCU_VK_DECODE_QUEUES=7
VKCU_SETUP_SERIAL=1
VKCU_VULKAN_DEVICE=ffmpeg"}
steps="vk_instance vk_enumerate vk_caps vk_device vk_hwctx cuda_init cuda_context demux gpu_open decoder first_frame"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }

echo "### Set-up to the first decoded frame, step by step ($n runs each, medians)"
echo
echo "Steps: start-end in ms from the job's start (median start, median end); '-' where a step did not run."
echo "Set-up: \`--stats\` setup (job start to first decoded frame). Wall: a whole \`--frames 1\` process."
echo
printf '| clip | variant | set-up ms (min-max) | wall ms | steady fps | device |'
for s in $steps; do printf ' %s |' "$s"; done
echo
printf '| --- | --- | ---: | ---: | ---: | --- |'
for s in $steps; do printf ' ---: |'; done
echo
for clip in "$@"; do
  [ -s "$clip" ] || { echo "| $(basename "$clip") | missing | | | | |"; continue; }
  while IFS= read -r v; do
    [ -n "$v" ] || continue
    env_args=()
    [ "$v" != default ] && read -r -a env_args <<< "$v"
    : > "$tmp/runs"
    : > "$tmp/wall"
    for _ in $(seq "$n"); do
      env "${env_args[@]}" timeout -s KILL 300 "$VKCU" "$clip" --backend gpu --decode-only --stats -q \
        > /dev/null 2> "$tmp/err" || { echo "run failed: $(tail -1 "$tmp/err")" >&2; continue; }
      cat "$tmp/err" >> "$tmp/runs"
      t0=$(date +%s%N)
      env "${env_args[@]}" timeout -s KILL 300 "$VKCU" "$clip" --backend gpu --decode-only --frames 1 -q \
        > /dev/null 2>&1 && echo $((($(date +%s%N) - t0) / 1000000)) >> "$tmp/wall"
    done
    su=$(sed -n 's/^stats: setup=\([0-9.]*\)s.*/\1/p' "$tmp/runs" | awk '{print $1 * 1000}')
    row=$(printf '| %s | %s | %s (%s-%s) | %s | %s | %s |' "$(basename "$clip")" "$v" \
      "$(median <<< "$su")" "$(sort -g <<< "$su" | head -1)" "$(sort -g <<< "$su" | tail -1)" \
      "$(median < "$tmp/wall")" \
      "$(sed -n 's/.* fps_steady=\([0-9.]*\).*/\1/p' "$tmp/runs" | median)" \
      "$(sed -n 's/.*; Vulkan device: \(.*\)$/\1/p' "$tmp/runs" | head -1)")
    for s in $steps; do
      span="^stats: setup timeline .* $s=\(-\{0,1\}[0-9]*\)-\(-\{0,1\}[0-9]*\).*"
      a=$(sed -n "s/$span/\1/p" "$tmp/runs" | median)
      b=$(sed -n "s/$span/\2/p" "$tmp/runs" | median)
      [ "$a" = - ] && row+=" - |" || row+=" $a-$b |"
    done
    echo "$row"
  done <<< "$variants"
done
echo
echo "Commands: \`bash tools/setup-profile.sh $n${*:+ ...}\` ($(basename "$VKCU"), $(date -u +%Y-%m-%d))."

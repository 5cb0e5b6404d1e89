#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu compare on the GPU backend (run by tests/gpu.sh): both inputs decoded
# with Vulkan Video and handed to CUDA through the callback sink. A clip
# against itself is identical; against a lossy copy, every per-frame line
# and the PSNR/SSIM summary equal those of `compare --backend cpu` (the GPU
# path is bit-exact, so the metrics must be too).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clip=$BIG/h264-1080p.mp4
[ -s "$clip" ] || clip=$MEDIA/h264-aac.mp4
"$FFMPEG" -hide_banner -loglevel error -nostdin -y -i "$clip" -frames:v 60 -an -c:v libx264 -preset veryfast -crf 35 \
  "$out/lossy.mp4" || { echo "FAIL compare-gpu: could not make a lossy copy"; exit 0; }

timeout -s KILL 300 "$VKCU" compare --backend gpu --frames 60 "$clip" "$clip" > "$out/same.txt" 2> "$out/same.err"
rc=$?
if [ $rc = 0 ] && grep -qE '^result: IDENTICAL: [1-9][0-9]* frames$' "$out/same.txt"; then
  echo "PASS compare-gpu: a clip against itself is identical on the GPU backend"
else
  echo "FAIL compare-gpu: clip against itself: exit $rc: $(tail -1 "$out/same.txt") $(tail -1 "$out/same.err")"
fi

for b in gpu cpu; do
  timeout -s KILL 300 "$VKCU" compare --backend $b --per-frame --frames 60 "$clip" "$out/lossy.mp4" > "$out/$b.txt" 2> "$out/$b.err"
  echo $? > "$out/$b.rc"
done
if [ "$(cat "$out/gpu.rc")" = 6 ] && [ "$(cat "$out/cpu.rc")" = 6 ] && [ "$(grep -c '^frame ' "$out/gpu.txt")" -gt 0 ] &&
  cmp -s "$out/gpu.txt" "$out/cpu.txt"; then
  echo "PASS compare-gpu: against a lossy copy, $(grep -c '^frame ' "$out/gpu.txt") per-frame lines and the summary equal the CPU backend's ($(grep -m1 PSNR "$out/gpu.txt"))"
else
  echo "FAIL compare-gpu: GPU and CPU reports differ (exit $(cat "$out/gpu.rc")/$(cat "$out/cpu.rc")): $(diff "$out/gpu.txt" "$out/cpu.txt" | head -3 | tr '\n' ' ')"
fi

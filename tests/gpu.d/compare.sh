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

# Each input on its own decode queue, each decoder's contexts on its queue
# alone (gpu/vkdev_acquire.c). With the contexts spread over both queues, this
# clip (4K, denoise=tnr + x264 ultrafast, IDR every 250 frames) against itself decoded one
# side's first GOP wrong in 8 runs of 8 on an H100 (docs/performance.md):
# three runs, each identical, on two queues.
if [ -s "$BIG/h264-2160p.mp4" ]; then
  uf=$out/uf-2160p.mp4
  timeout -s KILL 300 "$VKCU" "$BIG/h264-2160p.mp4" -o "$uf" --chain denoise=tnr:sigma=4 --encoder libx264 \
    --preset ultrafast --frames 300 -y 2> "$out/uf-make.err" ||
    echo "FAIL compare-gpu-two-queues: could not make the ultrafast copy: $(tail -1 "$out/uf-make.err")"
  for k in 1 2 3; do
    [ -s "$uf" ] || break
    timeout -s KILL 300 "$VKCU" compare --backend gpu --log-level verbose "$uf" "$uf" > "$out/uf.txt" 2> "$out/uf.err"
    rc=$?
    qs=$(sed -n 's/.*stream [0-9]* of CUDA device [0-9]* decodes on \(queues\{0,1\} [0-9 and]*\) of family.*/\1/p' "$out/uf.err" |
      sort -u | tr '\n' ';')
    if [ $rc = 0 ] && grep -qE '^result: IDENTICAL: 300 frames$' "$out/uf.txt" && [ "$(echo "$qs" | tr ';' '\n' | grep -c .)" = 2 ]; then
      echo "PASS compare-gpu-two-queues $k: the 4K ultrafast clip against itself, identical, inputs on ${qs%;}"
    else
      echo "FAIL compare-gpu-two-queues $k: exit $rc, queues '${qs%;}': $(grep -m1 '^result' "$out/uf.txt") $(grep -m1 '^PSNR' "$out/uf.txt")"
    fi
  done
else
  echo "SKIP compare-gpu-two-queues: $BIG/h264-2160p.mp4 not made (tools/gpu-env.sh make_big_clips)"
fi

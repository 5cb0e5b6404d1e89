#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU transcodes end to end (run by tests/gpu.sh): Vulkan decode -> CUDA
# operators -> pinned host frames -> encoder thread -> muxer. Lossless FFV1
# output must decode to exactly the frames the CPU reference computes for the
# same chain; a libx264 transcode must keep frame count, timestamps and audio.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
frames() { grep -v '^#' "$1"; }
check() { # name chain clip
  local name=$1 chain=$2 clip=$3
  if ! timeout -s KILL 300 "$VKCU" "$clip" --backend gpu --chain "$chain" --encoder ffv1 -o "$out/$name.mkv" -q --stats 2> "$out/$name.err"; then
    echo "FAIL transcode-$name: $(tail -1 "$out/$name.err")"; return
  fi
  if ! grep -q 'path=vulkan-decode+cuda' "$out/$name.err"; then
    echo "FAIL transcode-$name: not on the Vulkan->CUDA path: $(grep path= "$out/$name.err")"; return
  fi
  "$VKCU" hash --backend cpu "$out/$name.mkv" -o "$out/$name.out.h" -y 2>/dev/null
  "$VKCU" hash --backend cpu --chain "$chain" "$clip" -o "$out/$name.ref.h" -y 2>/dev/null
  if cmp -s <(frames "$out/$name.out.h" | cut -d, -f5-) <(frames "$out/$name.ref.h" | cut -d, -f5-); then
    echo "PASS transcode-$name: GPU transcode (ffv1) decodes to the CPU reference's $(frames "$out/$name.ref.h" | wc -l) frames"
  else
    echo "FAIL transcode-$name: GPU output frames differ from the CPU reference"
  fi
}
check denoise-convert 'denoise=tnr:sigma=6,convert=format=yuv420p:matrix=bt709' "$MEDIA/h264-aac.mp4"
check hevc10-tnr 'denoise=tnr:sigma=4' "$MEDIA/hevc10.mkv"
check tonemap 'tonemap=curve=bt2390:format=yuv420p' "$MEDIA/hdr10.mkv"
# The web presets' operator (issue 38.7): HDR10 tone mapped, SDR converted only;
# convert=format= by FFmpeg's name (38.8); the broadcast preset's chain ending
# in a convert to 8-bit 4:2:0 (38.6).
check web-hdr 'tonemap=format=yuv420p:matrix=bt709:sdr_input=convert' "$MEDIA/hdr10.mkv"
check web-sdr 'tonemap=format=yuv420p:matrix=bt709:sdr_input=convert' "$MEDIA/h264-aac.mp4"
check convert-ffmpeg-name 'convert=format=yuv422p10le' "$MEDIA/h264-aac.mp4"
check broadcast-chain 'deinterlace=mode=field,scale=w=1280:h=720,convert=format=yuv420p' "$MEDIA/deint-h264-bff.mkv"

# libx264 with audio: count, timestamps and audio packets kept.
if timeout -s KILL 300 "$VKCU" "$MEDIA/h264-aac.mp4" --backend gpu --chain 'denoise=tnr:sigma=6' -o "$out/x.mp4" -q 2> "$out/x.err"; then
  a=$("$VKCU" hash --backend cpu "$out/x.mp4" 2>/dev/null | grep -vc '^#')
  b=$("$VKCU" hash --backend cpu "$MEDIA/h264-aac.mp4" 2>/dev/null | grep -vc '^#')
  ta=$("$VKCU" hash --backend cpu "$out/x.mp4" 2>/dev/null | grep -v '^#' | cut -d, -f3 | tr -d ' ' | tr '\n' ' ')
  tb=$("$VKCU" hash --backend cpu "$MEDIA/h264-aac.mp4" 2>/dev/null | grep -v '^#' | cut -d, -f3 | tr -d ' ' | tr '\n' ' ')
  if [ "$a" = "$b" ] && [ "$ta" = "$tb" ]; then
    echo "PASS transcode-x264: $a frames, timestamps kept (GPU path, encoder thread on pinned frames)"
  else
    echo "FAIL transcode-x264: $a frames (input $b), timestamps equal: $([ "$ta" = "$tb" ] && echo yes || echo no)"
  fi
else
  echo "FAIL transcode-x264: $(tail -1 "$out/x.err")"
fi
# No Vulkan encode queue on this GPU: a clear refusal before any output exists.
"$VKCU" "$MEDIA/h264-aac.mp4" --backend gpu --encoder h264_vulkan -o "$out/v.mkv" 2> "$out/v.err"
rc=$?
# The GPU consulted is the one matched to CUDA device 0 by UUID (its name, as vkcu probe pairs them).
gpu_name=$("$VKCU" probe 2>/dev/null | sed -n 's/^  CUDA 0 = Vulkan [0-9]* (\(.*\)): GPU backend.*/\1/p' | head -1)
if [ "$rc" = 5 ] && [ ! -e "$out/v.mkv" ] && [ "$(wc -l < "$out/v.err")" = 1 ] &&
  grep -qF "no Vulkan video encode queue for H.264 on $gpu_name;" "$out/v.err"; then
  echo "PASS transcode-h264_vulkan refused on the UUID-matched GPU ($gpu_name): $(cat "$out/v.err")"
elif [ "$rc" = 0 ]; then
  # An encode queue (not on any machine here): the frames must reach the
  # encoder through the output ring (zero-copy), not through the host.
  "$VKCU" "$MEDIA/h264-aac.mp4" --backend gpu --encoder h264_vulkan -v -y -o "$out/v.mkv" 2> "$out/v.err"
  if grep -q "copied into the encoder's images on the GPU" "$out/v.err"; then
    echo "PASS transcode-h264_vulkan: this GPU has a Vulkan encode queue; frames reached it from the output ring"
  else
    echo "FAIL transcode-h264_vulkan: encoded, but not from the output ring: $(grep -i 'vulkan encoder\|output ring' "$out/v.err" | head -2 | tr '\n' ' ')"
  fi
else
  echo "FAIL transcode-h264_vulkan: exit $rc: $(tail -2 "$out/v.err" | tr '\n' ' ')"
fi
# Stall watchdog: input that stops arriving must fail the stream (exit 5)
# with a clear line instead of hanging.
if [ -n "${CONF:-}" ] && [ -f "$CONF/BA1_FT_C.264" ]; then
  start=$(date +%s)
  { head -c 200000 "$CONF/BA1_FT_C.264"; sleep 8; } | timeout -s KILL 60 "$VKCU" hash - --backend gpu --stall-timeout 2 -o "$out/stall.h" 2> "$out/stall.err"
  rc=$?
  if [ "$rc" = 5 ] && grep -q "stalled" "$out/stall.err" && [ -z "$(ls -A "$out" | grep -e stall.h -e '\.part')" ]; then
    echo "PASS stall-watchdog: $(tail -1 "$out/stall.err")"
  else
    echo "FAIL stall-watchdog: exit $rc after $(( $(date +%s) - start )) s: $(tail -1 "$out/stall.err")"
  fi
fi

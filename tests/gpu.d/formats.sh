#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu --version and vkcu formats on a GPU machine (run by tests/gpu.sh):
# the GPU backend is reported available, and the codecs the paired GPU
# decodes with Vulkan Video are marked "GPU ... (video)": exactly the codecs
# the device reports (--version's "video decode:" list, from the Vulkan
# queue query), which must include H.264 and HEVC. The H200 reports h264 and
# hevc: it has no Vulkan AV1 decode, so AV1 takes the software-decode
# fallback. FFmpeg 8.1's compute decoders are marked "(compute)" where vkcu
# takes them: FFV1 and DPX, not ProRes (its Vulkan decoder is not bit-exact).
set -u
v=$(timeout -s KILL 60 "$VKCU" --version 2>&1)
if echo "$v" | grep -q '^GPU backend: available' && echo "$v" | grep -qE '^CUDA: [1-9][0-9]* device' &&
  echo "$v" | grep -qE '^Vulkan: [1-9].*video decode:.*h264'; then
  echo "PASS version-gpu: $(echo "$v" | grep -E '^(CUDA|Vulkan):' | cut -c1-80 | tr '\n' ' ')"
else
  echo "FAIL version-gpu: $(echo "$v" | grep -E '^(CUDA|Vulkan|GPU)' | tr '\n' ' ')"
fi
f=$(timeout -s KILL 60 "$VKCU" formats 2>&1)
gpu=$(echo "$f" | awk '$1 == "GPU" && /\(video\)$/ {print $2}' | sort | tr '\n' ' ')
compute=$(echo "$f" | awk '$1 == "GPU" && /\(compute\)$/ {print $2}' | sort | tr '\n' ' ')
want=$(echo "$v" | sed -n 's/^Vulkan:.*video decode: \([a-z0-9 ]*\)).*/\1/p' | head -1 | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
case $want in *h264*hevc*) ok=1 ;; *) ok=0 ;; esac
if [ "$ok" = 1 ] && [ "$gpu" = "$want" ]; then
  echo "PASS formats-gpu: '$gpu' marked as decoded on the GPU, as the device reports ($(echo "$f" | grep 'video codecs,'))"
else
  echo "FAIL formats-gpu: codecs marked GPU: '$gpu'; the device reports '$want' (must include h264 and hevc)"
fi
if [[ " $compute " == *" ffv1 "* ]] && [[ " $compute " != *" prores "* ]]; then
  echo "PASS formats-gpu-compute: '$compute' marked as decoded on the GPU's compute queues (FFV1 among them, ProRes not)"
else
  echo "FAIL formats-gpu-compute: codecs marked (compute): '$compute' (want ffv1, and no prores: its Vulkan decoder is not bit-exact)"
fi

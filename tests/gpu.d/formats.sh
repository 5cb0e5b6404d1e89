#!/usr/bin/env bash
# vkcu --version and vkcu formats on a GPU machine (run by tests/gpu.sh):
# the GPU backend is reported available, and the codecs the paired GPU
# decodes with Vulkan Video (H.264, HEVC and AV1 on an H200) are marked GPU.
set -u
v=$(timeout -s KILL 60 "$VKCU" --version 2>&1)
if echo "$v" | grep -q '^GPU backend: available' && echo "$v" | grep -qE '^CUDA: [1-9][0-9]* device' &&
  echo "$v" | grep -qE '^Vulkan: [1-9].*video decode:.*h264'; then
  echo "PASS version-gpu: $(echo "$v" | grep -E '^(CUDA|Vulkan):' | cut -c1-80 | tr '\n' ' ')"
else
  echo "FAIL version-gpu: $(echo "$v" | grep -E '^(CUDA|Vulkan|GPU)' | tr '\n' ' ')"
fi
f=$(timeout -s KILL 60 "$VKCU" formats 2>&1)
gpu=$(echo "$f" | awk '$1 == "GPU" {print $2}' | sort | tr '\n' ' ')
if [ "$gpu" = "av1 h264 hevc " ]; then
  echo "PASS formats-gpu: H.264, HEVC and AV1 marked as decoded on the GPU ($(echo "$f" | grep 'video codecs,'))"
else
  echo "FAIL formats-gpu: codecs marked GPU: '$gpu' (expected av1 h264 hevc)"
fi

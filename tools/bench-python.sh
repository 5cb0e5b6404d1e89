#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package's benchmark (make bench; docs/python.md): frames of the
# 1080p and 4K bench clips into CUDA tensors, side by side in one run:
# vkcu's own steady decode + chain rate (null sink), the package's iterator
# (torch.from_dlpack of every plane), OpenCV VideoCapture + .cuda(),
# torchvision.io where it decodes, and get_frames_at of 10 random frames
# against decoding the whole clip; printed as ratios with the targets
# (iterator >= 0.9x vkcu; random access faster than the whole clip).
# Writes bench-python.txt and .json under $OUT (default: a folder under
# /tmp). BENCH_PYTHON_CLIPS overrides the clips.
set -u
source "$(dirname "$0")/gpu-env.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
py=$(command -v python3)
if [ -z "$py" ] || ! "$py" -c 'import numpy' > /dev/null 2>&1; then
  echo "bench-python: skipped: python3 with numpy needed" | tee "$out/bench-python.txt"
  exit 0
fi
so=libvkcu.so.$(sed -n 's/^#define VKCU_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$root/include/vkcu/version.h")
lib=$root/build/$so
[ -e "$lib" ] || lib=$(dirname "$VKCU")/../lib/$so
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then
  echo "bench-python: skipped: no Vulkan/CUDA GPU pair" | tee "$out/bench-python.txt"
  exit 0
fi
make_big_clips h264-1080p.mp4 h264-2160p.mp4
clips=${BENCH_PYTHON_CLIPS:-"$BIG/h264-1080p.mp4 $BIG/h264-2160p.mp4"}
# shellcheck disable=SC2086
VKCU_LIBRARY=$lib timeout -s KILL 500 "$py" "$root/tools/bench_python.py" --backend gpu --json "$out/bench-python.json" \
  $clips 2>&1 | tee "$out/bench-python.txt"

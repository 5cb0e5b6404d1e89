#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fat binary runs its kernels from this GPU's own machine code (run by
# tests/gpu.sh). vkcu carries SASS for every CUDA_ARCHS entry and PTX of the
# highest (Makefile); the driver must pick the SASS of this GPU's
# architecture, not compile PTX. With CUDA_DISABLE_PTX_JIT=1 the driver can
# use only SASS, so every kernel file (convert, scale, crop/pad, denoise,
# deinterlace, the ring's frame kernels, the BLAKE3 hash) running and
# hashing as the CPU backend does shows that the SASS is there and right.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=$(timeout -s KILL 60 "$VKCU" probe 2>&1 | sed -n 's/.*compute capability \([0-9]*\)\.\([0-9]*\).*/\1\2/p' | head -1)
if [ -z "$cc" ]; then
  echo "FAIL cuda-archs-gpu: vkcu probe names no compute capability"
  exit 0
fi
if ! command -v python3 > /dev/null; then
  echo "SKIP cuda-archs-gpu-sass: no python3 here to read the binary's GPU code"
elif python3 "$root/tools/cuda-archs.py" "$VKCU" > "$out/code" 2>&1 && grep -qx "elf sm_$cc" "$out/code"; then
  echo "PASS cuda-archs-gpu-sass: vkcu carries machine code for this GPU (sm_$cc) among: $(tr '\n' ' ' < "$out/code")"
else
  echo "FAIL cuda-archs-gpu-sass: vkcu has no machine code for this GPU (sm_$cc): $(tr '\n' ' ' < "$out/code")"
fi
check() { # input chain [hash options]
  local clip=$1 in=$MEDIA/$1 chain=$2 name
  shift 2
  name="cuda-archs-gpu sass-only $clip${chain:+ --chain $chain}${*:+ $*}"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu -q "$in" ${chain:+--chain "$chain"} "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  CUDA_DISABLE_PTX_JIT=1 timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" ${chain:+--chain "$chain"} "$@" \
    -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend without PTX JIT failed: $(tail -1 "$out/gpu.err")"; return; }
  local path n
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(grep -vc '^#' "$out/cpu")
  if [ "$n" -lt 2 ] || ! cmp -s <(grep -v '^#' "$out/gpu") <(grep -v '^#' "$out/cpu"); then
    echo "FAIL $name: GPU differs from the CPU backend ($n frames, $path)"
  else
    echo "PASS $name: $n frames equal the CPU backend, SASS only ($path)"
  fi
}
check crop-h264.mkv "convert=format=yuv444p10:matrix=bt2020,scale=w=96:h=-2:filter=bicubic"
check crop-h264.mkv "crop=w=64:h=32:x=8:y=4,pad=w=80:h=64:x=-1:y=-1:color=navy"
check crop-h264.mkv "denoise=nlm:search=2"
check hevc10.mkv "denoise=tnr,deinterlace"
check hdr10.mkv "tonemap=in_transfer=pq"
check hevc10.mkv "" --algo blake3

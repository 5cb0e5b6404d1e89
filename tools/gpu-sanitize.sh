#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# compute-sanitizer memcheck on one job through each way out of the GPU
# session (gpu/exit.h) and through the GPU operators the error convention
# touches (convert, tonemap): digest, none, host, readback, devpool (compare),
# encode (the compute FFV1 encoder), pieces (Vulkan decoders in parallel). Each line: PASS/FAIL, the job, and the
# sanitizer's error summary. For the GPU machine (tools/gpu-run.sh).
set -u
source "$(dirname "$0")/gpu-env.sh"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
clip=$MEDIA/long.mp4
ten=$MEDIA/hevc10.mkv
pass=0 failn=0
# SANITIZE_JOBS="digest readback" runs only those.
job() { # name vkcu-args (a verb first)...
  local name=$1; shift
  [ -z "${SANITIZE_JOBS:-}" ] || [[ " $SANITIZE_JOBS " == *" $name "* ]] || return 0
  local log=$T/$name.log
  timeout -s KILL 300 "$CS" --tool memcheck --error-exitcode 99 "$VKCU" "$@" --backend gpu > "$log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$log" | tail -1)
  if [ "$rc" = 0 ] && [ "$summary" = "ERROR SUMMARY: 0 errors" ]; then
    echo "PASS $name ($summary)"; pass=$((pass + 1))
  else
    echo "FAIL $name (exit $rc, ${summary:-no summary})"; tail -20 "$log" | sed 's/^/    /'; failn=$((failn + 1))
  fi
}
job digest hash "$clip" --algo blake3 --frames 60
job none "$clip" --null --frames 60
job host "$clip" --chain denoise=tnr -o "$T/host.mkv" --encoder ffv1 --frames 30
job readback hash "$clip" --download vulkan --frames 60
job devpool compare "$clip" "$clip" --frames 60
job encode "$clip" -o "$T/enc.mkv" --encoder ffv1_vulkan --encoder-opt level=4 --frames 30
job instances "$clip" -o "$T/inst.mov" --encoder prores_ks_vulkan --encode-workers 4 --chain convert=format=yuv422p10 \
  --frames 24
job instances-ffv1 "$clip" -o "$T/inst.mkv" --encoder ffv1_vulkan --encoder-opt level=4 --encode-workers 3 --frames 24
job convert "$ten" --chain 'convert=format=rgb48' --null --frames 20
job tonemap "$MEDIA/hdr10.mkv" --chain 'tonemap' --null --frames 10
# Vulkan decoders in pieces (a piece at every cut), their frames handed over in order
export VKCU_DECODE_SEGMENT_MIN=1
job pieces hash "$clip" --algo blake3 --decode-parallel 3
unset VKCU_DECODE_SEGMENT_MIN
echo "$pass passed, $failn failed, 0 skipped"
[ "$failn" = 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 on the GPU: why a compute encoder's instances on compute queues
# of their own (VKCU_ENCODE_INSTANCE_QUEUES=all) now and then encode a
# picture other than their frame (docs/performance.md, "Issue 36, step 3"),
# looked for with Khronos' validation layer (tools/prof/vvl.sh; needs its
# Debian package in .vvl/): the first VALIDATE_FRAMES (default 60) frames
# of the 1080p clip through prores_ks_vulkan and ffv1_vulkan, 4 instances on
# one queue (the default) and on their own, each under the layer. Writes
# $OUT/encode-validate-<run>.log and a count of each message id to
# $OUT/encode-validate.md.
#   VALIDATE_CLIP=h264-1080p.mp4 VALIDATE_FRAMES=60 VALIDATE_ENCODERS="prores_ks_vulkan ffv1_vulkan"
set -u
source "$(dirname "$0")/../gpu-env.sh"
source "$(dirname "$0")/vvl.sh"
vvl_setup h264-1080p.mp4
md=$out/encode-validate.md
: > "$md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for enc in ${VALIDATE_ENCODERS:-prores_ks_vulkan ffv1_vulkan}; do
  fmt=yuv422p10 opt=()
  [ "$enc" = ffv1_vulkan ] && fmt=yuv420p opt=(--encoder-opt level=4)
  for q in one own; do
    name=$enc-$q log=$out/encode-validate-$enc-$q.log queues=0
    [ "$q" = own ] && queues=all
    under_vvl "$log" "${VALIDATE_TIMEOUT:-200}" env VKCU_ENCODE_INSTANCE_QUEUES=$queues \
      "$VKCU" "$BIG/$clip" -o "$tmp/$name.mkv" -y --backend gpu --chain "denoise=tnr,convert=format=$fmt" \
      --frames "${VALIDATE_FRAMES:-60}" --encoder "$enc" "${opt[@]}" --encode-workers 4 --log-level verbose > /dev/null 2> "$out/encode-validate-$name.err"
    rc=$?
    {
      echo "## $name (rc $rc; $(grep -o 'on compute queues [0-9 ]*' "$out/encode-validate-$name.err" | head -1); $(wc -l < "$log" 2>/dev/null) log lines)"
      echo
      vvl_counts "$log"
      echo
    } >> "$md"
  done
done
cat "$md"

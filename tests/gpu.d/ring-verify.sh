#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every golden-manifest case through the output ring (issue 16; run by
# tests/gpu.sh, which sets VKCU, CONF, MEDIA and OUTDIR): `vkcu verify
# --backend gpu --download vulkan` on media/conformance.manifest and
# media/clips.manifest (every operator chain and preset) must pass with the
# CPU golden hashes, at ring sizes 3 and 12, under the binary and the
# timeline Vulkan->CUDA handoff. Cases hashed on the GPU (BLAKE3) keep their
# 32-byte digest copy; every other case's frames are read back by Vulkan.
# RING_VERIFY="3:binary 12:timeline" picks combinations (default: all four),
# so the matrix can be split over calls of limited length.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUTDIR:-$(mktemp -d)}
export VKCU_CONFORMANCE=${CONF:-${VKCU_CONFORMANCE:-}} VKCU_MEDIA=${MEDIA:-$root/media/gen}
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
if ! [ -x "${VKCU:-}" ]; then echo "SKIP ring-verify: \$VKCU not set (run through tests/gpu.sh)"; exit 0; fi
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then echo "SKIP ring-verify: no Vulkan/CUDA GPU pair"; exit 0; fi
for combo in ${RING_VERIFY:-3:binary 3:timeline 12:binary 12:timeline}; do
  k=${combo%%:*} h=${combo#*:}
  for m in conformance clips; do
    man=$root/media/$m.manifest
    name="ring-verify $m.manifest k=$k $h"
    if [ "$m" = clips ] && [ ! -s "$VKCU_MEDIA/h264-aac.mp4" ]; then echo "SKIP $name: clips missing in $VKCU_MEDIA"; continue; fi
    if [ "$m" = conformance ] && [ ! -d "$VKCU_CONFORMANCE" ]; then echo "SKIP $name: no conformance streams"; continue; fi
    f=$out/ring-verify-$m-$k-$h
    timeout -s KILL 600 "$VKCU" verify --backend gpu --download vulkan --ring-size "$k" --handoff "$h" "$man" \
      > "$f.txt" 2> "$f.err"
    rc=$?
    total=$(tail -1 "$f.txt")
    n=$(grep -c '^\[case ' "$man")
    if [ "$rc" = 0 ] && [ "$total" = "$n passed, 0 failed" ]; then
      echo "PASS $name: $total (GPU through the output ring = CPU golden hashes)"
    else
      echo "FAIL $name: exit $rc, '$total' ($(tail -1 "$f.err"))"
      grep '^FAIL' "$f.txt" | head -10 | sed 's/^FAIL /  case /'
    fi
  done
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU suite (run by tests/gpu.sh, which sets VKCU, CONF, MEDIA and OUTDIR):
# the golden manifests that pass on the CPU backend in `make test` must pass
# unchanged on the GPU backend: decode through Vulkan -> interop ring ->
# CUDA, every operator and preset, the same hashes bit for bit.
# One PASS/FAIL/SKIP line per manifest; failing cases follow on their own lines.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUTDIR:-$(mktemp -d)}
export VKCU_CONFORMANCE=${CONF:-${VKCU_CONFORMANCE:-}} VKCU_MEDIA=${MEDIA:-$root/media/gen}
# The presets of this checkout (a bundled vkcu may sit where <binary>/../pipelines is absent).
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
if ! [ -x "${VKCU:-}" ]; then echo "SKIP verify-gpu: \$VKCU not set (run through tests/gpu.sh)"; exit 0; fi
for m in conformance clips; do
  man=$root/media/$m.manifest
  name="verify-gpu $m.manifest"
  if [ "$m" = clips ] && [ ! -s "$VKCU_MEDIA/h264-aac.mp4" ]; then echo "SKIP $name: clips missing in $VKCU_MEDIA"; continue; fi
  if [ "$m" = conformance ] && [ ! -d "$VKCU_CONFORMANCE" ]; then echo "SKIP $name: no conformance streams"; continue; fi
  timeout -s KILL 600 "$VKCU" verify --backend gpu "$man" --junit "$out/verify-$m.xml" > "$out/verify-$m.txt" 2> "$out/verify-$m.err"
  rc=$?
  total=$(tail -1 "$out/verify-$m.txt")
  n=$(grep -c '^\[case ' "$man")
  if [ "$rc" = 0 ] && [ "$total" = "$n passed, 0 failed" ]; then
    echo "PASS $name: $total (GPU hashes = CPU golden hashes)"
  else
    echo "FAIL $name: exit $rc, '$total' ($(tail -1 "$out/verify-$m.err"))"
    grep '^FAIL' "$out/verify-$m.txt" | head -10 | sed 's/^FAIL /  case /'
  fi
done

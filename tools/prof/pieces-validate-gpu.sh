#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 39 on the GPU: the race of pieces under a small budget, looked for
# with Khronos' validation layer (core checks, image layouts, thread safety
# and synchronization validation, which reports a hazard whether or not the
# race strikes in that run). Needs the layer's Debian package in .vvl/
# (apt-get download vulkan-validationlayers from Debian 13: 1.4.309 runs
# on Ubuntu 24.04's glibc). Runs one decoder, then pieces with
# VKCU_DECODE_PARALLEL_MIB (default 600), each under the layer, and writes
# $OUT/validate-<run>.log and a count of each message id to $OUT/validate.md.
#   VALIDATE_CLIP=hevc10-1080p.mp4 VALIDATE_LOOPS=2 VALIDATE_SEGMENT_MIN=48
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
deb=$(ls "$root"/.vvl/vulkan-validationlayers_*.deb 2>/dev/null | tail -1)
[ -n "$deb" ] || { echo "no .vvl/vulkan-validationlayers_*.deb: nothing to run"; exit 1; }
vvl=/tmp/vkcu-vvl # not over /: other packages there can break the system
rm -rf "$vvl" && mkdir -p "$vvl" && dpkg -x "$deb" "$vvl" || exit 1
clip=${VALIDATE_CLIP:-hevc10-1080p.mp4}
make_big_clips "$clip"
loops=${VALIDATE_LOOPS:-2}
f=$BIG/${clip%.mp4}-x$loops.mp4
[ -s "$f" ] || "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop $((loops - 1)) -i "$BIG/$clip" -c copy "$f"
md=$out/validate.md
: > "$md"
run() { # NAME ARGS...: one hash under the layer
  local name=$1
  shift
  local log=$out/validate-$name.log
  env VK_LAYER_PATH="$vvl/usr/share/vulkan/explicit_layer.d" \
    LD_LIBRARY_PATH="$vvl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_LOG_FILENAME="$log" \
    VK_LAYER_REPORT_FLAGS=error,warn VK_LAYER_DEBUG_ACTION=VK_DBG_LAYER_ACTION_LOG_MSG \
    VK_LAYER_DUPLICATE_MESSAGE_LIMIT=5 VK_LAYER_VALIDATE_SYNC=true VK_LAYER_THREAD_SAFETY=true \
    VK_LAYER_CHECK_SHADERS=false VK_LAYER_DISABLES=VK_VALIDATION_FEATURE_DISABLE_SHADER_VALIDATION_EXT \
    VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
    timeout -s KILL "${VALIDATE_TIMEOUT:-150}" "$VKCU" hash "$f" --algo blake3 --backend gpu "$@" \
    > "$out/validate-$name.txt" 2> "$out/validate-$name.err"
  local rc=$?
  {
    echo "## $name (rc $rc; $(grep -Ec '^[0-9]' "$out/validate-$name.txt") frames hashed; $(wc -l < "$log" 2>/dev/null) log lines)"
    echo
    grep -o 'MessageID = 0x[0-9a-f]*\|\[ [A-Za-z0-9_-]* \]' "$log" 2>/dev/null | sort | uniq -c | sort -rn | head -30 |
      sed 's/^/    /'
    echo
  } >> "$md"
}
run one --decode-parallel off
VKCU_GPU_PIECES_MIN_PIXELS=0 VKCU_DECODE_PARALLEL_MIB=${VKCU_DECODE_PARALLEL_MIB:-600} \
  VKCU_DECODE_SEGMENT_MIN=${VALIDATE_SEGMENT_MIN:-48} run pieces --decode-parallel 4 --log-level verbose
diff <(grep -E '^[0-9]' "$out/validate-one.txt") <(grep -E '^[0-9]' "$out/validate-pieces.txt") > "$out/validate-diff.txt" &&
  echo "pieces: the same hashes as one decoder" >> "$md" ||
  echo "pieces: $(grep -c '^>' "$out/validate-diff.txt") frames differ from one decoder's" >> "$md"
cat "$md"

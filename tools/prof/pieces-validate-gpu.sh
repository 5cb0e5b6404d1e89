#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 39 on the GPU: the race of pieces under a small budget, looked for
# with Khronos' validation layer (tools/prof/vvl.sh; needs its Debian
# package in .vvl/). Runs one decoder, then pieces with
# VKCU_DECODE_PARALLEL_MIB (default 600), each under the layer, and writes
# $OUT/validate-<run>.log and a count of each message id to $OUT/validate.md.
#   VALIDATE_CLIP=hevc10-1080p.mp4 VALIDATE_LOOPS=2 VALIDATE_SEGMENT_MIN=48
set -u
source "$(dirname "$0")/../gpu-env.sh"
source "$(dirname "$0")/vvl.sh"
vvl_setup hevc10-1080p.mp4
loops=${VALIDATE_LOOPS:-2}
f=$BIG/${clip%.mp4}-x$loops.mp4
[ -s "$f" ] || "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop $((loops - 1)) -i "$BIG/$clip" -c copy "$f"
md=$out/validate.md
: > "$md"
run() { # NAME ARGS...: one hash under the layer
  local name=$1
  shift
  local log=$out/validate-$name.log
  under_vvl "$log" "${VALIDATE_TIMEOUT:-150}" "$VKCU" hash "$f" --algo blake3 --backend gpu "$@" \
    > "$out/validate-$name.txt" 2> "$out/validate-$name.err"
  local rc=$?
  {
    echo "## $name (rc $rc; $(grep -Ec '^[0-9]' "$out/validate-$name.txt") frames hashed; $(wc -l < "$log" 2>/dev/null) log lines)"
    echo
    vvl_counts "$log"
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

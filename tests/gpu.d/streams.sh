#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real-world streams on the GPU backend (run by tests/gpu.sh; issue 26).
# - Format changes mid-stream: the session drains, makes its rings again for
#   the new format (one import per new slot) and sets the operators up
#   again, so every clip of media/gen that changes size or bit depth hashes
#   as the CPU backend does: H.264 (Annex B, MP4) and HEVC 8/10-bit through
#   Vulkan decode, VP9 (sizes, profile 0/2) through software decode + upload;
#   in both timings (ffmpeg: frames scaled to the first size on the host;
#   decoded: every frame at its own size), through operators with state
#   (tnr's history, scale's weights, fps's clock), with BLAKE3 on the GPU,
#   the output ring (--download vulkan) and the timeline handoff; --stats
#   counts the format changes and the imports (K x (planes + 2) per ring).
# - A transcode and a GPU batch survive the same clips with the CPU's frames.
# - Damaged streams: the CPU backend marks the frames FFmpeg concealed (and
#   those after them up to a key frame); the GPU decoder conceals by itself,
#   and a comparison of its frames with the CPU's list names every
#   difference as concealed (it passes with --exclude-concealed). A picture
#   lost whole is flagged by neither: the frame counts must agree.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
frames() { grep -v '^#' "$1"; }
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }

# same NAME CLIP WANT-PATH [vkcu hash args]: GPU hash lines (and marks) = CPU's.
same() {
  local name=$1 clip=$2 want=$3; shift 3
  local in=$MEDIA/$clip
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return 1; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return 1; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" "$@" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return 1; }
  local path changes n
  path=$(stat_of "$out/gpu.err" path) changes=$(stat_of "$out/gpu.err" format_changes)
  n=$(frames "$out/gpu" | wc -l)
  if [ "$path" != "$want" ]; then
    echo "FAIL $name: took path '$path', expected '$want'"
  elif [ "${changes:-0}" = 0 ]; then
    echo "FAIL $name: --stats counts no format change (format_changes=$changes)"
  elif [ "$n" = 0 ] || ! cmp -s <(grep -v '^#software' "$out/gpu") <(grep -v '^#software' "$out/cpu"); then
    echo "FAIL $name: GPU lines differ from the CPU backend's ($n frames): $(diff <(frames "$out/gpu") <(frames "$out/cpu") | sed -n 2p)"
  else
    echo "PASS $name: $n frames, $changes format changes, GPU = CPU ($path)"
    return 0
  fi
  return 1
}

for t in ffmpeg decoded; do
  same "streams-gpu sizes.h264 --timing $t" sizes.h264 vulkan-decode+cuda --timing "$t"
  same "streams-gpu sizes.mp4 --timing $t" sizes.mp4 vulkan-decode+cuda --timing "$t"
  same "streams-gpu sizes.hevc (8/10-bit) --timing $t" sizes.hevc vulkan-decode+cuda --timing "$t"
  same "streams-gpu sizes.ivf (VP9) --timing $t" sizes.ivf sw-decode+upload+cuda --timing "$t"
  same "streams-gpu depth.ivf (VP9 profile 0/2) --timing $t" depth.ivf sw-decode+upload+cuda --timing "$t"
done
for chain in copy denoise=tnr:sigma=6 scale=w=176:h=144 fps=30 crop=w=128:h=96,denoise=nlm:sigma=4; do
  same "streams-gpu sizes.hevc --chain $chain" sizes.hevc vulkan-decode+cuda --chain "$chain"
  same "streams-gpu sizes.ivf --chain $chain --timing decoded" sizes.ivf sw-decode+upload+cuda --chain "$chain" \
    --timing decoded
done
same "streams-gpu sizes.h264 --algo blake3 (digests on the GPU)" sizes.h264 vulkan-decode+cuda --algo blake3 --timing decoded
same "streams-gpu sizes.h264 --algo blake3, scaled on the host" sizes.h264 vulkan-decode+cuda --algo blake3
same "streams-gpu sizes.hevc --download vulkan" sizes.hevc vulkan-decode+cuda --download vulkan --timing decoded
same "streams-gpu sizes.hevc --handoff timeline" sizes.hevc vulkan-decode+cuda --handoff timeline --timing decoded
same "streams-gpu sizes.h264 --ring-size 3" sizes.h264 vulkan-decode+cuda --ring-size 3 --chain denoise=tnr

# Imports once per new slot: sizes.hevc has 4 formats, NV12/P010 rings of 4
# slots x (2 planes + ready + done); the output ring adds 4 x (memory +
# filled + drained) per format.
imports_of() { # name want [vkcu hash args]
  local name=$1 want=$2; shift 2
  if timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$MEDIA/sizes.hevc" "$@" -o /dev/null -y 2> "$out/imp.err"; then
    local got
    got=$(stat_of "$out/imp.err" imports)
    [ "$got" = "$want" ] && echo "PASS $name: imports=$got (one per slot of each format's ring)" ||
      echo "FAIL $name: imports=$got, expected $want: $(grep 'stats: frames' "$out/imp.err")"
  else
    echo "FAIL $name: $(tail -1 "$out/imp.err")"
  fi
}
imports_of "streams-gpu imports over 3 format changes" 64 --timing decoded
imports_of "streams-gpu imports over 3 format changes, output ring" 112 --timing decoded --download vulkan

# A transcode takes the frames the CPU backend gives (scaled to the first
# size for the encoder): rawvideo in nut, so that the bytes are the frames.
for clip in sizes.h264 sizes.hevc sizes.ivf; do
  name="streams-gpu transcode $clip"
  if timeout -s KILL 300 "$VKCU" "$MEDIA/$clip" --backend cpu --encoder rawvideo -o "$out/cpu.nut" -y 2> "$out/t.err" &&
     timeout -s KILL 300 "$VKCU" "$MEDIA/$clip" --backend gpu --encoder rawvideo -o "$out/gpu.nut" -y 2> "$out/t.err" &&
     "$VKCU" hash --backend cpu "$out/cpu.nut" -o "$out/cpu.md5" -y 2> /dev/null &&
     "$VKCU" hash --backend cpu "$out/gpu.nut" -o "$out/gpu.md5" -y 2> /dev/null; then
    cmp -s <(frames "$out/cpu.md5") <(frames "$out/gpu.md5") &&
      echo "PASS $name: $(frames "$out/gpu.md5" | wc -l) frames, GPU = CPU" ||
      echo "FAIL $name: the GPU transcode's frames differ from the CPU's"
  else
    echo "FAIL $name: $(tail -1 "$out/t.err")"
  fi
done

# A GPU batch over streams that change size: every file done.
mkdir -p "$out/in"
cp "$MEDIA"/sizes.h264 "$MEDIA"/sizes.mp4 "$MEDIA"/sizes.hevc "$MEDIA"/sizes.ivf "$MEDIA"/depth.ivf "$out/in/"
if timeout -s KILL 600 "$VKCU" batch "$out/in" "$out/bout" --backend gpu --jobs 2 -q --report "$out/rep.jsonl" \
     2> "$out/b.err"; then
  done=$(grep -o '"status": *"done"' "$out/rep.jsonl" | wc -l)
  [ "$done" = 5 ] && echo "PASS streams-gpu batch: 5 size-changing files done on the GPU" ||
    echo "FAIL streams-gpu batch: $done of 5 done: $(grep -v '"done"' "$out/rep.jsonl" | head -1)"
else
  echo "FAIL streams-gpu batch: exit $?: $(tail -1 "$out/b.err")"
fi

# Damaged streams: the CPU's list marks what FFmpeg concealed; the GPU's
# frames differ from it on marked frames only.
for clip in damaged-noise.h264 damaged-lost.h264; do
  name="streams-gpu $clip"
  in=$MEDIA/$clip
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" -o "$out/dcpu" -y 2> /dev/null ||
    { echo "FAIL $name: CPU backend failed"; continue; }
  if ! timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" -o "$out/dgpu" -y 2> "$out/dgpu.err"; then
    echo "FAIL $name: GPU backend failed: $(tail -1 "$out/dgpu.err")"
    continue
  fi
  marked_cpu=$(grep -c '^#concealed' "$out/dcpu") marked_gpu=$(grep -c '^#concealed' "$out/dgpu")
  "$VKCU" compare "$out/dgpu" "$out/dcpu" > "$out/cmp" 2>&1
  rc=$?
  "$VKCU" compare --exclude-concealed "$out/dgpu" "$out/dcpu" > "$out/cmpx" 2>&1
  rcx=$?
  summary="CPU marks $marked_cpu, GPU marks $marked_gpu; $(grep '^frames:' "$out/cmp")"
  if [ "$(frames "$out/dgpu" | wc -l)" != "$(frames "$out/dcpu" | wc -l)" ]; then
    echo "FAIL $name: GPU gives $(frames "$out/dgpu" | wc -l) frames, the CPU $(frames "$out/dcpu" | wc -l)"
  elif [ "$clip" = damaged-lost.h264 ]; then
    # A whole lost picture: FFmpeg flags nothing on either backend
    # (docs/regression.md, lost pictures): the frame count must agree; the
    # differing frames are reported for the record.
    echo "PASS $name: as many frames as the CPU; unmarked, compare exit $rc ($summary)"
  elif [ "$marked_cpu" = 0 ]; then
    echo "FAIL $name: the CPU backend marks no concealed frame"
  elif [ "$rcx" != 0 ]; then
    echo "FAIL $name: GPU frames differ from the CPU's outside the concealed ones: $(grep '^result:' "$out/cmpx") ($summary)"
  else
    echo "PASS $name: GPU = CPU but for concealed frames (compare exit $rc, with --exclude-concealed 0; $summary)"
  fi
done

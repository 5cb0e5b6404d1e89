#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interlace flags through the operators on the GPU backend (run by
# tests/gpu.sh; tests/cli/interlace.sh is the CPU side): an interlaced input
# (MPEG-2 top field first, software decode + upload; H.264 MBAFF bottom field
# first, Vulkan decode) encoded to FFV1 through scale, crop, pad, fps,
# denoise (nlm, tnr), convert, copy and deinterlace gives the same field
# order in the stream, the same flags on every frame (FFV1 codes them) and
# the same frames as the CPU backend, and the field order expected (tb/bt,
# progressive after deinterlace). Read with ffmpeg alone (the GPU bundle has
# no ffprobe): the stream line's field order and showinfo's i:T/B/P.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# field order of the stream, then "N x T|B|P" per distinct frame flag
flags_of() {
  "$FFMPEG" -hide_banner -nostdin -i "$1" -vf showinfo -f null - 2>&1 |
    awk '/Stream #0:0: Video/ && !seen++ { o = "unknown"; if (/bottom coded first/) o = "bt"; else if (/top coded first/) o = "tb";
           else if (/progressive/) o = "progressive"; print o }
         / i:[TBP] / { match($0, / i:[TBP] /); f[substr($0, RSTART + 3, 1)]++ }
         END { for (k in f) print f[k] " x " k }'
}
frames_of() { "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$1" -f framemd5 - | grep -v '^#'; }
check() { # input chain expected-field-order expected-frame-flag
  local in=$1 chain=$2 order=$3 fl=$4 name b
  name="interlace-gpu $(basename "$in") $chain"
  [ -s "$in" ] || { echo "FAIL $name: $in missing (make media)"; return; }
  for b in cpu gpu; do
    timeout -s KILL 300 "$VKCU" --backend $b -q "$in" --chain "$chain" --encoder ffv1 -o "$out/$b.mkv" -y \
      2> "$out/$b.err" || { echo "FAIL $name: $b backend failed: $(tail -1 "$out/$b.err")"; return; }
    flags_of "$out/$b.mkv" > "$out/$b.flags"
  done
  local want got
  want=$(printf '%s\n%s x %s' "$order" "$(frames_of "$out/cpu.mkv" | wc -l)" "$fl")
  got=$(cat "$out/gpu.flags")
  if [ "$(cat "$out/cpu.flags")" != "$want" ]; then
    echo "FAIL $name: CPU output $(tr '\n' ' ' < "$out/cpu.flags"), expected $(echo "$want" | tr '\n' ' ')"
  elif [ "$got" != "$want" ]; then
    echo "FAIL $name: GPU output $(echo "$got" | tr '\n' ' '), CPU $(echo "$want" | tr '\n' ' ')"
  elif ! cmp -s <(frames_of "$out/gpu.mkv") <(frames_of "$out/cpu.mkv"); then
    echo "FAIL $name: GPU frames differ from the CPU's"
  else
    echo "PASS $name: field order $order, every frame $fl, frames equal the CPU backend's"
  fi
}
for chain in scale=w=320:h=240 crop=w=320:h=240 pad=w=400:h=300 fps=30 denoise=nlm denoise=tnr \
  convert=format=yuv420p copy; do
  check "$MEDIA/deint-mpeg2.ts" "$chain" tb T
  check "$MEDIA/deint-h264-bff.mkv" "$chain" bt B
done
check "$MEDIA/deint-mpeg2.ts" deinterlace=mode=frame progressive P
check "$MEDIA/deint-h264-bff.mkv" deinterlace,scale=w=320:h=240 progressive P

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The deinterlace operator equals FFmpeg's bwdif filter: per-frame hashes,
# pts and durations (`vkcu hash` against `ffmpeg -vf bwdif -f framemd5`, with
# the time base line) on interlaced MPEG-2 (top field first), H.264 MBAFF
# (bottom first) and ProRes 4:2:2 10-bit (bottom first), in frame and field
# mode, each parity and deint setting; a progressive clip with
# deint=interlaced passes through untouched; small and odd sizes down to the
# smallest FFmpeg accepts; sizes below what the filter can reflect are
# refused with exit 2.
source "$(dirname "$0")/lib.sh"

# The lines a user compares: time base, size, and per frame pts, duration, size, hash.
cols() { grep -E '^#(tb|dimensions)' "$1"; grep -v '^#' "$1" | awk -F', *' '{print $3, $4, $5, $6}'; }
same_as_ffmpeg() { # name input bwdif-options vkcu-chain
  local name=$1 in=$2 opts=$3 chain=$4
  "$FFMPEG" -cpuflags 0 -hide_banner -loglevel error -nostdin -threads 1 -i "$in" -vf "bwdif=$opts" \
    -f framemd5 - > "$TMP/ref" 2> "$TMP/ref.err" || { fail "$name: ffmpeg failed: $(tail -1 "$TMP/ref.err")"; return; }
  "$VKCU" hash --backend cpu -q "$in" --chain "$chain" -o "$TMP/out" -y 2> "$TMP/err" ||
    { fail "$name: vkcu failed: $(tail -1 "$TMP/err")"; return; }
  local n
  n=$(grep -vc '^#' "$TMP/ref")
  if [ "$n" -lt 2 ]; then
    fail "$name: ffmpeg gave $n frames"
  elif cmp -s <(cols "$TMP/out") <(cols "$TMP/ref"); then
    pass "$name: $n frames, hashes and timestamps equal ffmpeg bwdif=$opts"
  else
    fail "$name: differs from ffmpeg bwdif=$opts: $(diff <(cols "$TMP/out") <(cols "$TMP/ref") | grep '^[<>]' | head -2 | tr '\n' ' ')"
  fi
}

mpeg2=$MEDIA/deint-mpeg2.ts h264=$MEDIA/deint-h264-bff.mkv prores=$MEDIA/deint-prores10.mov
for f in "$mpeg2" "$h264" "$prores"; do
  [ -s "$f" ] || { fail "deint: $f missing (make media)"; exit 0; }
done

# Every key combination on the MPEG-2 clip.
for mode in frame field; do
  m=$([ $mode = frame ] && echo 0 || echo 1)
  for parity in auto tff bff; do
    for deint in all interlaced; do
      d=$([ $deint = all ] && echo 0 || echo 1)
      same_as_ffmpeg "deint mpeg2 mode=$mode parity=$parity deint=$deint" "$mpeg2" "mode=$m:parity=$parity:deint=$d" \
        "deinterlace=mode=$mode:parity=$parity:deint=$deint"
    done
  done
done
# H.264 MBAFF and ProRes 10-bit: their flags say bottom field first.
for mode in frame field; do
  m=$([ $mode = frame ] && echo 0 || echo 1)
  same_as_ffmpeg "deint h264 mode=$mode" "$h264" "mode=$m" "deinterlace=mode=$mode"
  same_as_ffmpeg "deint h264 mode=$mode parity=tff" "$h264" "mode=$m:parity=tff" "deinterlace=mode=$mode:parity=tff"
  same_as_ffmpeg "deint prores10 mode=$mode" "$prores" "mode=$m" "deinterlace=mode=$mode"
  same_as_ffmpeg "deint prores10 mode=$mode parity=tff" "$prores" "mode=$m:parity=tff" "deinterlace=mode=$mode:parity=tff"
done
# The default is one frame per field, as bwdif's.
same_as_ffmpeg "deint defaults" "$h264" "" "deinterlace"

# deint=interlaced on progressive frames: the frames pass through untouched.
prog=$MEDIA/corpus/h264.mp4
if [ -s "$prog" ]; then
  "$VKCU" hash --backend cpu -q "$prog" -o "$TMP/plain" -y 2> "$TMP/err"
  "$VKCU" hash --backend cpu -q "$prog" --chain deinterlace=mode=frame:deint=interlaced -o "$TMP/passed" -y 2>> "$TMP/err"
  if [ "$(grep -vc '^#' "$TMP/plain")" -gt 2 ] && cmp -s <(cols "$TMP/plain") <(cols "$TMP/passed"); then
    pass "deint progressive mode=frame deint=interlaced: every frame and timestamp unchanged"
  else
    fail "deint progressive mode=frame deint=interlaced: frames changed: $(diff <(cols "$TMP/plain") <(cols "$TMP/passed") | head -2 | tr '\n' ' ')"
  fi
  same_as_ffmpeg "deint progressive deint=interlaced field mode" "$prog" "deint=1" "deinterlace=deint=interlaced"
else
  fail "deint: $prog missing (make media)"
fi

# Small and odd sizes (raw y4m, interlaced flags in the header), down to the
# smallest planes FFmpeg's bwdif takes (4 lines): the lines next to the top
# and bottom, and the 10-bit reflection rule.
small() { # name pix_fmt size field-order
  "$FFMPEG" -hide_banner -loglevel error -nostdin -threads 1 \
    -filter_complex "testsrc2=size=$3:rate=50,format=$2,tinterlace=mode=interleave_top,setfield=$4" -frames:v 5 \
    -strict -1 "$TMP/$1.y4m" -y
}
for spec in "yuv420p 33x8 tff" "yuv420p10le 17x9 bff" "yuv422p 6x4 tff" "yuv444p12le 3x5 bff" "yuv420p 175x143 bff"; do
  set -- $spec
  name=$1-$2
  small "$name" "$1" "$2" "$3" || { fail "deint $name: cannot make the input"; continue; }
  for mode in frame field; do
    m=$([ $mode = frame ] && echo 0 || echo 1)
    same_as_ffmpeg "deint $1 $2 ($3) mode=$mode" "$TMP/$name.y4m" "mode=$m" "deinterlace=mode=$mode"
  done
done

# Too small to reflect a missing line: a one-line refusal, exit 2.
small tiny yuv420p 16x4 tff
expect "deint 16x4 4:2:0 refused" 2 'deinterlace: frame size 16x4 is too small: every plane needs at least 3 lines' -- \
  "$VKCU" hash --backend cpu -q "$TMP/tiny.y4m" --chain deinterlace
expect "deint rgb24 refused with the formats it takes" 2 'deinterlace: input format rgb24 is not supported \(use yuv420p' -- \
  "$VKCU" hash --backend cpu -q "$TMP/tiny.y4m" --chain convert=format=rgb24,deinterlace

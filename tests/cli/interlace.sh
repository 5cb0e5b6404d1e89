#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interlace flags through the operators (CPU backend; tests/gpu.d/interlace.sh
# runs the same chains on the GPU and compares): an interlaced input (MPEG-2
# top field first, H.264 MBAFF bottom field first) encoded through scale,
# crop, pad, fps, denoise (nlm, tnr), convert or copy keeps its field order,
# in the stream's parameters (tb/bt in Matroska; for x264 the same as ffmpeg
# writes for the same scale) and in every frame (FFV1 codes each frame's flags);
# deinterlace makes it progressive (and says so); a progressive input stays
# progressive (its field order unset, as before).
source "$(dirname "$0")/lib.sh"

order_of() { probe_val "$1" v:0 stream=field_order; }
# "N x interlaced,tff" for each distinct pair of frame flags
frame_flags() {
  "$FFPROBE" -v error -select_streams v:0 -show_entries frame=interlaced_frame,top_field_first -of csv=p=0 "$1" |
    sed 's/,$//' | sort | uniq -c | awk '{printf "%s%s x %s", (NR > 1 ? "; " : ""), $1, $2}'
}
check() { # input chain want-field-order want-frame-flags (interlaced,tff)
  local in=$1 chain=$2 order=$3 fl=$4 name got n
  name="interlace $(basename "$in") $chain"
  "$VKCU" --backend cpu -q "$in" --chain "$chain" --encoder ffv1 -o "$TMP/f.mkv" -y 2> "$TMP/err" ||
    { fail "$name: vkcu failed: $(tail -1 "$TMP/err")"; return; }
  got=$(order_of "$TMP/f.mkv")
  [ "$got" = "$order" ] || { fail "$name: output field order '$got', expected '$order'"; return; }
  got=$(frame_flags "$TMP/f.mkv")
  n=$("$FFPROBE" -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/f.mkv")
  if [ "$n" -lt 2 ] || [ "$got" != "$n x $fl" ]; then
    fail "$name: FFV1 frame flags (interlaced,tff) '$got', expected all $n '$fl'"
    return
  fi
  pass "$name: field order $order, all $n frames $fl"
}
for chain in scale=w=320:h=240 crop=w=320:h=240 pad=w=400:h=300 fps=30 denoise=nlm denoise=tnr \
  convert=format=yuv420p copy; do
  check "$MEDIA/deint-mpeg2.ts" "$chain" tb 1,1
  check "$MEDIA/deint-h264-bff.mkv" "$chain" bt 1,0
done
check "$MEDIA/deint-mpeg2.ts" deinterlace=mode=frame progressive 0,0
check "$MEDIA/deint-h264-bff.mkv" deinterlace,scale=w=320:h=240 progressive 0,0
check "$MEDIA/h264-aac.mp4" scale=w=160:h=90 unknown 0,0

# The field order ffmpeg writes for the same scale and encoder.
for in in "$MEDIA/deint-mpeg2.ts" "$MEDIA/deint-h264-bff.mkv"; do
  name="interlace $(basename "$in") scale field order as ffmpeg"
  "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$in" -vf scale=320:240 -c:v libx264 -an "$TMP/ff.mkv" -y ||
    { fail "$name: ffmpeg failed"; continue; }
  "$VKCU" --backend cpu -q "$in" --chain scale=w=320:h=240 --encoder libx264 -o "$TMP/x.mkv" -y 2> "$TMP/err" ||
    { fail "$name: vkcu failed: $(tail -1 "$TMP/err")"; continue; }
  a=$(order_of "$TMP/x.mkv") b=$(order_of "$TMP/ff.mkv")
  if [ "$a" = "$b" ] && [ "$a" != progressive ]; then pass "$name ($a)"; else fail "$name: vkcu '$a', ffmpeg '$b'"; fi
done

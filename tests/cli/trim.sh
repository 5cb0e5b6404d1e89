#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Frame-accurate trimming: --start/--duration in seconds, [HH:]MM:SS and NNNf
# cut exactly at those frames (decoding from the keyframe before the cut) on
# a clip with 50-frame GOPs and 3 B-frames, in MP4 and Matroska. Checked
# with frame hashes against the slice of the input's, pts and counts.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
"$VKCU" hash --backend cpu "$m/trim.mp4" | grep -v '^#' | cut -d, -f6 > "$TMP/all"
[ "$(wc -l < "$TMP/all")" = 200 ] || fail "trim.mp4: $(wc -l < "$TMP/all") frames, expected 200"
# check NAME FIRST COUNT vkcu-args...: hashes = input frames [FIRST, FIRST+COUNT), pts PTS0..PTS0+COUNT-1
# (the cut frame is at 0; without --start timestamps stay as they are: PTS0 is the input's first pts)
check() {
  local name=$1 first=$2 count=$3; shift 3
  if ! "$VKCU" hash --backend cpu "$@" > "$TMP/h" 2> "$TMP/err"; then
    fail "$name: exit $?: $(tail -1 "$TMP/err")"; return
  fi
  grep -v '^#' "$TMP/h" | cut -d, -f6 > "$TMP/got"
  sed -n "$((first + 1)),$((first + count))p" "$TMP/all" > "$TMP/want"
  local pts want_pts
  pts=$(grep -v '^#' "$TMP/h" | cut -d, -f3 | tr -d ' ' | tr '\n' ' ')
  want_pts=$(seq "${PTS0:-0}" $((${PTS0:-0} + count - 1)) | tr '\n' ' ')
  if [ "$(wc -l < "$TMP/got")" != "$count" ]; then
    fail "$name: $(wc -l < "$TMP/got") frames, expected $count"
  elif ! diff "$TMP/got" "$TMP/want" > /dev/null; then
    fail "$name: frames are not input frames $first..$((first + count - 1)) (first output frame is input frame $(grep -nxF "$(head -1 "$TMP/got")" "$TMP/all" | head -1 | cut -d: -f1))"
  elif [ "$pts" != "$want_pts" ]; then
    fail "$name: pts $(echo "$pts" | cut -c1-40), expected $(echo "$want_pts" | cut -c1-40)"
  else
    pass "$name"
  fi
}
for c in mp4 mkv; do
  in=$m/trim.$c
  check "$c: --start 73f --duration 40f (inside a GOP, B-frames)" 73 40 "$in" --start 73f --duration 40f
  check "$c: --start 2.92 --duration 1.6 (seconds)" 73 40 "$in" --start 2.92 --duration 1.6
  check "$c: --start 0:02.92 --duration 40f (MM:SS)" 73 40 "$in" --start 0:02.92 --duration 40f
  check "$c: --start 00:00:04.96 --duration 0:00.12 (HH:MM:SS)" 124 3 "$in" --start 00:00:04.96 --duration 0:00.12
  check "$c: --start 49f --duration 2f (last frame of a GOP)" 49 2 "$in" --start 49f --duration 2f
  check "$c: --start 50f --duration 2 (on a keyframe)" 50 50 "$in" --start 50f --duration 2
  check "$c: --start 190f (to the end)" 190 10 "$in" --start 190f
  PTS0=$("$VKCU" hash --backend cpu "$in" 2>/dev/null | grep -v '^#' | head -1 | cut -d, -f3 | tr -d ' ') \
    check "$c: --duration 10f (from the start, timestamps unchanged)" 0 10 "$in" --duration 10f
  # The cut decodes from the keyframe before it (frame 100), not from the start.
  "$VKCU" hash --backend cpu --log-level verbose "$in" --start 120f --duration 1f 2>&1 > /dev/null | grep -o 'after [0-9]* pre-roll' > "$TMP/pre"
  [ "$(cat "$TMP/pre")" = "after 20 pre-roll" ] && pass "$c: --start 120f decodes from the keyframe at 100 (20 pre-roll frames)" ||
    fail "$c: pre-roll for --start 120f: '$(cat "$TMP/pre")', expected 20 frames from the keyframe at 100"
done
# A raw H.264 stream has no timestamps to find frame N by: frames are counted.
"$FFMPEG" -v error -i "$m/trim.mp4" -map 0:v -c copy -bsf:v h264_mp4toannexb "$TMP/trim.h264"
check "raw .h264: --start 73f --duration 40f (counted)" 73 40 "$TMP/trim.h264" --start 73f --duration 40f

# Encoded output: video starts at 0, audio (cut at packet boundaries) within one packet of it, same length.
if "$VKCU" --backend cpu -q "$m/trim.mp4" -o "$TMP/t.mp4" --start 73f --duration 40f; then
  v=$("$FFPROBE" -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 "$TMP/t.mp4" | sort -g | head -1)
  a=$("$FFPROBE" -v error -select_streams a:0 -show_entries packet=pts_time -of csv=p=0 "$TMP/t.mp4" | sort -g | head -1)
  ad=$("$FFPROBE" -v error -select_streams a:0 -show_entries stream=duration -of csv=p=0 "$TMP/t.mp4")
  n=$("$FFPROBE" -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/t.mp4")
  [ "$v" = 0.000000 ] && [ "$n" = 40 ] && awk -v a="$a" -v d="$ad" 'BEGIN {exit !(a < 0.0214 && d >= 1.55 && d <= 1.62)}' &&
    pass "mp4 output: 40 frames from pts 0, audio from ${a}s (within one packet) for ${ad}s" ||
    fail "mp4 output: first video pts $v, audio pts $a, audio duration $ad, $n frames"
else
  fail "trimmed transcode failed"
fi
expect "--start past the end" 2 "trim.mp4: --start 300f is past the end \\(the input has 200 frames\\)" -- \
  "$VKCU" --backend cpu "$m/trim.mp4" -o "$TMP/x.mkv" --start 300f
expect "--start past the end (seconds)" 2 "trim.mp4: --start 9.000 is past the end" -- \
  "$VKCU" --backend cpu "$m/trim.mp4" -o "$TMP/x.mkv" --start 9
[ ! -e "$TMP/x.mkv" ] && no_leftovers "$TMP" && pass "no output after a bad --start" || fail "output left after a bad --start"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --faststart and the presets of issue 17.5: an MP4 written with --faststart
# (or a preset's 'faststart yes') has its index (moov) before the media data
# (mdat), one without has it after, and both decode to the same frames;
# faststart is refused for other containers and for standard output, with
# nothing written. The web-720p preset scales to 720 lines, H.264 High in
# MP4 with the index first; broadcast-1080i-to-720p50 makes every field a
# 1280x720 frame at twice the frame rate.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
boxes() { # the top-level MP4 boxes, in order
  python3 - "$1" <<'PYEOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
i, out = 0, []
while i + 8 <= len(d):
    n, t = struct.unpack('>I4s', d[i:i + 8])
    out.append(t.decode('latin1'))
    if n == 1:
        n = struct.unpack('>Q', d[i + 8:i + 16])[0]
    if n < 8:
        break
    i += n
print(' '.join(out))
PYEOF
}
order() { boxes "$1" | tr ' ' '\n' | grep -E '^(moov|mdat)$' | tr '\n' ' '; }
md5v() { "$FFMPEG" -v error -nostdin -i "$1" -map 0:v:0 -f framemd5 - 2> /dev/null | frames /dev/stdin | awk -F', *' '{print $6}'; }

"$VKCU" --backend cpu -q "$m/h264-aac.mp4" -o "$TMP/fast.mp4" --faststart 2> "$TMP/err" &&
  "$VKCU" --backend cpu -q "$m/h264-aac.mp4" -o "$TMP/plain.mp4" 2>> "$TMP/err"
if [ "$(order "$TMP/fast.mp4")" = "moov mdat " ] && [ "$(order "$TMP/plain.mp4")" = "mdat moov " ] &&
  [ -n "$(md5v "$TMP/fast.mp4")" ] && [ "$(md5v "$TMP/fast.mp4")" = "$(md5v "$TMP/plain.mp4")" ] &&
  [ "$(probe_val "$TMP/fast.mp4" a:0 stream=codec_name)" = aac ]; then
  pass "--faststart: moov before mdat (without it after), the same frames, audio kept"
else
  fail "--faststart: boxes '$(boxes "$TMP/fast.mp4")' / '$(boxes "$TMP/plain.mp4")': $(tail -1 "$TMP/err")"
fi
expect "--faststart refused for Matroska" 2 "--faststart: only MP4/MOV outputs have an index to move \(this output is matroska\)" -- \
  "$VKCU" --backend cpu -q "$m/h264-aac.mp4" -o "$TMP/f.mkv" --faststart
[ ! -e "$TMP/f.mkv" ] && ! ls -A "$TMP" | grep -q '\.part' && pass "--faststart refusal leaves no file" || fail "--faststart refusal left $(ls -A "$TMP" | tr '\n' ' ')"
expect "--faststart refused on standard output" 2 "--faststart: .*not possible on standard output" -- \
  "$VKCU" --backend cpu -q "$m/h264-aac.mp4" -o - -f mp4 --faststart
printf 'description x\nencoder libx264\ncontainer mkv\nfaststart yes\n' > "$TMP/fs.pipe"
expect "preset: faststart needs mp4" 2 "fs.pipe:4:11: faststart: only MP4/MOV files have an index to move" -- "$VKCU" pipelines "$TMP/fs.pipe"
printf 'description x\nencoder libx264\ncontainer mp4\nfaststart maybe\n' > "$TMP/fs2.pipe"
expect "preset: faststart yes or no" 2 "fs2.pipe:4:11: faststart: 'maybe' is not yes or no" -- "$VKCU" pipelines "$TMP/fs2.pipe"

# web-720p: 720 lines, width from the aspect, High profile, index first.
if "$VKCU" --backend cpu -q "$m/hevc10.mkv" --pipeline web-720p -o "$TMP/w.mp4" 2> "$TMP/err"; then
  s="$(probe_val "$TMP/w.mp4" v:0 stream=width)x$(probe_val "$TMP/w.mp4" v:0 stream=height)"
  pf=$(probe_val "$TMP/w.mp4" v:0 stream=pix_fmt) pr=$(probe_val "$TMP/w.mp4" v:0 stream=profile)
  n=$(probe_val "$TMP/w.mp4" v:0 stream=nb_frames)
  [ "$s" = 960x720 ] && [ "$pf" = yuv420p ] && [ "$pr" = High ] && [ "$n" = 30 ] && [ "$(order "$TMP/w.mp4")" = "moov mdat " ] &&
    pass "preset web-720p: 320x240 10-bit HEVC -> 960x720 yuv420p H.264 High, 30 frames, index first" ||
    fail "preset web-720p: $s $pf $pr, $n frames, boxes $(boxes "$TMP/w.mp4")"
else
  fail "preset web-720p: $(tail -1 "$TMP/err")"
fi

# broadcast-1080i-to-720p50: every field a frame (25i -> 50p), 1280x720, H.264 in Matroska.
if "$VKCU" --backend cpu -q "$m/deint-mpeg2.ts" --pipeline broadcast-1080i-to-720p50 -o "$TMP/b.mkv" 2> "$TMP/err"; then
  s="$(probe_val "$TMP/b.mkv" v:0 stream=width)x$(probe_val "$TMP/b.mkv" v:0 stream=height)"
  r=$(probe_val "$TMP/b.mkv" v:0 stream=r_frame_rate) c=$(probe_val "$TMP/b.mkv" v:0 stream=codec_name)
  n=$("$FFMPEG" -v error -nostdin -i "$TMP/b.mkv" -map 0:v:0 -f framemd5 - 2> /dev/null | frames /dev/stdin | wc -l)
  [ "$s" = 1280x720 ] && [ "$r" = 50/1 ] && [ "$c" = h264 ] && [ "$n" = 40 ] &&
    pass "preset broadcast-1080i-to-720p50: 20 interlaced MPEG-2 frames -> 40 frames 1280x720 at 50/1, H.264" ||
    fail "preset broadcast-1080i-to-720p50: $s at $r, $c, $n frames (expected 1280x720, 50/1, h264, 40)"
else
  fail "preset broadcast-1080i-to-720p50: $(tail -1 "$TMP/err")"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Which audio and subtitle streams a transcode writes, and how (issue 38
# items 5 and 12), on the CPU backend with clips made here by ffmpeg:
# - a stream the container takes is copied bit for bit, also where the
#   muxer does not say which codecs it takes (AAC into MPEG-TS: the same
#   packets as `ffmpeg -c copy`);
# - text subtitles a container cannot hold are converted to the text
#   codec it holds (SubRip into MP4 becomes mov_text with the same text
#   and timings); bitmap subtitles that cannot go are dropped with a line
#   naming the stream;
# - --audio-stream / --subtitle-stream N|all|none pick the streams
#   (ffmpeg's -map), in transcode and batch; N past the last stream is a
#   usage error (exit 2) naming the file and how many it has.
source "$(dirname "$0")/lib.sh"
V=$VKCU
in=$MEDIA/h264-aac.mp4
[ -s "$in" ] || { fail "streams-select: $in missing (make media)"; exit 0; }
# packets of one stream: size and md5 (and pts, duration), as ffmpeg reads them back
packets() { # file stream-spec
  "$FFMPEG" -v error -nostdin -i "$1" -map "0:$2" -c copy -f framemd5 - 2> /dev/null | grep -v '^#' |
    awk -F', *' '{print $3, $4, $5, $6}'
}
codecs() { # each stream once (MPEG-TS lists its streams again under its program)
  "$FFPROBE" -v error -show_entries stream=index,codec_name -of csv=p=0 "$1" 2> /dev/null | sort -u -t, -k1,1n |
    cut -d, -f2 | tr '\n' ' '
}

# ---- item 5: AAC into MPEG-TS is copied as ffmpeg -c copy copies it ----
"$FFMPEG" -v error -nostdin -y -i "$in" -map 0 -c copy "$TMP/ref.ts"
"$V" --backend cpu "$in" -o "$TMP/a.ts" 2> "$TMP/err"; rc=$?
packets "$TMP/a.ts" a > "$TMP/got"; packets "$TMP/ref.ts" a > "$TMP/want"
if [ $rc = 0 ] && [ "$(codecs "$TMP/a.ts")" = "h264 aac " ] && [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want" &&
  ! grep -q "cannot go into" "$TMP/err"; then
  pass "5: .ts keeps the AAC stream, its $(wc -l < "$TMP/want") packets those of ffmpeg -c copy (pts, size, md5)"
else
  fail "5: .ts: exit $rc, streams '$(codecs "$TMP/a.ts")', $(wc -l < "$TMP/got")/$(wc -l < "$TMP/want") packets, $(cmp "$TMP/got" "$TMP/want" 2>&1 | head -1): $(head -2 "$TMP/err")"
fi

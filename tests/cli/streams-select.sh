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

# ---- item 12: --audio-stream / --subtitle-stream N|all|none ----
# two audio streams (440 and 880 Hz) and two SubRip streams
printf '1\n00:00:00,100 --> 00:00:00,450\nfirst track\n\n2\n00:00:00,500 --> 00:00:00,900\nstill first\n' > "$TMP/s0.srt"
printf '1\n00:00:00,200 --> 00:00:00,600\nsecond track\n' > "$TMP/s1.srt"
"$FFMPEG" -v error -nostdin -y -filter_complex "testsrc2=s=64x64:r=10:d=1[v];sine=f=440:d=1[a];sine=f=880:d=1[b]" \
  -i "$TMP/s0.srt" -i "$TMP/s1.srt" -map "[v]" -map "[a]" -map "[b]" -map 0:s -map 1:s -c:v libx264 -c:a aac -c:s copy \
  -fflags +bitexact "$TMP/multi.mkv"
[ "$(codecs "$TMP/multi.mkv")" = "h264 aac aac subrip subrip " ] || fail "12: the clip: $(codecs "$TMP/multi.mkv")"
# pick OUT ARGS...: a transcode of multi.mkv to OUT with ARGS; the output's codecs
pick() {
  local out=$1; shift
  "$V" --backend cpu -q "$TMP/multi.mkv" -o "$out" "$@" 2> "$TMP/err" && codecs "$out"
}
got=$(pick "$TMP/all.mkv")
[ "$got" = "h264 aac aac subrip subrip " ] && pass "12: by default every audio and subtitle stream is kept" ||
  fail "12: default: '$got' $(cat "$TMP/err")"
got=$(pick "$TMP/a1.mkv" --audio-stream 1 --subtitle-stream 0)
if [ "$got" = "h264 aac subrip " ] && [ "$(packets "$TMP/a1.mkv" a)" = "$(packets "$TMP/multi.mkv" a:1)" ] &&
  [ "$(packets "$TMP/a1.mkv" s)" = "$(packets "$TMP/multi.mkv" s:0)" ] &&
  [ "$(packets "$TMP/a1.mkv" a)" != "$(packets "$TMP/multi.mkv" a:0)" ]; then
  pass "12: --audio-stream 1 --subtitle-stream 0 keep the second audio and the first subtitle stream (= -map 0:a:1 -map 0:s:0)"
else
  fail "12: --audio-stream 1 --subtitle-stream 0: '$got' $(cat "$TMP/err")"
fi
got=$(pick "$TMP/s1.mkv" --audio-stream none --subtitle-stream 1)
[ "$got" = "h264 subrip " ] && [ "$(packets "$TMP/s1.mkv" s)" = "$(packets "$TMP/multi.mkv" s:1)" ] &&
  pass "12: --audio-stream none --subtitle-stream 1: no audio, the second subtitle stream" ||
  fail "12: none/1: '$got' $(cat "$TMP/err")"
got=$(pick "$TMP/n.mkv" --subtitle-stream none --audio-stream all)
[ "$got" = "h264 aac aac " ] && pass "12: --subtitle-stream none --audio-stream all" || fail "12: none/all: '$got' $(cat "$TMP/err")"
got=$(pick "$TMP/na.mkv" --audio-stream 0 --no-audio)
[ "$got" = "h264 subrip subrip " ] && pass "12: --no-audio after --audio-stream 0: no audio (the later one counts)" ||
  fail "12: --audio-stream 0 --no-audio: '$got' $(cat "$TMP/err")"
expect "12: --audio-stream past the last stream: exit 2 naming the file and how many there are" 2 \
  "multi\\.mkv: --audio-stream 2: the input has 2 audio streams \\(numbered from 0\\)" -- \
  "$V" --backend cpu "$TMP/multi.mkv" -o "$TMP/x.mkv" --audio-stream 2
[ ! -e "$TMP/x.mkv" ] && pass "12: ... and no output is written" || fail "12: an output was left: $(ls "$TMP")"
expect "12: --subtitle-stream on an input without subtitles: exit 2" 2 \
  "h264-aac\\.mp4: --subtitle-stream 0: the input has no subtitle stream" -- \
  "$V" --backend cpu "$in" -o "$TMP/x.mkv" --subtitle-stream 0
expect "12: a value that is neither a number, all nor none: exit 2" 2 \
  "--audio-stream: 'first' is not an integer in \\[0, 1023\\], nor all or none" -- \
  "$V" --backend cpu "$in" -o "$TMP/x.mkv" --audio-stream first
expect "12: ffmpeg's -map is answered with the stream options" 2 \
  "unknown option '-map': did you mean --video-stream N .*--audio-stream N\\|all\\|none and --subtitle-stream N\\|all\\|none" -- \
  "$V" --backend cpu "$in" -map 0:a:1 -o "$TMP/x.mkv"
expect "12: hash's -map hint names --video-stream only (hash writes no audio)" 2 \
  "hash: unknown option '-map': did you mean --video-stream N \\(vkcu processes one video stream\\)\\?" -- \
  "$V" hash "$in" -map 0:v:0
"$V" --help > "$TMP/help"
grep -q -- "--audio-stream N|all|none" "$TMP/help" && grep -q -- "--subtitle-stream N|all|none" "$TMP/help" &&
  "$V" --generate completion | grep -q -- "--audio-stream) words='all none'" &&
  pass "12: --help and the bash completion have both options" || fail "12: --help or completion lacks them"
# batch takes them (and a file with too few streams fails alone)
mkdir -p "$TMP/in"; cp "$TMP/multi.mkv" "$TMP/in/"; cp "$in" "$TMP/in/"
"$V" batch --backend cpu -q "$TMP/in" "$TMP/out" --audio-stream 1 --subtitle-stream 1 --encoder ffv1 2> "$TMP/err"; rc=$?
if [ "$(codecs "$TMP/out/multi.mkv")" = "ffv1 aac subrip " ] && [ "$(packets "$TMP/out/multi.mkv" a)" = "$(packets "$TMP/multi.mkv" a:1)" ] &&
  [ ! -e "$TMP/out/h264-aac.mp4" ] && grep -q "h264-aac.mp4: --audio-stream 1: the input has 1 audio stream" "$TMP/err"; then
  pass "12: batch --audio-stream 1 --subtitle-stream 1 picks in each file; one with a single audio stream fails alone (exit $rc)"
else
  fail "12: batch: exit $rc, '$(codecs "$TMP/out/multi.mkv")', $(ls "$TMP/out" | tr '\n' ' '): $(head -3 "$TMP/err")"
fi

# ---- item 5: text subtitles are converted to the text codec the container holds ----
# events FILE: each subtitle event of the first subtitle stream, "start duration text" (seconds; the text's
# bytes as Python writes them, after mov_text's 2-byte length), as ffprobe reads the packets back;
# empty samples (MP4's gaps) left out. With an .srt: its events, lines joined by NL.
events() { # file [NL]
  case $1 in
    *.srt) python3 - "$1" "${2:-\\n}" <<'PYEOF' ;;
import re, sys
nl = sys.argv[2].encode().decode('unicode_escape')
def sec(t):
    h, m, s = t.replace(',', '.').split(':')
    return int(h) * 3600 + int(m) * 60 + float(s)
for block in open(sys.argv[1]).read().strip().split('\n\n'):
    lines = block.split('\n')
    a, b = re.match(r'(\S+) --> (\S+)', lines[1]).groups()
    print('%.3f %.3f %r' % (sec(a), sec(b) - sec(a), nl.join(lines[2:])))
PYEOF
    *) "$FFPROBE" -v error -select_streams s:0 -show_entries stream=codec_name -show_packets -show_data -of json "$1" |
      python3 -c '
import json, sys
j = json.load(sys.stdin)
mov = [s["codec_name"] for s in j.get("streams", [])] == ["mov_text"]
for p in j.get("packets", []):
    data = bytes.fromhex("".join(l[10:49].replace(" ", "") for l in p["data"].strip().split("\n")))
    if mov:
        data = data[2:2 + int.from_bytes(data[:2], "big")]
    if data:
        print("%.3f %.3f %r" % (float(p["pts_time"]), float(p["duration_time"]), data.decode()))' ;;
  esac
}
cat > "$TMP/a.srt" << 'EOF2'
1
00:00:00,100 --> 00:00:00,450
Hello, world

2
00:00:00,500 --> 00:00:00,900
Two lines
the second one
EOF2
"$FFMPEG" -v error -nostdin -y -filter_complex "testsrc2=s=64x64:r=10:d=1[v]" -i "$TMP/a.srt" -map "[v]" -map 0:s \
  -c:v libx264 -c:s copy -fflags +bitexact "$TMP/srt.mkv"
"$V" --backend cpu "$TMP/srt.mkv" -o "$TMP/t.mp4" 2> "$TMP/err"; rc=$?
events "$TMP/a.srt" > "$TMP/want"; events "$TMP/t.mp4" > "$TMP/got"
decoded=$("$FFPROBE" -v error -select_streams s -show_frames -show_entries subtitle=num_rects -of csv=p=0:nk=1 "$TMP/t.mp4" 2> /dev/null | tr '\n' ' ')
if [ $rc = 0 ] && [ "$(codecs "$TMP/t.mp4")" = "h264 mov_text " ] && [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want" &&
  [ "$decoded" = "1 1 " ] &&
  grep -q "srt.mkv: stream 1 (subtitle subrip) cannot go into mp4: converted to mov_text" "$TMP/err"; then
  pass "5: SubRip into .mp4 becomes mov_text with the same text and timings, said so ($(wc -l < "$TMP/want") events, ffmpeg decodes them)"
else
  fail "5: SubRip into .mp4: exit $rc, streams '$(codecs "$TMP/t.mp4")', decoded '$decoded': $(diff "$TMP/got" "$TMP/want" | head -4 | tr '\n' ' ') $(head -2 "$TMP/err")"
fi
# and back: mov_text into Matroska becomes SubRip (lines end in CR LF, as ffmpeg's srt encoder writes them)
"$V" --backend cpu -q "$TMP/t.mp4" -o "$TMP/t.mkv" 2> "$TMP/err"; rc=$?
events "$TMP/a.srt" '\r\n' > "$TMP/want"; events "$TMP/t.mkv" > "$TMP/got"
[ $rc = 0 ] && [ "$(codecs "$TMP/t.mkv")" = "h264 subrip " ] && cmp -s "$TMP/got" "$TMP/want" &&
  pass "5: mov_text into .mkv becomes SubRip with the same text and timings" ||
  fail "5: mov_text into .mkv: exit $rc, '$(codecs "$TMP/t.mkv")': $(diff "$TMP/got" "$TMP/want" | head -4 | tr '\n' ' ') $(cat "$TMP/err")"
# WebM holds WebVTT only
"$V" --backend cpu -q "$TMP/srt.mkv" -o "$TMP/t.webm" 2> "$TMP/err"; rc=$?
events "$TMP/a.srt" > "$TMP/want"; events "$TMP/t.webm" > "$TMP/got"
[ $rc = 0 ] && [ "$(codecs "$TMP/t.webm")" = "av1 webvtt " ] && cmp -s "$TMP/got" "$TMP/want" &&
  pass "5: SubRip into .webm becomes WebVTT with the same text and timings" ||
  fail "5: SubRip into .webm: exit $rc, '$(codecs "$TMP/t.webm")': $(diff "$TMP/got" "$TMP/want" | head -4 | tr '\n' ' ') $(cat "$TMP/err")"
# a container with no text subtitle codec: dropped with a line naming the stream
expect "5: .avi holds no text subtitles: the stream is dropped with a warning naming it" 0 \
  "warning: .*srt\\.mkv: stream 1 \\(subtitle subrip\\) cannot go into avi, which holds no text subtitles; dropped \\(--subtitle-stream none drops subtitles without this warning\\)" -- \
  "$V" --backend cpu "$TMP/srt.mkv" -o "$TMP/t.avi" --encoder mpeg4

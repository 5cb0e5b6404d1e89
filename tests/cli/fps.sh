#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fps operator against ffmpeg's fps filter (issue 17.4): for each output
# time the same source frame, and the same timestamps and durations in the
# new rate (vkcu hash --chain fps=... vs ffmpeg -vf fps=... -f framemd5,
# line for line, time base included), for 25 -> 30 and 60 -> 24 fps, every
# round mode, eof_action=pass, rates written as N/D, decimals and names, and
# a VFR input. A transcode keeps the audio packets as they were, starts
# audio and video together and declares the new rate; compare --chain-a
# runs it too. Backend: cpu (tests/gpu.d/fps.sh checks the GPU's hashes).
source "$(dirname "$0")/lib.sh"
ff="$FFMPEG -cpuflags 0 -hide_banner -loglevel error -nostdin -y"
fixed=(-threads 1 -x264-params cpu-independent=1 -fflags +bitexact)
src="testsrc2=size=96x64"
# 25 fps, 2 s, lossless, with AAC audio; 60 fps, 1 s, H.264 with B-frames, in MP4.
$ff -filter_complex "$src:rate=25:duration=2[v];sine=frequency=440:sample_rate=48000:duration=2[a]" \
  -map "[v]" -map "[a]" -c:v ffv1 -c:a aac -b:a 64k "${fixed[@]}" "$TMP/25.mkv" &&
  $ff -filter_complex "$src:rate=60:duration=1" -c:v libx264 -preset veryfast -bf 3 -pix_fmt yuv420p "${fixed[@]}" \
    "$TMP/60.mp4" || { fail "fps: cannot make the test clips"; exit 0; }

# same NAME INPUT FILTER: vkcu's frames (hash, pts, duration) and time base = ffmpeg's
same() {
  local name=$1 in=$2 f=$3
  "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$in" -map 0:v -vf "$f" -f framemd5 - > "$TMP/ff" ||
    { fail "$name: ffmpeg failed"; return; }
  if ! "$VKCU" hash --backend cpu --chain "$f" "$in" > "$TMP/vk" 2> "$TMP/err"; then
    fail "$name: vkcu exit $?: $(tail -1 "$TMP/err")"; return
  fi
  local n d
  n=$(frames "$TMP/ff" | wc -l)
  d=$(diff <(frames "$TMP/ff"; grep '^#tb' "$TMP/ff") <(frames "$TMP/vk"; grep '^#tb' "$TMP/vk") | grep -c '^>')
  if [ "$n" -lt 2 ]; then
    fail "$name: ffmpeg gave $n frames (not a test)"
  elif [ "$d" = 0 ]; then
    pass "$name: $n frames, the same source frames, pts and durations as ffmpeg ($(grep '^#tb' "$TMP/ff"))"
  else
    fail "$name: $d of $n lines differ from ffmpeg's: $(diff <(frames "$TMP/ff") <(frames "$TMP/vk") | grep '^[<>]' | head -2 | tr -s ' ' | tr '\n' ';')"
  fi
}
same "25 -> 30 fps" "$TMP/25.mkv" fps=30
same "60 -> 24 fps (H.264, B-frames, MP4)" "$TMP/60.mp4" fps=24
same "60 -> 24 fps round=down" "$TMP/60.mp4" fps=24:round=down
for r in down up zero inf; do
  same "25 -> 30 fps round=$r" "$TMP/25.mkv" fps=30:round=$r
done
# eof_action=pass keeps the last frame up to the end: 15 frames where round gives 14
same "25 -> 7 fps eof_action=pass" "$TMP/25.mkv" fps=7:eof_action=pass
same "25 -> 13 fps round=up eof_action=pass" "$TMP/25.mkv" fps=13:round=up:eof_action=pass
same "25 -> 30000/1001 fps" "$TMP/25.mkv" fps=30000/1001
same "60 -> 29.97 fps (decimal)" "$TMP/60.mp4" fps=29.97
same "60 -> ntsc_film (a name)" "$TMP/60.mp4" fps=ntsc_film
same "60 -> source_fps/2.5 (an expression of the input's rate)" "$TMP/60.mp4" fps=source_fps/2.5
same "25 -> 50 fps (every frame twice)" "$TMP/25.mkv" fps=50
same "VFR input -> 30 fps" "$MEDIA/vfr.mkv" fps=30
same "VFR input -> 12 fps round=down" "$MEDIA/vfr.mkv" fps=12:round=down
# a decimal ffmpeg reads as 2997/100, not 30000/1001: the grid differs over 2 s
same "25 -> 29.97 fps" "$TMP/25.mkv" fps=29.97

# Every clip of the codec/container corpus (raw H.264/HEVC without timestamps,
# MPEG-TS, MXF, y4m, interlaced MPEG-2, 29.97 fps, ...): the same frames as ffmpeg's fps=30.
if [ -d "$MEDIA/corpus" ]; then
  bad="" n=0
  for c in "$MEDIA"/corpus/*; do
    "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$c" -map 0:v:0 -vf fps=30 -f framemd5 - 2>/dev/null | frames /dev/stdin > "$TMP/ff"
    "$VKCU" hash --backend cpu --chain fps=30 "$c" 2>/dev/null | frames /dev/stdin > "$TMP/vk"
    n=$((n + 1))
    { [ -s "$TMP/ff" ] && cmp -s "$TMP/ff" "$TMP/vk"; } || bad="$bad $(basename "$c")"
  done
  [ -z "$bad" ] && [ "$n" -gt 10 ] && pass "corpus: fps=30 gives ffmpeg's frames and timestamps on all $n clips" ||
    fail "corpus: fps=30 differs from ffmpeg on:$bad (of $n)"
else
  skip "corpus: $MEDIA/corpus missing (make media)"
fi

# Transcode: audio packets untouched, and every packet of both streams timed
# as by ffmpeg -vf fps=30 -c:a copy (A/V sync), video at 30 fps.
pk() { "$FFPROBE" -v error -show_entries packet=stream_index,pts,dts,duration -of csv=p=0 "$1"; }
if "$VKCU" --backend cpu -q "$TMP/25.mkv" --chain fps=30 -o "$TMP/t.mkv" 2> "$TMP/err"; then
  $ff -i "$TMP/25.mkv" -vf fps=30 -c:a copy "${fixed[@]}" "$TMP/ff.mkv"
  "$FFMPEG" -loglevel error -i "$TMP/25.mkv" -map 0:a -c copy -f framemd5 - | frames /dev/stdin > "$TMP/a_in"
  "$FFMPEG" -loglevel error -i "$TMP/t.mkv" -map 0:a -c copy -f framemd5 - | frames /dev/stdin > "$TMP/a_out"
  rate=$(probe_val "$TMP/t.mkv" v:0 stream=r_frame_rate)
  n=$("$FFPROBE" -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/t.mkv")
  na=$(wc -l < "$TMP/a_in")
  np=$(pk "$TMP/ff.mkv" | wc -l)
  if [ "$na" -gt 10 ] && cmp -s "$TMP/a_in" "$TMP/a_out" && [ "$rate" = 30/1 ] && [ "$n" = 60 ] &&
    diff <(pk "$TMP/ff.mkv") <(pk "$TMP/t.mkv") > /dev/null; then
    pass "transcode --chain fps=30: $na audio packets as they were; $n video frames at $rate; all $np packets timed as ffmpeg's"
  else
    fail "transcode --chain fps=30: audio $(cmp -s "$TMP/a_in" "$TMP/a_out" && echo same || echo changed) ($na packets), rate $rate, $n frames, $(diff <(pk "$TMP/ff.mkv") <(pk "$TMP/t.mkv") | grep -c '^>') packets timed unlike ffmpeg's"
  fi
else
  fail "transcode --chain fps=30: exit $?: $(tail -1 "$TMP/err")"
fi
# MP4 (constant frame rate muxing): the encoder runs at 24 fps; frames as ffmpeg's.
if "$VKCU" --backend cpu -q "$TMP/60.mp4" --chain fps=24 --encoder ffv1 -o "$TMP/t24.mkv" 2> "$TMP/err" &&
  "$VKCU" --backend cpu -q "$TMP/60.mp4" --chain fps=24 -o "$TMP/t24.mp4" 2>> "$TMP/err"; then
  "$FFMPEG" -loglevel error -i "$TMP/60.mp4" -vf fps=24 -f framemd5 - | frames /dev/stdin | cut -d, -f6 > "$TMP/want"
  "$FFMPEG" -loglevel error -i "$TMP/t24.mkv" -f framemd5 - | frames /dev/stdin | cut -d, -f6 > "$TMP/got"
  tb=$(probe_val "$TMP/t24.mp4" v:0 stream=r_frame_rate)
  n=$("$FFPROBE" -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/t24.mp4")
  if cmp -s "$TMP/want" "$TMP/got" && [ "$tb" = 24/1 ] && [ "$n" = "$(wc -l < "$TMP/want")" ]; then
    pass "transcode 60 -> 24 fps: lossless output decodes to ffmpeg's $n frames; MP4 at $tb with $n frames"
  else
    fail "transcode 60 -> 24 fps: lossless frames $(cmp -s "$TMP/want" "$TMP/got" && echo equal || echo differ), mp4 rate $tb, $n frames (ffmpeg: $(wc -l < "$TMP/want"))"
  fi
else
  fail "transcode 60 -> 24 fps: $(tail -1 "$TMP/err")"
fi
# compare --chain-a: the 25 fps clip made 30 fps equals ffmpeg's 30 fps version.
$ff -i "$TMP/25.mkv" -vf fps=30 -c:v ffv1 -an "${fixed[@]}" "$TMP/ff30.mkv"
if "$VKCU" compare --backend cpu --chain-a fps=30 "$TMP/25.mkv" "$TMP/ff30.mkv" > "$TMP/cmp" 2>&1; then
  pass "compare --chain-a fps=30: equal to ffmpeg's fps=30 output ($(grep -io '[0-9]* frames' "$TMP/cmp" | head -1))"
else
  fail "compare --chain-a fps=30: $(grep -v '^ ' "$TMP/cmp" | head -2 | tr '\n' ' ')"
fi
expect "fps=abc: exit 2 naming the key" 2 "fps='abc' is not a frame rate" -- "$VKCU" hash --chain fps=abc "$TMP/25.mkv"
expect "fps=0: exit 2" 2 "fps=0 is 0, outside" -- "$VKCU" hash --chain fps=0 "$TMP/25.mkv"
expect "round=nearest: exit 2 listing the modes" 2 "near\|down\|up" -- "$VKCU" hash --chain fps=30:round=nearest "$TMP/25.mkv"

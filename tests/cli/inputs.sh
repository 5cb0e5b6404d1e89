#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every input a user brings (issue 11): vkcu --version and vkcu formats,
# messages for inputs no decoder takes, timestamps as ffmpeg makes them
# (raw elementary streams, VFR, B-frames with an edit list, MPEG-TS with a
# start offset, duplicate and out-of-order timestamps), --video-stream,
# standard output and input, and a reader that closes the pipe early.
# Media are made here by the build's ffmpeg, one thread, so they are the
# same bytes everywhere; the conformance streams are used when present.
source "$(dirname "$0")/lib.sh"
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y -threads 1 "$@"; }
src() { echo "testsrc2=size=64x48:rate=${1:-25}"; }

# ---- vkcu --version, vkcu formats ----
# Runs with no GPU and without any Vulkan driver, and must neither crash nor hang.
timeout 60 "$VKCU" --version > "$TMP/version" 2> "$TMP/version.err"
rc=$?
if [ $rc = 0 ] && grep -qE '^vkcu [0-9]+\.[0-9]+' "$TMP/version" && grep -qE '^FFmpeg 8\.1\.[0-9]+.*: libavcodec 62\.' "$TMP/version" &&
  grep -q '^FFmpeg configuration:.* enable-libdav1d' "$TMP/version" && grep -qE '^FFmpeg components: [0-9]{3} decoders' "$TMP/version" &&
  grep -qE '^CUDA: ' "$TMP/version" && grep -qE '^Vulkan: ' "$TMP/version" && grep -qE '^GPU backend: ' "$TMP/version"; then
  pass "--version: vkcu, FFmpeg and libavcodec versions, configuration, CUDA and Vulkan ($(grep -E '^(CUDA|Vulkan):' "$TMP/version" | cut -c1-60 | tr '\n' ' '))"
else
  fail "--version: exit $rc: $(head -3 "$TMP/version" | tr '\n' ' ') $(head -1 "$TMP/version.err")"
fi
VK_DRIVER_FILES=/nonexistent.json VK_ICD_FILENAMES=/nonexistent.json timeout 60 "$VKCU" --version > "$TMP/version2" 2>&1
rc=$?
[ $rc = 0 ] && grep -qE '^Vulkan: (loader present, no devices|unavailable|loader present, but)' "$TMP/version2" &&
  pass "--version without a Vulkan driver: $(grep '^Vulkan:' "$TMP/version2")" || fail "--version without a Vulkan driver: exit $rc: $(grep Vulkan "$TMP/version2")"

timeout 60 "$VKCU" formats > "$TMP/formats" 2>&1
rc=$?
missing=
for c in h264 hevc av1 vp9 vp8 mpeg2video mpeg4 prores mjpeg dnxhd ffv1; do
  grep -qE "^  (GPU |    ) $c " "$TMP/formats" || missing="$missing $c"
done
for d in 'mov,mp4' 'matroska,webm' mpegts avi mxf h264 hevc ivf yuv4mpegpipe; do
  grep -qE "^  $d" "$TMP/formats" || missing="$missing $d"
done
gpu_here=$(sed '/^Video encoders/,$d' "$TMP/formats" | grep -c '^  GPU ') # the decoders (encoders say where they run)
if [ $rc = 0 ] && [ -z "$missing" ] && grep -qE '^[0-9]+ video codecs, [0-9]+ of them decode on the GPU here$' "$TMP/formats"; then
  pass "formats: every corpus codec and container listed; $(grep 'video codecs,' "$TMP/formats")"
else
  fail "formats: exit $rc, missing:$missing"
fi
if ! timeout 60 "$VKCU" probe > /dev/null 2>&1; then
  [ "$gpu_here" = 0 ] && pass "formats: no codec marked GPU on a machine without a GPU pair" || fail "formats: $gpu_here codecs marked GPU without a GPU"
fi

# ---- inputs no decoder takes ----
# AVS2 has a demuxer and a parser in FFmpeg but decodes only through
# libdavs2, which this build lacks. Its picture size is known, its pixel
# format not: vkcu used to call the file "truncated or corrupt".
printf '\x00\x00\x01\xb0\x20\x42\x00\x20\x00\x40\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x00\x00\x01\xb3\x00\x00\x00\x00\x00\x00\x01\xb3\x00\x00\x00' > "$TMP/clip.avs2"
expect "no decoder: names the codec and the build, exit 3" 3 "clip.avs2: no decoder for codec avs2 in this build" -- \
  "$VKCU" --backend cpu "$TMP/clip.avs2" -o "$TMP/avs2.mkv"
grep -q corrupt "$TMP/.stderr" && fail "no decoder: the message blames the file: $(cat "$TMP/.stderr")" || pass "no decoder: the message does not call the file corrupt"
ff -filter_complex "$(src)" -frames:v 10 -c:v libx264 -preset ultrafast "$TMP/ok.mp4"
head -c 3000 "$TMP/ok.mp4" > "$TMP/cut.mp4"
expect "a truncated mp4 is called damaged, exit 3" 3 "cut.mp4: damaged mov,mp4.* file \(truncated or corrupt" -- "$VKCU" hash "$TMP/cut.mp4"
expect "a text file is not a media file, exit 3" 3 "inputs.sh: not a media file: no container format of this build recognises it" -- \
  "$VKCU" hash "$0"

# ---- timestamps as ffmpeg makes them ----
# Each input goes to mkv (ffv1), nut (rawvideo), mp4 (libx264) and y4m with
# vkcu and with ffmpeg; the video packets (pts, dts, duration), the
# container duration and the frame rates must be equal.
pk() { "$FFPROBE" -v error -select_streams v:0 -show_entries packet=pts,dts,duration -of csv=p=0 "$1"; }
fm() { "$FFPROBE" -v error -select_streams v:0 -show_entries format=duration:stream=r_frame_rate,avg_frame_rate,time_base -of default=nw=1 "$1" | tr '\n' ' '; }
same_as_ffmpeg() { # name input
  local name=$1 in=$2 ext bad= detail=
  for ext in mkv nut mp4 y4m; do
    local va=() fa=()
    case $ext in
      mkv) va=(--encoder ffv1) fa=(-c:v ffv1 -c:a copy) ;;
      nut) va=(--encoder rawvideo) fa=(-c:v rawvideo -c:a copy) ;;
      mp4) va=(--encoder libx264 --preset ultrafast --encoder-opt threads=1) fa=(-c:v libx264 -preset ultrafast -c:a copy) ;;
      y4m) fa=(-an) ;;
    esac
    rm -f "$TMP/v.$ext" "$TMP/f.$ext"
    "$VKCU" --backend cpu -q "$in" -o "$TMP/v.$ext" "${va[@]}" 2> "$TMP/v.err"
    local rc=$?
    ff -i "$in" "${fa[@]}" "$TMP/f.$ext"
    if [ $rc != 0 ]; then
      bad="$bad $ext" detail="$detail $ext: exit $rc $(head -1 "$TMP/v.err");"
    elif [ "$(pk "$TMP/v.$ext")" != "$(pk "$TMP/f.$ext")" ] || [ "$(fm "$TMP/v.$ext")" != "$(fm "$TMP/f.$ext")" ]; then
      bad="$bad $ext" detail="$detail $ext: vkcu $(fm "$TMP/v.$ext")/ffmpeg $(fm "$TMP/f.$ext") $(diff <(pk "$TMP/v.$ext") <(pk "$TMP/f.$ext") | sed -n 2p);"
    fi
  done
  if [ -z "$bad" ]; then
    pass "timestamps: $name: packets, duration and frame rate equal ffmpeg's in mkv, nut, mp4, y4m ($(fm "$TMP/v.mkv" | grep -oE 'duration=[0-9.]+'), $(pk "$TMP/v.mkv" | wc -l) frames)"
  else
    fail "timestamps: $name differs from ffmpeg in$bad:$detail"
  fi
}
# Raw H.264 with the frame rate in its VUI (30 fps), and raw HEVC: the
# demuxer's 1/1200000 time base made the muxer refuse the packets
# ("write error: Invalid argument", exit 4) and y4m claim 1200000 fps.
ff -filter_complex "$(src 30)" -frames:v 30 -c:v libx264 -preset ultrafast "$TMP/raw.264"
same_as_ffmpeg "raw H.264 (30 fps in the stream)" "$TMP/raw.264"
ff -filter_complex "$(src 30)" -frames:v 30 -c:v libx265 -preset ultrafast -x265-params pools=1:frame-threads=1:log-level=error "$TMP/raw.h265"
same_as_ffmpeg "raw HEVC" "$TMP/raw.h265"
"$VKCU" --backend cpu -q "$TMP/raw.264" -o "$TMP/raw.y4m" 2> /dev/null
[ "$(head -c 40 "$TMP/raw.y4m" | grep -oE ' F[0-9]+:[0-9]+')" = " F30:1" ] && pass "timestamps: raw H.264 to y4m says 30 fps" ||
  fail "timestamps: raw H.264 to y4m: header $(head -c 60 "$TMP/raw.y4m" | head -1)"
# A gap of 0.52 s after frame 10 (VFR): kept in mkv and nut, filled with
# repeated frames in y4m, as ffmpeg does.
ff -filter_complex "$(src),setpts='PTS+if(gte(N,10),0.52/TB,0)'" -frames:v 30 -c:v ffv1 -fps_mode passthrough "$TMP/vfr.mkv"
same_as_ffmpeg "VFR mkv" "$TMP/vfr.mkv"
# B-frames in mp4 (an edit list shifts the presentation start).
ff -filter_complex "$(src)" -frames:v 30 -c:v libx264 -preset medium "$TMP/bframes.mp4"
same_as_ffmpeg "mp4 with B-frames and an edit list" "$TMP/bframes.mp4"
# MPEG-TS starting at 2.8 s, with AAC audio starting before the video.
ff -filter_complex "$(src)[v];sine=d=1.2[a]" -map '[v]' -map '[a]' -frames:v 30 -c:v libx264 -preset medium -c:a aac \
  -output_ts_offset 1.4 "$TMP/offset.ts"
same_as_ffmpeg "MPEG-TS with a start offset and audio" "$TMP/offset.ts"
# Frame 5 repeats frame 4's timestamps; frame 5 is stamped 3 frames back.
ff -filter_complex "$(src)" -frames:v 30 -c:v ffv1 -bsf:v "setts=pts=if(eq(N\,5)\,PREV_INPTS\,PTS):dts=if(eq(N\,5)\,PREV_INDTS\,DTS)" "$TMP/dup.mkv"
same_as_ffmpeg "duplicate timestamps" "$TMP/dup.mkv"
ff -filter_complex "$(src)" -frames:v 30 -c:v ffv1 -bsf:v "setts=ts=if(eq(N\,5)\,TS-3*DURATION\,TS)" "$TMP/back.mkv"
same_as_ffmpeg "a timestamp going backwards" "$TMP/back.mkv"
# Hashes: the timestamps in vkcu hash's lines are ffmpeg -f framemd5's.
bad=
for f in raw.264 raw.h265 vfr.mkv bframes.mp4 offset.ts dup.mkv back.mkv; do
  cmp -s <("$VKCU" hash --backend cpu "$TMP/$f" 2> /dev/null | grep -v '^#') <(ff -i "$TMP/$f" -an -f framemd5 - | grep -v '^#') || bad="$bad $f"
done
[ -z "$bad" ] && pass "timestamps: vkcu hash lines equal ffmpeg -f framemd5 for all 7 inputs" || fail "timestamps: hash lines differ for$bad"
conf=${VKCU_CONFORMANCE:-}
if [ -f "$conf/bear.h265" ] && [ -f "$conf/test_scalinglist_jm.264" ]; then
  same_as_ffmpeg "conformance bear.h265" "$conf/bear.h265"
  same_as_ffmpeg "conformance test_scalinglist_jm.264 (no frame rate: 25 fps)" "$conf/test_scalinglist_jm.264"
else
  skip "timestamps of conformance streams: $conf not present"
fi

# ---- streams and pipes ----
ff -filter_complex "$(src)[a];testsrc2=size=96x64:rate=25[b]" -map '[a]' -map '[b]' -frames:v 5 -c:v ffv1 "$TMP/two.mkv"
"$VKCU" hash --backend cpu "$TMP/two.mkv" > "$TMP/two0" 2> "$TMP/two.err"
grep -q "other video stream(s) dropped: 1 (ffv1 96x64)" "$TMP/two.err" && [ "$(frames "$TMP/two0" | wc -l)" = 5 ] &&
  pass "--video-stream: the dropped second video stream is named in a warning" || fail "dropped stream warning: $(cat "$TMP/two.err")"
"$VKCU" hash --backend cpu --video-stream 1 "$TMP/two.mkv" > "$TMP/two1" 2> /dev/null
cmp -s <(frames "$TMP/two1") <(ff -i "$TMP/two.mkv" -map 0:v:1 -f framemd5 - | grep -v '^#') && grep -q '^#dimensions 0: 96x64' "$TMP/two1" &&
  pass "--video-stream 1 hashes the second video stream as ffmpeg -map 0:v:1 does" || fail "--video-stream 1: $(head -8 "$TMP/two1" | tail -2)"
expect "--video-stream past the last stream, exit 2" 2 "two.mkv: --video-stream 2: the input has 2 video streams" -- \
  "$VKCU" hash --video-stream 2 "$TMP/two.mkv"

cd "$TMP" || exit 1
"$VKCU" --backend cpu -q ok.mp4 -o - -f nut > "$TMP/stdout.nut" 2> "$TMP/o.err"
rc=$?
n=$("$FFPROBE" -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/stdout.nut")
[ $rc = 0 ] && [ "$n" = 10 ] && [ ! -e "$TMP/-" ] && pass "-o - -f nut writes 10 frames to standard output (no file named -)" ||
  fail "-o - -f nut: exit $rc, frames '$n', $(ls "$TMP" | grep -c '^-$') file(s) named -; $(head -1 "$TMP/o.err")"
"$VKCU" --backend cpu -q ok.mp4 -o - -f y4m > "$TMP/stdout.y4m" 2> /dev/null
"$VKCU" --backend cpu -q ok.mp4 -o "$TMP/file.y4m" 2> /dev/null
cmp -s "$TMP/stdout.y4m" "$TMP/file.y4m" && pass "-o - -f y4m: the same bytes as a .y4m file" || fail "-o - -f y4m differs from the file"
"$VKCU" --backend cpu -q ok.mp4 -o - -f matroska --encoder ffv1 > "$TMP/stdout.mkv" 2> /dev/null
cmp -s <("$VKCU" hash "$TMP/stdout.mkv" 2> /dev/null | frames /dev/stdin) <("$VKCU" hash ok.mp4 2> /dev/null | frames /dev/stdin) &&
  pass "-o - -f matroska: the frames of the input" || fail "-o - -f matroska: frames differ"
"$VKCU" hash ok.mp4 -o - > "$TMP/h1" 2> /dev/null && "$VKCU" hash ok.mp4 > "$TMP/h2" 2> /dev/null && cmp -s "$TMP/h1" "$TMP/h2" && [ ! -e "$TMP/-" ] &&
  pass "hash -o -: framemd5 text on standard output" || fail "hash -o -: differs from standard output or wrote a file named -"
expect "-o - without -f, exit 2" 2 "-o -: name the container of standard output with -f" -- "$VKCU" --backend cpu ok.mp4 -o -
cat ok.mp4 | "$VKCU" hash - > "$TMP/h3" 2> /dev/null
cmp -s <(frames "$TMP/h3") <(frames "$TMP/h2") && pass "input - reads standard input (hashes equal the file's)" || fail "input -: $(frames "$TMP/h3" | head -1)"
cat raw.264 | "$VKCU" --backend cpu -q - -o "$TMP/stdin.mkv" --encoder ffv1 2> "$TMP/stdin.err"
[ "$(fm "$TMP/stdin.mkv")" = "$(fm "$TMP/v.mkv" 2> /dev/null || true)" ] || [ "$(pk "$TMP/stdin.mkv" | wc -l)" = 30 ] &&
  pass "raw H.264 from standard input to mkv: $(pk "$TMP/stdin.mkv" | wc -l) frames, $(fm "$TMP/stdin.mkv" | grep -oE 'duration=[0-9.]+')" ||
  fail "raw H.264 from standard input: $(head -1 "$TMP/stdin.err")"
# A reader that stops early: | head -1 gets one line; vkcu says nothing and exits 0.
ff -filter_complex "testsrc2=size=16x16:rate=25" -frames:v 3000 -c:v ffv1 "$TMP/long.mkv"
"$VKCU" hash --backend cpu "$TMP/long.mkv" 2> "$TMP/head.err" | head -1 > "$TMP/head.out"
rc=${PIPESTATUS[0]}
[ $rc = 0 ] && [ "$(wc -l < "$TMP/head.out")" = 1 ] && [ ! -s "$TMP/head.err" ] &&
  pass "hash | head -1: one line, nothing on stderr, exit 0" || fail "hash | head -1: exit $rc, $(wc -l < "$TMP/head.out") line(s), stderr: $(head -1 "$TMP/head.err")"
"$VKCU" --backend cpu -q "$TMP/long.mkv" -o - -f nut 2> "$TMP/head2.err" | head -c 1000 > /dev/null
rc=${PIPESTATUS[0]}
[ $rc = 0 ] && [ ! -s "$TMP/head2.err" ] && pass "-o - -f nut | head -c 1000: nothing on stderr, exit 0" ||
  fail "-o - | head: exit $rc, stderr: $(head -1 "$TMP/head2.err")"

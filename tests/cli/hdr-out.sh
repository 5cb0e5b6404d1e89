#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDR sources into SDR and 8-bit outputs (issue 38.7): the colour tags
# (primaries, transfer, matrix, range) and the HDR side data (mastering
# display, content light level) of the output, in the container and in the
# bitstream, describe the pixels written. The web presets tone map an HDR10
# source to 8-bit SDR BT.709 and convert an SDR one exactly as before; the
# README's tonemap example writes 8-bit SDR; a chain that leaves HDR at 8
# bits keeps its HDR tags and says so in one warning.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ff=("$FFMPEG" -nostdin -v error -y -threads 1)
"${ff[@]}" -filter_complex "testsrc2=size=320x240:rate=25:duration=0.24,setparams=color_primaries=bt2020:color_trc=smpte2084:colorspace=bt2020nc" \
  -c:v libx265 -preset ultrafast -pix_fmt yuv420p10le -fflags +bitexact \
  -x265-params "log-level=error:pools=none:frame-threads=1:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" \
  "$TMP/hdr.mkv"
# SDR, BT.601 tagged (so that matrix=bt709 changes the pixels).
"${ff[@]}" -filter_complex "testsrc2=size=320x240:rate=25:duration=0.24,setparams=color_primaries=smpte170m:color_trc=smpte170m:colorspace=smpte170m:range=tv" \
  -c:v ffv1 -pix_fmt yuv420p "$TMP/sdr601.mkv"
[ -s "$TMP/hdr.mkv" ] && [ -s "$TMP/sdr601.mkv" ] || { fail "test media could not be made"; exit 0; }

# desc FILE: "pix_fmt primaries/transfer/matrix/range, stream side data N, frame side data N"
# (N: mastering display and content light entries), the stream's and the first frame's tags.
desc() {
  local s f sd fd
  s=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=pix_fmt,color_primaries,color_transfer,color_space,color_range \
    -of default=nw=1 "$1" | sort | cut -d= -f2 | paste -sd' ')
  f=$("$FFPROBE" -v error -select_streams v:0 -read_intervals %+#1 -show_entries frame=color_primaries,color_transfer,color_space,color_range \
    -of default=nw=1 "$1" | sort | cut -d= -f2 | paste -sd' ')
  sd=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream_side_data=side_data_type -of default=nw=1 "$1" |
    grep -c "Mastering display\|Content light")
  fd=$("$FFPROBE" -v error -select_streams v:0 -read_intervals %+#1 -show_entries frame_side_data=side_data_type -of default=nw=1 "$1" |
    grep -c "Mastering display\|Content light")
  echo "stream: $s; frame: $f; side data: stream $sd, frame $fd"
}
# sorted keys: color_primaries color_range color_space color_transfer pix_fmt
sdr8="stream: bt709 tv bt709 bt709 yuv420p; frame: bt709 tv bt709 bt709; side data: stream 0, frame 0"

# ---- the web presets tone map HDR10 to 8-bit SDR BT.709, without HDR metadata ----
for p in web-h264 web-720p; do
  if "$VKCU" --backend cpu "$TMP/hdr.mkv" --pipeline "$p" -o "$TMP/$p.mp4" 2> "$TMP/err"; then
    got=$(desc "$TMP/$p.mp4")
    [ "$got" = "$sdr8" ] && ! grep -q warning "$TMP/err" && pass "preset $p on HDR10: 8-bit SDR, tagged bt709/bt709/bt709, no mastering or light level" ||
      fail "preset $p on HDR10: $got (expected $sdr8) $(grep warning "$TMP/err" | head -1)"
  else
    fail "preset $p on HDR10: $(tail -1 "$TMP/err")"
  fi
done
# ... and convert an SDR source as convert does (the same frames as before tonemap was in them).
a=$("$VKCU" hash --backend cpu -q "$TMP/sdr601.mkv" --chain 'tonemap=format=yuv420p:matrix=bt709:sdr_input=convert' 2> "$TMP/err" | frames /dev/stdin)
b=$("$VKCU" hash --backend cpu -q "$TMP/sdr601.mkv" --chain 'convert=format=yuv420p:matrix=bt709' | frames /dev/stdin)
c=$("$VKCU" hash --backend cpu -q "$TMP/sdr601.mkv" | frames /dev/stdin)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && pass "tonemap sdr_input=convert on SDR BT.601: the frames of convert=matrix=bt709" ||
  fail "tonemap sdr_input=convert on SDR: $(tail -1 "$TMP/err")"
if "$VKCU" --backend cpu -q "$TMP/sdr601.mkv" --pipeline web-h264 -o "$TMP/w601.mp4" 2> "$TMP/err"; then
  got=$(desc "$TMP/w601.mp4")
  want="stream: smpte170m tv bt709 smpte170m yuv420p; frame: smpte170m tv bt709 smpte170m; side data: stream 0, frame 0"
  [ "$got" = "$want" ] && pass "preset web-h264 on SDR BT.601: matrix retagged bt709, primaries and transfer kept" || fail "web-h264 on SDR: $got"
else
  fail "preset web-h264 on SDR: $(tail -1 "$TMP/err")"
fi
expect "tonemap on SDR without sdr_input is still refused" 2 "input is not tagged PQ or HLG" -- \
  "$VKCU" hash --backend cpu -q "$TMP/sdr601.mkv" --chain tonemap

# ---- the README's tonemap example writes 8-bit SDR ----
line=$(grep -m1 "^vkcu hdr.mkv -o sdr.mkv --chain 'tonemap" "$ROOT/README.md")
chain=$(echo "$line" | sed -n "s/.*--chain '\([^']*\)'.*/\1/p")
if [ -z "$chain" ]; then
  fail "README: no 'vkcu hdr.mkv -o sdr.mkv --chain tonemap...' example"
elif "$VKCU" --backend cpu -q "$TMP/hdr.mkv" -o "$TMP/sdr.mkv" --chain "$chain" 2> "$TMP/err"; then
  got=$(desc "$TMP/sdr.mkv")
  [ "$got" = "$sdr8" ] && [ "$(probe_val "$TMP/sdr.mkv" v:0 stream=profile)" = High ] &&
    pass "README's example ($chain): 8-bit SDR H.264 High, tagged bt709, no HDR metadata" ||
    fail "README's example ($chain): $got, $(probe_val "$TMP/sdr.mkv" v:0 stream=profile) (expected $sdr8, High)"
else
  fail "README's example ($chain): $(tail -1 "$TMP/err")"
fi
# tonemap without format= keeps 10 bits (documented), tagged SDR.
"$VKCU" --backend cpu -q "$TMP/hdr.mkv" -o "$TMP/sdr10.mkv" --chain tonemap --encoder libx265 2> "$TMP/err"
got=$(desc "$TMP/sdr10.mkv")
[ "$got" = "${sdr8//yuv420p/yuv420p10le}" ] && pass "tonemap alone: 10-bit SDR, tagged bt709, no HDR metadata" || fail "tonemap alone: $got"

# ---- HDR left at 8 bits: tagged as the pixels are (PQ, BT.2020, the matrix convert wrote), one warning ----
for spec in "bt2020nc:convert=format=yuv420p" "bt709:convert=format=yuv420p:matrix=bt709"; do
  mx=${spec%%:*} chain=${spec#*:}
  if "$VKCU" --backend cpu "$TMP/hdr.mkv" -o "$TMP/pq8.mkv" -y --chain "$chain" --encoder libx265 2> "$TMP/err"; then
    got=$(desc "$TMP/pq8.mkv")
    want="stream: bt2020 tv $mx smpte2084 yuv420p; frame: bt2020 tv $mx smpte2084; side data: stream 2, frame 2"
    w=$(grep -c "warning" "$TMP/err")
    [ "$got" = "$want" ] && [ "$w" = 1 ] &&
      grep -q "warning: .*pq8.mkv: HDR (PQ) in 8 bits.*tonemap=format=yuv420p.*convert=format=yuv420p10le" "$TMP/err" &&
      pass "$chain on HDR10: tagged PQ/BT.2020/$mx with its metadata, one warning naming tonemap" ||
      fail "$chain on HDR10: $got (expected $want); $w warnings: $(grep warning "$TMP/err" | head -1)"
  else
    fail "$chain on HDR10: $(tail -1 "$TMP/err")"
  fi
done
# 10-bit HDR kept HDR: no warning, metadata kept.
"$VKCU" --backend cpu "$TMP/hdr.mkv" -o "$TMP/pq10.mkv" --encoder libx265 2> "$TMP/err"
got=$(desc "$TMP/pq10.mkv")
[ "$got" = "stream: bt2020 tv bt2020nc smpte2084 yuv420p10le; frame: bt2020 tv bt2020nc smpte2084; side data: stream 2, frame 2" ] &&
  ! grep -q warning "$TMP/err" && pass "HDR10 kept at 10 bits: tags and metadata kept, no warning" || fail "HDR10 -> HDR10: $got $(grep warning "$TMP/err")"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `crop` and `pad` (issue 17.2) against FFmpeg's crop and pad filters: for
# each case `vkcu hash --chain ...` on the CPU backend equals
# `ffmpeg -vf ... -f framemd5` frame by frame (pts, size, hash), on the
# generated clips (H.264/HEVC, 8 and 10 bit, 4:2:0, 4:2:2, 4:4:4, odd sizes,
# BT.601/BT.709/BT.2020 and full range for the pad colour) and on small
# lossless clips made here (4:2:2/4:4:4 10-bit, odd 4:2:0, MJPEG full range,
# planar and packed RGB). Values that would split a chroma sample are refused
# with the key and the multiple it needs; transcodes carry the new size into
# the file (lossless FFV1: the same pixels as ffmpeg's filter; H.264 mp4).
source "$(dirname "$0")/lib.sh"

cols() { frames "$1" | awk -F', *' '{print $3, $5, $6}'; }
gen() { # name pix_fmt size encoder-args...: 4 frames of testsrc2, one thread, bit-exact
  local name=$1 pix=$2 size=$3 vf=${vf:-}
  shift 3
  "$FFMPEG" -hide_banner -loglevel error -nostdin -threads 1 -cpuflags 0 -filter_complex "testsrc2=size=$size:rate=25$vf" \
    -frames:v 4 -pix_fmt "$pix" -threads 1 -fflags +bitexact "$@" "$TMP/$name"
}
gen 422p10.mkv yuv422p10le 96x64 -c:v ffv1
gen 444p10.mkv yuv444p10le 96x64 -c:v ffv1
# testsrc2 makes even 4:2:0 sizes only: an odd one is cut from a larger picture.
vf=,format=yuv420p,crop=101:75:0:0:exact=1 gen odd420.mkv yuv420p 102x76 -c:v ffv1
gen mjpeg.avi yuvj420p 96x64 -c:v mjpeg -q:v 3
gen gbrp.mkv gbrp 64x48 -c:v ffv1
gen rgb24.nut rgb24 64x48 -c:v rawvideo
gen gray10.mkv gray10le 64x48 -c:v ffv1

# same NAME INPUT VKCU-CHAIN FFMPEG-FILTER: every frame's pts, size and hash equal
same() {
  local name=$1 in=$2 chain=$3 vf=$4
  [ -s "$in" ] || { fail "croppad $name: $in missing (run make media)"; return; }
  if ! "$FFMPEG" -v error -nostdin -i "$in" -map 0:v:0 -vf "$vf" -f framemd5 - > "$TMP/ref" 2> "$TMP/err"; then
    fail "croppad $name: ffmpeg -vf $vf failed: $(tail -1 "$TMP/err")"; return
  fi
  if ! "$VKCU" hash --backend cpu -q "$in" --chain "$chain" -o "$TMP/h" -y 2> "$TMP/err"; then
    fail "croppad $name: vkcu --chain $chain failed: $(tail -1 "$TMP/err")"; return
  fi
  local n
  n=$(frames "$TMP/ref" | wc -l)
  if [ "$n" = 0 ]; then
    fail "croppad $name: ffmpeg gave no frame"
  elif ! diff <(cols "$TMP/h") <(cols "$TMP/ref") > "$TMP/diff"; then
    fail "croppad $name: --chain $chain differs from ffmpeg -vf $vf: $(sed -n 2p "$TMP/diff") vs $(sed -n "$(($(grep -c '^<' "$TMP/diff") + 3))p" "$TMP/diff")"
  else
    pass "croppad $name: --chain $chain equals ffmpeg -vf $vf ($n frames, $(cols "$TMP/h" | awk 'NR==1{print $2}') bytes each)"
  fi
}

m=$MEDIA
# crop
same "420 8-bit" "$m/h264-aac.mp4" crop=w=200:h=120:x=40:y=60 crop=200:120:40:60
same "420 centred" "$m/h264-aac.mp4" crop=w=150:h=98 crop=150:98
same "420 10-bit" "$m/hevc10.mkv" crop=w=128:h=96:x=2:y=4 crop=128:96:2:4
same "422 8-bit odd height" "$m/crop-h264-422.mkv" crop=w=100:h=77:x=10:y=3 crop=100:77:10:3
same "422 10-bit" "$TMP/422p10.mkv" crop=w=50:h=33:x=20:y=9 crop=50:33:20:9
same "444 8-bit odd" "$m/crop-h264-444.mkv" crop=w=101:h=51:x=3:y=7 crop=101:51:3:7
same "444 1x1" "$m/crop-h264-444.mkv" crop=w=1:h=1:x=5:y=5 crop=1:1:5:5
same "444 10-bit" "$TMP/444p10.mkv" crop=w=33:h=17:x=1:y=45 crop=33:17:1:45
same "420 odd size to its edge" "$TMP/odd420.mkv" crop=w=51:h=25:x=50:y=50 crop=51:25:50:50:exact=1
same "420 odd size 1x1 corner" "$TMP/odd420.mkv" crop=w=1:h=1:x=100:y=74 crop=1:1:100:74:exact=1
same "420 odd size whole" "$TMP/odd420.mkv" crop crop=101:75:exact=1
same "gbrp" "$TMP/gbrp.mkv" crop=w=31:h=17:x=3:y=5 crop=31:17:3:5
same "rgb24" "$TMP/rgb24.nut" crop=w=31:h=17:x=3:y=5 crop=31:17:3:5
same "gray10 centred (half to even)" "$TMP/gray10.mkv" crop=w=31:h=17 crop=31:17
same "420 centred (half to even)" "$m/h264-aac.mp4" crop=w=126:h=90 crop=126:90
# pad: colours through each matrix and range
same "pad 420 BT.709 white" "$m/h264-aac.mp4" pad=w=352:h=288:x=16:y=24:color=white pad=352:288:16:24:color=white
same "pad 420 BT.709 hex" "$m/h264-aac.mp4" pad=w=336:h=240:x=8:color=0x3050a0 pad=336:240:8:0:color=0x3050a0
same "pad 420 unspecified centred" "$m/long.mp4" pad=w=336:h=256:x=-1:y=-1:color=orange pad=336:256:-1:-1:color=orange
same "pad 420 10-bit BT.709" "$m/hevc10.mkv" pad=w=400:h=300:x=20:y=30:color=red pad=400:300:20:30:color=red
same "pad 420 10-bit BT.2020" "$m/hdr10.mkv" pad=w=320:h=260:y=10:color=#80c040 pad=320:260:0:10:color=#80c040
same "pad 422 8-bit" "$m/h264-422.mkv" pad=w=330:h=251:x=4:y=7:color=navy pad=330:251:4:7:color=navy
same "pad 422 10-bit" "$TMP/422p10.mkv" pad=w=100:h=71:x=2:y=3:color=yellow pad=100:71:2:3:color=yellow
same "pad 444 8-bit odd" "$m/crop-h264-444.mkv" pad=w=211:h=180:x=3:y=5:color=cyan pad=211:180:3:5:color=cyan
same "pad 444 10-bit" "$TMP/444p10.mkv" pad=w=99:h=67:x=1:y=1:color=magenta pad=99:67:1:1:color=magenta
same "pad full range (MJPEG)" "$TMP/mjpeg.avi" pad=w=128:h=80:x=16:y=8:color=green pad=128:80:16:8:color=green
same "pad gbrp" "$TMP/gbrp.mkv" pad=w=70:h=51:x=3:y=1:color=0x102030 pad=70:51:3:1:color=0x102030
same "pad rgb24" "$TMP/rgb24.nut" pad=w=70:h=51:x=3:y=1:color=0x102030 pad=70:51:3:1:color=0x102030
same "pad gray10" "$TMP/gray10.mkv" pad=w=70:h=51:x=3:y=1:color=gray pad=70:51:3:1:color=gray
same "pad default black" "$m/crop-hevc10.mkv" pad=w=222:h=190:x=-1:y=-1 pad=222:190:-1:-1
same "crop then pad" "$m/h264-aac.mp4" crop=w=300:h=200,pad=w=320:h=240:x=10:y=20 crop=300:200,pad=320:240:10:20

# Refusals: exit 2, one line naming the key and what it needs.
in=$m/h264-aac.mp4
expect "crop: x off the 4:2:0 grid" 2 'crop: x=3 would split a 4:2:0 chroma sample: x must be a multiple of 2' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=w=100:h=100:x=3:y=0 -o "$TMP/r" -y
expect "crop: odd width inside the picture" 2 'crop: x\+w=101 would split a 4:2:0 chroma sample: w must be a multiple of 2, or end at the input.s right edge \(x\+w=320\)' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=w=101:h=100:x=0:y=0 -o "$TMP/r" -y
expect "crop: odd y on 4:2:0" 2 'y=5 would split a 4:2:0 chroma sample: y must be a multiple of 2' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=w=100:h=100:x=0:y=5 -o "$TMP/r" -y
expect "crop: larger than the input" 2 'crop: w=400 is larger than the input.s width \(320x240\); use pad' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=w=400 -o "$TMP/r" -y
expect "crop: past the edge" 2 'crop: x=300 plus w=100 reaches past the input.s width \(320\); at most x=220' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=w=100:x=300 -o "$TMP/r" -y
expect "pad: smaller than the input" 2 'pad: h=200 is smaller than the input.s height \(320x240\); use crop' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain pad=w=320:h=200 -o "$TMP/r" -y
expect "pad: odd x on 4:2:0" 2 'pad: x=1 would split a 4:2:0 chroma sample: x must be a multiple of 2' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain pad=w=330:x=1 -o "$TMP/r" -y
expect "pad: input past the canvas" 2 'pad: x=20 puts the input \(width 320\) past the output.s width w=330; at most x=10 \(or -1 to centre\)' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain pad=w=330:x=20 -o "$TMP/r" -y
expect "pad: odd input next to padding" 2 'pad: x\+in_w=101 would split a 4:2:0 chroma sample: the input width 101 must be a multiple of 2 to pad on its right' -- \
  "$VKCU" hash --backend cpu -q "$TMP/odd420.mkv" --chain pad=w=110 -o "$TMP/r" -y
expect "pad: not a colour" 2 "column 1: pad: color='blurple' is not a colour" -- \
  "$VKCU" hash --backend cpu -q "$in" --chain pad=w=330:color=blurple -o "$TMP/r" -y
expect "pad: random colour" 2 'color=random would make every run.s output differ' -- \
  "$VKCU" hash --backend cpu -q "$in" --chain pad=color=random -o "$TMP/r" -y
expect "crop: negative x" 2 "crop: x='-2' is not an integer in \[0, 32767\]" -- \
  "$VKCU" hash --backend cpu -q "$in" --chain crop=x=-2 -o "$TMP/r" -y

# An odd 4:2:0 width passes through pad where its odd edge is the output's edge (ffmpeg's pad refuses it).
if "$VKCU" hash --backend cpu -q "$TMP/odd420.mkv" --chain crop=h=74:y=0,pad=h=80:y=2:color=white -o "$TMP/h" -y 2> "$TMP/err" &&
  [ "$(cols "$TMP/h" | awk '{print $2}' | sort -u)" = $((101 * 80 + 2 * 51 * 40)) ]; then
  pass "croppad: crop=h=74:y=0,pad=h=80:y=2 on a 101x75 4:2:0 input pads above and below only ($((101 * 80 + 2 * 51 * 40)) bytes a frame)"
else
  fail "croppad: pad above/below a 101-wide 4:2:0 input: $(tail -1 "$TMP/err") $(cols "$TMP/h" | head -1)"
fi

# Transcodes: the new size reaches the file; lossless FFV1 keeps ffmpeg's pixels.
transcode() { # name input chain filter
  local name=$1 in=$2 chain=$3 vf=$4 out=$TMP/t.mkv
  rm -f "$out"
  if ! "$VKCU" --backend cpu -q "$in" --chain "$chain" --encoder ffv1 -o "$out" 2> "$TMP/err"; then
    fail "croppad transcode $name: $(tail -1 "$TMP/err")"; return
  fi
  "$FFMPEG" -v error -nostdin -i "$in" -map 0:v:0 -vf "$vf" -f framemd5 - 2> /dev/null | frames /dev/stdin | awk -F', *' '{print $5, $6}' > "$TMP/ref"
  "$FFMPEG" -v error -nostdin -i "$out" -map 0:v:0 -f framemd5 - 2> /dev/null | frames /dev/stdin | awk -F', *' '{print $5, $6}' > "$TMP/got"
  local s
  s="$(probe_val "$out" v:0 stream=width)x$(probe_val "$out" v:0 stream=height)"
  if [ ! -s "$TMP/ref" ] || ! cmp -s "$TMP/ref" "$TMP/got"; then
    fail "croppad transcode $name: $s file, frames differ from ffmpeg -vf $vf ($(wc -l < "$TMP/got") vs $(wc -l < "$TMP/ref"))"
  else
    pass "croppad transcode $name: ${s} FFV1 file, $(wc -l < "$TMP/got") frames equal ffmpeg -vf $vf"
  fi
}
transcode "crop 4:2:0" "$m/h264-aac.mp4" crop=w=240:h=180:x=40:y=30 crop=240:180:40:30
transcode "pad 10-bit" "$m/hevc10.mkv" pad=w=352:h=288:x=-1:y=-1:color=white pad=352:288:-1:-1:color=white
transcode "crop,pad 4:2:2" "$m/h264-422.mkv" crop=w=300:h=220,pad=w=320:h=240:x=10:y=10 crop=300:220,pad=320:240:10:10
if "$VKCU" --backend cpu -q "$m/h264-aac.mp4" --chain crop=w=256:h=144:x=32:y=48 -o "$TMP/c.mp4" 2> "$TMP/err"; then
  s="$(probe_val "$TMP/c.mp4" v:0 stream=width)x$(probe_val "$TMP/c.mp4" v:0 stream=height)"
  n=$(probe_val "$TMP/c.mp4" v:0 stream=nb_frames) na=$(probe_val "$TMP/c.mp4" a:0 stream=codec_name)
  [ "$s" = 256x144 ] && [ "$n" = 50 ] && [ "$na" = aac ] &&
    pass "croppad transcode: H.264 mp4 cropped to 256x144, 50 frames, audio kept" ||
    fail "croppad transcode: H.264 mp4 is $s, $n frames, audio '$na' (expected 256x144, 50, aac)"
else
  fail "croppad transcode: H.264 mp4: $(tail -1 "$TMP/err")"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pixel formats between the chain and the encoder (issue 38.6, 38.8):
# convert=format= takes FFmpeg's names (the ones vkcu prints) as well as its
# own; a layout the encoder, or the profile it was given, cannot take is
# refused before the encoder opens, in one line naming what it takes and the
# convert to add, and that advice works; what vkcu refuses for libx264 and
# libx265 profiles is what the libraries themselves refuse; every shipped
# preset takes a 576i 4:2:2 MPEG-2 source and a 10-bit HDR10 one.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ff=("$FFMPEG" -nostdin -v error -y -threads 1)
# 576i25 4:2:2 MPEG-2 in MPEG-TS, top field first (what broadcast sends).
"${ff[@]}" -filter_complex "testsrc2=size=720x576:rate=25:duration=0.24,format=yuv422p,setfield=tff" \
  -flags +ilme+ildct -top 1 -c:v mpeg2video -b:v 4M -fflags +bitexact "$TMP/s422.ts"
# HDR10: 10-bit HEVC tagged PQ/BT.2020 with mastering display and content light metadata.
"${ff[@]}" -filter_complex "testsrc2=size=320x240:rate=25:duration=0.24,setparams=color_primaries=bt2020:color_trc=smpte2084:colorspace=bt2020nc" \
  -c:v libx265 -preset ultrafast -pix_fmt yuv420p10le -fflags +bitexact \
  -x265-params "log-level=error:pools=none:frame-threads=1:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" \
  "$TMP/hdr10.mkv"
small=$TMP/small.mkv
"${ff[@]}" -filter_complex "testsrc2=size=64x48:rate=25:duration=0.12" -c:v ffv1 -pix_fmt yuv420p "$small"
for f in s422.ts hdr10.mkv small.mkv; do
  [ -s "$TMP/$f" ] || { fail "test media $f could not be made"; exit 0; }
done

# ---- convert=format= takes FFmpeg's names: each format's name as vkcu prints it gives the same frames ----
bad=""
for f in yuv420p yuv420p10 yuv422p yuv422p10 yuv444p yuv444p10 yuv444p16 nv12 p010 rgb24 rgba rgb48 rgba64 rgbaf16; do
  printed=$("$VKCU" hash --backend cpu -q "$TMP/hdr10.mkv" --chain "convert=format=$f" --format json 2> /dev/null |
    head -1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["pix_fmt"])')
  a=$("$VKCU" hash --backend cpu -q "$TMP/hdr10.mkv" --chain "convert=format=$f" 2> /dev/null | frames /dev/stdin)
  b=$("$VKCU" hash --backend cpu -q "$TMP/hdr10.mkv" --chain "convert=format=$printed" 2> "$TMP/err" | frames /dev/stdin)
  { [ -n "$printed" ] && [ "$(echo "$a" | wc -l)" = 6 ] && [ "$a" = "$b" ]; } || bad="$bad $f(printed '$printed': $(tail -1 "$TMP/err"))"
done
[ -z "$bad" ] && pass "convert=format= takes the name vkcu prints for each of its 14 formats (yuv420p10le, p010le, rgbaf16le, ...): the same frames" ||
  fail "convert=format= by the printed name:$bad"
expect "an unknown format lists vkcu's names and FFmpeg's" 2 \
  "format=yuv420p9: expected one of yuv420p\|yuv420p10\|.*\|rgbaf16 \(also yuv420p10le\|yuv422p10le\|.*\|p010le\|.*rgbaf16le\)" -- \
  "$VKCU" --backend cpu -q "$small" -o "$TMP/u.mkv" --chain convert=format=yuv420p9
expect "tonemap=format= takes FFmpeg's names too" 0 "" -- \
  "$VKCU" hash --backend cpu -q "$TMP/hdr10.mkv" --chain tonemap=format=yuv420p10le
printf 'description x\nop convert=format=yuv422p10le\nencoder ffv1\n' > "$TMP/alias.pipe"
expect "a preset's op takes FFmpeg's names (vkcu pipelines FILE)" 0 "" -- "$VKCU" pipelines "$TMP/alias.pipe"

# ---- a layout the encoder cannot take: one line before it opens, and the advice works ----
# take CODE PATTERN NAME -- vkcu args: exit CODE, one line matching PATTERN, none of the encoder's own words, no output
refused() {
  local name=$1 pat=$2; shift 3
  "$VKCU" --backend cpu "$@" > /dev/null 2> "$TMP/err"
  local rc=$? lines
  lines=$(grep -c . "$TMP/err")
  if [ "$rc" = 2 ] && grep -qE -- "$pat" "$TMP/err" && [ "$lines" = 1 ] && ! ls -A "$TMP/out" | grep -q .; then
    pass "$name"
  else
    fail "$name: exit $rc, $lines lines: $(tr '\n' ' ' < "$TMP/err" | cut -c1-400); left: $(ls -A "$TMP/out" | tr '\n' ' ')"
  fi
}
mkdir -p "$TMP/out"
refused "prores_ks on yuv420p names the formats it takes and the convert to add" \
  "^vkcu: error: .*/out/p\.mov: encoder prores_ks takes yuv422p10le, yuv444p10le, yuva444p10le, not yuv420p: add convert=format=yuv422p10le at the end of the chain$" \
  -- "$small" -o "$TMP/out/p.mov" --encoder prores_ks
"$VKCU" --backend cpu -q "$small" -o "$TMP/out/p.mov" --encoder prores_ks --chain convert=format=yuv422p10le 2> "$TMP/err" &&
  [ "$(probe_val "$TMP/out/p.mov" v:0 stream=pix_fmt)" = yuv422p10le ] &&
  pass "the advice works: convert=format=yuv422p10le into prores_ks" || fail "prores_ks with the convert it named: $(tail -1 "$TMP/err")"
rm -f "$TMP/out"/*
refused "libx264 profile=high on 4:2:2: names High's formats, convert=format=yuv420p and profile=high422" \
  "o\.mkv: encoder libx264 with profile=high takes yuv420p, yuvj420p, nv12, nv21, gray, not yuv422p: add convert=format=yuv420p at the end of the chain, or --encoder-opt profile=high422$" \
  -- "$TMP/s422.ts" -o "$TMP/out/o.mkv" --encoder-opt profile=high
"$VKCU" --backend cpu -q "$TMP/s422.ts" -o "$TMP/out/o.mkv" --encoder-opt profile=high --chain convert=format=yuv420p 2> "$TMP/err" &&
  [ "$(probe_val "$TMP/out/o.mkv" v:0 stream=pix_fmt)" = yuv420p ] && [ "$(probe_val "$TMP/out/o.mkv" v:0 stream=profile)" = High ] &&
  pass "the advice works: 4:2:2 MPEG-2 -> convert=format=yuv420p -> H.264 High" || fail "H.264 High after the convert it named: $(tail -1 "$TMP/err")"
rm -f "$TMP/out"/*
refused "libx265 profile=main on 10-bit: convert=format=yuv420p or profile=main10" \
  "h\.mkv: encoder libx265 with profile=main takes yuv420p, yuvj420p, not yuv420p10le: add convert=format=yuv420p at the end of the chain, or --encoder-opt profile=main10$" \
  -- "$TMP/hdr10.mkv" -o "$TMP/out/h.mkv" --encoder libx265 --encoder-opt profile=main
# frames convert cannot read (12-bit 4:4:4): no convert to suggest, the encoders that take them instead
"${ff[@]}" -filter_complex "testsrc2=size=64x48:rate=25:duration=0.08" -c:v ffv1 -pix_fmt yuv444p12le "$TMP/p12.mkv"
refused "12-bit 4:4:4 into libx264: convert does not read it, the encoders that take it named" \
  "x\.mkv: encoder libx264 takes yuv420p, .*, not yuv444p12le: convert does not read yuv444p12le; encoders of this build that take it: .*ffv1.*libx265" \
  -- "$TMP/p12.mkv" -o "$TMP/out/x.mkv"

# ---- vkcu's answer for each libx264/libx265 profile and format is the library's own ----
# The formats convert writes that the encoder lists; ffmpeg, given the
# format and the profile, opens the library itself.
takes_list() { "$FFMPEG" -hide_banner -h encoder="$1" 2> /dev/null | sed -n 's/.*Supported pixel formats: //p'; }
conv="yuv420p yuv420p10le yuv422p yuv422p10le yuv444p yuv444p10le nv12 p010le"
disagree="" n=0
for spec in "libx264 baseline main high high10 high422 high444" "libx265 main main10 main422-10 main444-8 main444-10 main-intra"; do
  set -- $spec
  enc=$1; shift
  lst=" $(takes_list "$enc") "
  for prof in "$@"; do
    for f in $conv; do
      case $lst in *" $f "*) ;; *) continue ;; esac
      n=$((n + 1))
      quiet=()
      [ "$enc" = libx265 ] && quiet=(-x265-params log-level=none)
      "${ff[@]}" -i "$small" -frames:v 1 -vf "format=$f" -c:v "$enc" -profile:v "$prof" "${quiet[@]}" -f null - > /dev/null 2>&1
      lib=$?
      "$VKCU" --backend cpu -q "$small" --frames 1 -o "$TMP/out/e.mkv" -y --encoder "$enc" --encoder-opt "profile=$prof" \
        --chain "convert=format=$f" 2> "$TMP/err"
      ours=$?
      if [ "$lib" = 0 ] && [ "$ours" = 0 ]; then continue; fi
      if [ "$lib" != 0 ] && [ "$ours" = 2 ] && grep -q "encoder $enc with profile=$prof takes .*, not $f: add convert=format=" "$TMP/err" &&
        [ "$(grep -c . "$TMP/err")" = 1 ]; then continue; fi
      disagree="$disagree $enc/$prof/$f(library $lib, vkcu $ours: $(head -1 "$TMP/err" | cut -c1-120))"
    done
  done
done
[ "$n" -gt 40 ] && [ -z "$disagree" ] &&
  pass "libx264/libx265 profiles: vkcu refuses up front exactly the $n-case formats the libraries refuse" ||
  fail "profiles ($n cases):$disagree"
rm -f "$TMP/out"/*

# ---- every shipped preset takes a 576i 4:2:2 MPEG-2 and a 10-bit HDR10 source ----
# Each either writes a file whose video decodes (its layout one its encoder
# took), or is refused up front with exit 2 and one reason (hdr10-to-sdr on
# an SDR source); never a failure inside the encoder.
for src in s422.ts hdr10.mkv; do
  bad="" ok=0
  for p in "$ROOT"/pipelines/*.pipe; do
    name=$(basename "$p" .pipe)
    ext=$(sed -n 's/^container *//p' "$p")
    [ -n "$ext" ] || ext=mkv
    out=$TMP/out/$name.$ext
    verb=()
    grep -q "^output *hash" "$p" && verb=(hash)
    "$VKCU" "${verb[@]}" --backend cpu -q "$TMP/$src" --pipeline "$name" -o "$out" --frames 4 2> "$TMP/err"
    rc=$?
    if grep -q "^output *hash" "$p"; then
      [ "$rc" = 0 ] && [ "$(frames "$out" | wc -l)" -ge 4 ] && ok=$((ok + 1)) || bad="$bad $name(exit $rc: $(tail -1 "$TMP/err"))"
    elif [ "$rc" = 0 ]; then
      d=$("$FFMPEG" -nostdin -v error -i "$out" -map 0:v:0 -f framemd5 - 2> "$TMP/derr" | frames /dev/stdin | wc -l)
      [ "$d" -ge 4 ] && [ ! -s "$TMP/derr" ] && ok=$((ok + 1)) || bad="$bad $name(wrote $d decodable frames: $(head -1 "$TMP/derr"))"
    elif [ "$name" = hdr10-to-sdr ] && [ "$src" = s422.ts ] && [ "$rc" = 2 ] && grep -q "input is not tagged PQ or HLG" "$TMP/err" &&
      [ ! -e "$out" ]; then
      ok=$((ok + 1))
    else
      bad="$bad $name(exit $rc: $(grep -v '^x26[45] \[' "$TMP/err" | tail -1 | cut -c1-200))"
    fi
  done
  [ "$ok" -ge 10 ] && [ -z "$bad" ] && pass "every shipped preset ($ok) on $src: written and decodable, or refused up front" ||
    fail "presets on $src ($ok fine):$bad"
  rm -f "$TMP/out"/*
done
# broadcast-1080i-to-720p50 on the 576i 4:2:2 source: one frame per field, 1280x720 H.264 High 4:2:0.
if "$VKCU" --backend cpu -q "$TMP/s422.ts" --pipeline broadcast-1080i-to-720p50 -o "$TMP/out/b.mkv" 2> "$TMP/err"; then
  got="$(probe_val "$TMP/out/b.mkv" v:0 stream=width)x$(probe_val "$TMP/out/b.mkv" v:0 stream=height) $(probe_val "$TMP/out/b.mkv" v:0 stream=pix_fmt) $(probe_val "$TMP/out/b.mkv" v:0 stream=profile) $(probe_val "$TMP/out/b.mkv" v:0 stream=r_frame_rate)"
  n=$("$FFMPEG" -nostdin -v error -i "$TMP/out/b.mkv" -f framemd5 - | frames /dev/stdin | wc -l)
  [ "$got" = "1280x720 yuv420p High 50/1" ] && [ "$n" = 12 ] &&
    pass "broadcast-1080i-to-720p50 on 576i 4:2:2 MPEG-2: 12 frames 1280x720 yuv420p, H.264 High, 50/1" ||
    fail "broadcast-1080i-to-720p50 on 576i 4:2:2: $got, $n frames"
else
  fail "broadcast-1080i-to-720p50 on 576i 4:2:2 MPEG-2: $(tail -1 "$TMP/err")"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Image outputs (issue 38, item 9): `-o g.png`, `.jpg`, `.tiff` and numbered
# sequences (`f%03d.png`) pick the image's encoder (png, mjpeg, tiff) and a
# pixel format it takes (rgb24 for PNG from YUV, full-range YUV for JPEG),
# as ffmpeg does. A thumbnail (--frames 1, --start T --frames 1) is one
# command and one file, the frame at T; a single name given more frames is
# a one-line error, not a muxer's. Each image of a sequence is the frame
# vkcu's own convert makes (the hash of the same chain); no file of a
# sequence is overwritten without -y; an interrupted sequence leaves no
# partial file. On main, `-o g.png` picked libx264 and a sequence failed
# with "the image2 muxer refused its timestamps".
source "$(dirname "$0")/lib.sh"
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
src=$TMP/src.mkv
ff -filter_complex "testsrc2=size=160x120:rate=25[v];sine=frequency=440:sample_rate=48000[a]" -map '[v]' -map '[a]' \
  -t 0.8 -c:v libx264 -g 12 -bf 2 -pix_fmt yuv420p -c:a aac "$src" ||
  { fail "images: cannot make the source with $FFMPEG"; exit 0; }
run() { (cd "$TMP/out" && "$VKCU" --backend cpu "$src" "$@") > "$TMP/stdout" 2> "$TMP/err"; echo $? > "$TMP/rc"; }
rc() { cat "$TMP/rc"; }
fresh() { rm -rf "$TMP/out"; mkdir "$TMP/out"; }
probe() { "$FFPROBE" -v error -select_streams v:0 -show_entries stream=codec_name,pix_fmt,width,height,color_range -of csv=p=0 "$1"; }
# The rgb24 picture of an image file, as ffmpeg decodes it (PNG rgb24 is stored as it is).
pic_md5() { "$FFMPEG" -v error -nostdin -i "$1" -pix_fmt rgb24 -f framemd5 - 2> /dev/null | grep -v '^#' | awk -F', *' '{print $6}'; }
# vkcu's own frames through the same convert: hash N of the list.
"$VKCU" hash --backend cpu "$src" --chain convert=format=rgb24 -o "$TMP/rgb.md5" 2> /dev/null ||
  { fail "images: vkcu hash of the source failed"; exit 0; }
grep -v '^#' "$TMP/rgb.md5" | awk -F', *' '{print $6}' > "$TMP/rgb.list"
nframes=$(wc -l < "$TMP/rgb.list")
[ "$nframes" = 20 ] || fail "images: the source has $nframes frames, not 20"

# A PNG thumbnail: the png encoder, rgb24, one file, the first frame.
fresh
run -o g.png --frames 1
if [ "$(rc)" = 0 ] && [ "$(probe "$TMP/out/g.png")" = "png,160,120,rgb24,pc" ] && [ "$(ls -A "$TMP/out")" = g.png ] &&
  [ "$(pic_md5 "$TMP/out/g.png")" = "$(sed -n 1p "$TMP/rgb.list")" ] && ! grep -q warning "$TMP/err"; then
  pass "images: -o g.png --frames 1 writes one PNG (rgb24) of frame 0, no warning about the audio"
else
  fail "images: -o g.png --frames 1: exit $(rc), $(probe "$TMP/out/g.png" 2>&1), files: $(ls -A "$TMP/out" | tr '\n' ' ') $(head -2 "$TMP/err")"
fi

# --start T --frames 1: the frame at T (0.5 s: frame 13, pts 0.52 s, the first at or after it).
fresh
run -o s.png --start 0.5 --frames 1
if [ "$(rc)" = 0 ] && [ "$(ls -A "$TMP/out")" = s.png ] && [ "$(pic_md5 "$TMP/out/s.png")" = "$(sed -n 14p "$TMP/rgb.list")" ]; then
  pass "images: --start 0.5 --frames 1 -o s.png is frame 13 of the full decode"
else
  fail "images: --start 0.5 --frames 1: exit $(rc), files: $(ls -A "$TMP/out" | tr '\n' ' '), picture $(pic_md5 "$TMP/out/s.png" 2>&1) (frame 13: $(sed -n 14p "$TMP/rgb.list")) $(head -2 "$TMP/err")"
fi

# A JPEG thumbnail: mjpeg, full-range 4:2:0 (ffmpeg's yuvj420p).
fresh
run -o g.jpg --frames 1
[ "$(rc)" = 0 ] && [ "$(probe "$TMP/out/g.jpg")" = "mjpeg,160,120,yuvj420p,pc" ] && [ "$(ls -A "$TMP/out")" = g.jpg ] &&
  pass "images: -o g.jpg --frames 1 writes one JPEG (mjpeg, full range)" ||
  fail "images: -o g.jpg: exit $(rc), $(probe "$TMP/out/g.jpg" 2>&1) $(head -2 "$TMP/err")"

# TIFF: the tiff encoder where this build has one, else a line that says so.
fresh
run -o g.tiff --frames 1
if "$FFMPEG" -hide_banner -encoders 2> /dev/null | grep -qE '^ V\S* tiff '; then
  [ "$(rc)" = 0 ] && probe "$TMP/out/g.tiff" | grep -q '^tiff,160,120,' && pass "images: -o g.tiff writes a TIFF" ||
    fail "images: -o g.tiff: exit $(rc) $(head -2 "$TMP/err")"
else
  [ "$(rc)" = 2 ] && grep -q 'g.tiff: this build has no tiff encoder' "$TMP/err" && [ -z "$(ls -A "$TMP/out")" ] &&
    pass "images: -o g.tiff without a tiff encoder: exit 2, one line naming it" ||
    fail "images: -o g.tiff: exit $(rc): $(cat "$TMP/err")"
fi

# A single name given every frame: a one-line error with what to do, nothing written.
fresh
run -o h.png
if [ "$(rc)" = 2 ] && grep -q "h.png: one image holds one frame.*--frames 1.*'h%03d.png'" "$TMP/err" &&
  [ "$(grep -c . "$TMP/err")" = 1 ] && [ -z "$(ls -A "$TMP/out")" ]; then
  pass "images: -o h.png with 20 frames: exit 2, one line naming --frames 1 and h%03d.png, no file"
else
  fail "images: -o h.png with 20 frames: exit $(rc), files: $(ls -A "$TMP/out" | tr '\n' ' '): $(cat "$TMP/err")"
fi

# Sequences: the issue's command, and the encoder picked from the extension.
# seq_ok PATTERN: 20 files, each the frame vkcu's convert makes.
seq_ok() {
  local n=0 bad=""
  for i in $(seq 1 20); do
    f=$(printf "$TMP/out/$1" "$i")
    [ "$(pic_md5 "$f")" = "$(sed -n "${i}p" "$TMP/rgb.list")" ] || bad="$bad $(basename "$f")"
    n=$((n + 1))
  done
  [ -z "$bad" ] && [ "$(ls -A "$TMP/out" | wc -l)" = 20 ] || { echo "differ:$bad; files: $(ls -A "$TMP/out" | wc -l)"; return 1; }
}
fresh
run -o 'f%03d.png' --encoder png --chain convert=format=rgb24
r=$(seq_ok 'f%03d.png') && [ "$(rc)" = 0 ] && pass "images: -o f%03d.png --encoder png --chain convert=format=rgb24: 20 PNGs, each vkcu's frame" ||
  fail "images: f%03d.png --encoder png: exit $(rc): $r $(head -2 "$TMP/err")"
fresh
run -o 'f%03d.png'
r=$(seq_ok 'f%03d.png') && [ "$(rc)" = 0 ] && [ "$(probe "$TMP/out/f020.png")" = "png,160,120,rgb24,pc" ] &&
  pass "images: -o f%03d.png (auto): 20 PNGs f001..f020, rgb24, each vkcu's frame" ||
  fail "images: f%03d.png: exit $(rc): $r $(head -2 "$TMP/err")"

# No file of the sequence is overwritten without -y: refused before any is written.
touch -d '2001-01-01' "$TMP/out/f007.png"
sum=$(cd "$TMP/out" && md5sum f*.png)
run -o 'f%03d.png'
if [ "$(rc)" = 4 ] && grep -q 'f%03d.png: f0[0-9][0-9].png already exists.*-y' "$TMP/err" && [ "$(cd "$TMP/out" && md5sum f*.png)" = "$sum" ] &&
  [ "$(stat -c %Y "$TMP/out/f007.png")" = "$(date -d 2001-01-01 +%s)" ] && no_leftovers "$TMP/out"; then
  pass "images: a sequence over existing files without -y: exit 4, names one, nothing touched"
else
  fail "images: existing sequence without -y: exit $(rc): $(cat "$TMP/err")"
fi
run -o 'f%03d.png' -y
[ "$(rc)" = 0 ] && [ "$(stat -c %Y "$TMP/out/f007.png")" != "$(date -d 2001-01-01 +%s)" ] &&
  pass "images: with -y the sequence is written again" || fail "images: sequence with -y: exit $(rc) $(head -2 "$TMP/err")"
fresh
run -o 'j%02d.jpg'
[ "$(rc)" = 0 ] && [ "$(ls -A "$TMP/out" | wc -l)" = 20 ] && [ "$(probe "$TMP/out/j20.jpg")" = "mjpeg,160,120,yuvj420p,pc" ] &&
  pass "images: -o j%02d.jpg: 20 JPEGs j01..j20" || fail "images: j%02d.jpg: exit $(rc), $(ls -A "$TMP/out" | head -3 | tr '\n' ' ') $(head -2 "$TMP/err")"

# Interrupted: the image being written is removed, every file left is whole.
ff -filter_complex "testsrc2=size=320x240:rate=25" -t 12 -c:v libx264 -preset ultrafast -pix_fmt yuv420p "$TMP/long.mkv"
fresh
(cd "$TMP/out" && exec "$VKCU" --backend cpu "$TMP/long.mkv" -o 'p%04d.png' 2> /dev/null) &
pid=$!
# Until the first temporary image shows up (or the job has ended: it then failed).
seen=1
for _ in $(seq 6000); do
  find "$TMP/out" -name '*.part*' | grep -q . && { seen=0; break; }
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.02
done
if [ "$seen" = 0 ]; then
  kill -INT "$pid"
  wait "$pid"
  broken=""
  for f in "$TMP/out"/p*.png; do
    [ -e "$f" ] || continue
    "$FFPROBE" -v error -show_entries stream=width -of csv=p=0 "$f" 2> /dev/null | grep -q '^320$' || broken="$broken $(basename "$f")"
  done
  no_leftovers "$TMP/out" && [ -z "$broken" ] && [ "$(ls -A "$TMP/out" | grep -vc '^p[0-9]\{4\}\.png$')" = 0 ] &&
    pass "images: an interrupted sequence leaves whole images only ($(ls -A "$TMP/out" | wc -l) of 300), no partial file" ||
    fail "images: interrupted sequence: leftovers: $(ls -A "$TMP/out" | grep -v '^p[0-9]*\.png$' | head -3 | tr '\n' ' ') broken:$broken"
else
  kill "$pid" 2> /dev/null
  wait "$pid"
  fail "images: the sequence never showed a temporary file"
fi

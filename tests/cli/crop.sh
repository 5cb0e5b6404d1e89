#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exact cropping: H.264 and HEVC streams whose SPS crop window starts right
# of and below the corner, at offsets that are odd in crop units, some also
# with a container window (MP4 'clap', Matroska PixelCrop) on top (made by tools/make-media.sh).
# Each one hashed by the CPU backend equals the ffmpeg CLI's framemd5 (hash,
# size and pts of every frame), every frame has the cropped picture's size,
# and a transcode through a chain keeps the cropped picture: the size in the
# output, and the same pixels (lossless FFV1).
source "$(dirname "$0")/lib.sh"

# name, visible width x height, pixel format (as make-media.sh crops 208x176;
# the crop-clap/pixelcrop clips add a container window, rounded to whole chroma samples)
clips="crop-h264.mkv 202 168 yuv420p
crop-h264-444.mkv 204 169 yuv444p
crop-h264-422.mkv 196 171 yuv422p
crop-hevc.mkv 200 162 yuv420p
crop-hevc10.mkv 206 174 yuv420p10le
crop-hevc-444.mkv 202 172 yuv444p
crop-clap-h264.mp4 196 164 yuv420p
crop-clap-444.mp4 197 166 yuv444p
crop-clap-hevc10.mp4 202 170 yuv420p10le
crop-pixelcrop-h264.mkv 196 164 yuv420p
crop-pixelcrop-444.mkv 197 166 yuv444p"

frame_bytes() { # width height pix_fmt: bytes of one packed frame
  local w=$1 h=$2 cw ch b=1
  case $3 in
    yuv420p) cw=$(((w + 1) / 2)) ch=$(((h + 1) / 2)) ;;
    yuv420p10le) cw=$(((w + 1) / 2)) ch=$(((h + 1) / 2)) b=2 ;;
    yuv422p) cw=$(((w + 1) / 2)) ch=$h ;;
    yuv444p) cw=$w ch=$h ;;
  esac
  echo $(((w * h + 2 * cw * ch) * b))
}
# stream pts, size and hash of each frame line (dts and duration aside)
cols() { frames "$1" | awk -F', *' '{print $3, $5, $6}'; }

while read -r clip w h pix; do
  in=$MEDIA/$clip
  [ -s "$in" ] || { fail "crop $clip: missing (run make media)"; continue; }
  name="crop $clip (${w}x$h $pix)"
  if ! "$FFMPEG" -v error -nostdin -i "$in" -f framemd5 - > "$TMP/ref" 2> "$TMP/err"; then
    fail "$name: ffmpeg framemd5 failed: $(tail -1 "$TMP/err")"; continue
  fi
  if ! "$VKCU" hash --backend cpu "$in" -o "$TMP/h" -y 2> "$TMP/err"; then
    fail "$name: vkcu hash failed: $(tail -1 "$TMP/err")"; continue
  fi
  n=$(frames "$TMP/ref" | wc -l) size=$(frame_bytes "$w" "$h" "$pix")
  if [ "$n" = 0 ]; then
    fail "$name: ffmpeg decoded no frame"
  elif ! diff <(cols "$TMP/h") <(cols "$TMP/ref") > "$TMP/diff"; then
    fail "$name: vkcu hash differs from ffmpeg framemd5: $(sed -n 2p "$TMP/diff")"
  elif [ "$(cols "$TMP/h" | awk -v s="$size" '$2 != s' | wc -l)" != 0 ]; then
    fail "$name: frames of $(cols "$TMP/h" | awk 'NR==1{print $2}') bytes, the cropped picture has $size"
  else
    pass "$name: $n frames equal ffmpeg's framemd5, $size bytes each"
  fi

  # Through a chain into a lossless file: the cropped size and the same pixels.
  if ! "$VKCU" --backend cpu -q "$in" --chain copy --encoder ffv1 -o "$TMP/t-$clip.mkv" 2> "$TMP/err"; then
    fail "$name: transcode failed: $(tail -1 "$TMP/err")"; continue
  fi
  ow=$(probe_val "$TMP/t-$clip.mkv" v:0 stream=width) oh=$(probe_val "$TMP/t-$clip.mkv" v:0 stream=height)
  "$FFMPEG" -v error -nostdin -i "$TMP/t-$clip.mkv" -f framemd5 - > "$TMP/out" 2> "$TMP/err"
  if [ "${ow}x$oh" != "${w}x$h" ]; then
    fail "$name: transcode is ${ow}x$oh"
  elif ! diff <(frames "$TMP/out" | awk -F', *' '{print $6}') <(frames "$TMP/ref" | awk -F', *' '{print $6}') > /dev/null; then
    fail "$name: transcoded frames differ from the input's (lossless chain copy)"
  else
    pass "$name: transcode through --chain copy keeps ${w}x$h and every pixel"
  fi
done <<< "$clips"

# An operator that computes (denoise) keeps the cropped size too.
if "$VKCU" --backend cpu -q "$MEDIA/crop-hevc.mkv" --chain 'denoise=tnr:sigma=4' -o "$TMP/d.mp4" 2> "$TMP/err"; then
  s="$(probe_val "$TMP/d.mp4" v:0 stream=width)x$(probe_val "$TMP/d.mp4" v:0 stream=height)"
  [ "$s" = 200x162 ] && pass "crop: denoise chain to mp4 keeps 200x162" || fail "crop: denoise chain output is $s, expected 200x162"
else
  fail "crop: denoise transcode failed: $(tail -1 "$TMP/err")"
fi

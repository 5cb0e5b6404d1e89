#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end CPU transcodes, checked with ffprobe: streams, codecs, frame
# count, every timestamp, colour tags, audio bytes unchanged.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
in=$m/h264-aac.mp4
pts_list() { "$FFPROBE" -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 "$1"; }

# MKV with libx264 and audio copied.
if "$VKCU" --backend cpu -q "$in" -o "$TMP/a.mkv"; then
  v=$(probe_val "$TMP/a.mkv" v:0 stream=codec_name) a=$(probe_val "$TMP/a.mkv" a:0 stream=codec_name)
  [ "$v" = h264 ] && [ "$a" = aac ] && pass "mkv: h264 video + aac audio" || fail "mkv streams: video=$v audio=$a"
  [ "$(pts_list "$TMP/a.mkv" | wc -l)" = "$(pts_list "$in" | wc -l)" ] && pass "mkv: frame count kept" ||
    fail "mkv: $(pts_list "$TMP/a.mkv" | wc -l) frames, input has $(pts_list "$in" | wc -l)"
  # Matroska cannot start below 0: the muxer shifts every stream by the AAC priming delay.
  rel() { awk -F, 'NR == 1 {b = $1} {printf "%.3f\n", $1 - b}'; }
  diff <(pts_list "$TMP/a.mkv" | rel) <(pts_list "$in" | rel) > /dev/null && pass "mkv: every pts kept (relative)" ||
    fail "mkv: timestamps differ"
  [ "$(probe_val "$TMP/a.mkv" v:0 stream=color_primaries)" = bt709 ] && pass "mkv: colour tags" ||
    fail "mkv colour primaries: $(probe_val "$TMP/a.mkv" v:0 stream=color_primaries)"
  ai=$("$FFMPEG" -v error -i "$in" -map 0:a -c copy -f md5 -) ao=$("$FFMPEG" -v error -i "$TMP/a.mkv" -map 0:a -c copy -f md5 -)
  [ "$ai" = "$ao" ] && pass "mkv: audio bytes unchanged" || fail "mkv: audio differs ($ai vs $ao)"
  [ "$(probe_val "$TMP/a.mkv" "" format_tags=title)" = "vkcu test clip" ] && pass "mkv: container metadata kept" ||
    fail "mkv: title tag lost"
else
  fail "mkv transcode failed"
fi

# MP4 to MP4 keeps every timestamp exactly.
if "$VKCU" --backend cpu -q "$in" -o "$TMP/a.mp4"; then
  diff <(pts_list "$TMP/a.mp4") <(pts_list "$in") > /dev/null && pass "mp4: every pts kept exactly" ||
    fail "mp4: timestamps differ: $(diff <(pts_list "$TMP/a.mp4") <(pts_list "$in") | head -2 | tr '\n' ' ')"
else
  fail "mp4 transcode failed"
fi

# Raw outputs: y4m and nut carry the decoded frames bit for bit.
for ext in y4m nut; do
  if "$VKCU" --backend cpu -q "$in" -o "$TMP/r.$ext" &&
    "$VKCU" hash --backend cpu "$TMP/r.$ext" -o "$TMP/r.h" -y && "$VKCU" hash --backend cpu "$in" -o "$TMP/i.h" -y; then
    diff <(frames "$TMP/r.h" | cut -d, -f5-) <(frames "$TMP/i.h" | cut -d, -f5-) > /dev/null &&
      pass "$ext: raw frames bit-exact" || fail "$ext: frame hashes differ"
  else
    fail "$ext transcode failed"
  fi
done

# VFR input keeps its timestamps.
if "$VKCU" --backend cpu -q "$m/vfr.mkv" -o "$TMP/v.mkv"; then
  diff <(pts_list "$TMP/v.mkv") <(pts_list "$m/vfr.mkv") > /dev/null && pass "vfr: timestamps kept" ||
    fail "vfr: timestamps differ: $(diff <(pts_list "$TMP/v.mkv") <(pts_list "$m/vfr.mkv") | head -3 | tr '\n' ' ')"
else
  fail "vfr transcode failed"
fi

# 10-bit stays 10-bit.
if "$VKCU" --backend cpu -q "$m/hevc10.mkv" -o "$TMP/t.mkv" --encoder libx265; then
  pf=$(probe_val "$TMP/t.mkv" v:0 stream=pix_fmt)
  [ "$pf" = yuv420p10le ] && pass "10-bit kept 10-bit (libx265)" || fail "10-bit output is $pf"
else
  fail "10-bit transcode failed"
fi

# hash verb: framemd5 format, algorithms.
"$VKCU" hash --backend cpu "$in" > "$TMP/h1" && "$FFMPEG" -v error -i "$in" -map 0:v -f framemd5 - > "$TMP/h2"
diff <(frames "$TMP/h1") <(frames "$TMP/h2") > /dev/null && pass "hash: equals ffmpeg -f framemd5" ||
  fail "hash differs from ffmpeg framemd5: $(diff <(frames "$TMP/h1") <(frames "$TMP/h2") | head -2 | tr '\n' ' ')"
"$VKCU" hash --backend cpu --algo crc32 "$in" > "$TMP/c1" && "$FFMPEG" -v error -i "$in" -map 0:v -f framemd5 -hash crc32 - > "$TMP/c2"
diff <(frames "$TMP/c1") <(frames "$TMP/c2") > /dev/null && pass "hash: crc32 equals ffmpeg's" || fail "crc32 hashes differ"
"$VKCU" hash --backend cpu --algo xxh64 --format json "$in" > "$TMP/j1"
[ "$(grep -c '"hash":"[0-9a-f]\{16\}"' "$TMP/j1")" = 50 ] && pass "hash: xxh64 json, 50 frames" || fail "xxh64 json output"

# probe without a GPU says so plainly and lists the CPU Vulkan device.
"$VKCU" probe > "$TMP/p" 2>&1
rc=$?
if grep -q "no CUDA device" "$TMP/p"; then
  [ "$rc" = 5 ] && grep -qi "llvmpipe\|no Vulkan" "$TMP/p" && pass "probe without GPU" || fail "probe: exit $rc: $(head -3 "$TMP/p" | tr '\n' ' ')"
else
  skip "probe without GPU: this machine has a GPU"
fi

# ---- encoders (issue 5) ----
hashes() { "$VKCU" hash --backend cpu "$1" | grep -v '^#' | cut -d, -f6; }
nin=$(hashes "$in" | wc -l)
[ "$nin" = 50 ] || fail "hash of $in: $nin frames, expected 50"
# FFV1 is lossless: decoding the archive gives the input's frames, 8- and 10-bit.
for src in h264-aac.mp4 hevc10.mkv; do
  if "$VKCU" --backend cpu -q "$m/$src" -o "$TMP/ffv1-$src.mkv" --encoder ffv1; then
    [ "$(probe_val "$TMP/ffv1-$src.mkv" v:0 stream=codec_name)" = ffv1 ] && [ "$(hashes "$TMP/ffv1-$src.mkv" | wc -l)" -ge 30 ] &&
      diff <(hashes "$TMP/ffv1-$src.mkv") <(hashes "$m/$src") > /dev/null &&
      pass "ffv1 ($src): lossless, frame hashes equal the input's" || fail "ffv1 ($src): frames differ from the input"
  else
    fail "ffv1 ($src) transcode failed"
  fi
done
# SVT-AV1, 8- and 10-bit.
for c in "h264-aac.mp4 yuv420p" "hevc10.mkv yuv420p10le"; do
  set -- $c
  if "$VKCU" --backend cpu -q "$m/$1" -o "$TMP/av1-$1.mkv" --encoder libsvtav1 --preset 12 --crf 40; then
    got="$(probe_val "$TMP/av1-$1.mkv" v:0 stream=codec_name) $(probe_val "$TMP/av1-$1.mkv" v:0 stream=pix_fmt) $(pts_list "$TMP/av1-$1.mkv" | wc -l)"
    want="av1 $2 $(pts_list "$m/$1" | wc -l)"
    [ "$got" = "$want" ] && pass "libsvtav1 ($2): codec, depth, frame count" || fail "libsvtav1 ($1): got '$got', want '$want'"
  else
    fail "libsvtav1 ($1) transcode failed"
  fi
done
# rawvideo in Matroska: bit-exact frames.
if "$VKCU" --backend cpu -q "$in" -o "$TMP/raw.mkv" --encoder rawvideo; then
  [ "$(hashes "$TMP/raw.mkv" | wc -l)" = 50 ] && diff <(hashes "$TMP/raw.mkv") <(hashes "$in") > /dev/null && pass "rawvideo in mkv: bit-exact" || fail "rawvideo in mkv: frames differ"
else
  fail "rawvideo transcode failed"
fi
# x265 prints nothing of its own below --log-level verbose.
"$VKCU" --backend cpu "$m/hevc10.mkv" -o "$TMP/quiet.mkv" --encoder libx265 2> "$TMP/err"
! grep -q "x265 \[info\]" "$TMP/err" && pass "libx265 banner hidden" || fail "libx265 printed its banner: $(head -1 "$TMP/err")"

# ---- Vulkan Video encode: no encode queue here (nor on an H200) ----
if "$VKCU" probe 2>/dev/null | grep -q "video-encode"; then
  skip "--encoder h264_vulkan without an encode queue: this machine has one"
else
  mkdir -p "$TMP/vk" # the output is checked first, before decoding
  expect "--encoder h264_vulkan without an encode queue" 5 "v.mkv: --encoder h264_vulkan: .*(no Vulkan video encode queue|no Vulkan).*use --encoder libx264 or auto" -- \
    "$VKCU" --backend cpu -q "$in" -o "$TMP/vk/v.mkv" --encoder h264_vulkan
  "$VKCU" --backend cpu -q "$in" -o "$TMP/vk/v.mkv" --encoder hevc_vulkan 2> "$TMP/err"
  rc=$?
  [ "$rc" = 5 ] && [ -z "$(ls -A "$TMP/vk")" ] && grep -q "use --encoder libx265 or auto" "$TMP/err" &&
    pass "--encoder hevc_vulkan: exit 5, nothing created" || fail "hevc_vulkan: exit $rc, files: $(ls -A "$TMP/vk"), $(tail -1 "$TMP/err")"
fi

# ---- FFmpeg's compute encoders (8.1): GPU backend only ----
mkdir -p "$TMP/vkc"
for e in ffv1_vulkan:ffv1 prores_ks_vulkan:prores_ks; do
  gpu=${e%%:*} cpu=${e#*:}
  "$VKCU" --backend cpu -q "$in" -o "$TMP/vkc/c.mkv" --encoder "$gpu" 2> "$TMP/err"
  rc=$?
  [ "$rc" = 5 ] && [ -z "$(ls -A "$TMP/vkc")" ] && [ "$(wc -l < "$TMP/err")" = 1 ] &&
    grep -q -- "--encoder $gpu runs on the GPU backend only (this job runs on the CPU); use --encoder $cpu\$" "$TMP/err" &&
    pass "--backend cpu --encoder $gpu: exit 5 before any output, naming --encoder $cpu" ||
    fail "--backend cpu --encoder $gpu: exit $rc, files: $(ls -A "$TMP/vkc"), $(cat "$TMP/err")"
done
# archive-ffv1 names ffv1_vulkan as its GPU encoder: the CPU backend encodes with ffv1 and says so.
"$VKCU" --backend cpu -q "$in" -o "$TMP/vkc/a.mkv" --pipeline archive-ffv1 --stats 2> "$TMP/err"
grep -q '^stats: encoder=ffv1 ' "$TMP/err" && [ "$(probe_val "$TMP/vkc/a.mkv" v:0 stream=codec_name)" = ffv1 ] &&
  pass "--pipeline archive-ffv1 on the CPU: ffv1, encoder=ffv1 in --stats" ||
  fail "archive-ffv1 on the CPU: $(grep encoder= "$TMP/err" | tr '\n' ' ')"

# ---- streams and metadata ----
sd_count() { "$FFPROBE" -v error -select_streams v:0 -show_entries "$2" -of default=nw=1 "$1" | grep -c "$3"; }
for o in mkv mp4; do
  for i in mkv mp4; do
    if "$VKCU" --backend cpu -q "$m/rotated.$i" -o "$TMP/rot-$i.$o"; then
      r=$(probe_val "$TMP/rot-$i.$o" v:0 stream_side_data=rotation)
      [ "$r" = 90 ] && pass "rotation kept ($i -> $o)" || fail "rotation $i -> $o: '$r', want 90"
    else
      fail "rotated $i -> $o transcode failed"
    fi
  done
done
"$FFPROBE" -v error -show_entries chapter=start_time,end_time:chapter_tags=title -of csv=p=0 "$TMP/rot-mkv.mkv" > "$TMP/ch.out"
"$FFPROBE" -v error -show_entries chapter=start_time,end_time:chapter_tags=title -of csv=p=0 "$m/rotated.mkv" > "$TMP/ch.in"
[ "$(wc -l < "$TMP/ch.in")" = 2 ] && diff "$TMP/ch.in" "$TMP/ch.out" > /dev/null && pass "chapters kept (times, titles)" ||
  fail "chapters differ: $(tr '\n' ' ' < "$TMP/ch.out")"
[ "$(probe_val "$TMP/rot-mkv.mkv" "" format_tags=title)" = "rotated clip" ] && pass "container title kept (mkv -> mkv)" ||
  fail "container title lost"
# Colour tags describe what convert wrote; primaries pass through.
if "$VKCU" --backend cpu -q "$in" -o "$TMP/tags.mkv" --chain 'convert=matrix=bt2020:range=full:chroma_loc=topleft'; then
  got=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=color_space,color_range,color_primaries,color_transfer,chroma_location \
    -of default=nw=1 "$TMP/tags.mkv" | sort | tr '\n' ' ')
  want="chroma_location=topleft color_primaries=bt709 color_range=pc color_space=bt2020nc color_transfer=bt709 "
  [ "$got" = "$want" ] && pass "colour tags follow the chain (matrix, range, chroma location)" || fail "colour tags: $got"
else
  fail "convert transcode failed"
fi
# HDR10: mastering display and content light kept in the container and the bitstream; dropped after tonemap.
for o in mkv mp4; do
  if "$VKCU" --backend cpu -q "$m/hdr10.mkv" -o "$TMP/hdr.$o" --encoder libx265; then
    s=$(sd_count "$TMP/hdr.$o" stream_side_data "Mastering display\|Content light") f=$(sd_count "$TMP/hdr.$o" frame_side_data=side_data_type "Mastering display\|Content light")
    cll=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream_side_data=max_content,max_average -of default=nw=1 "$TMP/hdr.$o" | sort | tr '\n' ' ')
    [ "$s" = 2 ] && [ "$f" -ge 2 ] && [ "$cll" = "max_average=400 max_content=1000 " ] && [ "$(probe_val "$TMP/hdr.$o" v:0 stream=color_transfer)" = smpte2084 ] &&
      pass "HDR10 metadata kept ($o: container and bitstream, MaxCLL 1000/400)" || fail "HDR10 $o: stream side data $s, frame side data $f, cll '$cll'"
  else
    fail "HDR10 -> $o transcode failed"
  fi
done
if "$VKCU" --backend cpu -q "$m/hdr10.mkv" -o "$TMP/sdr.mkv" --chain tonemap=format=yuv420p; then
  s=$(sd_count "$TMP/sdr.mkv" stream_side_data "Mastering display\|Content light") f=$(sd_count "$TMP/sdr.mkv" frame_side_data=side_data_type "Mastering display\|Content light")
  [ "$s" = 0 ] && [ "$f" = 0 ] && [ "$(probe_val "$TMP/sdr.mkv" v:0 stream=color_transfer)" = bt709 ] &&
    [ "$(probe_val "$TMP/sdr.mkv" v:0 stream=color_primaries)" = bt709 ] && pass "tonemap: HDR metadata dropped, BT.709 tags" ||
    fail "tonemap output: stream side data $s, frame side data $f, transfer $(probe_val "$TMP/sdr.mkv" v:0 stream=color_transfer)"
else
  fail "tonemap transcode failed"
fi

# ---- encoder thread: a bounded queue keeps memory flat when the encoder is slower than decode ----
maxrss() { python3 -c 'import resource, subprocess, sys
subprocess.call(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"; }
r100=$(maxrss "$VKCU" --backend cpu -q "$m/long.mp4" -o "$TMP/l1.mkv" --frames 100 --encoder libx265 --preset ultrafast)
r750=$(maxrss "$VKCU" --backend cpu -q "$m/long.mp4" -o "$TMP/l2.mkv" --frames 750 --encoder libx265 --preset ultrafast)
[ "$(pts_list "$TMP/l2.mkv" | wc -l)" = 750 ] && [ $((r750 - r100)) -lt 20000 ] &&
  pass "memory flat: peak RSS 100 frames ${r100} KiB, 750 frames ${r750} KiB" ||
  fail "memory grows with length: ${r100} KiB at 100 frames, ${r750} KiB at 750 ($(pts_list "$TMP/l2.mkv" | wc -l) frames written)"
# The output does not depend on thread timing: two runs give the same packets in the same order.
pkts() { "$FFMPEG" -v error -i "$1" -map 0 -c copy -f framemd5 - | grep -v '^#'; }
"$VKCU" --backend cpu -q "$in" -o "$TMP/d1.mkv" --encoder ffv1 && "$VKCU" --backend cpu -q "$in" -o "$TMP/d2.mkv" --encoder ffv1
[ "$(pkts "$TMP/d1.mkv" | cut -d, -f1 | sort -u | tr '\n' ' ')" = "0 1 " ] && diff <(pkts "$TMP/d1.mkv") <(pkts "$TMP/d2.mkv") > /dev/null &&
  pass "muxing deterministic: video and audio packets interleaved identically in two runs" || fail "two runs differ in packets or order"

#!/usr/bin/env bash
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
    "$VKCU" hash --backend cpu "$TMP/r.$ext" -o "$TMP/r.h" && "$VKCU" hash --backend cpu "$in" -o "$TMP/i.h"; then
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

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# crop and pad beyond one job (issue 17.5): `vkcu batch` with --chain (also
# after fps) and with
# a preset file of `op` lines (several streams at once; a file whose layout
# the chain refuses fails alone, exit 2, the others are written); `vkcu
# compare --chain-a/--chain-b` pairs a file with the cropped or padded
# other (ffmpeg's own crop/pad output is IDENTICAL to the chain's, a wrong
# offset is a MISMATCH); `vkcu pipelines FILE` shows the operators. Also
# deinterlace and scale: a batch of interlaced files (one frame per field,
# scaled), compare --chain-b deinterlace against ffmpeg's bwdif file, and
# compare --chain-a/-b scale with two filters.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
md5v() { "$FFMPEG" -v error -nostdin -i "$1" -map 0:v:0 ${2:+-vf "$2"} -f framemd5 - 2> /dev/null | frames /dev/stdin | awk -F', *' '{print $5, $6}'; }
size() { echo "$(probe_val "$1" v:0 stream=width)x$(probe_val "$1" v:0 stream=height)"; }

# ---- batch ----
mkdir -p "$TMP/in" "$TMP/out" "$TMP/out2" "$TMP/out3"
cp "$m/h264-aac.mp4" "$m/hevc10.mkv" "$TMP/in/"
if "$VKCU" batch "$TMP/in" "$TMP/out" --backend cpu -q --jobs 2 --chain crop=w=160:h=96:x=80:y=40 --encoder ffv1 \
  --container mkv 2> "$TMP/err"; then
  ok=1
  for f in h264-aac hevc10; do
    o=$TMP/out/$f.mkv
    { [ "$(size "$o")" = 160x96 ] && [ -n "$(md5v "$o")" ] &&
      [ "$(md5v "$o")" = "$(md5v "$TMP/in/$f".* crop=160:96:80:40)" ]; } || { ok=0; fail "batch --chain crop: $f: $(size "$o"), frames differ from ffmpeg -vf crop"; }
  done
  [ $ok = 1 ] && pass "batch --jobs 2 --chain crop: both files 160x96, every frame equal to ffmpeg -vf crop (FFV1)"
else
  fail "batch --chain crop: $(tail -2 "$TMP/err" | tr '\n' ' ')"
fi

# fps and crop in one batch chain: the rate and the size reach every file.
mkdir -p "$TMP/out4"
if "$VKCU" batch "$TMP/in" "$TMP/out4" --backend cpu -q --jobs 2 --chain fps=30,crop=w=160:h=96 --encoder ffv1 \
  --container mkv 2> "$TMP/err"; then
  o=$TMP/out4/h264-aac.mkv
  if [ "$(size "$o")" = 160x96 ] && [ "$(probe_val "$o" v:0 stream=r_frame_rate)" = 30/1 ] &&
    [ "$(md5v "$o")" = "$(md5v "$m/h264-aac.mp4" fps=30,crop=160:96)" ] && [ "$(size "$TMP/out4/hevc10.mkv")" = 160x96 ]; then
    pass "batch --chain fps=30,crop: 30 fps 160x96 files, frames equal ffmpeg -vf fps=30,crop"
  else
    fail "batch --chain fps,crop: $(size "$o") at $(probe_val "$o" v:0 stream=r_frame_rate), or frames differ from ffmpeg"
  fi
else
  fail "batch --chain fps,crop: $(tail -2 "$TMP/err" | tr '\n' ' ')"
fi

cat > "$TMP/letterbox.pipe" <<'EOF'
# crop to 2.39:1, then letterbox back into 320x240
description Letterbox test: crop and pad, FFV1
op          crop=w=320:h=134
op          pad=w=320:h=240:y=-1:color=0x101010
encoder     ffv1
container   mkv
EOF
"$VKCU" pipelines "$TMP/letterbox.pipe" > "$TMP/show" 2> "$TMP/err"
grep -q "chain: crop=w=320:h=134,pad=w=320:h=240:y=-1:color=0x101010" "$TMP/show" &&
  pass "pipelines FILE: crop and pad op lines become one chain" ||
  fail "pipelines FILE with crop/pad: $(cat "$TMP/show" "$TMP/err" | tr '\n' ' ')"
if "$VKCU" batch "$TMP/in" "$TMP/out2" --backend cpu -q --pipeline "$TMP/letterbox.pipe" 2> "$TMP/err"; then
  o=$TMP/out2/h264-aac.mkv
  if [ "$(size "$o")" = 320x240 ] && [ "$(size "$TMP/out2/hevc10.mkv")" = 320x240 ] &&
    [ "$(md5v "$o")" = "$(md5v "$m/h264-aac.mp4" crop=320:134,pad=320:240:0:-1:color=0x101010)" ]; then
    pass "batch --pipeline with crop and pad: 320x240 letterboxed files, frames equal ffmpeg -vf crop,pad"
  else
    fail "batch --pipeline letterbox: $(size "$o"), frames differ from ffmpeg -vf crop,pad"
  fi
else
  fail "batch --pipeline letterbox: $(tail -2 "$TMP/err" | tr '\n' ' ')"
fi

# A chain one file's layout refuses: that file fails (exit 2, the key named), the other is written.
cp "$m/crop-h264-444.mkv" "$TMP/in/"
"$VKCU" batch "$TMP/in" "$TMP/out3" --backend cpu -q --chain crop=w=100:h=100:x=3:y=1 --encoder ffv1 --container mkv 2> "$TMP/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "batch: 1 done, 0 skipped, 2 failed" "$TMP/err" && grep -q "x=3 would split a 4:2:0 chroma sample" "$TMP/err" &&
  [ "$(size "$TMP/out3/crop-h264-444.mkv")" = 100x100 ] && [ ! -e "$TMP/out3/h264-aac.mkv" ]; then
  pass "batch: crop x=3 refused for the 4:2:0 files (exit 2, reason named), the 4:4:4 file cropped to 100x100"
else
  fail "batch with a refused crop: exit $rc, $(grep -E 'batch:|split' "$TMP/err" | head -3 | tr '\n' ' ')"
fi

# ---- compare ----
"$FFMPEG" -v error -nostdin -i "$m/h264-aac.mp4" -an -vf crop=200:120:40:60 -c:v ffv1 "$TMP/ffcrop.mkv"
"$FFMPEG" -v error -nostdin -i "$m/hevc10.mkv" -an -vf pad=352:288:16:24:color=navy -c:v ffv1 "$TMP/ffpad.mkv"
"$VKCU" compare "$m/h264-aac.mp4" "$TMP/ffcrop.mkv" --chain-a crop=w=200:h=120:x=40:y=60 > "$TMP/c1" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "result: IDENTICAL: 50 frames" "$TMP/c1" &&
  pass "compare --chain-a crop: the clip cropped equals ffmpeg -vf crop's file (IDENTICAL, 50 frames)" ||
  fail "compare --chain-a crop: exit $rc: $(grep result "$TMP/c1")"
"$VKCU" compare "$TMP/ffpad.mkv" "$m/hevc10.mkv" --chain-b pad=w=352:h=288:x=16:y=24:color=navy > "$TMP/c2" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "result: IDENTICAL: 30 frames" "$TMP/c2" &&
  pass "compare --chain-b pad: 10-bit clip padded equals ffmpeg -vf pad's file (IDENTICAL, 30 frames)" ||
  fail "compare --chain-b pad: exit $rc: $(grep result "$TMP/c2")"
"$VKCU" compare "$m/h264-aac.mp4" "$TMP/ffcrop.mkv" --chain-a crop=w=200:h=120:x=42:y=60 > "$TMP/c3" 2>&1
rc=$?
[ "$rc" = 6 ] && grep -q "result: MISMATCH" "$TMP/c3" &&
  pass "compare --chain-a crop two columns off: MISMATCH, exit 6" ||
  fail "compare with a wrong crop: exit $rc: $(grep result "$TMP/c3")"
"$VKCU" compare "$m/h264-aac.mp4" "$m/h264-aac.mp4" --chain-a crop=w=300:h=220,pad=w=320:h=240:x=10:y=10 \
  --chain-b crop=w=300:h=220,pad=w=320:h=240:x=10:y=10 > "$TMP/c4" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "result: IDENTICAL: 50 frames" "$TMP/c4" &&
  pass "compare: the same crop,pad chain on both sides is IDENTICAL" ||
  fail "compare crop,pad both sides: exit $rc: $(grep result "$TMP/c4")"

# ---- vkcu pipelines lists the operators: keys, defaults, accuracy ----
"$VKCU" pipelines > "$TMP/list" 2> "$TMP/err"
sed -n '/^Operators/,$p' "$TMP/list" > "$TMP/ops"
n_ops=$(grep -cE '^  [a-z]' "$TMP/ops") n_acc=$(grep -cE '^ {13}accuracy: [^(]' "$TMP/ops")
if [ "$n_ops" -ge 6 ] && [ "$n_ops" = "$n_acc" ] && ! grep -q "(not stated)" "$TMP/ops" &&
  grep -q "^  crop  .*ffmpeg's crop" "$TMP/ops" && grep -q "accuracy: exact: bytes equal ffmpeg's pad filter" "$TMP/ops" &&
  grep -q "^ *x (int -1..32767, default 0): where the input's left edge goes (-1: centred" "$TMP/ops" &&
  grep -q "^ *color (text, default black): fill colour" "$TMP/ops"; then
  pass "vkcu pipelines lists all $n_ops operators, each with its accuracy, and crop/pad with keys and defaults"
else
  fail "vkcu pipelines operator list: $n_ops operators, $n_acc accuracy lines: $(grep -E '^  [a-z]|not stated' "$TMP/ops" | tr '\n' ' ')"
fi
"$VKCU" pipelines crop > "$TMP/crop" 2> "$TMP/err" && grep -q "^ *w (int 1..32768): output width (default: the input's)" "$TMP/crop" &&
  grep -q "^ *y (int 0..32767): top edge" "$TMP/crop" &&
  pass "vkcu pipelines crop: the operator's keys" || fail "vkcu pipelines crop: $(cat "$TMP/crop" "$TMP/err" | head -3 | tr '\n' ' ')"

# ---- deinterlace and scale in batch and compare ----
mkdir -p "$TMP/in5" "$TMP/out5"
cp "$m/deint-mpeg2.ts" "$m/deint-h264-bff.mkv" "$TMP/in5/"
if "$VKCU" batch "$TMP/in5" "$TMP/out5" --backend cpu -q --jobs 2 --chain deinterlace=mode=field,scale=w=176:h=144 \
  --encoder ffv1 --container mkv 2> "$TMP/err"; then
  o=$TMP/out5/deint-mpeg2.mkv
  n=$(md5v "$o" | wc -l)
  [ "$(size "$o")" = 176x144 ] && [ "$(size "$TMP/out5/deint-h264-bff.mkv")" = 176x144 ] && [ "$n" = 40 ] &&
    pass "batch --chain deinterlace=mode=field,scale: both interlaced files 176x144, one frame per field (40 from 20)" ||
    fail "batch deinterlace,scale: $(size "$o"), $n frames"
else
  fail "batch deinterlace,scale: $(tail -2 "$TMP/err" | tr '\n' ' ')"
fi
"$FFMPEG" -v error -nostdin -i "$m/deint-mpeg2.ts" -an -vf bwdif=mode=send_field -c:v ffv1 "$TMP/ffbwdif.mkv"
"$VKCU" compare "$TMP/ffbwdif.mkv" "$m/deint-mpeg2.ts" --chain-b deinterlace=mode=field > "$TMP/c5" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "result: IDENTICAL: 40 frames" "$TMP/c5" &&
  pass "compare --chain-b deinterlace=mode=field: equals ffmpeg -vf bwdif=mode=send_field's file (IDENTICAL, 40 frames)" ||
  fail "compare --chain-b deinterlace: exit $rc: $(grep result "$TMP/c5")"
"$VKCU" compare "$m/h264-aac.mp4" "$m/h264-aac.mp4" --chain-a scale=w=160:h=120 --chain-b scale=w=160:h=120:filter=bilinear > "$TMP/c6" 2>&1
rc=$?
[ "$rc" = 6 ] && grep -q "result: MISMATCH" "$TMP/c6" && grep -qE "^PSNR y:[3-9][0-9]" "$TMP/c6" &&
  pass "compare --chain-a/-b scale: lanczos against bilinear at 160x120 pairs every frame, differs (PSNR $(sed -n 's/^PSNR y:\([0-9.]*\).*/\1/p' "$TMP/c6") dB)" ||
  fail "compare scale lanczos/bilinear: exit $rc: $(grep -E 'result|^PSNR' "$TMP/c6" | tr '\n' ' ')"

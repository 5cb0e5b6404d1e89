#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GOP-parallel FFV1 encoding (--encode-workers): the packets must be the
# very bytes one encoder makes (compared packet by packet, every stream,
# with FFmpeg's framemd5 of a stream copy), whatever the worker count, GOP
# size, a last GOP cut short, trimming, 10-bit, and audio interleaved; and
# a failure must leave no output.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
packets() { "$FFMPEG" -v error -i "$1" -map 0 -c copy -f framemd5 - | grep -v '^#'; }

check() { # name input extra-args...
  local name=$1 in=$2; shift 2
  if "$VKCU" --backend cpu -q -y "$in" -o "$TMP/one.mkv" --encoder ffv1 --encode-workers 1 "$@" &&
    "$VKCU" --backend cpu -q -y "$in" -o "$TMP/par.mkv" --encoder ffv1 --encode-workers 3 "$@"; then
    local a b
    a=$(packets "$TMP/one.mkv") b=$(packets "$TMP/par.mkv")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
      pass "encode-workers: $name: $(echo "$a" | wc -l) packets identical to one encoder"
    else
      fail "encode-workers: $name: packets differ from one encoder's: $(diff <(echo "$a") <(echo "$b") | head -3 | tr '\n' ' ')"
    fi
  else
    fail "encode-workers: $name: transcode failed"
  fi
}
check "750 frames, GOP 7 (last GOP of 1)" "$m/long.mp4" --gop 7
check "default GOP, audio copied" "$m/h264-aac.mp4"
check "GOP 1 (every frame a key frame)" "$m/long.mp4" --gop 1 --frames 50
check "trimmed, with denoise" "$m/trim.mp4" --start 13f --duration 40f --chain denoise=tnr
check "10-bit" "$m/hevc10.mkv" --gop 5

# Every packet keeps its frame's timestamp and duration (ffprobe: the
# input's frames against the output's packets, both Matroska, 1/1000, the
# frames on the encoder's 1/25 grid as ffmpeg puts them), with
# one encoder and with three; ProRes too.
frame_ts() { "$FFPROBE" -v error -select_streams v:0 -show_entries frame=pts,duration -of csv=p=0 "$1" | cut -d, -f1,2; }
pkt_ts() { "$FFPROBE" -v error -select_streams v:0 -show_entries packet=pts,duration -of csv=p=0 "$1" | cut -d, -f1,2; }
want=$(frame_ts "$m/vfr.mkv")
for w in 1 3; do
  "$VKCU" --backend cpu -q -y "$m/vfr.mkv" -o "$TMP/ts$w.mkv" --encoder ffv1 --encode-workers $w --gop 1
  got=$(pkt_ts "$TMP/ts$w.mkv")
  [ -n "$want" ] && [ "$got" = "$want" ] &&
    pass "encode-workers: $w encoder(s): all $(echo "$got" | wc -l) packets keep their frame's pts and duration" ||
    fail "encode-workers: $w encoder(s): packets' pts,duration differ from the frames': $(diff <(echo "$want") <(echo "$got") | head -3 | tr '\n' ' ')"
done
"$VKCU" --backend cpu -q -y "$m/vfr.mkv" -o "$TMP/tsp.mkv" --encoder prores_ks --chain convert=format=yuv422p10
got=$(pkt_ts "$TMP/tsp.mkv")
[ -n "$want" ] && [ "$got" = "$want" ] && pass "encode-workers: prores_ks packets keep their frame's pts and duration" ||
  fail "encode-workers: prores_ks packets' pts,duration differ from the frames': $(diff <(echo "$want") <(echo "$got") | head -3 | tr '\n' ' ')"

# An encoder failing mid-way (frame 40 of 750, in the fourth GOP; a GPU
# instance that fails does the same): one line naming the output and the
# frame, the exit code of an other failure, no output and no temporary.
rm -rf "$TMP/fail" && mkdir -p "$TMP/fail"
expect "encode-workers: an encoder fails at frame 40" 1 "fail/o.mkv: encoder ffv1 failed at frame 40" -- \
  env VKCU_TEST_ENCODER_FAIL_AT=40 "$VKCU" --backend cpu -q "$m/long.mp4" -o "$TMP/fail/o.mkv" --encoder ffv1 \
  --encode-workers 3 --gop 12
[ -z "$(ls -A "$TMP/fail")" ] && [ "$(wc -l < "$TMP/.stderr")" = 1 ] &&
  pass "encode-workers: a failing encoder: one line, nothing left" ||
  fail "encode-workers: a failing encoder: $(wc -l < "$TMP/.stderr") lines, left: $(ls -A "$TMP/fail")"

# Several GOPs really were in flight (not one worker doing all).
if "$VKCU" --backend cpu -y "$m/long.mp4" -o "$TMP/v.mkv" --encoder ffv1 --encode-workers 3 --log-level verbose 2>&1 |
  grep -q "3 GOPs of 12 frames encoded at once"; then
  pass "encode-workers: 3 workers set up"
else
  fail "encode-workers: the verbose log does not show 3 workers"
fi
# Other encoders: a warning, one encoder, a normal output.
out=$("$VKCU" --backend cpu -y "$m/h264-aac.mp4" -o "$TMP/x.mkv" --frames 10 --encode-workers 3 2>&1)
if [ -s "$TMP/x.mkv" ] && echo "$out" | grep -q "applies to FFV1"; then
  pass "encode-workers: libx264 warns and encodes normally"
else
  fail "encode-workers: libx264 with --encode-workers: $out"
fi
# Bad value: usage error, exit 2, nothing written.
rm -f "$TMP/bad.mkv"
"$VKCU" --backend cpu -q "$m/long.mp4" -o "$TMP/bad.mkv" --encoder ffv1 --encode-workers 0 2> "$TMP/err"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/bad.mkv" ] && grep -q "encode-workers" "$TMP/err" && pass "encode-workers: 0 refused (exit 2)" ||
  fail "encode-workers 0: rc=$rc, $(cat "$TMP/err")"

# A full disk while 3 workers encode: one error line, exit 4, nothing left.
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=256k tmpfs "$TMP/small" 2> /dev/null; then
  expect "encode-workers: disk full" 4 "small/o.mkv: write error: .*\\(disk full\\)" -- \
    "$VKCU" --backend cpu -q "$m/long.mp4" -o "$TMP/small/o.mkv" --encoder ffv1 --encode-workers 3
  [ -z "$(ls -A "$TMP/small")" ] && [ "$(wc -l < "$TMP/.stderr")" = 1 ] && pass "encode-workers: disk full: one line, nothing left" ||
    fail "encode-workers: disk full: $(wc -l < "$TMP/.stderr") lines, left: $(ls -A "$TMP/small")"
  umount "$TMP/small"
else
  skip "encode-workers: disk full: cannot mount a tmpfs here (not root)"
fi

#!/usr/bin/env bash
# Hash formats other tools use, checked against the build's ffmpeg:
# --format framecrc (FATE's, adler32) byte-identical to
# `ffmpeg -flags +bitexact -fflags +bitexact -f framecrc`; --algo sha256 per
# frame as `ffmpeg -f framemd5 -hash sha256` and --whole as `ffmpeg -f md5`
# and as sha256sum of the raw frames.
. "$(dirname "$0")/lib.sh"

clips="$MEDIA/h264-422.mkv $MEDIA/hevc10.mkv $MEDIA/vfr.mkv $VKCU_CONFORMANCE/BA1_FT_C.264 $VKCU_CONFORMANCE/64x64-I-P-B-P.h265"
ff() { "$FFMPEG" -v error -nostdin -i "$1" -an -sn -flags +bitexact -fflags +bitexact "${@:2}"; }
for c in $clips; do
  n=$(basename "$c")
  [ -f "$c" ] || { fail "hash-formats: $c missing (run make media; VKCU_CONFORMANCE=$VKCU_CONFORMANCE)"; continue; }
  if "$VKCU" hash --backend cpu --format framecrc "$c" > "$TMP/vk.crc" 2> "$TMP/err" &&
     ff "$c" -f framecrc - > "$TMP/ff.crc" 2>> "$TMP/err"; then
    grep -q '^0, ' "$TMP/ff.crc" && cmp -s "$TMP/vk.crc" "$TMP/ff.crc" &&
      pass "hash-formats: $n framecrc = ffmpeg -f framecrc ($(grep -c '^0,' "$TMP/vk.crc") frames)" ||
      fail "hash-formats: $n framecrc differs from ffmpeg's: $(diff "$TMP/vk.crc" "$TMP/ff.crc" | sed -n 2p)"
  else
    fail "hash-formats: $n framecrc: $(tail -1 "$TMP/err")"
  fi
  if "$VKCU" hash --backend cpu --whole "$c" > "$TMP/vk.md5" 2> "$TMP/err" &&
     ff "$c" -f md5 - > "$TMP/ff.md5" 2>> "$TMP/err"; then
    grep -qx 'MD5=[0-9a-f]\{32\}' "$TMP/vk.md5" && cmp -s "$TMP/vk.md5" "$TMP/ff.md5" &&
      pass "hash-formats: $n --whole = ffmpeg -f md5" ||
      fail "hash-formats: $n --whole: $(cat "$TMP/vk.md5") vs ffmpeg $(cat "$TMP/ff.md5")"
  else
    fail "hash-formats: $n --whole: $(tail -1 "$TMP/err")"
  fi
done

c=$MEDIA/hevc10.mkv
if "$VKCU" hash --backend cpu --algo sha256 --whole "$c" > "$TMP/vk.sha" 2> "$TMP/err" &&
   ff "$c" -f rawvideo - 2>> "$TMP/err" | sha256sum > "$TMP/ff.sha"; then
  [ "$(cat "$TMP/vk.sha")" = "SHA256=$(cut -c1-64 "$TMP/ff.sha")" ] &&
    pass "hash-formats: --algo sha256 --whole = sha256sum of ffmpeg's raw frames (10-bit)" ||
    fail "hash-formats: sha256 --whole: $(cat "$TMP/vk.sha") vs $(cat "$TMP/ff.sha")"
else
  fail "hash-formats: sha256 --whole: $(tail -1 "$TMP/err")"
fi
if "$VKCU" hash --backend cpu --algo sha256 "$c" > "$TMP/vk.fmd5" 2> "$TMP/err" &&
   ff "$c" -f framemd5 -hash sha256 - > "$TMP/ff.fmd5" 2>> "$TMP/err"; then
  diff <(frames "$TMP/vk.fmd5") <(frames "$TMP/ff.fmd5") > /dev/null && grep -qx '#hash: SHA256' "$TMP/vk.fmd5" &&
    pass "hash-formats: --algo sha256 per frame = ffmpeg -f framemd5 -hash sha256" ||
    fail "hash-formats: sha256 frames differ: $(diff <(frames "$TMP/vk.fmd5") <(frames "$TMP/ff.fmd5") | sed -n 2p)"
else
  fail "hash-formats: sha256 frames: $(tail -1 "$TMP/err")"
fi
expect "hash-formats: --whole with --format is a usage error" 2 "--whole" -- "$VKCU" hash --whole --format json "$c"

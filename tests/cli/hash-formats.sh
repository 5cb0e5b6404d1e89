#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
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

# SHA-256 where the other algorithms go: hash lists read back by compare and
# verify, the manifest key, a pipeline's hash key, the golden case.
root=$(cd "$(dirname "$0")/../.." && pwd)
c=$MEDIA/h264-aac.mp4
golden=$root/media/golden/clips/decode-h264-sha256.framemd5
if ff "$c" -f framemd5 -hash sha256 - > "$TMP/ff264.fmd5" 2> "$TMP/err"; then
  diff <(frames "$golden") <(frames "$TMP/ff264.fmd5") > /dev/null && grep -qx '#hash: SHA256' "$golden" &&
    pass "hash-formats: media/clips.manifest's sha256 golden = ffmpeg -f framemd5 -hash sha256 ($(frames "$golden" | wc -l) frames)" ||
    fail "hash-formats: golden decode-h264-sha256 differs from ffmpeg's: $(diff <(frames "$golden") <(frames "$TMP/ff264.fmd5") | sed -n 2p)"
else
  fail "hash-formats: ffmpeg -hash sha256: $(tail -1 "$TMP/err")"
fi
"$VKCU" compare "$TMP/ff264.fmd5" "$c" --backend cpu > "$TMP/cmp" 2> "$TMP/err"
[ $? = 0 ] && grep -q 'hash list, SHA256, 50 frames' "$TMP/cmp" && grep -qx 'result: IDENTICAL: 50 frames' "$TMP/cmp" &&
  pass "hash-formats: compare reads ffmpeg's sha256 framemd5 and hashes the media side with SHA-256" ||
  fail "hash-formats: compare sha256 list: $(tail -1 "$TMP/cmp") $(tail -1 "$TMP/err")"
"$VKCU" hash --backend cpu --algo sha256 --format json "$c" > "$TMP/vk264.jsonl" 2> "$TMP/err" &&
  "$VKCU" compare "$TMP/vk264.jsonl" "$TMP/ff264.fmd5" > "$TMP/cmp" 2> "$TMP/err" &&
  grep -qx 'result: IDENTICAL: 50 frames' "$TMP/cmp" &&
  pass "hash-formats: a sha256 JSON-lines list equals ffmpeg's sha256 framemd5 under compare" ||
  fail "hash-formats: compare sha256 JSON vs framemd5: $(tail -1 "$TMP/cmp") $(tail -1 "$TMP/err")"
sed '20s/, \([0-9a-f]\)[0-9a-f]\{63\}$/, 0000000000000000000000000000000000000000000000000000000000000000/' \
  "$TMP/ff264.fmd5" > "$TMP/changed.fmd5"
"$VKCU" compare "$TMP/changed.fmd5" "$c" --backend cpu > "$TMP/cmp" 2> "$TMP/err"
rc=$?
[ $rc = 6 ] && grep -q 'SHA256 of A 0\{64\}, of B [0-9a-f]\{64\}' "$TMP/err" &&
  pass "hash-formats: compare names the changed frame's SHA-256 hashes (exit 6)" ||
  fail "hash-formats: changed sha256 line: exit $rc, $(tail -1 "$TMP/err")"
expect "hash-formats: a sha256 list against an md5 list is refused" 3 "uses SHA256 .* uses MD5" -- \
  "$VKCU" compare "$TMP/ff264.fmd5" "$root/media/golden/clips/decode-h264.framemd5"

mkdir -p "$TMP/m"
{ printf 'vkcu-manifest 1\n[case sha]\ninput = %s\nalgo = sha256\nhashes = sha.framemd5\n' "$c"
  printf '[case sha-inline]\ninput = %s\nalgo = SHA256\nframes = 3\n' "$c"; frames "$TMP/ff264.fmd5" | head -3
  printf '[case sha-changed]\ninput = %s\nalgo = sha256\nhashes = changed.framemd5\n' "$c"
  printf '[case sha-vs-md5]\ninput = %s\nhashes = sha.framemd5\n' "$c"; } > "$TMP/m/t.manifest"
cp "$TMP/ff264.fmd5" "$TMP/m/sha.framemd5"
cp "$TMP/changed.fmd5" "$TMP/m/changed.framemd5"
"$VKCU" verify --backend cpu "$TMP/m/t.manifest" > "$TMP/out" 2> "$TMP/err"
rc=$?
if [ $rc = 6 ] && grep -qx 'PASS sha: 50 frames, SHA256 hashes equal (cpu)' "$TMP/out" &&
   grep -qx 'PASS sha-inline: 3 frames, SHA256 hashes equal (cpu)' "$TMP/out" &&
   grep -q '^FAIL sha-changed: 1 of 50 frames differ; first: frame 10 .*expected 0\{64\}' "$TMP/out" &&
   grep -q '^FAIL sha-vs-md5: expected hashes are SHA256, the case asks for MD5 (set algo = SHA256)' "$TMP/out"; then
  pass "hash-formats: manifests with algo = sha256 (sidecar and inline) pass, a changed SHA-256 fails at its frame"
else
  fail "hash-formats: sha256 manifest: exit $rc: $(tr '\n' ' ' < "$TMP/out")"
fi
printf 'vkcu-manifest 1\n[case x]\ninput = a.mp4\nalgo = sha512\n' > "$TMP/m/bad.manifest"
expect "hash-formats: manifest algo outside the list names the choices" 3 "bad.manifest:4: .*sha512.* is not md5, sha256, crc32, xxh64 or blake3" -- \
  "$VKCU" verify "$TMP/m/bad.manifest"
printf 'description SHA-256 per frame\noutput hash\nhash sha256\ncontainer framemd5\n' > "$TMP/sha.pipe"
"$VKCU" hash --backend cpu --pipeline "$TMP/sha.pipe" "$c" > "$TMP/pipe.fmd5" 2> "$TMP/err" &&
  diff <(frames "$TMP/pipe.fmd5") <(frames "$TMP/ff264.fmd5") > /dev/null &&
  pass "hash-formats: a pipeline file's 'hash: sha256' hashes with SHA-256" ||
  fail "hash-formats: pipeline hash sha256: $(tail -1 "$TMP/err")"

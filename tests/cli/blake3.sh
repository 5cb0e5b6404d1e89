#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --algo blake3 on the CPU backend: each frame's digest equals Debian's
# b3sum (the outside oracle) of that frame's raw bytes as ffmpeg writes them
# (-f rawvideo, cut into frames), for 8-bit and 10-bit frames, odd sizes,
# frames under one 1 KiB chunk (1x1), exactly one chunk (1024 bytes), one
# byte over, and trees of several levels (675 chunks); --whole equals b3sum
# of the whole raw stream; the JSON header names BLAKE3; compare, manifests,
# presets and batch take blake3 lists.
. "$(dirname "$0")/lib.sh"

if ! command -v b3sum > /dev/null; then
  skip "blake3: no b3sum here (Debian package b3sum; tools/deps.sh installs it)"
  exit 0
fi
ff() { "$FFMPEG" -v error -nostdin -cpuflags 0 -threads 1 "$@"; }
# Clips made here: testsrc2, cropped to the size (the crop moves every frame,
# so that frames differ), FFV1 (lossless: the decoder gives these samples).
gen() { # name size pix_fmt
  local w=${2%x*} h=${2#*x}
  ff -filter_complex "testsrc2=size=96x96:rate=25,format=yuv444p16le,crop=$w:$h:'mod(n*7,96-$w)':'mod(n*5,96-$h)',format=$3" \
    -frames:v 3 -c:v ffv1 -fflags +bitexact "$TMP/$1.nut"
}
gen_big() { # name size pix_fmt
  ff -filter_complex "testsrc2=size=$2:rate=25,format=$3" -frames:v 2 -c:v ffv1 -fflags +bitexact "$TMP/$1.nut"
}
# b3sum of each frame of ffmpeg's raw output; prints "SIZE HEX" per frame.
b3_frames() { # input pix_fmt
  local raw=$TMP/raw n size
  ff -i "$1" -map 0:v:0 -f rawvideo -pix_fmt "$2" -y "$raw"
  n=$(ff -i "$1" -map 0:v:0 -f framemd5 - | grep -c '^0,')
  size=$(($(stat -c %s "$raw") / n))
  rm -rf "$TMP/split"; mkdir "$TMP/split"
  split -b "$size" -a 5 -d "$raw" "$TMP/split/f."
  for f in "$TMP"/split/f.*; do echo "$size $(b3sum --no-names "$f")"; done
}
vk_frames() { grep '^0,' "$1" | awk -F', *' '{print $5, $6}'; }

gen px1 1x1 yuv420p           # 3 bytes: far under one block
gen g1024 32x32 gray          # exactly one chunk
gen y1024 32x16 yuv422p       # exactly one chunk, three planes
gen g1025 41x25 gray          # one byte over: two chunks
gen odd8 33x17 yuv420p        # odd sizes, chroma rounded up
gen odd10 35x19 yuv420p10le   # odd sizes, 16-bit little-endian words
gen_big big10 640x360 yuv420p10le # 691200 bytes: 675 chunks, 10 tree levels
for spec in px1:yuv420p:3 g1024:gray:1024 y1024:yuv422p:1024 g1025:gray:1025 odd8:yuv420p:867 odd10:yuv420p10le:2050 \
            big10:yuv420p10le:691200 "$MEDIA/hevc10.mkv:yuv420p10le:" "$MEDIA/h264-422.mkv:yuv422p:"; do
  IFS=: read -r name fmt bytes <<< "$spec"
  case $name in /*) in=$name; name=$(basename "$in") ;; *) in=$TMP/$name.nut ;; esac
  [ -s "$in" ] || { fail "blake3: $name: clip missing (make media)"; continue; }
  if ! "$VKCU" hash --backend cpu --algo blake3 "$in" -o "$TMP/$name.b3" 2> "$TMP/err"; then
    fail "blake3: $name: vkcu hash failed: $(tail -1 "$TMP/err")"
    continue
  fi
  b3_frames "$in" "$fmt" > "$TMP/$name.want"
  vk_frames "$TMP/$name.b3" > "$TMP/$name.got"
  n=$(wc -l < "$TMP/$name.want")
  size=$(head -1 "$TMP/$name.want" | cut -d' ' -f1)
  if [ -n "$bytes" ] && [ "$size" != "$bytes" ]; then
    fail "blake3: $name: ffmpeg's frames are $size bytes, the test meant $bytes"
  elif [ "$n" -gt 1 ] && [ "$(cut -d' ' -f2 "$TMP/$name.want" | sort -u | wc -l)" -lt 2 ]; then
    fail "blake3: $name: every frame the same: a test of nothing"
  elif cmp -s "$TMP/$name.got" "$TMP/$name.want" && grep -qx '#hash: BLAKE3' "$TMP/$name.b3"; then
    pass "blake3: $name ($fmt, $n frames of $size bytes) = b3sum of each raw frame"
  else
    fail "blake3: $name: vkcu vs b3sum: $(diff "$TMP/$name.got" "$TMP/$name.want" | sed -n '2p;4p' | tr '\n' ' ')"
  fi
done

# --whole: one digest of every frame's bytes in order, as b3sum of the raw stream.
c=$MEDIA/hevc10.mkv
if "$VKCU" hash --backend cpu --algo blake3 --whole "$c" > "$TMP/whole" 2> "$TMP/err"; then
  want=$(ff -i "$c" -map 0:v:0 -f rawvideo - | b3sum --no-names)
  [ "$(cat "$TMP/whole")" = "BLAKE3=$want" ] && pass "blake3: --whole = b3sum of ffmpeg's raw frames (10-bit)" ||
    fail "blake3: --whole: $(cat "$TMP/whole"), b3sum gives $want"
else
  fail "blake3: --whole: $(tail -1 "$TMP/err")"
fi

# JSON lines: the header names the algorithm; every frame has 64 hex digits.
"$VKCU" hash --backend cpu --algo blake3 --format json "$TMP/odd8.nut" > "$TMP/odd8.jsonl" 2> "$TMP/err"
python3 - "$TMP/odd8.jsonl" "$TMP/odd8.want" <<'PYEOF' && pass "blake3: JSON lines: header hash BLAKE3, digests = b3sum" || fail "blake3: JSON lines: $(tail -1 "$TMP/err")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = [l.split()[1] for l in open(sys.argv[2])]
assert lines[0]["type"] == "header" and lines[0]["hash"] == "BLAKE3", lines[0]
assert lines[-1]["type"] == "summary" and lines[-1]["frames"] == len(want), lines[-1]
assert [l["hash"] for l in lines[1:-1]] == want, (lines[1:-1], want)
PYEOF

# compare reads blake3 lists: against the clip (hashed the same way) and
# against itself; an MD5 list is another algorithm and refused.
expect "blake3: compare a blake3 list with its clip: identical" 0 "" -- \
  "$VKCU" compare --backend cpu "$TMP/odd10.b3" "$TMP/odd10.nut"
"$VKCU" hash --backend cpu "$TMP/odd10.nut" -o "$TMP/odd10.md5" 2> /dev/null
expect "blake3: compare refuses an MD5 list against a BLAKE3 list (exit 3)" 3 "hash both with the same --algo" -- \
  "$VKCU" compare "$TMP/odd10.b3" "$TMP/odd10.md5"
expect "blake3: --algo names blake3 among the choices" 2 "not md5, sha256, crc32, xxh64 or blake3" -- \
  "$VKCU" hash --algo blake2 "$TMP/odd10.nut"

# A manifest case with algo = blake3 passes against vkcu's list and fails
# when one digit of one frame changes.
printf 'vkcu-manifest 1\n[case odd8]\ninput = odd8.nut\nalgo = blake3\nhashes = odd8.b3\n[case big10]\ninput = big10.nut\nalgo = blake3\nhashes = big10.b3\n' > "$TMP/b3.manifest"
expect "blake3: verify, manifest algo = blake3: both cases pass" 0 "" -- "$VKCU" verify --backend cpu "$TMP/b3.manifest"
python3 - "$TMP/big10.b3" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
lines[-1] = lines[-1][:-1] + ('1' if lines[-1][-1] == '0' else '0')
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
PYEOF
"$VKCU" verify --backend cpu "$TMP/b3.manifest" > "$TMP/verify" 2>&1
rc=$?
[ "$rc" != 0 ] && grep -q '^FAIL big10' "$TMP/verify" && grep -q '^PASS odd8' "$TMP/verify" &&
  pass "blake3: verify fails the case whose expected digest changed" ||
  fail "blake3: verify with a changed digest: exit $rc: $(head -3 "$TMP/verify" | tr '\n' ' ')"

# The regression-blake3 preset: batch writes the lists vkcu hash writes.
mkdir -p "$TMP/in"
cp "$TMP/odd10.nut" "$TMP/g1025.nut" "$TMP/in/"
if "$VKCU" batch "$TMP/in" "$TMP/out" --backend cpu --pipeline regression-blake3 -q 2> "$TMP/err"; then
  ok=1
  for n in odd10 g1025; do
    cmp -s <(frames "$TMP/out/$n.framemd5") <(frames "$TMP/$n.b3") || ok=0
  done
  [ "$ok" = 1 ] && grep -qx '#hash: BLAKE3' "$TMP/out/odd10.framemd5" &&
    pass "blake3: batch --pipeline regression-blake3 = vkcu hash --algo blake3" ||
    fail "blake3: batch regression-blake3 lists differ from vkcu hash's: $(ls "$TMP/out")"
else
  fail "blake3: batch regression-blake3: $(tail -1 "$TMP/err")"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real-world streams on the CPU backend (issue 26; issue 22 item 9), with the
# clips of tools/make-media.sh: size changes (H.264 Annex B and MP4, HEVC,
# VP9 IVF), 8/10-bit switches (HEVC, VP9), IVF timestamps that collapse, and
# H.264 damaged at known pictures.
# - default timing = `ffmpeg -f framemd5` (frames dropped and scaled as
#   ffmpeg does, with warnings and counts); --timing decoded = `ffmpeg
#   -fps_mode passthrough -noautoscale -f framemd5` (10-bit frames kept as
#   they are: = ffmpeg's -pix_fmt yuv420p10le lines);
# - operators start again at a format change (= each segment on its own);
#   a transcode scales to the first size as ffmpeg does;
# - damaged frames are kept (as ffmpeg -threads 1), marked in framemd5 and
#   JSON, counted; compare and verify report them apart, and
#   --exclude-concealed / 'concealed = exclude' leave them out;
# - hash and transcode give the same frames of a damaged stream on every run.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
cols() { grep -v '^#' "$1" | awk -F', *' '{print $3, $4, $5, $6}'; } # pts duration size hash
hashes() { grep -v '^#' "$1" | awk -F', *' '{print $5, $6}'; }        # size hash
for c in sizes.h264 sizes.mp4 sizes.hevc sizes.ivf depth.ivf damaged-noise.h264 damaged-lost.h264; do
  [ -s "$m/$c" ] || { fail "streams: $m/$c missing (make media)"; exit 0; }
done

# 1. The default timing follows ffmpeg's framemd5, scaled frames included.
for c in sizes.h264 sizes.mp4 sizes.hevc sizes.ivf depth.ivf; do
  "$FFMPEG" -v quiet -nostdin -i "$m/$c" -f framemd5 - > "$TMP/ff" 2>/dev/null
  if "$VKCU" hash --backend cpu "$m/$c" -y -o "$TMP/v" 2> "$TMP/err"; then
    n=$(cols "$TMP/v" | wc -l)
    cmp -s <(cols "$TMP/v") <(cols "$TMP/ff") && [ "$n" -gt 0 ] &&
      pass "streams: $c: hash = ffmpeg -f framemd5 ($n frames, $(grep -c 'changes format' "$TMP/err") format changes)" ||
      fail "streams: $c: hash differs from ffmpeg -f framemd5: $(diff <(cols "$TMP/v") <(cols "$TMP/ff") | sed -n 2p)"
  else
    fail "streams: $c: $(tail -1 "$TMP/err")"
  fi
done

# 2. --timing decoded = ffmpeg passthrough/noautoscale (same pixel format throughout)...
for c in sizes.h264 sizes.mp4 sizes.ivf; do
  "$FFMPEG" -v quiet -nostdin -i "$m/$c" -fps_mode passthrough -noautoscale -f framemd5 - > "$TMP/ff" 2>/dev/null
  if "$VKCU" hash --backend cpu --timing decoded "$m/$c" -y -o "$TMP/v" 2> "$TMP/err"; then
    n=$(cols "$TMP/v" | wc -l) sizes=$(cols "$TMP/v" | awk '{print $3}' | sort -u | wc -l)
    cmp -s <(cols "$TMP/v") <(cols "$TMP/ff") && [ "$sizes" -gt 1 ] && grep -q '^#timing: decoded' "$TMP/v" &&
      pass "streams: $c --timing decoded = ffmpeg -fps_mode passthrough -noautoscale ($n frames, $sizes sizes)" ||
      fail "streams: $c --timing decoded differs from ffmpeg passthrough: $(diff <(cols "$TMP/v") <(cols "$TMP/ff") | sed -n 2p)"
  else
    fail "streams: $c --timing decoded: $(tail -1 "$TMP/err")"
  fi
done
# ...and where the depth changes, each frame in its own: 8-bit frames as ffmpeg's
# passthrough lines, 10-bit ones as its -pix_fmt yuv420p10le lines.
for c in sizes.hevc depth.ivf; do
  "$FFMPEG" -v quiet -nostdin -i "$m/$c" -fps_mode passthrough -noautoscale -f framemd5 - > "$TMP/ff8" 2>/dev/null
  "$FFMPEG" -v quiet -nostdin -i "$m/$c" -fps_mode passthrough -noautoscale -pix_fmt yuv420p10le -f framemd5 - \
    > "$TMP/ff10" 2>/dev/null
  if "$VKCU" hash --backend cpu --timing decoded "$m/$c" -y -o "$TMP/v" 2> "$TMP/err"; then
    bad=$(python3 - "$TMP/v" "$TMP/ff8" "$TMP/ff10" <<'PY'
import sys
rows = lambda p: [l.split(', ') for l in open(p) if not l.startswith('#')]
v, f8, f10 = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
if not (len(v) == len(f8) == len(f10)):
    print('frame counts %d, %d, %d' % (len(v), len(f8), len(f10))); sys.exit()
deep = 0
for i, (a, b, c) in enumerate(zip(v, f8, f10)):
    wide = a[4] == c[4]  # a 10-bit frame: ffmpeg's yuv420p10le size (twice its 8-bit one)
    want = c if wide else b
    deep += wide
    if a[2:] != want[2:]:
        print('frame %d: %s, expected %s' % (i, ','.join(a[2:]).strip(), ','.join(want[2:]).strip())); sys.exit()
print('' if deep else 'no 10-bit frame')
PY
)
    [ -z "$bad" ] && pass "streams: $c --timing decoded: 8-bit frames = ffmpeg's, 10-bit frames = ffmpeg's yuv420p10le" ||
      fail "streams: $c --timing decoded: $bad"
  else
    fail "streams: $c --timing decoded: $(tail -1 "$TMP/err")"
  fi
done

# 3. Warnings and counts: what the default timing dropped and scaled, named with the option.
"$VKCU" hash --backend cpu --stats "$m/sizes.ivf" -y -o "$TMP/default" 2> "$TMP/err"
if grep -q "sizes.ivf: 17 of 25 decoded frames were dropped by their timestamps, as ffmpeg's framemd5 drops them; --timing decoded takes every decoded frame" "$TMP/err" &&
   grep -q "sizes.ivf: 12 of 25 frames were scaled to the first frame's yuv420p 160x120" "$TMP/err" &&
   grep -q "stats: frames: decoded=25 dropped=17 duplicated=0 rescaled=12 concealed=0 format_changes=3" "$TMP/err"; then
  pass "streams: default timing warns of 17 dropped and 12 scaled frames, naming --timing decoded; --stats counts them"
else
  fail "streams: warnings/--stats for sizes.ivf: $(grep -v 'changes format' "$TMP/err" | head -3 | tr '\n' ' ')"
fi
"$VKCU" hash --backend cpu --timing decoded --stats "$m/sizes.ivf" -y -o "$TMP/v" 2> "$TMP/err"
! grep -q "warning" "$TMP/err" && grep -q "decoded=25 dropped=0 duplicated=0 rescaled=0" "$TMP/err" &&
  [ "$(cols "$TMP/v" | wc -l)" = 25 ] &&
  pass "streams: --timing decoded: 25 of 25 frames, no warning" || fail "streams: --timing decoded warns: $(head -2 "$TMP/err")"
"$VKCU" hash --backend cpu --format json "$m/sizes.ivf" > "$TMP/j" 2> /dev/null
python3 - "$TMP/j" <<'PY' && pass "streams: JSON lines end with the counts" || fail "streams: JSON summary"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = lines[-1]
assert s['type'] == 'summary' and s['timing'] == 'ffmpeg', s
assert (s['frames'], s['decoded'], s['dropped'], s['rescaled'], s['format_changes']) == (8, 25, 17, 12, 3), s
assert len(lines) == 10, len(lines)
PY
"$VKCU" hash --backend cpu --timing decoded --format json "$m/sizes.ivf" > "$TMP/j" 2> /dev/null
python3 - "$TMP/j" <<'PY' && pass "streams: decoded JSON: header and counts say decoded" || fail "streams: decoded JSON"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]['timing'] == 'decoded' and lines[-1]['timing'] == 'decoded' and lines[-1]['frames'] == 25, lines[-1]
PY
expect "streams: --timing decoded is for hash lists (transcode refuses it)" 2 "unknown option|timing" -- \
  "$VKCU" "$m/sizes.ivf" -o "$TMP/x.mkv" --timing decoded

# 4. Operators start again at each format change: the same as each segment alone.
for chain in denoise=tnr:sigma=6 scale=w=160:h=120 crop=w=96:h=64,denoise=nlm:sigma=4; do
  "$VKCU" hash --backend cpu --timing decoded --chain "$chain" "$m/sizes.h264" -y -o "$TMP/whole" 2> "$TMP/err" ||
    { fail "streams: --chain $chain over sizes.h264: $(tail -1 "$TMP/err")"; continue; }
  : > "$TMP/parts"
  for s in a b c; do
    "$VKCU" hash --backend cpu --chain "$chain" "$m/.seg-$s.264" -o "$TMP/part" -y 2> /dev/null
    hashes "$TMP/part" >> "$TMP/parts"
  done
  cmp -s <(hashes "$TMP/whole") "$TMP/parts" &&
    pass "streams: --chain $chain across 2 format changes = each segment alone ($(wc -l < "$TMP/parts") frames)" ||
    fail "streams: --chain $chain across format changes differs from the segments alone"
done

# 5. A transcode keeps the first size, as ffmpeg does (frames scaled, counted).
if "$VKCU" --backend cpu "$m/sizes.h264" --encoder rawvideo -y -o "$TMP/t.nut" 2> "$TMP/err"; then
  "$VKCU" hash --backend cpu "$TMP/t.nut" -y -o "$TMP/t.md5" 2> /dev/null
  "$FFMPEG" -v quiet -nostdin -i "$m/sizes.h264" -f framemd5 - > "$TMP/ff" 2>/dev/null
  cmp -s <(hashes "$TMP/t.md5") <(hashes "$TMP/ff") && grep -q "5 of 15 frames were scaled to the first frame's yuv420p 208x176 for the encoder" "$TMP/err" &&
    pass "streams: transcode across size changes: 15 frames at 208x176 = ffmpeg's, with a warning" ||
    fail "streams: transcode across size changes: $(tail -1 "$TMP/err")"
else
  fail "streams: transcode of sizes.h264: $(tail -1 "$TMP/err")"
fi
expect "streams: transcode of an 8/10-bit HEVC stream to mkv" 0 "frames were scaled to the first frame's yuv420p 208x176" -- \
  "$VKCU" --backend cpu "$m/sizes.hevc" -y -o "$TMP/h.mkv"

# 6. Damaged streams: kept as ffmpeg -threads 1 keeps them, marked, counted.
"$FFMPEG" -v quiet -nostdin -threads 1 -i "$m/damaged-noise.h264" -f framemd5 - > "$TMP/ff" 2>/dev/null
"$VKCU" hash --backend cpu --stats "$m/damaged-noise.h264" -y -o "$TMP/dn" 2> "$TMP/err"
marks=$(grep -c '^#concealed: frame [0-9]*, pts [0-9]*: decoded from damaged data' "$TMP/dn")
if cmp -s <(cols "$TMP/dn") <(cols "$TMP/ff") && [ "$marks" = 18 ] &&
   grep -q "damaged-noise.h264: 2 damaged pictures, concealed by the decoder: frames 5, 13 (--log-level verbose lists each); kept and marked (use --strict to stop)$" "$TMP/err" &&
   grep -q "concealed=18" "$TMP/err" &&
   [ "$(grep -A1 '^#concealed: frame 5,' "$TMP/dn" | tail -1 | awk -F', *' '{print $3}')" = 5 ]; then
  pass "streams: damaged-noise.h264: 24 frames = ffmpeg -threads 1; pictures 5 and 13 and the 16 frames after them up to a key frame marked"
else
  fail "streams: damaged-noise.h264: $marks marks; $(grep -v 'ffmpeg' "$TMP/err" | head -2 | tr '\n' ' ')"
fi
"$VKCU" hash --backend cpu --format json "$m/damaged-noise.h264" > "$TMP/j" 2> /dev/null
[ "$(grep -c '"concealed":true' "$TMP/j")" = 18 ] && grep -q '"type":"summary".*"concealed":18' "$TMP/j" &&
  pass "streams: JSON marks the 18 concealed frames" || fail "streams: JSON concealed marks"
"$VKCU" hash --backend cpu "$m/damaged-lost.h264" -y -o "$TMP/dl" 2> "$TMP/err"
"$FFMPEG" -v quiet -nostdin -threads 1 -i "$m/damaged-lost.h264" -f framemd5 - > "$TMP/ff" 2>/dev/null
cmp -s <(cols "$TMP/dl") <(cols "$TMP/ff") && [ "$(cols "$TMP/dl" | wc -l)" = 23 ] &&
  pass "streams: damaged-lost.h264: 23 frames = ffmpeg -threads 1 (a lost picture FFmpeg does not report)" ||
  fail "streams: damaged-lost.h264 differs from ffmpeg -threads 1"
# issue 38.4: one warning for the damaged pictures of a file, naming the first five; verbose lists each.
for i in 1 2 3 4 5; do cat "$m/damaged-noise.h264"; done > "$TMP/dn5.h264" # 120 frames, 10 damaged pictures
"$VKCU" hash --backend cpu "$TMP/dn5.h264" -y -o "$TMP/dn5" 2> "$TMP/err"
"$VKCU" hash --backend cpu "$TMP/dn5.h264" -y -o "$TMP/dn5" --log-level verbose 2> "$TMP/err-v"
mkdir -p "$TMP/dn5-in"; cp "$TMP/dn5.h264" "$TMP/dn5-in/"
"$VKCU" batch --backend cpu "$TMP/dn5-in" "$TMP/dn5-out" 2> "$TMP/err-b"
one="dn5.h264: 10 damaged pictures, concealed by the decoder: frames 5, 13, 29, 37, 53, \\.\\.\\. \\(--log-level verbose lists each\\); kept and marked"
[ "$(grep -c 'damaged picture' "$TMP/err")" = 1 ] && grep -qE "$one" "$TMP/err" &&
  [ "$(grep -c 'damaged picture' "$TMP/err-b")" = 1 ] && grep -qE "$one" "$TMP/err-b" &&
  [ "$(grep -cE 'dn5.h264: frame [0-9]+: damaged picture, concealed by the decoder' "$TMP/err-v")" = 10 ] &&
  grep -q 'dn5.h264: frame 109: damaged picture' "$TMP/err-v" &&
  pass "streams: 10 damaged pictures: one warning naming the first five (in a batch too); --log-level verbose lists the 10" ||
  fail "streams: damaged pictures: $(grep -c 'damaged picture' "$TMP/err") lines (batch $(grep -c 'damaged picture' "$TMP/err-b"), verbose $(grep -c 'damaged picture,' "$TMP/err-v")): $(grep -m2 'damaged picture' "$TMP/err" | tr '\n' ' ')"
expect "streams: --strict stops at the first damaged picture" 3 "damaged-noise.h264: frame 5: damaged picture" -- \
  "$VKCU" hash --backend cpu --strict "$m/damaged-noise.h264" -y -o "$TMP/strict"

# 7. compare counts concealed pairs apart; --exclude-concealed leaves them out.
clean=$m/.damage-src.264
expect "streams: compare clean vs damaged: a mismatch that names the concealed frames" 6 \
  "18 of 24 frames differ \(identical frames required; 18 of them concealed by the decoder: --exclude-concealed leaves those out\)" -- \
  "$VKCU" compare --backend cpu "$clean" "$TMP/dn"
grep -q "frames: A 24, B 24, paired 24, differing 18; concealed by the decoder 18 (18 of them differ)" "$TMP/.stdout" &&
  pass "streams: compare's summary counts the concealed pairs" || fail "streams: compare summary: $(grep '^frames' "$TMP/.stdout")"
expect "streams: compare --exclude-concealed passes on the clean frames" 0 "" -- \
  "$VKCU" compare --backend cpu --exclude-concealed "$clean" "$m/damaged-noise.h264"
grep -q "result: PASS: 6 of 24 frames identical; 18 concealed by the decoder left out (18 differ)" "$TMP/.stdout" &&
  pass "streams: the verdict says what was left out" || fail "streams: verdict: $(grep '^result' "$TMP/.stdout")"
expect "streams: compare of two media files names the concealed frames" 6 "18 of them concealed by the decoder" -- \
  "$VKCU" compare --backend cpu "$clean" "$m/damaged-noise.h264" --json "$TMP/c.json" -y
python3 - "$TMP/c.json" <<'PY' && pass "streams: compare --json counts each side's frames and the concealed pairs" ||
import json, sys
d = json.load(open(sys.argv[1]))
assert d['concealed'] == 18 and len(d['frames']) == 24, (d['concealed'], len(d['frames']))
assert d['counts']['a']['concealed'] == 0 and d['counts']['b'] == {'decoded': 24, 'dropped': 0, 'duplicated': 0,
                                                                   'rescaled': 0, 'concealed': 18}, d['counts']
PY
  fail "streams: compare --json counts"
expect "streams: a damaged stream against its own list: identical" 0 "" -- \
  "$VKCU" compare --backend cpu "$m/damaged-noise.h264" "$TMP/dn"
# a list that says it holds every decoded frame makes its media partner read that way
"$VKCU" hash --backend cpu --timing decoded "$m/sizes.ivf" -y -o "$TMP/dec" 2> /dev/null
expect "streams: compare a decoded list with its media: 25 frames identical" 0 "" -- \
  "$VKCU" compare --backend cpu "$m/sizes.ivf" "$TMP/dec"
grep -q "IDENTICAL: 25 frames" "$TMP/.stdout" && pass "streams: the media side took every decoded frame" ||
  fail "streams: compare with a decoded list: $(grep '^result' "$TMP/.stdout")"
expect "streams: compare with a default list warns of dropped frames" 0 "17 of 25 decoded frames were dropped by their timestamps" -- \
  "$VKCU" compare --backend cpu "$m/sizes.ivf" "$TMP/default"

# 8. verify: per-case timing and concealed keys; --update keeps the marks inline.
mkdir -p "$TMP/man"
cp "$m/sizes.ivf" "$m/damaged-noise.h264" "$clean" "$TMP/man/"
mv "$TMP/man/.damage-src.264" "$TMP/man/clean.264"
"$VKCU" hash --backend cpu "$TMP/man/clean.264" -o "$TMP/man/clean.framemd5" 2> /dev/null
cat > "$TMP/man/m.manifest" <<EOF
vkcu-manifest 1
[case every-frame]
input = sizes.ivf
backend = cpu
timing = decoded
[case damaged-excluded]
input = damaged-noise.h264
backend = cpu
concealed = exclude
hashes = clean.framemd5
[case damaged]
input = damaged-noise.h264
backend = cpu
hashes = clean.framemd5
[case damaged-inline]
input = damaged-noise.h264
backend = cpu
EOF
"$VKCU" verify "$TMP/man/m.manifest" --update --case every-frame --case damaged-inline > "$TMP/up" 2>&1
if [ "$(grep -c '^#concealed:' "$TMP/man/m.manifest")" = 18 ] && [ "$(grep -c '^0,' "$TMP/man/m.manifest")" = 49 ]; then
  pass "streams: verify --update writes 25 decoded frames and the damaged case's marks inline"
else
  fail "streams: verify --update: $(tail -2 "$TMP/up" | tr '\n' ' ')"
fi
"$VKCU" verify "$TMP/man/m.manifest" > "$TMP/ver" 2>&1
if grep -q "^PASS every-frame: 25 frames" "$TMP/ver" &&
   grep -q "^PASS damaged-excluded: 24 frames, MD5 hashes equal; 18 concealed by the decoder (18 differ, left out)" "$TMP/ver" &&
   grep -q "^FAIL damaged: 18 of 24 frames differ; 18 of them concealed by the decoder (concealed = exclude leaves those out)" "$TMP/ver" &&
   grep -q "^PASS damaged-inline: 24 frames, MD5 hashes equal; 18 concealed by the decoder, equal" "$TMP/ver" &&
   grep -q "3 passed, 1 failed" "$TMP/ver"; then
  pass "streams: verify reports concealed frames apart; concealed = exclude passes, the default fails"
else
  fail "streams: verify: $(grep -v '^PASS every' "$TMP/ver" | head -4 | tr '\n' ' ')"
fi
expect "streams: verify --exclude-concealed for cases without the key" 0 "" -- \
  "$VKCU" verify "$TMP/man/m.manifest" --exclude-concealed
printf 'vkcu-manifest 1\n[case x]\ninput = sizes.ivf\ntiming = every\n' > "$TMP/man/bad.manifest"
expect "streams: a manifest's timing must be ffmpeg or decoded" 3 "bad.manifest:4: timing 'every' is not ffmpeg or decoded" -- \
  "$VKCU" verify "$TMP/man/bad.manifest"

# 9. Hash and transcode: the same frames of a damaged stream, on every run (issue 22.9).
for c in damaged-noise.h264 corrupt.h264; do
  ok=1 ref=
  for run in 1 2 3; do
    "$VKCU" hash --backend cpu "$m/$c" -o "$TMP/h$run" -y 2> /dev/null || ok=0
    "$VKCU" --backend cpu "$m/$c" --encoder rawvideo -o "$TMP/t$run.nut" -y 2> /dev/null || ok=0
    "$VKCU" hash --backend cpu "$TMP/t$run.nut" -o "$TMP/th$run" -y 2> /dev/null || ok=0
    [ -n "$ref" ] || ref=$(hashes "$TMP/h1")
    [ "$(hashes "$TMP/h$run")" = "$ref" ] && [ "$(hashes "$TMP/th$run")" = "$ref" ] || ok=0
  done
  [ "$ok" = 1 ] && pass "streams: $c: hash and transcode give the same $(echo "$ref" | wc -l) frames in 3 runs each" ||
    fail "streams: $c: hash and transcode disagree, or a run differs"
done

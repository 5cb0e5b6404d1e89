#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu compare: a clip against itself, against a copy with one altered frame
# (exactly that frame reported), against a copy with one frame dropped (one
# count mismatch, no cascade), PSNR/SSIM against FFmpeg's psnr and ssim
# filters (0.01 dB, 0.001), limits, hash lists, the diff image, exit codes.
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
cmp_run() { "$VKCU" compare --backend cpu "$@" > "$TMP/out" 2> "$TMP/err"; echo $? > "$TMP/rc"; }
rc() { cat "$TMP/rc"; }
frame_lines() { grep -E '^(A |B )?frame [0-9]+' "$TMP/out"; }

# Copies made with FFmpeg: lossless (ffv1) with frame 17 altered, with frame 17
# dropped (timestamps kept), and lossy re-encodes (8-bit H.264, 10-bit HEVC).
ff -i "$in" -an -vf "drawbox=x=10:y=10:w=40:h=30:color=red:t=fill:enable='eq(n,17)'" -c:v ffv1 "$TMP/altered.mkv" &&
  ff -i "$in" -an -vf "select='not(eq(n,17))'" -fps_mode passthrough -c:v ffv1 "$TMP/dropped.mkv" &&
  ff -i "$in" -an -c:v libx264 -preset veryfast -crf 35 "$TMP/lossy.mp4" &&
  ff -i "$MEDIA/hevc10.mkv" -an -c:v libx265 -preset ultrafast -crf 32 -x265-params log-level=error "$TMP/lossy10.mkv" ||
  { fail "compare: could not make the test copies with $FFMPEG"; exit 0; }

# A clip against itself.
cmp_run "$in" "$in"
if [ "$(rc)" = 0 ] && grep -q '^result: IDENTICAL: 50 frames$' "$TMP/out" && grep -q '^max diff: 0$' "$TMP/out" &&
  grep -q 'PSNR y:inf u:inf v:inf' "$TMP/out"; then
  pass "compare: a clip against itself is identical (exit 0)"
else
  fail "compare: clip against itself: exit $(rc): $(tail -2 "$TMP/out" | tr '\n' ' ')"
fi

# One altered frame: exactly frame 17 is reported, nothing else.
cmp_run "$in" "$TMP/altered.mkv"
lines=$(frame_lines)
if [ "$(rc)" = 6 ] && [ "$(echo "$lines" | wc -l)" = 1 ] && echo "$lines" | grep -q '^frame 17 (pts 0.680 s): DIFFERS' &&
  grep -q '^first differing frame: 17 (pts 0.680 s)$' "$TMP/out" &&
  grep -q '^frames: A 50, B 50, paired 50, differing 1$' "$TMP/out"; then
  pass "compare: one altered frame reports exactly frame 17 (exit 6)"
else
  fail "compare: altered frame: exit $(rc); frame lines: $(echo "$lines" | head -3 | tr '\n' ' ')"
fi
grep -q 'frame 17 (pts 0.680 s) differs' "$TMP/err" && pass "compare: the mismatch line on stderr names frame 17" ||
  fail "compare: stderr lacks the differing frame: $(cat "$TMP/err")"

# One dropped frame: one count mismatch, every other frame paired and identical.
cmp_run "$in" "$TMP/dropped.mkv"
lines=$(frame_lines)
if [ "$(rc)" = 6 ] && [ "$lines" = "A frame 17 (pts 0.680 s): only in A (missing from B)" ] &&
  grep -q '^frames: A 50, B 49, paired 49, differing 0$' "$TMP/out" &&
  grep -q '^result: MISMATCH: frame count differs: A has 50, B has 49' "$TMP/out"; then
  pass "compare: a dropped frame is one count mismatch, not a cascade"
else
  fail "compare: dropped frame: exit $(rc): $(echo "$lines" | head -3 | tr '\n' ' ') $(grep '^frames:' "$TMP/out")"
fi
# The same the other way round: B has a frame A lacks.
cmp_run "$TMP/dropped.mkv" "$in"
[ "$(rc)" = 6 ] && [ "$(frame_lines)" = "B frame 17 (pts 0.680 s): only in B (missing from A)" ] &&
  pass "compare: an added frame is reported as only in B" || fail "compare: added frame: $(frame_lines | head -2 | tr '\n' ' ')"

# PSNR and SSIM agree with FFmpeg's filters (8-bit and 10-bit).
# check_metrics NAME A B: vkcu's summary against `ffmpeg -lavfi psnr/ssim`.
check_metrics() {
  local name=$1 a=$2 b=$3
  cmp_run "$a" "$b"
  metrics_vs_ffmpeg "$TMP/out" "$a" "$b" '[0:v][1:v]' y 20 60
}
r=$(check_metrics 8bit "$in" "$TMP/lossy.mp4") && pass "compare: 8-bit PSNR/SSIM equal FFmpeg's ($r)" ||
  fail "compare: 8-bit metrics differ from FFmpeg's psnr/ssim: $r"
r=$(check_metrics 10bit "$MEDIA/hevc10.mkv" "$TMP/lossy10.mkv") && pass "compare: 10-bit PSNR/SSIM equal FFmpeg's ($r)" ||
  fail "compare: 10-bit metrics differ from FFmpeg's psnr/ssim: $r"
r=$(check_metrics altered "$in" "$TMP/altered.mkv") && pass "compare: one-frame difference PSNR/SSIM equal FFmpeg's ($r)" ||
  fail "compare: altered-frame metrics differ from FFmpeg's: $r"

# Limits: --min-psnr and --max-diff decide pass (0) or mismatch (6).
cmp_run "$in" "$TMP/lossy.mp4" --min-psnr 25
[ "$(rc)" = 0 ] && grep -q '^result: PASS: 50 of 50 frames differ, within --min-psnr 25' "$TMP/out" &&
  pass "compare: --min-psnr 25 passes a lossy copy" || fail "compare: --min-psnr 25: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$in" "$TMP/lossy.mp4" --min-psnr 45
[ "$(rc)" = 6 ] && grep -q 'outside the limits (--min-psnr 45)' "$TMP/out" && pass "compare: --min-psnr 45 fails it (exit 6)" ||
  fail "compare: --min-psnr 45: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$in" "$TMP/altered.mkv" --max-diff 255
[ "$(rc)" = 0 ] && pass "compare: --max-diff 255 passes the altered copy" || fail "compare: --max-diff 255: exit $(rc)"
maxd=$(sed -n 's/^max diff: \([0-9]*\).*/\1/p' "$TMP/out")
cmp_run "$in" "$TMP/altered.mkv" --max-diff $((maxd - 1))
[ "$(rc)" = 6 ] && grep -q "frame 17 (pts 0.680 s) is outside the limits: max diff $maxd" "$TMP/out" &&
  pass "compare: --max-diff one below the largest difference ($maxd) fails on frame 17" ||
  fail "compare: --max-diff $((maxd - 1)): exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$in" "$TMP/altered.mkv" --max-diff "$maxd"
[ "$(rc)" = 0 ] && pass "compare: --max-diff equal to the largest difference passes" || fail "compare: --max-diff $maxd: exit $(rc)"

# Hash lists on either side (framemd5 and JSON, any algorithm).
"$VKCU" hash --backend cpu "$in" -o "$TMP/ref.framemd5" && "$VKCU" hash --backend cpu "$TMP/altered.mkv" -o "$TMP/alt.framemd5" &&
  "$VKCU" hash --backend cpu --algo xxh64 --format json "$TMP/dropped.mkv" -o "$TMP/drop.jsonl" ||
  fail "compare: vkcu hash failed"
cmp_run "$TMP/ref.framemd5" "$in"
[ "$(rc)" = 0 ] && grep -q '^result: IDENTICAL: 50 frames$' "$TMP/out" && pass "compare: hash list against its own clip" ||
  fail "compare: hash list vs clip: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$TMP/ref.framemd5" "$TMP/alt.framemd5"
[ "$(rc)" = 6 ] && [ "$(frame_lines | wc -l)" = 1 ] && frame_lines | grep -q '^frame 17 (pts 0.680 s): hashes differ' &&
  pass "compare: two hash lists: exactly frame 17 differs" || fail "compare: hash lists: exit $(rc): $(frame_lines | head -2 | tr '\n' ' ')"
cmp_run "$in" "$TMP/drop.jsonl"
[ "$(rc)" = 6 ] && [ "$(frame_lines)" = "A frame 17 (pts 0.680 s): only in A (missing from B)" ] &&
  pass "compare: clip against an xxh64 JSON list with a frame dropped: one count mismatch" ||
  fail "compare: clip vs JSON list: exit $(rc): $(frame_lines | head -2 | tr '\n' ' ')"
cmp_run "$TMP/ref.framemd5" "$TMP/drop.jsonl"
[ "$(rc)" = 3 ] && grep -q 'hash both with the same --algo' "$TMP/err" && pass "compare: MD5 list against XXH64 list is refused (exit 3)" ||
  fail "compare: algorithm mismatch: exit $(rc): $(cat "$TMP/err")"
# A hash list through a pipe (process substitution) is read once, whole: it
# used to be sniffed, then opened again, waiting forever for a gone writer.
# Media through a pipe is refused by name instead of hanging.
timeout -s KILL 60 "$VKCU" compare --backend cpu <(cat "$TMP/ref.framemd5") "$TMP/alt.framemd5" > "$TMP/out" 2> "$TMP/err"
echo $? > "$TMP/rc"
[ "$(rc)" = 6 ] && [ "$(frame_lines | wc -l)" = 1 ] && frame_lines | grep -q '^frame 17 (pts 0.680 s): hashes differ' &&
  pass "compare: a hash list through a pipe: exactly frame 17 differs" ||
  fail "compare: hash list through a pipe: exit $(rc) (137: hung): $(tail -1 "$TMP/err")"
timeout -s KILL 60 "$VKCU" compare --backend cpu "$TMP/ref.framemd5" <(cat "$in") > "$TMP/out" 2> "$TMP/err"
echo $? > "$TMP/rc"
[ "$(rc)" = 3 ] && grep -q '^vkcu: .*/dev/fd/[0-9]*: a pipe that is not a hash list; .*save the stream to a file first' "$TMP/err" &&
  [ "$(wc -l < "$TMP/err")" = 1 ] && pass "compare: media through a pipe: one line naming it, exit 3" ||
  fail "compare: media through a pipe: exit $(rc) (137: hung): $(cat "$TMP/err")"
cmp_run "$VKCU_CONFORMANCE/bear.h265.framemd5" "$VKCU_CONFORMANCE/bear.h265"
[ "$(rc)" = 0 ] && grep -q 'IDENTICAL: 30 frames' "$TMP/out" && pass "compare: conformance stream equals FFmpeg's .framemd5" ||
  fail "compare: bear.h265 vs its framemd5: exit $(rc): $(tail -1 "$TMP/out")"

# --chain applies to both inputs: the same chain on both is identical.
cmp_run "$in" "$TMP/altered.mkv" --chain 'convert=format=rgb24' --max-diff 0
[ "$(rc)" = 6 ] && [ "$(frame_lines | wc -l)" = 1 ] && frame_lines | grep -q 'max diff [0-9]* (. at' &&
  grep -q 'PSNR r:' "$TMP/out" && pass "compare: --chain convert=format=rgb24 on both: RGB metrics, frame 17 only" ||
  fail "compare: with --chain: exit $(rc): $(frame_lines | head -2 | tr '\n' ' ')"

# --diff-image: a PNG of the worst frame plus its scale bar, written whole.
mkdir -p "$TMP/img"
cmp_run "$in" "$TMP/altered.mkv" --diff-image "$TMP/img/diff.png"
dims=$("$FFPROBE" -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$TMP/img/diff.png" 2>/dev/null)
[ "$(rc)" = 6 ] && [ "$dims" = "png,320,268" ] && no_leftovers "$TMP/img" && grep -q '^diff image: .*(frame 17' "$TMP/out" &&
  pass "compare: --diff-image writes a 320x268 PNG of frame 17 (picture + scale bar)" ||
  fail "compare: --diff-image: exit $(rc), ffprobe '$dims': $(ls -A "$TMP/img" | tr '\n' ' ')"
python3 - "$TMP/img/diff.png" <<'EOF' && pass "compare: the diff image is bright only where frame 17 was altered" || fail "compare: diff image content"
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
pos, idat, w, h = 8, b'', 0, 0
while pos < len(data):
    n, typ = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b'IHDR':
        w, h = struct.unpack('>II', body[:8])
    if typ == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * 3
rows, prev = [], bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - 3] if x >= 3 else 0
        b = prev[x]
        c = prev[x - 3] if x >= 3 else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
# Coloured (difference) pixels inside the drawn box, none far outside it.
def coloured(x, y):
    r, g, b = rows[y][3 * x:3 * x + 3]
    return not (r == g == b)
inside = sum(coloured(x, y) for y in range(12, 38) for x in range(12, 48))
outside = sum(coloured(x, y) for y in range(60, 240) for x in range(0, 320))
sys.exit(0 if inside > 500 and outside == 0 else 1)
EOF
cmp_run "$in" "$in" --diff-image "$TMP/img/same.png"
[ "$(rc)" = 0 ] && [ ! -e "$TMP/img/same.png" ] && grep -q 'not written (no frame differs)' "$TMP/out" &&
  pass "compare: no diff image when nothing differs" || fail "compare: identical with --diff-image: exit $(rc)"
cmp_run "$in" "$TMP/altered.mkv" --diff-image "$TMP/no-such-dir/d.png"
[ "$(rc)" = 4 ] && grep -q 'no-such-dir/d.png: output folder' "$TMP/err" && pass "compare: unwritable --diff-image exits 4" ||
  fail "compare: unwritable diff image: exit $(rc): $(cat "$TMP/err")"

# Exit codes for bad input and bad usage.
expect "compare: missing input exits 3" 3 'nope.mp4: no such file' -- "$VKCU" compare --backend cpu "$in" "$TMP/nope.mp4"
expect "compare: not a video exits 3" 3 'not-video.mp4' -- "$VKCU" compare --backend cpu "$MEDIA/not-video.mp4" "$in"
printf '#format: frame checksums\n#tb 0: 1/25\n0, 0, 0, 1, 10, zz\n' > "$TMP/bad.framemd5"
expect "compare: malformed hash list exits 3 naming the line" 3 'bad.framemd5:3: not a frame hash line' -- \
  "$VKCU" compare "$TMP/bad.framemd5" "$TMP/ref.framemd5"
expect "compare: one input is a usage error" 2 'needs two inputs' -- "$VKCU" compare "$in"
expect "compare: unknown option is a usage error" 2 "unknown option '--bogus'" -- "$VKCU" compare "$in" "$in" --bogus
expect "compare: bad --min-psnr is a usage error" 2 "min-psnr: 'x' is not a number" -- "$VKCU" compare "$in" "$in" --min-psnr x


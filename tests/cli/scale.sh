#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `scale` against ffmpeg's zscale (zimg) on clips encoded here: 4K -> 1080p
# (H.264, lanczos), 1080p -> 720p (H.264 bicubic; HEVC 10-bit spline36),
# 720x576 anamorphic to square pixels. Per sample: the share within 1 LSB
# (at least 99.9%) and the largest difference, printed. zscale runs in one
# slice (its slices are resized apart). The largest differences are where
# lanczos/spline36 ring below 0 or above the maximum: zimg clamps between
# its two passes, vkcu only at the end. Then the size and SAR the encoder
# wrote, and the key errors.
. "$(dirname "$0")/lib.sh"

mk() { # name size frames pix_fmt codec-args...
  local name=$1 size=$2 n=$3 pf=$4; shift 4
  "$FFMPEG" -v error -nostdin -cpuflags 0 -threads 1 \
    -filter_complex "testsrc2=size=$size:rate=25,noise=alls=10:allf=t" -frames:v "$n" -pix_fmt "$pf" "$@" \
    -fflags +bitexact -y "$TMP/$name"
}
mk 2160p.mp4 3840x2160 1 yuv420p -c:v libx264 -preset veryfast -crf 24 -x264-params threads=1
mk 1080p.mp4 1920x1080 2 yuv420p -c:v libx264 -preset veryfast -crf 24 -x264-params threads=1
mk 1080p10.mkv 1920x1080 1 yuv420p10le -c:v libx265 -preset ultrafast -crf 26 \
  -x265-params log-level=error:pools=none:frame-threads=1
mk pal.mkv 720x576 2 yuv420p -c:v libx264 -preset veryfast -crf 24 -x264-params threads=1 -aspect 4:3

# y4m_diff A B: frame count, size, share within 1 LSB and max difference of
# two y4m files of the same layout; exit 1 below 99.9% within 1 LSB.
y4m_diff() {
  python3 - "$1" "$2" <<'PYEOF'
import sys
def read(path):
    data = open(path, 'rb').read()
    head, _, rest = data.partition(b'\n')
    tags = {t[:1]: t[1:] for t in head.split()[1:]}
    w, h, c = int(tags[b'W']), int(tags[b'H']), tags.get(b'C', b'420jpeg')
    bps = 2 if b'p1' in c else 1
    cw, ch = (w + 1) // 2, ((h + 1) // 2 if c.startswith(b'420') else h)
    size = (w * h + 2 * cw * ch) * bps
    frames = []
    while rest:
        _, _, rest = rest.partition(b'\n')
        frames.append(rest[:size])
        rest = rest[size:]
    return (w, h, bps), frames
ga, fa = read(sys.argv[1])
gb, fb = read(sys.argv[2])
if ga != gb or len(fa) != len(fb) or not fa:
    print('layouts differ: %s x %d frames vs %s x %d' % (ga, len(fa), gb, len(fb)))
    sys.exit(1)
bps = ga[2]
n = within = worst = 0
for a, b in zip(fa, fb):
    if bps == 2:
        a = [a[i] | a[i + 1] << 8 for i in range(0, len(a), 2)]
        b = [b[i] | b[i + 1] << 8 for i in range(0, len(b), 2)]
    for x, y in zip(a, b):
        d = abs(x - y)
        within += d <= 1
        worst = d if d > worst else worst
    n += len(a)
share = 100.0 * within / n
print('%dx%d, %d frames: %.4f%% of %d samples within 1 LSB of zscale, max diff %d' % (ga[0], ga[1], len(fa), share, n, worst))
sys.exit(0 if within * 1000 >= n * 999 else 1)
PYEOF
}

vs_zscale() { # name clip w h filter
  local name=$1 clip=$TMP/$2 w=$3 h=$4 f=$5 r
  rm -f "$TMP/v.y4m" "$TMP/z.y4m"
  if ! "$VKCU" --backend cpu "$clip" --chain "scale=w=$w:h=$h:filter=$f" -o "$TMP/v.y4m" 2> "$TMP/err"; then
    fail "$name: vkcu failed: $(tail -1 "$TMP/err")"; return
  fi
  "$FFMPEG" -v error -nostdin -filter_threads 1 -i "$clip" -vf "zscale=w=$w:h=$h:filter=$f" -strict -1 -y "$TMP/z.y4m"
  if r=$(y4m_diff "$TMP/v.y4m" "$TMP/z.y4m"); then pass "$name: $r"; else fail "$name: $r"; fi
}
vs_zscale "scale 4K->1080p lanczos vs zscale" 2160p.mp4 1920 1080 lanczos
vs_zscale "scale 1080p->720p bicubic vs zscale" 1080p.mp4 1280 720 bicubic
vs_zscale "scale 1080p->720p 10-bit spline36 vs zscale" 1080p10.mkv 1280 720 spline36
vs_zscale "scale 1080p->854x480 bilinear vs zscale (non-integer ratio)" 1080p.mp4 854 480 bilinear

# The encoder gets the output size and SAR: PAL 4:3 (SAR 16:15) to square pixels.
rm -f "$TMP/sq.mkv" "$TMP/keep.mkv"
"$VKCU" --backend cpu "$TMP/pal.mkv" --chain scale=w=-2:h=576 -o "$TMP/sq.mkv" 2> "$TMP/err"
got=$(probe_val "$TMP/sq.mkv" v:0 stream=width),$(probe_val "$TMP/sq.mkv" v:0 stream=height),$(probe_val "$TMP/sq.mkv" v:0 stream=sample_aspect_ratio)
[ "$got" = 768,576,1:1 ] && pass "scale sar=square: 720x576 SAR 16:15 -> 768x576 SAR 1:1 in the file" ||
  fail "scale sar=square: file has $got, expected 768,576,1:1 ($(tail -1 "$TMP/err"))"
"$VKCU" --backend cpu "$TMP/pal.mkv" --chain scale=w=-2:h=288:sar=keep -o "$TMP/keep.mkv" 2> "$TMP/err"
got=$(probe_val "$TMP/keep.mkv" v:0 stream=width),$(probe_val "$TMP/keep.mkv" v:0 stream=height),$(probe_val "$TMP/keep.mkv" v:0 stream=sample_aspect_ratio)
[ "$got" = 360,288,16:15 ] && pass "scale sar=keep: 720x576 SAR 16:15 -> 360x288 SAR 16:15 in the file" ||
  fail "scale sar=keep: file has $got, expected 360,288,16:15 ($(tail -1 "$TMP/err"))"
# framemd5-style hashes name the output size
"$VKCU" hash --backend cpu "$TMP/1080p.mp4" --chain scale=w=640:h=-2 -o "$TMP/h.txt" -y 2> "$TMP/err"
grep -q '^#dimensions 0: 640x360' "$TMP/h.txt" && [ "$(frames "$TMP/h.txt" | wc -l)" = 2 ] &&
  pass "scale: hash header says 640x360, 2 frames" || fail "scale: hash header: $(grep dimensions "$TMP/h.txt")"

expect "scale without a size" 2 "scale: set w or h" -- "$VKCU" hash "$TMP/1080p.mp4" --chain scale=filter=lanczos
expect "scale w=0" 2 "w=0: give a size in pixels" -- "$VKCU" hash "$TMP/1080p.mp4" --chain scale=w=0:h=720
expect "scale unknown filter" 2 "filter=box: expected one of bilinear" -- "$VKCU" hash "$TMP/1080p.mp4" --chain scale=w=640:filter=box
expect "scale both sides following" 2 "at most one side" -- "$VKCU" hash "$TMP/1080p.mp4" --chain scale=w=-1:h=-2
expect "scale on rgb24 names the format" 2 "scale: input format rgb24 is not supported" -- \
  "$VKCU" hash "$TMP/1080p.mp4" --chain convert=format=rgb24,scale=w=640:h=360
# Odd sizes of 4:2:0: x264 refuses them, named as such; FFV1 takes them.
expect "scale to an odd 4:2:0 size for libx264" 2 "cannot take 135x101 yuv420p frames \(not a multiple of the chroma subsampling" -- \
  "$VKCU" --backend cpu "$TMP/1080p.mp4" --chain scale=w=135:h=101 -o "$TMP/odd.mkv"
[ ! -e "$TMP/odd.mkv" ] && pass "scale: the refused odd-size output left no file" || fail "scale: $TMP/odd.mkv exists after the refusal"
"$VKCU" --backend cpu "$TMP/1080p.mp4" --chain scale=w=135:h=101 --encoder ffv1 -o "$TMP/odd-ffv1.mkv" 2> "$TMP/err"
got=$(probe_val "$TMP/odd-ffv1.mkv" v:0 stream=width)x$(probe_val "$TMP/odd-ffv1.mkv" v:0 stream=height)
[ "$got" = 135x101 ] && pass "scale: 135x101 4:2:0 through FFV1" || fail "scale: FFV1 file is '$got' ($(tail -1 "$TMP/err"))"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu compare pairs what a person means (issue 12): a clip and vkcu's own
# default transcode (Matroska with AAC starts the video about 21 ms late; mp4;
# a VFR input) pair every frame, at FFmpeg's PSNR/SSIM for the same pairs;
# --align start|pts|index; --start/--duration; --chain-a/--chain-b; --scale
# against ffmpeg's scale filter; a frame-rate change named as such; per-frame
# rows in CSV and JSON that match the printed lines and follow the output-file rules.
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
cmp_run() { "$VKCU" compare --backend cpu "$@" > "$TMP/out" 2> "$TMP/err"; echo $? > "$TMP/rc"; }
rc() { cat "$TMP/rc"; }
counts() { grep '^frames:' "$TMP/out"; }

"$VKCU" --backend cpu "$in" -o "$TMP/t.mkv" 2> /dev/null && "$VKCU" --backend cpu "$in" -o "$TMP/t.mp4" 2> /dev/null &&
  "$VKCU" --backend cpu "$MEDIA/vfr.mkv" -o "$TMP/vfr.mkv" 2> /dev/null &&
  ff -i "$in" -an -vf scale=160:120 -c:v ffv1 "$TMP/small.mkv" &&
  ff -i "$in" -an -vf fps=50 -c:v ffv1 "$TMP/r50.mkv" && ff -i "$in" -an -vf fps=30 -c:v ffv1 "$TMP/r30.mkv" &&
  ff -i "$in" -an -vf "setpts=PTS+if(gte(N\,25)\,0.4/TB\,0)" -c:v ffv1 "$TMP/gap.mkv" ||
  { fail "compare-align: could not make the test copies"; exit 0; }

# The container offset this is about: Matroska with AAC starts the video late.
off=$(probe_val "$TMP/t.mkv" v:0 stream=start_time)
python3 -c "import sys; sys.exit(0 if 0.015 < float('$off') < 0.03 else 1)" ||
  skip "compare-align: vkcu's mkv transcode starts its video at $off s, not about 21 ms late (the case below tests less)"

# check_ffmpeg A B: vkcu's summary against ffmpeg's psnr and ssim filters on
# the same pairs (each input's first frame at time zero, as --align start).
check_ffmpeg() {
  metrics_vs_ffmpeg "$TMP/out" "$1" "$2" '[0:v]setpts=PTS-STARTPTS[a];[1:v]setpts=PTS-STARTPTS[b];[a][b]' average 30 70
}

# A source and its own default transcode: every frame paired, no timestamp
# complaint, metrics equal to FFmpeg's. Matroska with AAC by default; mp4 and
# a VFR source (into Matroska) with --align start named.
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30
if [ "$(rc)" = 0 ] && [ "$(counts)" = "frames: A 50, B 50, paired 50, differing 50" ] && r=$(check_ffmpeg "$in" "$TMP/t.mkv"); then
  pass "compare-align: mp4 source vs its mkv+AAC transcode: 50 of 50 frames paired by default ($r)"
else
  fail "compare-align: mkv+AAC transcode: exit $(rc): $(counts) $(tail -1 "$TMP/out") $r"
fi
cmp_run "$in" "$TMP/t.mp4" --min-psnr 30 --align start
if [ "$(rc)" = 0 ] && [ "$(counts)" = "frames: A 50, B 50, paired 50, differing 50" ] && r=$(check_ffmpeg "$in" "$TMP/t.mp4"); then
  pass "compare-align: mp4 transcode: 50 of 50 frames paired with --align start ($r)"
else
  fail "compare-align: mp4 transcode: exit $(rc): $(counts) $(tail -1 "$TMP/out") $r"
fi
cmp_run "$MEDIA/vfr.mkv" "$TMP/vfr.mkv" --min-psnr 30 --align start
if [ "$(rc)" = 0 ] && [ "$(counts)" = "frames: A 50, B 50, paired 50, differing 50" ] && r=$(check_ffmpeg "$MEDIA/vfr.mkv" "$TMP/vfr.mkv"); then
  pass "compare-align: VFR source vs its mkv transcode: 50 of 50 frames paired ($r)"
else
  fail "compare-align: VFR transcode: exit $(rc): $(counts) $(tail -1 "$TMP/out") $r"
fi

# --align pts: absolute timestamps, so the 21 ms offset leaves the first frames unpaired.
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --align pts
[ "$(rc)" = 6 ] && grep -q '^result: MISMATCH: the timestamps differ (A and B have 50 frames each, but 1 only in A, 1 only in B)' "$TMP/out" &&
  pass "compare-align: --align pts pairs absolute timestamps (the 21 ms offset is a mismatch)" ||
  fail "compare-align: --align pts: exit $(rc): $(tail -1 "$TMP/out")"

# --align index: frame n with frame n, whatever the timestamps (a 0.4 s gap after frame 24).
cmp_run "$in" "$TMP/gap.mkv" --align index
[ "$(rc)" = 0 ] && grep -q '^result: IDENTICAL: 50 frames$' "$TMP/out" &&
  pass "compare-align: --align index pairs frame n with frame n across a timestamp gap" ||
  fail "compare-align: --align index: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$in" "$TMP/gap.mkv" --align start
[ "$(rc)" = 6 ] && grep -q '^frames: A 50, B 50, paired 40, differing 15$' "$TMP/out" &&
  grep -q 'but 10 only in A, 10 only in B)' "$TMP/out" &&
  grep -q '^A frame 25 (pts 1.000 s): only in A' "$TMP/out" &&
  pass "compare-align: --align start sees the timestamp gap: frames 25..34 of A and 40..49 of B unpaired" ||
  fail "compare-align: gap with --align start: exit $(rc): $(counts)"
expect "compare-align: a bad --align value is a usage error" 2 "align: 'frames' is not start, pts or index" -- \
  "$VKCU" compare "$in" "$in" --align frames

# --start/--duration trim both inputs, each from its own start: the first
# pair is the untrimmed comparison's frame 10 (same metrics).
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --per-frame
f10=$(grep '^frame 10 (pts 0.400 s): ' "$TMP/out" | sed 's/^frame 10 (pts 0.400 s): //')
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --start 0.4 --duration 0.8 --per-frame
[ "$(rc)" = 0 ] && [ "$(counts)" = "frames: A 20, B 20, paired 20, differing 20" ] && [ -n "$f10" ] &&
  [ "$(grep '^frame 0 (pts ' "$TMP/out" | sed 's/^frame 0 (pts [0-9.]* s): //')" = "$f10" ] &&
  pass "compare-align: --start 0.4 --duration 0.8 compares 20 frames from 0.4 s" ||
  fail "compare-align: --start/--duration: exit $(rc): $(counts) $(grep -m1 '^frame' "$TMP/out") $(cat "$TMP/err")"

"$VKCU" hash --backend cpu "$in" -o "$TMP/ref.framemd5" 2> /dev/null || fail "compare-align: vkcu hash failed"
expect "compare-align: --start with a hash list is refused (it cannot be trimmed)" 2 'ref.framemd5 is a hash list: --start/--duration trim media inputs only' -- \
  "$VKCU" compare --backend cpu "$TMP/ref.framemd5" "$in" --start 0.4

# --chain-a/--chain-b: operators for one input only.
cmp_run "$in" "$in" --chain-a convert=format=rgb24
[ "$(rc)" = 6 ] && grep -q 'the pictures differ in format: A 320x240 rgb24, B 320x240 yuv420p' "$TMP/out" &&
  pass "compare-align: --chain-a converts A only" || fail "compare-align: --chain-a: exit $(rc): $(tail -1 "$TMP/out")"
# Pictures of two sizes: the verdict says what to do.
cmp_run "$in" "$in" --chain-b scale=w=160:h=120
[ "$(rc)" = 6 ] && grep -q '^result: MISMATCH: .*the pictures differ in size: A 320x240 yuv420p, B 160x120 yuv420p (--scale scales B to A.s size and format)$' "$TMP/out" &&
  pass "compare-align: pictures of two sizes: the verdict names --scale" || fail "compare-align: two sizes: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$in" "$in" --chain-a convert=format=rgb24 --chain-b convert=format=rgb24
[ "$(rc)" = 0 ] && grep -q '^result: IDENTICAL: 50 frames$' "$TMP/out" && grep -q 'PSNR r:' "$TMP/out" &&
  pass "compare-align: the same chain as --chain-a and --chain-b is identical" ||
  fail "compare-align: --chain-a/--chain-b: exit $(rc): $(tail -1 "$TMP/out")"

# --scale: B scaled to A's size exactly as ffmpeg's scale=W:H:flags=bicubic+accurate_rnd+bitexact.
cmp_run "$in" "$TMP/small.mkv" --min-psnr 10
unscaled=$(rc); grep -q 'A 320x240 yuv420p, B 160x120 yuv420p' "$TMP/out" && unscaled="${unscaled} named"
cmp_run "$in" "$TMP/small.mkv" --min-psnr 10 --scale
ffp=$("$FFMPEG" -hide_banner -nostdin -i "$in" -i "$TMP/small.mkv" \
  -lavfi '[1:v]scale=320:240:flags=bicubic+accurate_rnd+bitexact[b];[0:v][b]psnr' -f null - 2>&1 | grep -o 'average:[0-9.]*')
ours=$(grep -o '^PSNR .* average:[0-9.]*' "$TMP/out" | grep -o 'average:[0-9.]*')
if [ "$unscaled" = "6 named" ] && [ "$(rc)" = 0 ] && [ -n "$ffp" ] && python3 -c "import sys; sys.exit(0 if abs(${ours#average:} - ${ffp#average:}) <= 0.01 else 1)"; then
  pass "compare-align: --scale 160x120 to 320x240 gives ffmpeg's scale+psnr ($ours, ffmpeg $ffp); without it, a format mismatch"
else
  fail "compare-align: --scale: exit $(rc) (without --scale: exit+count $unscaled): ours '$ours', ffmpeg '$ffp'"
fi

# A frame-rate change is named, not a cascade of missing frames.
cmp_run "$in" "$TMP/r50.mkv"
[ "$(rc)" = 6 ] && grep -q '^result: MISMATCH: frame rate differs: A 25 fps, B 50 fps' "$TMP/out" &&
  grep -q 'frame rate differs: A 25 fps, B 50 fps' "$TMP/err" && ! grep -q 'only in' "$TMP/out" &&
  pass "compare-align: 25 vs 50 fps is reported as a frame-rate change (exit 6)" ||
  fail "compare-align: 25 vs 50 fps: exit $(rc): $(tail -1 "$TMP/out")"
cmp_run "$TMP/r30.mkv" "$in"
[ "$(rc)" = 6 ] && grep -q '^result: MISMATCH: frame rate differs: A 30 fps, B 25 fps' "$TMP/out" &&
  pass "compare-align: 30 vs 25 fps is reported as a frame-rate change" ||
  fail "compare-align: 30 vs 25 fps: exit $(rc): $(tail -1 "$TMP/out")"

# --csv and --json: one row per paired frame, equal to the printed per-frame lines.
mkdir -p "$TMP/rows"
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --per-frame --csv "$TMP/rows/m.csv" --json "$TMP/rows/m.json"
if [ "$(rc)" = 0 ] && r=$(python3 - "$TMP/out" "$TMP/rows/m.csv" "$TMP/rows/m.json" <<'EOF'
import csv, json, re, sys
out = open(sys.argv[1]).read()
lines = re.findall(r'^frame (\d+) \(pts ([0-9.]+) s\): .*max diff (\d+) .*PSNR y:([0-9.]+) u:([0-9.]+) v:([0-9.]+) avg:([0-9.]+) dB; SSIM Y:([0-9.]+) .* All:([0-9.]+)$', out, re.M)
rows = list(csv.DictReader(open(sys.argv[2])))
doc = json.load(open(sys.argv[3]))
js = doc['frames']
assert len(lines) == 50 and len(rows) == 50 and len(js) == 50, (len(lines), len(rows), len(js))
assert doc['align'] == 'start' and doc['result'].startswith('PASS: 50 of 50'), doc['result']
for (n, pts, md, y, u, v, avg, sy, sall), c, j in zip(lines, rows, js):
    assert int(c['frame_a']) == int(n) == j['frame_a'] and int(c['max_diff']) == int(md) == j['max_diff'], n
    assert abs(float(c['pts_a']) - float(pts)) < 0.0005 and abs(j['pts_a'] - float(pts)) < 0.0005, n
    assert 0.015 < j['pts_b'] - j['pts_a'] < 0.03, (n, j['pts_b'])  # B's own timestamps: the Matroska offset
    near = lambda x, printed, digits: abs(x - float(printed)) <= 0.5 * 10 ** -digits + 1e-6
    for key, val in (('y', y), ('u', u), ('v', v), ('avg', avg)):
        assert near(float(c['psnr_' + key]), val, 2) and near(j['psnr'][key], val, 2), (n, key)
    assert near(float(c['ssim_y']), sy, 5) and near(j['ssim']['all'], sall, 5), n
print('50 rows')
EOF
); then
  pass "compare-align: --csv and --json hold one row per frame equal to the printed lines ($r)"
else
  fail "compare-align: csv/json rows: exit $(rc): $r $(cat "$TMP/err")"
fi
no_leftovers "$TMP/rows" || fail "compare-align: temporary files left beside the rows"
cp "$TMP/rows/m.csv" "$TMP/m.keep"
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --csv "$TMP/rows/m.csv"
[ "$(rc)" = 4 ] && grep -q 'm.csv: already exists (use -y to overwrite)' "$TMP/err" && cmp -s "$TMP/m.keep" "$TMP/rows/m.csv" &&
  pass "compare-align: an existing --csv file is refused without -y (exit 4, unchanged)" ||
  fail "compare-align: existing csv: exit $(rc): $(cat "$TMP/err")"
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --json "$TMP/rows/m.json" -y --align index
[ "$(rc)" = 0 ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$TMP/rows/m.json'))['align'] == 'index' else 1)" &&
  pass "compare-align: -y replaces an existing --json file" || fail "compare-align: -y json: exit $(rc): $(cat "$TMP/err")"
cp "$TMP/t.mkv" "$TMP/t.keep"
cmp_run "$in" "$TMP/t.mkv" --min-psnr 30 --csv "$TMP/t.mkv" -y
[ "$(rc)" = 4 ] && grep -q 'is an input of this job; vkcu never writes over an input' "$TMP/err" && cmp -s "$TMP/t.keep" "$TMP/t.mkv" &&
  pass "compare-align: --csv naming an input is refused even with -y (exit 4, input unchanged)" ||
  fail "compare-align: csv over an input: exit $(rc): $(cat "$TMP/err")"

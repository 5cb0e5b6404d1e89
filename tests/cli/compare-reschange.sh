#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# compare --timing decoded on a stream that changes size mid-way (issue 38,
# item 2), and `vkcu hash --timing decoded --format json`'s per-frame picture
# size and format: an MPEG-TS of two H.264 parts (25 frames at 160x120, then 25 at
# 320x240, B-frames) and its elementary stream. The per-frame lines and the
# JSON rows carry each frame's size and pixel format for both inputs; a pair
# of two sizes is the verdict's reason, naming the frame and both sizes
# (never "frame count differs" with as many frames on both sides); against a
# hash list of ffmpeg's timing (every frame at the first size) the verdict
# names the sizes and says to hash with --timing decoded. On main, the lines
# and rows carried no size, and the verdicts named no frame size.
source "$(dirname "$0")/lib.sh"
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
ff -filter_complex "testsrc2=size=160x120:rate=25" -frames:v 25 -c:v libx264 -g 12 -bf 2 -pix_fmt yuv420p "$TMP/p1.ts" &&
  ff -filter_complex "testsrc2=size=320x240:rate=25" -frames:v 25 -c:v libx264 -g 12 -bf 2 -pix_fmt yuv420p \
    -output_ts_offset 1 "$TMP/p2.ts" &&
  printf "file '%s'\nfile '%s'\n" "$TMP/p1.ts" "$TMP/p2.ts" > "$TMP/list.txt" &&
  ff -f concat -safe 0 -i "$TMP/list.txt" -c copy "$TMP/reschange.ts" &&
  ff -i "$TMP/reschange.ts" -c copy -f h264 "$TMP/reschange.h264" &&
  ff -i "$TMP/reschange.ts" -c:v ffv1 "$TMP/first-size.mkv" ||
  { fail "compare-reschange: cannot make the streams with $FFMPEG"; exit 0; }
sizes=$("$FFPROBE" -v error -show_entries frame=width,height -of csv=p=0 "$TMP/reschange.ts" | cut -d, -f1,2 | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
[ "$sizes" = " 25 160,120  25 320,240 " ] || fail "compare-reschange: the test stream has sizes $sizes"
cmp_run() { "$VKCU" compare --backend cpu "$@" > "$TMP/out" 2> "$TMP/err"; echo $? > "$TMP/rc"; }
rc() { cat "$TMP/rc"; }

# The TS against its own elementary stream: identical, every line naming the frame's size.
cmp_run "$TMP/reschange.ts" "$TMP/reschange.h264" --timing decoded --per-frame --json "$TMP/same.json"
if [ "$(rc)" = 0 ] && grep -q '^result: IDENTICAL: 50 frames$' "$TMP/out" &&
  grep -q '^frame 24 (pts 0.960 s; 160x120 yuv420p): identical; ' "$TMP/out" &&
  grep -q '^frame 25 (pts 1.000 s; 320x240 yuv420p): identical; ' "$TMP/out" &&
  [ "$(grep -c '^frame [0-9]* (pts [0-9.]* s; \(160x120\|320x240\) yuv420p): identical' "$TMP/out")" = 50 ]; then
  pass "compare-reschange: --timing decoded --per-frame names each frame's size (160x120 to frame 24, 320x240 from 25)"
else
  fail "compare-reschange: TS against its H.264: exit $(rc): $(grep -E '^frame 2[45] |^result' "$TMP/out" | tr '\n' ' ') $(head -2 "$TMP/err")"
fi
r=$(python3 - "$TMP/same.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))["frames"]
bad = []
for r in rows:
    want = (160, 120) if r["frame_a"] < 25 else (320, 240)
    for k in ("picture_a", "picture_b"):
        p = r.get(k)
        if not p or (p["width"], p["height"]) != want or p["pix_fmt"] != "yuv420p":
            bad.append("%d %s %s" % (r["frame_a"], k, p))
print("%d rows" % len(rows) if len(rows) == 50 and not bad else "%d rows; %s" % (len(rows), bad[:3]))
sys.exit(0 if len(rows) == 50 and not bad else 1)
PYEOF
) && pass "compare-reschange: --json rows carry each side's width, height and pix_fmt ($r)" ||
  fail "compare-reschange: --json rows: $r"

# Against a copy at the first size throughout (as ffmpeg scales): the verdict names frame 25 and both sizes.
cmp_run "$TMP/reschange.ts" "$TMP/first-size.mkv" --timing decoded --json "$TMP/diff.json"
row25=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["frames"][25]; print(r["measured"], r["picture_a"]["width"], r["picture_b"]["width"])' "$TMP/diff.json" 2>&1)
if [ "$(rc)" = 6 ] &&
  grep -q '^result: MISMATCH: frame 25 (pts 1.000 s): the pictures differ in size: A 320x240 yuv420p, B 160x120 yuv420p' "$TMP/out" &&
  ! grep -q 'frame count differs' "$TMP/out" "$TMP/err" && [ "$row25" = "False 320 160" ]; then
  pass "compare-reschange: a pair of two sizes: the verdict names frame 25, A 320x240 and B 160x120; its JSON row is unmeasured"
else
  fail "compare-reschange: against the first-size copy: exit $(rc): $(grep '^result' "$TMP/out"); row 25: $row25"
fi

# Against a hash list of ffmpeg's timing (frames scaled to the first size): sizes and what to do.
"$VKCU" hash --backend cpu "$TMP/reschange.h264" -o "$TMP/ffmpeg-timing.md5" 2> /dev/null
cmp_run "$TMP/reschange.ts" "$TMP/ffmpeg-timing.md5" --timing decoded
if [ "$(rc)" = 6 ] && grep -q "frame 25 (pts 1.000 s): the pictures differ in size or format: A 320x240 yuv420p, 115200 bytes, B 28800 bytes (.*ffmpeg-timing.md5 holds frames scaled to the stream's first size.*--timing decoded)" "$TMP/out" &&
  grep -q '^frame 25 (pts 1.000 s): hashes differ: A [0-9a-f]* (320x240 yuv420p, 115200 bytes), B [0-9a-f]* (28800 bytes)' "$TMP/out"; then
  pass "compare-reschange: against an ffmpeg-timing hash list: the sizes, and --timing decoded to hash it"
else
  fail "compare-reschange: against the ffmpeg-timing list: exit $(rc): $(grep -E '^frame 25|^result' "$TMP/out" | tr '\n' ' ')"
fi
# The same list made with --timing decoded: identical.
"$VKCU" hash --backend cpu --timing decoded "$TMP/reschange.h264" -o "$TMP/decoded.md5" 2> /dev/null
cmp_run "$TMP/reschange.ts" "$TMP/decoded.md5" --per-frame
[ "$(rc)" = 0 ] && grep -q '^frame 25 (pts 1.000 s; A 320x240 yuv420p, B 115200 bytes): same hash' "$TMP/out" &&
  pass "compare-reschange: against a --timing decoded list: identical, lines name A's size and B's bytes" ||
  fail "compare-reschange: against the decoded list: exit $(rc): $(grep -E '^frame 25|^result' "$TMP/out" | tr '\n' ' ')"
# JSON lines of --timing decoded name each frame's picture, and compare prints it for the list's side too.
"$VKCU" hash --backend cpu --timing decoded --format json "$TMP/reschange.h264" -o "$TMP/decoded.jsonl" 2> /dev/null
line25=$(grep '"frame":25,' "$TMP/decoded.jsonl")
cmp_run "$TMP/reschange.ts" "$TMP/decoded.jsonl" --per-frame
if echo "$line25" | grep -q '"size":115200,.*"width":320,"height":240,"pix_fmt":"yuv420p"' && [ "$(rc)" = 0 ] &&
  grep -q '^frame 24 (pts 0.960 s; 160x120 yuv420p): same hash' "$TMP/out" &&
  grep -q '^frame 25 (pts 1.000 s; 320x240 yuv420p): same hash' "$TMP/out"; then
  pass "compare-reschange: hash --timing decoded --format json lines carry width/height/pix_fmt; compare prints them"
else
  fail "compare-reschange: JSON decoded list: line 25 $line25; exit $(rc): $(grep -E '^frame 2[45]|^result' "$TMP/out" | tr '\n' ' ')"
fi

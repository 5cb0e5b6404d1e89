#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Day-one friction (issue 28): what a new user typed and what came back.
# Each check names its item: compare's output at each verbosity (5), its
# --json document (6), each summary figure with its own frame (7), compare
# --html (8), -y -n (13), --start 1:99 (14), --backend gpu without a driver
# (15), `vkcu help` (16), a second operand that is an output (17), chains
# written ffmpeg-style and misspelt operators (18), binary video to a
# terminal (19).
source "$(dirname "$0")/lib.sh"
V=$VKCU
in=$MEDIA/h264-aac.mp4 # 50 frames at 25 fps
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }

# ---- 5: compare prints the summary; -v every frame; -q the verdict ----
ff -i "$in" -an -c:v libx264 -preset veryfast -crf 35 "$TMP/lossy.mp4" ||
  { fail "friction: could not make a lossy copy with $FFMPEG"; exit 0; }
frame_lines() { grep -cE '^(A |B )?frame [0-9]+' "$1"; }
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 25 > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc = 0 ] && [ "$(frame_lines "$TMP/out")" = 0 ] && ! grep -q '^\.\.\.' "$TMP/out" &&
  grep -q '^result: PASS: 50 of 50 frames differ' "$TMP/out" &&
  pass "5: compare PASS prints the summary and no per-frame line" ||
  fail "5: compare PASS: exit $rc, $(frame_lines "$TMP/out") per-frame lines: $(head -3 "$TMP/out" | tr '\n' ' ')"
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 25 -v > "$TMP/out" 2> "$TMP/err"
[ $? = 0 ] && [ "$(frame_lines "$TMP/out")" = 50 ] && pass "5: compare -v prints every frame (50 lines)" ||
  fail "5: compare -v: $(frame_lines "$TMP/out") per-frame lines"
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 25 -q > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l < "$TMP/out")" = 1 ] && grep -q '^PASS: 50 of 50 frames differ' "$TMP/out" && [ ! -s "$TMP/err" ] &&
  pass "5: compare -q prints the verdict alone" || fail "5: compare -q: exit $rc: $(head -3 "$TMP/out" | tr '\n' ' ') / $(head -2 "$TMP/err")"
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 45 -q > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc = 6 ] && [ "$(wc -l < "$TMP/out")" = 1 ] && grep -q '^MISMATCH: 50 of 50 frames outside the limits' "$TMP/out" &&
  [ ! -s "$TMP/err" ] && pass "5: compare -q on a mismatch: the verdict alone, exit 6" ||
  fail "5: compare -q mismatch: exit $rc: $(head -2 "$TMP/out" | tr '\n' ' ') / $(head -2 "$TMP/err")"
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 45 > "$TMP/out" 2> /dev/null
[ "$(frame_lines "$TMP/out")" = 20 ] && grep -q '^\.\.\. (more differences not listed; --per-frame lists every frame)' "$TMP/out" &&
  pass "5: frames outside the limits are listed (the first 20)" || fail "5: mismatch lists $(frame_lines "$TMP/out") frames"

# ---- 6: --json is one JSON document, as --help says ----
"$V" compare --help | grep -A2 -- '--json FILE' | tr -s ' \n' ' ' > "$TMP/jhelp"
"$V" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-psnr 25 --json "$TMP/rows.json" > /dev/null 2>&1
if grep -q 'one JSON document' "$TMP/jhelp" && ! grep -qi 'JSON lines' "$TMP/jhelp" &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["frames"]) == 50 and d["result"].startswith("PASS")' \
    "$TMP/rows.json" 2> "$TMP/err"; then
  pass "6: compare --json: --help and the file agree (one JSON document, 50 rows)"
else
  fail "6: compare --json: help '$(cat "$TMP/jhelp")'; parser: $(tail -1 "$TMP/err")"
fi

# ---- 7: the largest difference and the worst frame, each with its frame ----
# Frame 10: a 2x2 white box (a large difference, a tiny MSE); frame 20: every
# luma sample 20 up (a small difference, the largest MSE).
ff -i "$in" -an -vf "drawbox=x=100:y=60:w=2:h=2:color=white:t=fill:enable='eq(n,10)',geq=lum='if(eq(N,20),clip(lum(X,Y)+20,0,255),lum(X,Y))':cb='cb(X,Y)':cr='cr(X,Y)'" \
  -c:v ffv1 "$TMP/two.mkv" || fail "7: could not make the two-frame copy"
"$V" compare --backend cpu "$in" "$TMP/two.mkv" > "$TMP/out" 2> /dev/null
maxline=$(grep '^max diff:' "$TMP/out")
worstline=$(grep '^worst frame:' "$TMP/out")
maxd=$(sed -n 's/^max diff: \([0-9]*\).*/\1/p' "$TMP/out")
f10=$(sed -n 's/^frame 10 (pts [0-9.]* s): DIFFERS: max diff \([0-9]*\) .*/\1/p' "$TMP/out")
f20=$(sed -n 's/^frame 20 (pts [0-9.]* s): DIFFERS: max diff \([0-9]*\) .*/\1/p' "$TMP/out")
if [ -n "$f10" ] && [ -n "$f20" ] && [ "$maxd" = "$f10" ] && [ "$f10" -gt "$f20" ] &&
  [ "$maxline" = "max diff: $f10 (frame 10)" ] && echo "$worstline" | grep -qE "^worst frame: 20 \(lowest PSNR: [0-9.]+ dB, max diff $f20\)$"; then
  pass "7: '$maxline' and '$worstline', each figure with its own frame"
else
  fail "7: '$maxline' / '$worstline' (frame 10 max diff '$f10', frame 20 '$f20')"
fi

# ---- 8: compare --html points to compare's --report ----
expect "8: compare --html: did you mean --report" 2 \
  "compare: unknown option '--html': did you mean --report FILE.html\\? \\('--html' is an option of 'vkcu verify'\\)" -- \
  "$V" compare --html "$TMP/r.html" "$in" "$in"

# ---- 13: -y and -n together ----
expect "13: -y -n is refused as contradictory" 2 "^vkcu: error: -y and -n contradict each other" -- \
  "$V" --backend cpu "$in" -y -n -o "$TMP/yn.mkv"
expect "13: -n -y too (the order does not matter)" 2 "-y and -n contradict each other" -- \
  "$V" --backend cpu "$in" -n -y -o "$TMP/yn.mkv"
[ ! -e "$TMP/yn.mkv" ] && pass "13: nothing written" || fail "13: -y -n wrote $TMP/yn.mkv"

# ---- 14: minutes and seconds above 59 ----
expect "14: --start 1:99 is an error" 2 "^vkcu: error: --start: '1:99' has seconds above 59" -- \
  "$V" hash --backend cpu "$in" --start 1:99
expect "14: --duration 1:75:00 names the minutes" 2 "--duration: '1:75:00' has minutes above 59" -- \
  "$V" hash --backend cpu "$in" --duration 1:75:00
expect "14: --start 0:01.5 still works" 0 "" -- "$V" hash --backend cpu "$in" --start 0:01.5
[ "$(frames "$TMP/.stdout" | wc -l)" = 12 ] && pass "14: --start 0:01.5 leaves frames 38 to 49" || fail "14: --start 0:01.5: $(frames "$TMP/.stdout" | wc -l) frames"
expect "14: the first field may pass 59 (--start 0:00:90 is not, 90:00 is)" 2 "has seconds above 59" -- \
  "$V" hash --backend cpu "$in" --start 0:00:90

# ---- 15: --backend gpu without an NVIDIA driver ----
if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2> /dev/null; then
  skip "15: this machine has an NVIDIA driver (libcuda.so.1): the no-driver message cannot be seen here"
else
  expect "15: --backend gpu without a driver says so and suggests --backend cpu" 5 \
    "h264-aac.mp4: --backend gpu: no NVIDIA driver found \\(libcuda.so.1 is not installed\\); --backend cpu processes it" -- \
    "$V" --backend gpu "$in" -o "$TMP/gpu.mkv"
  grep -q insufficient "$TMP/.stderr" && fail "15: still says 'insufficient': $(cat "$TMP/.stderr")" ||
    pass "15: no 'driver version is insufficient'"
fi

# ---- 16: vkcu help, vkcu help VERB ----
"$V" help > "$TMP/h1" 2> "$TMP/err"; rc1=$?
"$V" --help > "$TMP/h2"
[ $rc1 = 0 ] && cmp -s "$TMP/h1" "$TMP/h2" && pass "16: 'vkcu help' prints vkcu --help" || fail "16: vkcu help: exit $rc1: $(head -1 "$TMP/err")"
"$V" help batch > "$TMP/h1" 2> "$TMP/err"; rc1=$?
"$V" batch --help > "$TMP/h2"
[ $rc1 = 0 ] && cmp -s "$TMP/h1" "$TMP/h2" && pass "16: 'vkcu help batch' prints vkcu batch --help" ||
  fail "16: vkcu help batch: exit $rc1: $(head -1 "$TMP/err")"
expect "16: vkcu help with a misspelt verb" 2 "help: 'compre' is not a verb: did you mean 'vkcu help compare'\\?" -- "$V" help compre

# ---- 19: binary video is not written to a terminal ----
python3 - "$V" "$in" > "$TMP/tty" 2>&1 <<'PYEOF'
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen([sys.argv[1], '--backend', 'cpu', '-q', sys.argv[2], '--frames', '3', '-o', '-', '-f', 'nut'],
                     stdout=slave, stderr=subprocess.PIPE)
os.close(slave)
got = 0
try:  # read as it comes (a full terminal would block the writer), until the child is gone
    while True:
        chunk = os.read(master, 65536)
        if not chunk:
            break
        got += len(chunk)
except OSError:
    pass
err = p.stderr.read().decode().strip()
print(p.wait(), got, err)
PYEOF
read -r rc n msg < "$TMP/tty"
[ "$rc" = 2 ] && [ "$n" = 0 ] && echo "$msg" | grep -q "standard output is a terminal.*redirect it to a file.*or pipe it" &&
  pass "19: -o - -f nut to a terminal is refused, nothing written to it" || fail "19: to a terminal: $(cat "$TMP/tty")"
"$V" --backend cpu -q "$in" --frames 3 -o - -f nut | cat > "$TMP/pipe.nut"
[ "$(probe_val "$TMP/pipe.nut" v:0 stream=codec_name)" = rawvideo ] && pass "19: -o - -f nut into a pipe still works" ||
  fail "19: -o - into a pipe: $(stat -c %s "$TMP/pipe.nut") bytes"

# ---- 18: chains written ffmpeg-style; a misspelt operator ----
"$V" hash --backend cpu "$in" --frames 3 --chain scale=320:180 > "$TMP/pos" 2> "$TMP/err"; rc=$?
"$V" hash --backend cpu "$in" --frames 3 --chain scale=w=320:h=180 > "$TMP/named" 2>> "$TMP/err"
[ $rc = 0 ] && [ "$(frames "$TMP/pos" | wc -l)" = 3 ] && cmp -s "$TMP/pos" "$TMP/named" &&
  pass "18: scale=320:180 takes the keys in order (= scale=w=320:h=180)" || fail "18: scale=320:180: exit $rc: $(head -1 "$TMP/err")"
"$V" hash --backend cpu "$in" --frames 3 --chain scale=320:180:bicubic > "$TMP/pos" 2> "$TMP/err"
"$V" hash --backend cpu "$in" --frames 3 --chain scale=w=320:h=180:filter=bicubic > "$TMP/named" 2>> "$TMP/err"
[ -s "$TMP/pos" ] && cmp -s "$TMP/pos" "$TMP/named" && pass "18: a third value is the third key (filter)" ||
  fail "18: scale=320:180:bicubic: $(head -1 "$TMP/err")"
expect "18: a value after key=value names the keys' order" 2 \
  "column 13: expected key=value after 'scale=': a value without its key comes only before the first key=value \\(keys in order: w, h," -- \
  "$V" hash --backend cpu "$in" --chain scale=w=320:180
expect "18: one value too many" 2 "scale takes 4 values in order \\(w, h, filter, sar\\): one too many" -- \
  "$V" hash --backend cpu "$in" --chain scale=320:180:bicubic:square:1
expect "18: a key set twice" 2 "scale: w is given twice" -- "$V" hash --backend cpu "$in" --chain scale=320:w=640
expect "18: a misspelt operator: did you mean" 2 "column 1: unknown operator 'scal': did you mean 'scale'\\?" -- \
  "$V" hash --backend cpu "$in" --chain scal=320:180
expect "18: an operator after a comma too" 2 "column 6: unknown operator 'denose': did you mean 'denoise'\\?" -- \
  "$V" hash --backend cpu "$in" --chain copy,denose=tnr

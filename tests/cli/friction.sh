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
# issue 38.3: the HTML report says the same, in the same words
"$V" compare --backend cpu "$in" "$TMP/two.mkv" --report "$TMP/two.html" > /dev/null 2>&1
rows=$(python3 -c 'import html, re, sys
for k, v in re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", open(sys.argv[1]).read()):
    print(html.unescape(k) + ": " + html.unescape(v))' "$TMP/two.html")
if [ -n "$maxline" ] && [ -n "$worstline" ] && echo "$rows" | grep -qxF "$maxline" && echo "$rows" | grep -qxF "$worstline"; then
  pass "7: the --report page says '$maxline' and '$worstline', as the CLI does"
else
  fail "7: the --report page: $(echo "$rows" | grep -E '^(max diff|worst)' | tr '\n' ';') vs '$maxline' / '$worstline'"
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
    "h264-aac.mp4: --backend gpu: no CUDA device: no NVIDIA driver found \\(libcuda.so.1 is not installed\\); --backend cpu processes it" -- \
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

# ---- 9: vkcu formats lists the encoders and muxers --version counts ----
"$V" formats > "$TMP/formats" 2> "$TMP/err"
"$V" --version > "$TMP/version" 2>> "$TMP/err"
claim=$(grep -o '[0-9]* encoders, [0-9]* demuxers, [0-9]* muxers' "$TMP/version" | sed 's/ [0-9]* demuxers,//')
nv=$(sed -n 's/^\([0-9]*\) video encoders, .*/\1/p' "$TMP/formats")
na=$(sed -n 's/^Audio encoders: //p' "$TMP/formats" | tr ',' '\n' | grep -c .)
ns=$(sed -n 's/^Subtitle encoders: //p' "$TMP/formats" | tr ',' '\n' | grep -c .)
nm=$(sed -n 's/^\([0-9]*\) muxers$/\1/p' "$TMP/formats")
[ -n "$nv" ] && [ "$claim" = "$((nv + na + ns)) encoders, $nm muxers" ] &&
  pass "9: vkcu formats lists the $claim that --version counts" || fail "9: --version says '$claim'; formats lists $nv+$na+$ns encoders, $nm muxers"
sed -n '/^Video encoders/,/video encoders, /p' "$TMP/formats" > "$TMP/enc"
awk 'f && /^                        /{print; next} {f=0} /^       libx264 +h264 /{f=1; print}' "$TMP/enc" | tr -s ' \n' ' ' |
  grep -q 'pixel formats: yuv420p .*yuv420p10le' &&
  pass "9: libx264 listed with its pixel formats, on the CPU" || fail "9: libx264 line: $(grep -A1 libx264 "$TMP/enc" | tr '\n' ' ')"
gpu=$(grep -E '^  GPU ' "$TMP/enc" | awk '{print $2}' | tr '\n' ' ')
case " $gpu " in *" h264_vulkan "*) case " $gpu " in *" hevc_vulkan "*) pass "9: the Vulkan encoders are marked GPU ($gpu)" ;; *) fail "9: GPU encoders: '$gpu'" ;; esac ;; *) fail "9: GPU encoders: '$gpu'" ;; esac
[ -n "$gpu" ] && ! grep -E '^  GPU ' "$TMP/enc" | grep -vq '\[vulkan\]$' &&
  pass "9: each GPU encoder names the device FFmpeg runs it on" || fail "9: GPU encoders and their devices: $(grep -E '^  GPU ' "$TMP/enc")"
grep -qE '^  matroska +mkv +libx264 +Matroska$' "$TMP/formats" && grep -qE '^  yuv4mpegpipe +y4m +wrapped_avframe ' "$TMP/formats" &&
  pass "9: muxers listed with their extensions and the auto encoder" || fail "9: muxers: $(grep -E 'matroska|yuv4mpeg' "$TMP/formats" | tr '\n' ' ')"

# ---- 10: completion from the tables the parser uses ----
"$V" --generate completion > "$TMP/completion"
# complete_line LINE: completes LINE (the cursor at its end), its words split as bash splits them (at '=', ':')
complete_line() {
  python3 - "$TMP/completion" "$1" <<'PYEOF'
import re, subprocess, sys
comp, line = sys.argv[1], sys.argv[2]
words = []
for w in line.split(' '):
    words += [p for p in re.split(r'([=:])', w) if p] if w else ['']
script = 'source "$1"; shift; COMP_LINE=$1; COMP_POINT=${#1}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vkcu; printf "%s\\n" "${COMPREPLY[@]}"'
out = subprocess.run(['bash', '-c', script, '_', comp, line] + words, capture_output=True, text=True).stdout
print(' '.join(sorted(w for w in out.split('\n') if w)))
PYEOF
}
cline() { # name expected line
  local got; got=$(complete_line "$3")
  [ "$got" = "$2" ] && pass "10: completion: $1" || fail "10: completion: $1: '$got', expected '$2'"
}
cline "--encoder offers this build's encoders" "libvpx libvpx-vp9" "vkcu in.mp4 --encoder libvp"
cline "--encoder auto" "auto" "vkcu in.mp4 --encoder au"
cline "-f offers containers" "matroska" "vkcu in.mp4 -o - -f mat"
cline "--preset offers the encoder's presets" "slow slower" "vkcu in.mp4 --encoder libx265 --preset sl"
cline "an operator's keys after scale=" "filter= h= sar= w=" "vkcu in.mp4 --chain scale="
cline "a key after ':'" "h=" "vkcu in.mp4 --chain scale=w=320:h"
cline "no key in a value" "" "vkcu in.mp4 --chain scale=w="
cline "keys after a comma" "h= w= x= y=" "vkcu in.mp4 --chain scale=w=320,crop=w=64:"
cline "--chain=... too" "search= sigma= spatial= strength=" "vkcu hash in.mp4 --chain=denoise=s"
cline "operators after a comma (bash replaces '64,sc')" "64,scale" "vkcu in.mp4 --chain crop=w=64,sc"
cline "help's verbs" "batch" "vkcu help ba"
bad_keys=
for op in $("$V" pipelines | sed -n '/^Operators/,$p' | sed -n 's/^  \([a-z]*\) .*/\1/p' | sort -u); do
  want=$("$V" pipelines "$op" | sed -n 's/^  *\([a-z_]*\) (.*/\1=/p' | sort | tr '\n' ' ' | sed 's/ $//')
  [ -n "$want" ] || continue
  got=$(complete_line "vkcu in.mp4 --chain $op=")
  [ "$got" = "$want" ] || bad_keys="$bad_keys [$op: '$got', 'vkcu pipelines $op' lists '$want']"
done
[ -z "$bad_keys" ] && pass "10: completion: every operator's keys are those 'vkcu pipelines NAME' lists" ||
  fail "10: completion: operator keys:$bad_keys"
mkdir -p "$TMP/home/bin" && ln -s "$V" "$TMP/home/bin/vkcu"
got=$(HOME=$TMP/home complete_line "~/bin/vkcu --pipeline web")
[ "$got" = "web-720p web-h264" ] && pass "10: --pipeline completes presets for ~/bin/vkcu" || fail "10: --pipeline for ~/bin/vkcu: '$got'"

# ---- 11: a container that cannot hold the encoder is a usage error ----
expect "11: -o o.y4m --encoder libx264: exit 2 with the encoders y4m takes" 2 \
  "o.y4m: yuv4mpegpipe cannot hold h264 video \\(libx264\\); it takes rawvideo, wrapped_avframe" -- \
  "$V" --backend cpu "$in" -o "$TMP/o.y4m" --encoder libx264
expect "11: -o o.webm --encoder libx264" 2 "webm cannot hold h264 video \\(libx264\\); it takes .*libsvtav1" -- \
  "$V" --backend cpu "$in" -o "$TMP/o.webm" --encoder libx264
[ ! -e "$TMP/o.y4m" ] && [ ! -e "$TMP/o.webm" ] && pass "11: nothing written" || fail "11: an output was written"
expect "11: a misspelt encoder names this build's" 2 "--encoder libvpx-vp8: no such encoder in this build: did you mean --encoder libvpx-vp9\\? \\(this build's video encoders: .*libx264" -- \
  "$V" --backend cpu "$in" -o "$TMP/o.mkv" --encoder libvpx-vp8
# issue 38.10: the name without "lib", or the library FFmpeg wraps, is no typo but finds the encoder
for typed in x264:libx264 svtav1:libsvtav1 aom:libaom-av1; do
  expect "11: --encoder ${typed%%:*} suggests ${typed#*:}" 2 "--encoder ${typed%%:*}: no such encoder in this build: did you mean --encoder ${typed#*:}\\?" -- \
    "$V" --backend cpu "$in" -o "$TMP/o.mkv" --encoder "${typed%%:*}"
done
mkdir -p "$TMP/bin"
cp "$in" "$TMP/bin/a.mp4"
expect "11: batch checks it once, before any file" 2 "bout/\\*.y4m: yuv4mpegpipe cannot hold h264 video" -- \
  "$V" batch --backend cpu "$TMP/bin" "$TMP/bout" --container y4m --encoder libx264
[ ! -e "$TMP/bout" ] && pass "11: batch created nothing" || fail "11: batch made $TMP/bout"

# ---- 12: encoder presets and tunes against the encoder's list ----
expect "12: --preset superfast2: did you mean superfast (exit 2)" 2 \
  "^vkcu: error: --preset superfast2: encoder libx264 has no preset 'superfast2': did you mean 'superfast'\\? \\(its presets: ultrafast, superfast," -- \
  "$V" --backend cpu "$in" -o "$TMP/p.mkv" --preset superfast2
grep -q 'x264 \[error\]' "$TMP/.stderr" && fail "12: x264's own error got through" || pass "12: x264's own error does not get through"
[ "$(wc -l < "$TMP/.stderr")" = 1 ] && pass "12: one line" || fail "12: $(wc -l < "$TMP/.stderr") lines: $(cat "$TMP/.stderr")"
expect "12: a tune in --encoder-opt" 2 "--encoder-opt: encoder libx265 has no tune 'grian': did you mean 'grain'\\?" -- \
  "$V" --backend cpu "$in" -o "$TMP/p.mkv" --encoder libx265 --encoder-opt tune=grian
expect "12: x264 tunes joined with ',' are each checked" 0 "" -- \
  "$V" --backend cpu -q "$in" --frames 3 -o "$TMP/p.mkv" --preset veryfast --encoder-opt tune=film,fastdecode
printf 'description x\nencoder libx264\npreset superfst\n' > "$TMP/p.pipe"
expect "12: a preset file's preset too" 2 "p.pipe:3:8: preset: encoder libx264 has no preset 'superfst': did you mean 'superfast'\\?" -- \
  "$V" pipelines "$TMP/p.pipe"

# ---- 17: a second operand that does not exist and names a container ----
(cd "$TMP" && "$V" "$in" out.mkv) > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "'out.mkv' does not exist, and it is not an input: did you mean: vkcu $in -o out.mkv" "$TMP/err" &&
  [ ! -e "$TMP/out.mkv" ] && pass "17: vkcu IN out.mkv: did you mean: vkcu IN -o out.mkv" || fail "17: exit $rc: $(cat "$TMP/err")"
cp "$in" "$TMP/two.mp4"
expect "17: two inputs that exist are still two inputs" 2 "more than one input .* use 'vkcu batch'" -- "$V" "$in" "$TMP/two.mp4"

# ---- 1: a batch takes media files; a dry run exits as the run would ----
b=$TMP/b1; mkdir -p "$b/in"
cp "$in" "$b/in/clip.mp4"
printf '1\n00:00:01,000 --> 00:00:02,000\nHello\n' > "$b/in/clip.srt" # a sidecar: same stem as clip.mp4
echo "shot on day two" > "$b/in/notes.txt"
cp "$VKCU_CONFORMANCE/bear.h265" "$b/in/bear.bits" # an HEVC stream under no media extension: its bytes say media
"$FFMPEG" -v error -nostdin -i "$in" -frames:v 1 -c:v png -f image2 "$b/in/cover.png" # a still image
"$V" batch --backend cpu "$b/in" "$b/dry" --dry-run > "$b/plan" 2> "$b/err"; rc=$?
[ $rc = 0 ] && [ "$(awk '/^process/ {print $2}' "$b/plan" | tr '\n' ' ')" = "bear.bits clip.mp4 " ] &&
  grep -q '^skip  *notes.txt .*# not media (--all-files takes it)$' "$b/plan" &&
  grep -q '^skip  *clip.srt .*# not media: srt, no video stream' "$b/plan" &&
  grep -q '^skip  *cover.png .*# not media: png_pipe, a still image' "$b/plan" && [ ! -e "$b/dry" ] &&
  pass "1: the dry run takes the media files (by extension and by their bytes) and skips the others" ||
  fail "1: dry run: exit $rc: $(tr '\n' ';' < "$b/plan") $(tail -1 "$b/err")"
"$V" batch --backend cpu "$b/in" "$b/out" --report "$b/r.jsonl" > /dev/null 2> "$b/err"; rc=$?
[ $rc = 0 ] && grep -q '^batch: 2 done, 3 skipped, 0 failed' "$b/err" && grep -q '^vkcu: batch: notes.txt: skipped (not media)$' "$b/err" &&
  [ -s "$b/out/clip.mkv" ] && [ -s "$b/out/bear.mkv" ] && [ ! -e "$b/out/notes.mkv" ] &&
  python3 -c 'import json, sys
rows = {r["file"]: r for r in map(json.loads, open(sys.argv[1])) if "file" in r}
assert rows["notes.txt"]["status"] == "skipped" and rows["notes.txt"]["reason"] == "not media" and rows["notes.txt"]["output"] is None, rows["notes.txt"]
assert rows["clip.srt"]["status"] == "skipped" and rows["clip.mp4"]["status"] == "done"' "$b/r.jsonl" 2> "$b/py" &&
  pass "1: the run: notes.txt and clip.srt skipped (not media), not failures; exit 0" ||
  fail "1: run: exit $rc: $(grep -E '^(vkcu: )?batch' "$b/err" | tr '\n' ' ') $(tail -1 "$b/py")"
"$V" batch --backend cpu "$b/in" "$b/all" --all-files --dry-run > "$b/plan" 2> "$b/err"; rc_dry=$?
"$V" batch --backend cpu "$b/in" "$b/all" --all-files > /dev/null 2> "$b/err2"; rc_run=$?
[ $rc_dry = 2 ] && [ $rc_run = 2 ] && grep -q '^fail  *notes.txt .*# not a media file' "$b/plan" && grep -q '^fail  *clip.srt .*same output as another input: clip.mp4' "$b/plan" &&
  grep -q '^batch: dry run: .*2 would fail' "$b/err" &&
  pass "1: --all-files takes every file; its dry run exits 2, as its run does (clip.srt and clip.mp4 share an output)" ||
  fail "1: --all-files: dry run exit $rc_dry, run exit $rc_run: $(tr '\n' ';' < "$b/plan")"
# issue 38.11: an empty file fails the dry run as it fails the run (exit 3)
mkdir -p "$b/empty"; : > "$b/empty/x.mp4"
"$V" batch --backend cpu "$b/empty" "$b/eout" --dry-run > "$b/plan" 2> "$b/err"; rc_dry=$?
"$V" batch --backend cpu "$b/empty" "$b/eout" > /dev/null 2> "$b/err2"; rc_run=$?
[ $rc_dry = 3 ] && [ $rc_run = 3 ] && grep -q '^fail  *x.mp4 .*# empty file (0 bytes)$' "$b/plan" &&
  grep -q '^batch: dry run: 0 to process, 0 to skip, 1 would fail' "$b/err" && grep -q 'x.mp4: empty file (0 bytes)' "$b/err2" &&
  pass "1: an empty x.mp4: the dry run fails it with exit 3, as the run does" ||
  fail "1: empty x.mp4: dry run exit $rc_dry, run exit $rc_run: $(cat "$b/plan" "$b/err" | tr '\n' ';')"
"$V" batch --backend cpu "$b/in" "$b/out" --dry-run > /dev/null 2>&1; rc_dry=$?
"$V" batch --backend cpu "$b/in" "$b/out" > /dev/null 2>&1; rc_run=$?
[ $rc_dry = 4 ] && [ $rc_run = 4 ] && pass "1: outputs that exist: the dry run exits 4, as the run does" ||
  fail "1: existing outputs: dry run exit $rc_dry, run exit $rc_run"

# ---- 3: the batch's progress counts the frames of running files ----
# One file, fed through a FIFO: half of it, then (once the progress line
# shows frames of the running file) the rest.
b=$TMP/b3; mkdir -p "$b/in"
ff -i "$MEDIA/long.mp4" -an -c copy "$b/long.nut" && mkfifo "$b/in/long.nut" || fail "3: could not make the FIFO input"
python3 - "$V" "$b" > "$b/result" 2>&1 <<'PYEOF'
import os, pty, re, subprocess, sys, threading, time
vkcu, d = sys.argv[1], sys.argv[2]
data = open(d + '/long.nut', 'rb').read()
master, slave = pty.openpty()
p = subprocess.Popen([vkcu, 'batch', '--backend', 'cpu', '--pipeline', 'regression-hash', d + '/in', d + '/out'],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
os.close(slave)
fd, deadline = -1, time.time() + 60
while fd < 0 and time.time() < deadline and p.poll() is None:  # opens once vkcu reads it
    try:
        fd = os.open(d + '/in/long.nut', os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        time.sleep(0.05)
if fd < 0:
    p.kill()
    sys.exit(print(p.wait(), 'none: vkcu never opened its input'))
os.set_blocking(fd, True)
fifo = os.fdopen(fd, 'wb')
fifo.write(data[:len(data) // 2])
fifo.flush()
text, seen, deadline = b'', None, time.time() + 120
while seen is None and time.time() < deadline:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    text += chunk
    for m in re.finditer(rb'batch: 0/1 files \(1 running, 0 failed\), (\d+) frames, ([0-9.]+) fps', text):
        if int(m.group(1)) > 0:
            seen = m.group(0).decode()
fifo.write(data[len(data) // 2:])  # the rest, so that the job ends either way
fifo.close()
def drain():
    try:
        while os.read(master, 4096):
            pass
    except OSError:
        pass
t = threading.Thread(target=drain)
t.start()
rc = p.wait()
t.join()
print(rc, seen or 'none: %r' % text[-300:])
PYEOF
read -r rc line < "$b/result"
[ "$rc" = 0 ] && case $line in "batch: 0/1 files (1 running, 0 failed), "*) true ;; *) false ;; esac &&
  [ "$(frames "$b/out/long.framemd5" | wc -l)" = 750 ] &&
  pass "3: while the only file runs, the progress line counts its frames ($line)" || fail "3: progress: $(cat "$b/result")"

# ---- 20: audio into containers that cannot hold it; --no-audio ----
samples() { # the audio samples of a file, decoded to 48 kHz mono
  "$FFMPEG" -v error -nostdin -y -i "$1" -map 0:a -c:a pcm_s16le -ac 1 -ar 48000 -f wav "$TMP/s.wav" &&
    python3 -c 'import wave, sys; print(wave.open(sys.argv[1]).getnframes())' "$TMP/s.wav"
}
"$V" --backend cpu "$in" -o "$TMP/a.webm" 2> "$TMP/err"; rc=$?
codecs=$("$FFPROBE" -v error -show_entries stream=codec_name -of csv=p=0 "$TMP/a.webm" 2> /dev/null | tr '\n' ' ')
want=$(samples "$in"); got=$(samples "$TMP/a.webm")
if [ $rc = 0 ] && [ "$codecs" = "av1 opus " ] && [ -n "$got" ] && [ $((got * 100 / want)) -ge 99 ] && [ $((got * 100 / want)) -le 101 ] &&
  grep -q "h264-aac.mp4: stream 1 (audio aac) cannot go into webm: encoded with opus (--audio-encoder chooses another, --no-audio drops it)" "$TMP/err" &&
  ! grep -q warning "$TMP/err"; then
  pass "20: .webm: the AAC audio is encoded with Opus, said so ($got of $want samples)"
else
  fail "20: .webm: exit $rc, streams '$codecs', $got of $want samples: $(cat "$TMP/err")"
fi
expect "20: .y4m holds no audio: dropped with a warning that names --no-audio" 0 \
  "warning: .*h264-aac.mp4: stream 1 \\(audio aac\\) cannot go into yuv4mpegpipe, and no audio encoder of this build can; dropped \\(--no-audio drops audio without this warning\\)" -- \
  "$V" --backend cpu "$in" -o "$TMP/a.y4m"
"$V" --backend cpu "$in" -o "$TMP/b.y4m" --no-audio 2> "$TMP/err"; rc=$?
[ $rc = 0 ] && ! grep -q warning "$TMP/err" && pass "20: --no-audio: no warning for y4m" || fail "20: y4m --no-audio: exit $rc: $(cat "$TMP/err")"
"$V" --backend cpu -q "$in" -o "$TMP/na.mkv" --no-audio; rc=$?
[ $rc = 0 ] && [ "$("$FFPROBE" -v error -show_entries stream=codec_type -of csv=p=0 "$TMP/na.mkv" | tr '\n' ' ')" = "video " ] &&
  pass "20: --no-audio: the output has no audio stream" || fail "20: --no-audio: exit $rc: $("$FFPROBE" -v error -show_entries stream=codec_type -of csv=p=0 "$TMP/na.mkv" | tr '\n' ' ')"
expect "20: ffmpeg's -an is answered with --no-audio" 2 "unknown option '-an': did you mean --no-audio\\? \\(ffmpeg's -an\\)" -- \
  "$V" --backend cpu "$in" -an -o "$TMP/an.mkv"
expect "20: ffmpeg's -c:a with --audio-encoder" 2 "unknown option '-c:a': did you mean --audio-encoder NAME\\?" -- \
  "$V" --backend cpu "$in" -c:a aac -o "$TMP/an.mkv"
"$V" --backend cpu -q "$in" -o "$TMP/op.mkv" --audio-encoder opus; rc=$?
[ $rc = 0 ] && [ "$("$FFPROBE" -v error -show_entries stream=codec_name -of csv=p=0 "$TMP/op.mkv" | tr '\n' ' ')" = "h264 opus " ] &&
  pass "20: --audio-encoder opus encodes where copying would do" || fail "20: --audio-encoder opus: exit $rc"
expect "20: --audio-encoder a container cannot hold: exit 2" 2 "a.webm: webm cannot hold aac audio \\(--audio-encoder aac\\)" -- \
  "$V" --backend cpu "$in" -o "$TMP/x/a.webm" --audio-encoder aac
expect "20: a misspelt audio encoder" 2 "--audio-encoder opsu: no such encoder in this build: did you mean --audio-encoder opus\\?" -- \
  "$V" --backend cpu "$in" -o "$TMP/x.mkv" --audio-encoder opsu
"$V" --backend cpu -q "$in" -o "$TMP/cp.webm" --audio-encoder copy 2> "$TMP/err"
[ "$("$FFPROBE" -v error -show_entries stream=codec_name -of csv=p=0 "$TMP/cp.webm" | tr '\n' ' ')" = "av1 " ] &&
  pass "20: --audio-encoder copy copies or drops, as before" || fail "20: --audio-encoder copy: $(cat "$TMP/err")"

# ---- 21: the bundled ffprobe and ffmpeg read "-" (the fd protocol) ----
got=$("$FFPROBE" -v error -show_entries stream=codec_name -of csv=p=0 - < "$in" 2> "$TMP/err" | tr '\n' ' ')
[ "$got" = "h264 aac " ] && pass "21: the bundled ffprobe reads - (standard input): $got" ||
  fail "21: ffprobe - : '$got' $(head -1 "$TMP/err")"

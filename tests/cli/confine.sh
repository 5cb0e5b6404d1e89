#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Path confinement (issue 13, defect 6): manifests and presets often come
# from untrusted changes in CI.
# - A manifest case's hashes file, read and written by --update, stays in
#   the manifest's folder (absolute paths, '..', links out are refused)
#   unless --allow-outside is given.
# - A preset's encoder-opt cannot make an encoder write or read files
#   (x264 stats, x265 csv, dump-yuv, two-pass logs, ... also inside
#   x264-params/x265-params); the command line still can.
# - Errors never quote a file that is not of the expected kind.
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
V=$VKCU

# ---- manifest hashes paths ----
m=$TMP/proj/tests; mkdir -p "$m/golden" "$TMP/elsewhere"
cp "$in" "$m/clip.mp4"
ln -s "$TMP/elsewhere" "$m/link"
ln -s "$TMP/elsewhere/target.framemd5" "$m/golden/dangling.framemd5"
case_() { printf '[case %s]\ninput = clip.mp4\nbackend = cpu\nframes = 3\nhashes = %s\n' "$1" "$2"; }
{
  echo "vkcu-manifest 1"
  case_ up ../up.framemd5
  case_ abs "$TMP/abs.framemd5"
  case_ link link/x.framemd5
  case_ dotdot new/../../dotdot.framemd5
  case_ dangling golden/dangling.framemd5
  case_ inside golden/inside.framemd5
} > "$m/t.manifest"
"$V" verify "$m/t.manifest" --update > "$TMP/out" 2> "$TMP/err"
rc=$?
bad=""
for c in up abs link dotdot dangling; do
  grep -qE "^FAIL +$c( |:).*must stay inside the manifest's folder.*--allow-outside" "$TMP/out" || bad="$bad $c"
done
leaked=$(ls "$TMP/proj/up.framemd5" "$TMP/abs.framemd5" "$TMP/elsewhere"/* "$TMP/dotdot.framemd5" 2>/dev/null)
if [ "$rc" = 6 ] && [ -z "$bad" ] && [ -z "$leaked" ] && [ -s "$m/golden/inside.framemd5" ] &&
   grep -qE "^(UPDATED|PASS) +inside" "$TMP/out"; then
  pass "verify --update: hashes outside the manifest's folder refused (.., absolute, link, dangling link); inside written"
else
  fail "verify --update confinement: exit $rc, not refused:$bad, written outside: $leaked; $(grep -v '^PASS' "$TMP/out" | head -3 | tr '\n' ' ')"
fi
# Reading is confined too: an expectation outside is not even opened.
printf 'vkcu-manifest 1\n' > "$m/r.manifest"; case_ read ../../secret.framemd5 >> "$m/r.manifest"
"$V" hash --backend cpu --frames 3 "$in" -o "$TMP/secret.framemd5" 2>/dev/null
expect "verify: a hashes file outside is not read" 6 "" -- "$V" verify "$m/r.manifest"
grep -qE "^FAIL +read.*must stay inside the manifest's folder" "$TMP/.stdout" && pass "verify: reading outside says why" ||
  fail "verify reading outside: $(head -2 "$TMP/.stdout" | tr '\n' ' ')"
"$V" verify "$m/r.manifest" --allow-outside > "$TMP/out" 2>&1 && grep -q "^PASS" "$TMP/out" &&
  pass "verify --allow-outside reads a hashes file outside" || fail "--allow-outside read: $(head -2 "$TMP/out" | tr '\n' ' ')"
printf 'vkcu-manifest 1\n' > "$m/w.manifest"; case_ write ../up.framemd5 >> "$m/w.manifest"
"$V" verify "$m/w.manifest" --update --allow-outside > "$TMP/out" 2>&1 && [ -s "$TMP/proj/up.framemd5" ] &&
  pass "verify --update --allow-outside writes outside" || fail "--allow-outside update: $(head -2 "$TMP/out" | tr '\n' ' ')"

# ---- preset encoder options that write or read files ----
pipe() { printf 'description x\nencoder %s\nencoder-opt %s\n' "$2" "$3" > "$TMP/$1.pipe"; }
pipe stats libx264 "stats=$TMP/s.log"
pipe params libx264 "threads=1:x264-params=dump-yuv=$TMP/d.yuv"
pipe pass libx264 "flags=+pass1"
pipe qp libx264 "x264opts=qpfile=$TMP/q.txt"
pipe csv libx265 "x265-params='csv=$TMP/x.csv:csv-log-level=2'"
pipe quoted libx265 "x265-params='log-level=error:analysis-save=$TMP/a.dat'"
pipe upper libx264 "x264-params=DUMP_YUV=$TMP/d.yuv"
expect "preset: x264 stats= refused" 2 "stats.pipe:3:13: encoder-opt: 'stats' makes the encoder write or read a file" -- "$V" pipelines "$TMP/stats.pipe"
expect "preset: dump-yuv inside x264-params refused" 2 "params.pipe:3:35: encoder-opt: 'dump-yuv' makes the encoder" -- "$V" pipelines "$TMP/params.pipe"
expect "preset: flags=+pass1 refused" 2 "pass.pipe:3:13: encoder-opt: 'flags' makes the encoder" -- "$V" pipelines "$TMP/pass.pipe"
expect "preset: qpfile in x264opts refused" 2 "qp.pipe:3:22: encoder-opt: 'qpfile'" -- "$V" pipelines "$TMP/qp.pipe"
expect "preset: x265 csv refused" 2 "csv.pipe:3:26: encoder-opt: 'csv' makes the encoder" -- "$V" pipelines "$TMP/csv.pipe"
expect "preset: quoted analysis-save refused" 2 "quoted.pipe:3:[0-9]+: encoder-opt: 'analysis-save' makes" -- "$V" pipelines "$TMP/quoted.pipe"
expect "preset: DUMP_YUV spelling refused" 2 "upper.pipe:3:[0-9]+: encoder-opt: 'DUMP_YUV' makes" -- "$V" pipelines "$TMP/upper.pipe"
expect "--pipeline with x265 csv= refused" 2 "csv.pipe:3:26: " -- "$V" --backend cpu "$in" --pipeline "$TMP/csv.pipe" -o "$TMP/p.mkv"
[ ! -e "$TMP/x.csv" ] && [ ! -e "$TMP/p.mkv" ] && [ ! -e "$TMP/s.log" ] && pass "no file written by a refused preset" ||
  fail "a refused preset wrote: $(ls "$TMP" | tr '\n' ' ')"
# A manifest case runs presets through the same check.
printf 'vkcu-manifest 1\n[case c]\ninput = clip.mp4\npipeline = ../../csv.pipe\nhashes = golden/c.framemd5\n' > "$m/p.manifest"
"$V" verify "$m/p.manifest" --update > "$TMP/out" 2>&1
grep -q "csv.pipe:3:26: encoder-opt: 'csv'" "$TMP/out" && [ ! -e "$TMP/x.csv" ] && pass "verify: a case's preset with csv= refused" ||
  fail "verify preset: $(head -2 "$TMP/out" | tr '\n' ' ')"
# Harmless options still pass, and the command line may ask for a file.
printf "description x\nencoder libx265\nencoder-opt x265-params='log-level=error:keyint=10:open-gop=0'\n" > "$TMP/ok.pipe"
expect "preset: x265-params without file keys accepted" 0 "" -- "$V" pipelines "$TMP/ok.pipe"
if "$V" --backend cpu -q "$in" --frames 5 --encoder libx265 --encoder-opt "x265-params='log-level=error:csv=$TMP/cli.csv'" \
     -o "$TMP/cli.mkv" && [ -s "$TMP/cli.csv" ]; then
  pass "--encoder-opt on the command line may still write a CSV log"
else
  fail "--encoder-opt x265-params=csv= on the command line: no $TMP/cli.csv"
fi

# ---- error messages do not quote files of another kind ----
printf 'root:SECRET-hunter2:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n' > "$TMP/shadow"
head -c 4096 "$in" > "$TMP/binary"
printf 'vkcu-manifest 1\n[case s]\ninput = clip.mp4\nbackend = cpu\nframes = 3\nhashes = shadow\n' > "$m/s.manifest"
cp "$TMP/shadow" "$m/shadow"
quiet() { # name code pattern -- command: exit code, message, and no line of the file in the output
  local name=$1; expect "$@" || return
  if grep -aq "SECRET\|daemon" "$TMP/.stdout" "$TMP/.stderr"; then fail "$name: quotes the file: $(cat "$TMP/.stderr" "$TMP/.stdout" | head -2 | tr '\n' ' ')"; fi
}
quiet "verify on a non-manifest" 3 "shadow:1: not a vkcu manifest" -- "$V" verify "$TMP/shadow"
quiet "pipelines on a non-preset" 2 "shadow:1:1: not a vkcu pipeline file" -- "$V" pipelines "$TMP/shadow"
quiet "--pipeline on a non-preset" 2 "shadow:1:1: not a vkcu pipeline file" -- "$V" --backend cpu "$in" --pipeline "$TMP/shadow" -o "$TMP/q.mkv"
quiet "verify: a hashes file that is not a hash list" 6 "" -- "$V" verify "$m/s.manifest"
grep -q "shadow:1: not a hash list" "$TMP/.stdout" && pass "verify: says the hashes file is not a hash list" ||
  fail "hashes not a hash list: $(head -2 "$TMP/.stdout" | tr '\n' ' ')"
quiet "compare with a non-video" 3 "shadow: not a media file" -- "$V" compare "$TMP/shadow" "$in"
expect "pipelines on a binary file" 2 "binary:1:1: not a text file" -- "$V" pipelines "$TMP/binary"
expect "verify on a binary file" 3 "binary:1: not a vkcu manifest" -- "$V" verify "$TMP/binary"
# A near miss of a key is still named: it tells nothing about the file.
printf 'descripton x\n' > "$TMP/typo.pipe"
expect "preset typo on the first line named" 2 "typo.pipe:1:1: unknown key 'descripton' \\(did you mean 'description'\\?\\)" -- "$V" pipelines "$TMP/typo.pipe"

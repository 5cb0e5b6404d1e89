#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A user's files are sacred (issue 13, defects 1-5): no writer replaces an
# existing file without -y, none writes over an input even with -y, two
# writers racing for one name cannot both win, concurrent batches share the
# work, signals and full or read-only disks leave no partial file, dead
# runs' leftovers are cleaned up, any valid file name works, and a resumed
# batch notices outputs made with other settings.
. "$(dirname "$0")/lib.sh"
V=$VKCU
m=$MEDIA
in=$m/h264-aac.mp4
mounts=()
cleanup() {
  for p in $(jobs -p); do kill -9 "$p" 2> /dev/null; done
  for d in "${mounts[@]}"; do umount "$d" 2> /dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
sum() { sha256sum "$1" | cut -d' ' -f1; }
# A pid that no longer runs.
dead_pid() { sh -c 'echo $$'; }
# wait_part DIR: until a temporary output shows up in DIR (the job is writing).
wait_part() { # bounded only so that a broken job cannot hang the test (120 s)
  for _ in $(seq 6000); do
    ls -A "$1" 2> /dev/null | grep -q '\.part' && return 0
    sleep 0.02
  done
  return 1
}
# tmpfs DIR OPTIONS: a private mount, or fail when this machine allows none.
tmpfs() {
  mkdir -p "$1"
  mount -t tmpfs -o "$2" tmpfs "$1" 2> /dev/null || return 1
  mounts+=("$1")
}

w=$TMP/w
mkdir -p "$w"
cp "$in" "$w/in.mp4"
insum=$(sum "$w/in.mp4")
"$V" hash --backend cpu "$in" -o "$w/ref.framemd5" 2> /dev/null
"$V" --backend cpu -q "$in" -o "$w/c.mkv" --frames 5 2> /dev/null
cat > "$w/m.manifest" << EOF
vkcu-manifest 1
[case one]
input = $in
backend = cpu
frames = 3
EOF
"$V" verify "$w/m.manifest" --update > /dev/null 2>&1

# ---- defect 1: every writer refuses an existing file without -y ----
# runs NAME FILE CODE PATTERN -- command: the command exits CODE with one
# stderr line matching PATTERN, FILE keeps its bytes and no temporary is left.
runs() {
  local name=$1 file=$2 code=$3 pat=$4; shift 5
  local before; before=$(sum "$file")
  "$@" > "$TMP/.out" 2> "$TMP/.err"
  local rc=$?
  if [ $rc != "$code" ] || ! grep -qE -- "$pat" "$TMP/.err"; then
    fail "$name: exit $rc, expected $code and /$pat/: $(head -2 "$TMP/.err" | tr '\n' ' ')"
  elif [ "$(sum "$file")" != "$before" ] || ls -A "$(dirname "$file")" | grep -q '\.part'; then
    fail "$name: $file changed or a temporary was left"
  else
    pass "$name"
  fi
}
refused() { # name, file, then the command
  local name=$1 file=$2; shift 2
  runs "$name" "$file" 4 "$(basename "$file"): already exists \\(use -y" -- "$@"
}
echo keep > "$w/keep.txt"
cp "$w/c.mkv" "$w/keep.mkv"
refused "transcode: existing output refused" "$w/keep.mkv" "$V" --backend cpu "$in" -o "$w/keep.mkv"
refused "hash -o: existing file refused" "$w/keep.txt" "$V" hash --backend cpu "$in" -o "$w/keep.txt"
refused "compare --diff-image: existing file refused" "$w/keep.txt" "$V" compare --backend cpu "$w/in.mp4" "$w/c.mkv" --frames 3 --diff-image "$w/keep.txt"
mkdir -p "$TMP/bin"
cp "$in" "$TMP/bin/a.mp4"
refused "batch --report: existing file refused" "$w/keep.txt" "$V" batch "$TMP/bin" "$TMP/bout" --backend cpu --pipeline regression-hash --report "$w/keep.txt"
refused "verify --junit: existing file refused" "$w/keep.txt" "$V" verify "$w/m.manifest" --junit "$w/keep.txt"
# -y replaces, whole.
"$V" hash --backend cpu "$in" -o "$w/keep.txt" -y 2> "$TMP/err" && cmp -s "$w/keep.txt" "$w/ref.framemd5" &&
  pass "hash -o -y replaces the file with the whole hash list" || fail "hash -y: $(cat "$TMP/err")"
echo keep > "$w/keep.txt"
"$V" verify "$w/m.manifest" --junit "$w/keep.txt" -y > /dev/null 2>&1 && grep -q '<testsuites' "$w/keep.txt" &&
  pass "verify --junit -y replaces the file" || fail "verify --junit -y: $(head -c 80 "$w/keep.txt")"

# ---- defect 1: nothing writes over an input, even with -y (by name, hard link or symbolic link) ----
ln "$w/in.mp4" "$w/hard.mp4"
ln -s in.mp4 "$w/soft.mp4"
protected() { # name, then the command
  local name=$1; shift
  runs "$name" "$w/in.mp4" 4 "input of this job; vkcu never writes over an input" -- "$@"
}
protected "hash IN -o IN -y keeps the input" "$V" hash --backend cpu "$w/in.mp4" -o "$w/in.mp4" -y
protected "hash -o a hard link to the input -y" "$V" hash --backend cpu "$w/in.mp4" -o "$w/hard.mp4" -y
protected "hash -o a symbolic link to the input -y" "$V" hash --backend cpu "$w/in.mp4" -o "$w/soft.mp4" -y
protected "transcode IN -o IN -y keeps the input" "$V" --backend cpu "$w/in.mp4" -o "$w/in.mp4" -y
protected "transcode -o a hard link to the input -y" "$V" --backend cpu "$w/in.mp4" -o "$w/hard.mp4" -y
protected "compare --diff-image an input -y" "$V" compare --backend cpu "$w/in.mp4" "$w/c.mkv" --diff-image "$w/hard.mp4" -y
protected "verify --junit the manifest -y" "$V" verify "$w/m.manifest" --junit "$w/m.manifest" -y
cp "$in" "$TMP/bin/b.mp4"
bsum=$(sum "$TMP/bin/b.mp4")
expect "batch --report an input file -y" 4 "b.mp4: is an input of this job" -- \
  "$V" batch "$TMP/bin" "$TMP/bout2" --backend cpu --pipeline regression-hash --report "$TMP/bin/b.mp4" -y &&
  { [ "$(sum "$TMP/bin/b.mp4")" = "$bsum" ] && pass "batch --report over an input leaves it whole" ||
      fail "batch --report over an input: the input changed"; }
# Written in place as before: devices.
"$V" hash --backend cpu "$in" -o /dev/null 2> "$TMP/err" && pass "hash -o /dev/null is written in place" ||
  fail "hash -o /dev/null: $(cat "$TMP/err")"

# ---- defect 2: two writers, one name ----
printf 'description slow\nop denoise=nlm:sigma=8:search=5\nencoder ffv1\n' > "$TMP/slow.pipe"
race=$TMP/race; mkdir -p "$race"
"$V" --backend cpu -q "$m/long.mp4" --frames 40 --pipeline "$TMP/slow.pipe" -o "$race/o.mkv" 2> "$TMP/r1" & p1=$!
"$V" --backend cpu -q "$m/long.mp4" --frames 40 --pipeline "$TMP/slow.pipe" -o "$race/o.mkv" 2> "$TMP/r2" & p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
n=$("$FFPROBE" -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$race/o.mkv" 2> /dev/null)
if { [ $rc1 = 0 ] && [ $rc2 = 4 ] && grep -q 'o.mkv: already exists' "$TMP/r2"; } ||
   { [ $rc2 = 0 ] && [ $rc1 = 4 ] && grep -q 'o.mkv: already exists' "$TMP/r1"; }; then
  [ "$n" = 40 ] && [ "$(ls -A "$race")" = o.mkv ] &&
    pass "two jobs on one output: one wins, the other fails (exit 4, already exists), the file is whole" ||
    fail "race: frames $n, files $(ls -A "$race" | tr '\n' ' ')"
else
  fail "two jobs on one output: exits $rc1 and $rc2 ($(cat "$TMP/r1" "$TMP/r2" | tr '\n' ' '))"
fi

# ---- defect 2: two batches over one folder share the work ----
cb=$TMP/cb; mkdir -p "$cb/in"
for i in 1 2 3 4 5 6; do cp "$in" "$cb/in/f$i.mp4"; done
"$V" batch "$cb/in" "$cb/out" --backend cpu --pipeline "$TMP/slow.pipe" --frames 12 --resume -q --report "$cb/r1.jsonl" 2> "$cb/e1" & p1=$!
"$V" batch "$cb/in" "$cb/out" --backend cpu --pipeline "$TMP/slow.pipe" --frames 12 --resume -q --report "$cb/r2.jsonl" 2> "$cb/e2" & p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
done_total=$(cat "$cb/r1.jsonl" "$cb/r2.jsonl" | grep -c '"status": "done"')
done_files=$(cat "$cb/r1.jsonl" "$cb/r2.jsonl" | grep '"status": "done"' | sed 's/.*"file": "\([^"]*\)".*/\1/' | sort -u | wc -l)
skipped=$(cat "$cb/r1.jsonl" "$cb/r2.jsonl" | grep -c '"status": "skipped"')
[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$done_total" = 6 ] && [ "$done_files" = 6 ] && [ "$skipped" = 6 ] &&
  [ "$(ls "$cb/out" | wc -l)" = 6 ] && ! ls -A "$cb/out" | grep -q '\.part\|\.claim' &&
  pass "two batches over one folder: each of 6 files encoded once ($(grep -c '"status": "done"' "$cb/r1.jsonl") + $(grep -c '"status": "done"' "$cb/r2.jsonl")), the other skips it" ||
  fail "two batches: exits $rc1/$rc2, $done_total encodes of $done_files files, $skipped skipped"
grep -h '"status": "skipped"' "$cb/r1.jsonl" "$cb/r2.jsonl" | grep -q '"reason": "\(another vkcu process\|done earlier\)' &&
  pass "the report says why a file was skipped" || fail "skip reason: $(grep -h skipped "$cb/r1.jsonl" | head -1)"

# ---- defect 3: signals leave no partial file ----
sigtest() { # name, signals (space-separated; a second one follows 1-50 ms after the first)
  local name=$1 sigs=$2 d=$TMP/sig-$RANDOM
  mkdir -p "$d"
  "$V" --backend cpu -q "$m/long.mp4" --pipeline "$TMP/slow.pipe" -o "$d/o.mkv" 2> "$d/err" &
  local pid=$!
  if ! wait_part "$d"; then
    kill -9 $pid; wait $pid 2> /dev/null
    fail "$name: no temporary output appeared"; return
  fi
  local first=1
  for s in $sigs; do
    [ $first = 1 ] || sleep "0.0$((RANDOM % 5 + 1))"
    kill -s "$s" $pid 2> /dev/null; first=0 # the first may already have ended it
  done
  wait $pid; local rc=$?
  [ -z "$(ls -A "$d" | grep -v '^err$')" ] && [ $rc = 130 ] &&
    pass "$name: exit 130, no partial or hidden file" || fail "$name: exit $rc, left: $(ls -A "$d" | tr '\n' ' ')"
}
sigtest "SIGHUP (closed ssh session)" HUP
sigtest "SIGTERM" TERM
sigtest "SIGQUIT" QUIT
sigtest "double Ctrl-C 1-50 ms apart" "INT INT"
sigtest "double SIGTERM 1-50 ms apart" "TERM TERM"
sigtest "SIGHUP then SIGINT" "HUP INT"
# The same for a batch (several outputs in flight).
bd=$TMP/sigb; mkdir -p "$bd"
"$V" batch "$cb/in" "$bd/out" --backend cpu --pipeline "$TMP/slow.pipe" --jobs 3 -q --report "$bd/r.jsonl" 2> "$bd/err" & pid=$!
mkdir -p "$bd/out"
if wait_part "$bd/out"; then
  kill -INT $pid; sleep 0.0$((RANDOM % 5 + 1)); kill -INT $pid
  wait $pid; rc=$?
  [ $rc = 130 ] && [ -z "$(ls -A "$bd/out" | grep '^\.')" ] &&
    pass "batch, double Ctrl-C: exit 130, no partial or hidden file" || fail "batch double Ctrl-C: exit $rc, left $(ls -A "$bd/out" | tr '\n' ' ')"
else
  kill -9 $pid; wait $pid 2> /dev/null; fail "batch double Ctrl-C: no temporary output appeared"
fi

# ---- defect 3: a dead run's leftovers are removed by the next run there ----
st=$TMP/stale; mkdir -p "$st"
dp=$(dead_pid)
while kill -0 "$dp" 2> /dev/null; do dp=$(dead_pid); done
echo partial > "$st/.vkcu-$dp-0.part.mkv"
echo partial > "$st/.old-name.vkcu-$dp.part.mkv"
echo alive > "$st/.vkcu-$$-0.part.mkv" # this shell runs: not stale
"$V" --backend cpu "$in" --frames 3 -o "$st/new.mkv" 2> "$TMP/err"
rc=$?
[ $rc = 0 ] && [ ! -e "$st/.vkcu-$dp-0.part.mkv" ] && [ ! -e "$st/.old-name.vkcu-$dp.part.mkv" ] && [ -e "$st/.vkcu-$$-0.part.mkv" ] &&
  grep -q "vkcu-$dp-0.part.mkv: removed a partial output left by process $dp, which no longer runs" "$TMP/err" &&
  pass "stale .part files of a dead process are removed and announced (a live one's kept)" ||
  fail "stale .part: exit $rc, left $(ls -A "$st" | tr '\n' ' '), stderr: $(head -2 "$TMP/err")"
rm -f "$st/.vkcu-$$-0.part.mkv"
# --resume over finished work still cleans the folder.
"$V" batch "$TMP/bin" "$TMP/rs" --backend cpu --pipeline regression-hash -q 2> /dev/null
echo partial > "$TMP/rs/.vkcu-$dp-7.part.framemd5"
"$V" batch "$TMP/bin" "$TMP/rs" --backend cpu --pipeline regression-hash --resume 2> "$TMP/err"
rc=$?
[ $rc = 0 ] && [ ! -e "$TMP/rs/.vkcu-$dp-7.part.framemd5" ] && grep -q "removed a partial output left by process $dp" "$TMP/err" &&
  grep -q "2 skipped" "$TMP/err" &&
  pass "batch --resume removes a dead run's .part and says so" || fail "resume cleanup: exit $rc, $(ls -A "$TMP/rs" | tr '\n' ' ')"

# ---- defect 5: names of 240 to 255 bytes ----
ln_ok=1
for len in 240 251 255; do
  name=$(printf 'n%.0s' $(seq $((len - 4))))
  "$V" --backend cpu -q "$in" --frames 3 -o "$w/$name.mkv" 2> "$TMP/err" && [ -s "$w/$name.mkv" ] || { ln_ok=0; break; }
  "$V" hash --backend cpu "$in" --frames 3 -o "$w/$name.txt" 2> "$TMP/err" && [ -s "$w/$name.txt" ] || { ln_ok=0; break; }
done
[ $ln_ok = 1 ] && ! ls -A "$w" | grep -q '\.part' && pass "output names of 240, 251 and 255 bytes work (transcode and hash)" ||
  fail "long name ($len bytes): $(cat "$TMP/err")"
lb=$TMP/lb; mkdir -p "$lb/in"
cp "$in" "$lb/in/$(printf 'b%.0s' $(seq 251)).mp4"
"$V" batch "$lb/in" "$lb/out" --backend cpu -q --frames 3 --report "$lb/r.jsonl" 2> "$TMP/err" &&
  [ -s "$lb/out/$(printf 'b%.0s' $(seq 251)).mkv" ] && pass "batch output name of 255 bytes works" ||
  fail "batch long name: $(cat "$TMP/err")"

# ---- full and read-only disks ----
if tmpfs "$TMP/ro" ro,size=1m; then
  expect "read-only folder: one clear line, exit 4" 4 "x.mkv: output folder .*ro is not writable \\(read-only filesystem\\)" -- \
    "$V" --backend cpu "$in" -o "$TMP/ro/x.mkv"
  expect "read-only folder (hash -o)" 4 "h.txt: output folder .*ro is not writable \\(read-only filesystem\\)" -- \
    "$V" hash --backend cpu "$in" -o "$TMP/ro/h.txt"
else
  skip "read-only folder: cannot mount a tmpfs here (needs root)"
fi
if tmpfs "$TMP/full" size=200k; then
  "$V" --backend cpu -q "$m/long.mp4" --encoder ffv1 -o "$TMP/full/o.mkv" 2> "$TMP/err"
  rc=$?
  [ $rc = 4 ] && [ -z "$(ls -A "$TMP/full")" ] && grep -q "disk full" "$TMP/err" &&
    pass "disk full: exit 4, says so, leaves no file" || fail "disk full transcode: exit $rc, left $(ls -A "$TMP/full" | tr '\n' ' ')"
  # A report that cannot be written whole is not left half-written.
  cat /dev/zero > "$TMP/full/filler" 2> /dev/null
  "$V" batch "$TMP/bin" "$TMP/full/out" --backend cpu --pipeline regression-hash -q --report "$TMP/full/r.jsonl" 2> "$TMP/err"
  rc=$?
  [ $rc = 4 ] && [ ! -e "$TMP/full/r.jsonl" ] && [ -z "$(ls -A "$TMP/full/out" 2> /dev/null)" ] &&
    pass "disk full during a batch: exit 4, no partial report or output" ||
    fail "disk full batch: exit $rc, left $(ls -AR "$TMP/full" | tr '\n' ' ')"
else
  skip "disk full: cannot mount a small tmpfs here (needs root)"
fi
expect "disk full on a device output (/dev/full)" 4 "" -- "$V" hash --backend cpu "$in" -o /dev/full

# ---- defect 4: --resume checks how an output was made ----
rb=$TMP/rb; mkdir -p "$rb/in"
cp "$in" "$rb/in/a.mp4"; cp "$in" "$rb/in/b.mp4"
"$V" batch "$rb/in" "$rb/out" --backend cpu --frames 4 --crf 30 -q 2> /dev/null
cp "$in" "$rb/in/c.mp4"
asum=$(sum "$rb/out/a.mkv")
"$V" batch "$rb/in" "$rb/out" --backend cpu --frames 4 --crf 20 --resume -q --report "$rb/r1.jsonl" 2> "$TMP/err"
rc=$?
[ $rc = 4 ] && grep -q 'a.mkv: exists, but it was made with other settings (crf was .30., now .20.); use -y with --resume' "$TMP/err" &&
  grep -q '"file": "c.mp4".*"status": "done"' "$rb/r1.jsonl" && grep -q '"file": "b.mp4".*"status": "failed"' "$rb/r1.jsonl" &&
  [ "$(sum "$rb/out/a.mkv")" = "$asum" ] &&
  pass "--resume with other settings: reported as an error naming the setting, other files still done" ||
  fail "--resume mismatch: exit $rc, $(head -2 "$TMP/err" | tr '\n' ' ')"
"$V" batch "$rb/in" "$rb/out" --backend cpu --frames 4 --crf 20 --resume -y -q --report "$rb/r2.jsonl" 2> "$TMP/err"
rc=$?
[ $rc = 0 ] && [ "$(grep -c '"status": "done"' "$rb/r2.jsonl")" = 2 ] && grep -q '"file": "c.mp4".*"status": "skipped"' "$rb/r2.jsonl" &&
  [ "$(sum "$rb/out/a.mkv")" != "$asum" ] &&
  pass "--resume -y redoes the outputs made with other settings only" || fail "--resume -y: exit $rc $(cat "$TMP/err")"
"$V" batch "$rb/in" "$rb/out" --backend cpu --frames 4 --crf 20 --resume -q --report "$rb/r3.jsonl" 2> "$TMP/err" &&
  [ "$(grep -c '"status": "skipped"' "$rb/r3.jsonl")" = 3 ] && pass "--resume with the same settings skips everything" ||
  fail "--resume same settings: $(cat "$TMP/err")"
# An output changed after it was made (or made by something else) is not taken as finished.
echo damaged > "$rb/out/b.mkv"
"$V" batch "$rb/in" "$rb/out" --backend cpu --frames 4 --crf 20 --resume -q 2> "$TMP/err"
[ $? = 4 ] && grep -q 'b.mkv: exists, but it changed after vkcu made it' "$TMP/err" &&
  pass "--resume does not take a damaged output for a finished one" || fail "--resume damaged: $(cat "$TMP/err")"

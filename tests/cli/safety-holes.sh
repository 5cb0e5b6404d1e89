#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A user's files are sacred, second pass (issue 22: what a fault-and-fuzz
# run found; issue 28, items 2 and 4). Each block names its defect:
# '-' is standard output for every writer, encoder options that write
# files, files a job reads are inputs, the batch report, SIGXFSZ, an
# interrupted batch's exit code, the resume record before the rename,
# verify --update held in its folder, write errors on standard output,
# dangling links, compare at any frame rate, messages, hash lists,
# --resume with --report, and timeout -s INT.
. "$(dirname "$0")/lib.sh"
V=$VKCU
m=$MEDIA
in=$m/h264-aac.mp4
cleanup() {
  for p in $(jobs -p); do kill -9 "$p" 2> /dev/null; done
  for d in "${mounts[@]}"; do umount "$d" 2> /dev/null; done
  rm -rf "$TMP"
}
mounts=()
trap cleanup EXIT
sum() { sha256sum "$1" | cut -d' ' -f1; }
leftovers() { ls -A "$@" 2> /dev/null | grep -E '\.part|\.claim$' | tr '\n' ' '; }
# wait_for PATTERN DIR: until a file matching PATTERN (grep -E) shows up in DIR.
wait_for() {
  for _ in $(seq 1500); do
    ls -A "$2" 2> /dev/null | grep -qE "$1" && return 0
    sleep 0.02
  done
  return 1
}
# two_signals PID: SIGINT twice, 3 ms apart, as `timeout -s INT` sends it
# to the process and then to its group.
two_signals() {
  python3 -c 'import os, signal, sys, time
p = int(sys.argv[1]); os.kill(p, signal.SIGINT); time.sleep(0.003); os.kill(p, signal.SIGINT)' "$1"
}
w=$TMP/w
mkdir -p "$w"
cd "$w" || exit 1
cp "$in" in.mp4
insum=$(sum in.mp4)
"$V" --backend cpu -q in.mp4 -o lossy.mkv --crf 45 --frames 10 2> /dev/null
printf 'description slow\nop denoise=nlm:sigma=8:search=5\nencoder ffv1\n' > slow.pipe

# ---- 22.1: '-' is standard output for every writer; a file named '-' is ./- ----
cp in.mp4 ./-
"$V" compare --backend cpu ./- lossy.mkv --diff-image - > d.png 2> err
rc=$?
[ $rc = 6 ] && [ "$(sum ./-)" = "$insum" ] && [ "$(head -c 4 d.png | od -An -c | tr -d ' ')" = "211PNG" ] &&
  pass "22.1 compare ./- B --diff-image -: the PNG goes to standard output, the input named '-' is untouched" ||
  fail "22.1 --diff-image -: exit $rc, ./- $( [ "$(sum ./-)" = "$insum" ] && echo kept || echo CHANGED), stdout $(head -c 4 d.png | od -An -c)"
"$V" compare --backend cpu ./- lossy.mkv --csv - --frames 5 > rows.csv 2> err
rc=$?
[ $rc = 6 ] && [ "$(sum ./-)" = "$insum" ] && [ "$(grep -c '^[0-9]' rows.csv)" = 5 ] && grep -q 'A 5, B 5' err &&
  pass "22.1 compare --csv -: 5 rows on standard output, the summary on standard error, input A whole" ||
  fail "22.1 --csv -: exit $rc, $(grep -c '^[0-9]' rows.csv) rows, $(grep 'frames:' err)"
for o in --json --report; do
  rm -f rep
  "$V" compare --backend cpu in.mp4 lossy.mkv $o - --frames 3 > rep 2> err
  rc=$?
  [ $rc = 6 ] && [ -s rep ] && [ "$(sum ./-)" = "$insum" ] && ! grep -q 'frames: ' rep &&
    pass "22.1 compare $o -: written to standard output, the file '-' untouched" ||
    fail "22.1 compare $o -: exit $rc, $(wc -c < rep) bytes, $(tail -1 err)"
done
if script -qc "exit 0" /dev/null > /dev/null 2>&1; then
  script -qec "'$V' compare --backend cpu in.mp4 lossy.mkv --diff-image -" /dev/null > tty.out 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "is binary and standard output is a terminal" tty.out && [ "$(sum ./-)" = "$insum" ] &&
    pass "22.1 --diff-image - on a terminal: refused (exit 2)" ||
    fail "22.1 --diff-image - on a terminal: exit $rc, $(head -c 200 tty.out | tr -d '\0' | tr '\n' ' ')"
else
  skip "22.1 --diff-image - on a terminal: no 'script' to make one"
fi
cat > m.manifest << EOF
vkcu-manifest 1
[case one]
input = in.mp4
backend = cpu
frames = 3
hashes = dh.framemd5
EOF
"$V" verify m.manifest --update > /dev/null 2>&1
for o in junit summary html; do
  "$V" verify m.manifest --$o - > out 2> err
  rc=$?
  [ $rc = 0 ] && [ -s out ] && ! grep -q '^PASS one' out && grep -q '^PASS one' err && [ "$(sum ./-)" = "$insum" ] &&
    pass "22.1 verify --$o -: the file on standard output, the case lines on standard error" ||
    fail "22.1 verify --$o -: exit $rc, $(head -c 80 out | tr '\n' ' '), ./- $( [ "$(sum ./-)" = "$insum" ] && echo kept || echo CHANGED)"
done
runs_refused() { # name code pattern file -- command: exit code, message, file unchanged
  local name=$1 code=$2 pat=$3 file=$4; shift 5
  local before; before=$(sum "$file")
  "$@" > out 2> err
  local rc=$?
  if [ $rc != "$code" ] || ! grep -qE -- "$pat" err; then
    fail "$name: exit $rc, expected $code and /$pat/: $(head -2 err | tr '\n' ' ')"
  elif [ "$(sum "$file")" != "$before" ]; then
    fail "$name: $file changed"
  else
    pass "$name"
  fi
}
runs_refused "22.1 verify --junit ./- writes the file named '-' only by the normal rule (exists: refused)" 4 \
  "\\./-: already exists" ./- -- "$V" verify m.manifest --junit ./-

# ---- 22.2: encoder options that name files follow the output rule ----
runs_refused "22.2 --encoder-opt stats=INPUT: refused, the input untouched" 4 "in.mp4: is an input of this job" in.mp4 -- \
  "$V" --backend cpu -q in.mp4 -o x.mkv --encoder libx264 --encoder-opt stats=in.mp4:x264-params=pass=1
[ ! -e in.mp4.mbtree ] && [ ! -e x.mkv ] && [ -z "$(leftovers .)" ] && pass "22.2 no in.mp4.mbtree, no output, no temporary" ||
  fail "22.2 stats=in.mp4 left: $(ls -A | tr '\n' ' ')"
# (the blocks below are independent of this one, even where it failed)
[ "$(sum in.mp4)" = "$insum" ] || cp "$in" in.mp4
rm -f in.mp4.mbtree x.mkv
"$V" --backend cpu -q in.mp4 -o p1.mkv --frames 10 --encoder libx264 --bitrate 200000 \
  --encoder-opt stats=s.log:x264-params=pass=1 2> err
rc=$?
[ $rc = 0 ] && [ -s s.log ] && [ -s s.log.mbtree ] && [ -z "$(leftovers .)" ] &&
  pass "22.2 pass 1 writes s.log and s.log.mbtree whole, under temporary names first" ||
  fail "22.2 pass 1: exit $rc, $(ls -A | tr '\n' ' ') $(cat err)"
runs_refused "22.2 an existing statistics file is refused without -y" 4 "s.log: already exists \\(use -y" s.log -- \
  "$V" --backend cpu -q in.mp4 -o p2.mkv --frames 10 --encoder libx264 --bitrate 200000 --encoder-opt stats=s.log:x264-params=pass=1
"$V" --backend cpu -q in.mp4 -o p3.mkv --frames 10 --encoder libx264 --bitrate 200000 \
  --encoder-opt stats=s.log:x264-params=pass=2 2> err && [ -s p3.mkv ] &&
  pass "22.2 pass 2 reads s.log (an input, not refused)" || fail "22.2 pass 2: $(cat err)"
echo keep > keep.csv
runs_refused "22.2 x265 csv= over an existing file without -y: refused" 4 "keep.csv: already exists" keep.csv -- \
  "$V" --backend cpu -q in.mp4 -o p4.mkv --frames 3 --encoder libx265 --encoder-opt "x265-params='log-level=error:csv=keep.csv'"
runs_refused "22.2 x265 analysis-save= the input, even with -y: refused" 4 "is an input of this job" in.mp4 -- \
  "$V" --backend cpu -q in.mp4 -o p5.mkv --frames 3 -y --encoder libx265 --encoder-opt "x265-params='log-level=error:analysis-save=in.mp4'"
mkdir -p sig
"$V" --backend cpu -q "$m/long.mp4" -o sig/o.mkv --pipeline ./slow.pipe --encoder libx264 --bitrate 200000 \
  --encoder-opt stats=sig/st.log:x264-params=pass=1 2> sig/err &
pid=$!
if wait_for '\.part' sig; then
  sleep 0.3
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] && [ -z "$(ls -A sig | grep -v '^err$')" ] &&
    pass "22.2 an interrupted encode leaves no statistics file nor temporary" ||
    fail "22.2 interrupted stats: exit $rc, left $(ls -A sig | tr '\n' ' ')"
else
  kill -9 $pid; wait $pid 2> /dev/null; fail "22.2 interrupted stats: no temporary appeared"
fi

[ "$(sum in.mp4)" = "$insum" ] || cp "$in" in.mp4 # (independent blocks, as above)

# ---- 22.3: files a job reads are inputs, never outputs, even with -y ----
printf 'description mine\nop copy\n' > my.pipe
runs_refused "22.3 -o the --pipeline preset -y: refused" 4 "my.pipe: is the same file as .*an input of this job" my.pipe -- \
  "$V" --backend cpu in.mp4 --pipeline ./my.pipe -o my.pipe -f matroska -y
runs_refused "22.3 hash -o the --pipeline preset -y: refused" 4 "my.pipe: is the same file as .*an input of this job" my.pipe -- \
  "$V" hash --backend cpu in.mp4 --pipeline ./my.pipe -o my.pipe -y
runs_refused "22.3 compare --csv the --pipeline preset -y: refused" 4 "my.pipe: is the same file as .*an input of this job" my.pipe -- \
  "$V" compare --backend cpu in.mp4 lossy.mkv --pipeline ./my.pipe --csv my.pipe -y
for o in junit summary html; do
  runs_refused "22.3 verify --$o a case's expected hashes -y: refused" 4 "dh.framemd5: is the same file as .*an input of this job" dh.framemd5 -- \
    "$V" verify m.manifest --$o dh.framemd5 -y
done
printf 'vkcu-manifest 1\n[case p]\ninput = in.mp4\nbackend = cpu\nframes = 3\npipeline = my.pipe\nhashes = ph.framemd5\n' > p.manifest
"$V" verify p.manifest --update > /dev/null 2>&1
runs_refused "22.3 verify --junit a case's preset -y: refused" 4 "my.pipe: is the same file as .*an input of this job" my.pipe -- \
  "$V" verify p.manifest --junit my.pipe -y

# ---- 22.4: the batch report: a temporary, renamed at the end ----
mkdir -p empty bin
cp "$in" bin/a.mp4
echo '{"file": "old", "shard": "0/1"}' > old.jsonl
oldsum=$(sum old.jsonl)
"$V" batch empty bo --backend cpu --report old.jsonl -y 2> err
rc=$?
[ $rc = 3 ] && [ "$(sum old.jsonl)" = "$oldsum" ] && pass "22.4 a batch that fails before any file keeps the old report" ||
  fail "22.4 empty folder: exit $rc, report now $(wc -c < old.jsonl) bytes"
mkdir -p bo
echo video > bo/a.mkv
vsum=$(sum bo/a.mkv)
runs_refused "22.4 --report one of the batch's outputs -y: refused" 4 "bo/a.mkv: is also the output of" bo/a.mkv -- \
  "$V" batch bin bo --backend cpu --report bo/a.mkv -y
if mkdir -p full && mount -t tmpfs -o size=300k tmpfs full 2> /dev/null; then
  mounts+=("$w/full")
  cp old.jsonl full/r.jsonl
  cat /dev/zero > full/filler 2> /dev/null
  "$V" batch bin full/out --backend cpu --pipeline regression-hash -q --report full/r.jsonl -y 2> err
  rc=$?
  [ $rc = 4 ] && [ "$(sum full/r.jsonl)" = "$oldsum" ] && [ -z "$(leftovers full)" ] &&
    pass "22.4 a report that cannot be written on a full disk leaves the old one" ||
    fail "22.4 full disk: exit $rc, report $(wc -c < full/r.jsonl) bytes, left $(ls -A full | tr '\n' ' ')"
else
  skip "22.4 full disk: cannot mount a small tmpfs here (needs root)"
fi

# ---- 22.5: past the file size limit: one message, exit 4, no temporary; a batch goes on ----
mkdir -p fs
(ulimit -f 200; "$V" --backend cpu -q "$m/long.mp4" -o fs/o.mkv --encoder ffv1) 2> err
rc=$?
[ $rc = 4 ] && grep -q 'fs/o.mkv: write error: File too large' err && [ -z "$(ls -A fs)" ] &&
  pass "22.5 ulimit -f: transcode exits 4 naming the file, no temporary left" ||
  fail "22.5 transcode: exit $rc, left $(ls -A fs | tr '\n' ' '), $(tail -1 err)"
(ulimit -f 20; "$V" hash --backend cpu "$m/long.mp4" -o fs/h.txt) 2> err
rc=$?
[ $rc = 4 ] && grep -q 'fs/h.txt: cannot write' err && [ -z "$(ls -A fs)" ] &&
  pass "22.5 ulimit -f: hash -o exits 4 naming the file" || fail "22.5 hash -o: exit $rc, $(ls -A fs) $(tail -1 err)"
(ulimit -f 10; "$V" compare --backend cpu "$m/long.mp4" "$m/long.mp4" --csv fs/c.csv > /dev/null) 2> err
rc=$?
[ $rc = 4 ] && grep -q 'fs/c.csv: cannot write: File too large' err && [ -z "$(ls -A fs)" ] &&
  pass "22.5 ulimit -f: compare --csv exits 4 naming the file" || fail "22.5 compare --csv: exit $rc, $(ls -A fs) $(tail -1 err)"
mkdir -p fsin
cp "$m/long.mp4" fsin/a.mp4
cp "$in" fsin/b.mp4
(ulimit -f 300; "$V" batch fsin fsout --backend cpu --chain 'scale=w=32:h=24' --encoder ffv1 --duration 1 -q --report fs.jsonl) 2> err
rc=$?
(ulimit -f 300; "$V" batch fsin fsout2 --backend cpu --encoder ffv1 -q --report fs2.jsonl) 2> err2
rc2=$?
[ $rc = 0 ] && [ $rc2 = 4 ] && grep -q '"summary": true' fs2.jsonl && grep -q 'File too large' err2 &&
  [ "$(grep -c '"status": "failed"' fs2.jsonl)" = 2 ] && [ -z "$(ls -A fsout2 | grep '^\.')" ] &&
  pass "22.5 ulimit -f: the batch goes on past a file over the limit, reports each, leaves no .part or .claim" ||
  fail "22.5 batch: exits $rc/$rc2, $(grep -c status fs2.jsonl 2> /dev/null) lines, left $(ls -A fsout2 2> /dev/null | tr '\n' ' '), $(tail -1 err2)"

# ---- 22.6: an interrupted batch exits 130, whatever failed before ----
# One empty file (fails first), then many short ones: the stop mostly
# comes between two files, which used to leave the failure's code.
mkdir -p ib
: > ib/0-empty.mp4
for i in $(seq -w 1 60); do ln "$in" ib/f$i.mp4 2> /dev/null || cp "$in" ib/f$i.mp4; done
"$V" batch ib ibo --backend cpu --frames 1 --pipeline regression-hash -q --report ib.jsonl 2> err &
pid=$!
if wait_for '^f03\.framemd5$' ibo; then
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] && grep -q '"exit_code": 130' <(tail -1 ib.jsonl) && grep -q '1 failed' err &&
    pass "22.6 batch interrupted after a failure: exit 130, the summary says 130" ||
    fail "22.6 interrupted batch: exit $rc, $(tail -1 err), summary $(tail -1 ib.jsonl | grep -o '"exit_code": [0-9]*')"
else
  kill -9 $pid; wait $pid 2> /dev/null; fail "22.6: no output appeared"
fi

# ---- 22.7: the resume record is on disk before the output's rename ----
mkdir -p rin
cp "$in" rin/a.mp4
# (in a subshell: the shell's "Killed" notice goes with its stderr)
(VKCU_TEST_KILL_BEFORE_PUBLISH=1 "$V" batch rin rout --backend cpu --frames 3 -q; echo $? > rc.txt) 2> /dev/null
rc=$(cat rc.txt)
rec=$(ls -A rout | grep -c '\.settings$')
[ $rc = 137 ] && [ ! -e rout/a.mkv ] && [ "$rec" = 1 ] &&
  pass "22.7 killed between the record and the rename: the record is there, the output is not" ||
  fail "22.7 kill hook: exit $rc, $(ls -A rout 2> /dev/null | tr '\n' ' ')"
"$V" batch rin rout --backend cpu --frames 3 --resume 2> err
rc=$?
[ $rc = 0 ] && grep -q '1 done' err && [ -s rout/a.mkv ] && [ -z "$(leftovers rout)" ] &&
  "$V" batch rin rout --backend cpu --frames 3 --resume 2> err && grep -q '1 skipped' err &&
  pass "22.7 the next --resume redoes that file, then skips it as done" || fail "22.7 resume after the kill: exit $rc, $(cat err)"

# ---- 22.8: verify --update cannot be led out of its folder mid-run ----
mkdir -p up/sub outside
mkfifo up/clip.mkv
printf 'vkcu-manifest 1\n[case s]\ninput = clip.mkv\nbackend = cpu\nframes = 3\nhashes = sub/s.framemd5\n' > up/t.manifest
"$V" verify up/t.manifest --update > up.out 2> up.err &
pid=$!
# Until verify waits in open() on the FIFO (after it checked the hashes path).
for _ in $(seq 750); do
  grep -qx wait_for_partner /proc/$pid/task/*/wchan 2> /dev/null && break
  sleep 0.02
done
mv up/sub up/sub.old
ln -s "$w/outside" up/sub
cat "$m/trim.mkv" > up/clip.mkv
wait $pid
rc=$?
[ $rc != 0 ] && [ -z "$(ls -A outside)" ] && grep -q "leads outside" up.err &&
  pass "22.8 verify --update: a folder swapped for a link mid-run is not written through (exit $rc)" ||
  fail "22.8 verify --update swap: exit $rc, outside holds: $(ls -A outside | tr '\n' ' '), $(cat up.err up.out | head -2 | tr '\n' ' ')"

# ---- 22.10: write errors on standard output ----
bad=""
for c in "compare --backend cpu in.mp4 in.mp4 --frames 3" "verify m.manifest" "batch bin dry --dry-run" formats pipelines --help; do
  # shellcheck disable=SC2086
  "$V" $c > /dev/full 2> err
  rc=$?
  [ $rc = 4 ] && grep -q 'cannot write to standard output' err || bad="$bad [$c: exit $rc]"
done
[ -z "$bad" ] && pass "22.10 compare, verify, batch --dry-run, formats, pipelines, --help > /dev/full: exit 4 with a message" ||
  fail "22.10 /dev/full:$bad"
"$V" hash --backend cpu --format json "$m/long.mp4" 2> err | head -1 > /dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && [ ! -s err ] && pass "22.10 hash --format json | head -1: a quiet exit 0" ||
  fail "22.10 hash json | head: exit $rc, $(cat err)"
"$V" compare --backend cpu "$m/long.mp4" "$m/long.mp4" --csv - 2> /dev/null | head -1 > /dev/null
rc=${PIPESTATUS[0]}
mkdir -p many
for i in $(seq 1 30); do ln "$in" many/f$i.mp4 2> /dev/null || cp "$in" many/f$i.mp4; done
"$V" batch many manyo --backend cpu --frames 2 --pipeline regression-hash -q --report - 2> err | head -1 > /dev/null
rc2=${PIPESTATUS[0]}
[ "$rc" = 0 ] && [ "$rc2" = 0 ] && grep -q '^batch: 30 done' err && [ ! -e ./-.csv ] &&
  pass "22.10 compare --csv - | head and batch --report - | head: a quiet exit 0, the batch finished" ||
  fail "22.10 | head: compare exit $rc, batch exit $rc2, $(tail -1 err)"

# ---- 22.11: an output that is a dangling symbolic link ----
ln -s nowhere/x.mkv dangling.mkv
runs_refused "22.11 a dangling link as output: refused before any work, saying what it is" 4 \
  "dangling.mkv: is a symbolic link to nowhere/x.mkv, which does not exist" in.mp4 -- "$V" --backend cpu in.mp4 -o dangling.mkv
[ -L dangling.mkv ] && [ -z "$(leftovers .)" ] && pass "22.11 the link stays, no temporary" || fail "22.11 left: $(leftovers .)"

# ---- 22.12: duplicate case names, far apart (the check is a hash table now; bench-verify.sh times it) ----
{
  echo "vkcu-manifest 1"
  for i in $(seq 1 3000); do printf '[case c%d]\ninput = in.mp4\n' "$i"; done
  printf '[case c17]\ninput = in.mp4\n'
} > dup.manifest
expect "22.12 a duplicate case name 3000 cases later is found with both lines" 3 \
  "dup.manifest:6002: case 'c17' already defined on line 34" -- "$V" verify dup.manifest

# ---- 22.13: compare pairs frames at any frame rate ----
"$V" --backend cpu -q in.mp4 -o t.y4m --frames 3 2> /dev/null
python3 - t.y4m fast.y4m << 'EOF'
import sys
d = open(sys.argv[1], 'rb').read()
i = d.index(b'\n')
head = b' '.join(b'F1000000:1' if p.startswith(b'F') else p for p in d[:i].split(b' '))
open(sys.argv[2], 'wb').write(head + d[i:])
EOF
"$V" compare --backend cpu fast.y4m fast.y4m > out 2> err
rc=$?
[ $rc = 0 ] && grep -q 'IDENTICAL: 3 frames' out && pass "22.13 compare X X at F1000000:1: identical, 3 frames paired" ||
  fail "22.13 compare at 1e6 fps: exit $rc, $(tail -1 out)"

# ---- 22.14: messages and small gaps ----
python3 - t.y4m << 'EOF'
import sys
d = open(sys.argv[1], 'rb').read()
i = d.index(b'\n')
for name, w, h in (('w0', 0, 240), ('huge', 100000, 100000), ('neg', -5, 240)):
    head = b' '.join((b'W%d' % w) if p.startswith(b'W') else (b'H%d' % h) if p.startswith(b'H') else p
                     for p in d[:i].split(b' '))
    open('bad-%s.y4m' % name, 'wb').write(head + d[i:])
EOF
bad=""
for f in bad-w0 bad-huge bad-neg; do
  "$V" hash --backend cpu $f.y4m > /dev/null 2> err
  rc=$?
  [ $rc = 3 ] && grep -q "$f.y4m: the YUV4MPEG header's picture size is invalid" err || bad="$bad [$f: $rc $(cat err)]"
done
[ -z "$bad" ] && pass "22.14 a bogus y4m size: exit 3, the header's size is invalid" || fail "22.14 y4m size:$bad"
"$V" hash --backend cpu - < in.mp4 > /dev/null 2> err
rc=$?
[ $rc = 3 ] && grep -q "index (moov) at the end.*read the file from disk" err &&
  pass "22.14 an MP4 on a pipe: says its index is at the end, read it from disk or faststart it" ||
  fail "22.14 piped MP4: exit $rc, $(cat err)"
mkfifo ff.nut
for verb in transcode hash; do
  c="--backend cpu -q $m/long.mp4 -o ff.nut"
  [ $verb = hash ] && c="hash --backend cpu $m/long.mp4 -o ff.nut"
  # shellcheck disable=SC2086
  "$V" $c 2> err &
  pid=$!
  for _ in $(seq 750); do # until it waits in open(): nobody reads the FIFO
    grep -qx wait_for_partner /proc/$pid/task/*/wchan 2> /dev/null && break
    sleep 0.02
  done
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] && grep -q 'interrupted' err && pass "22.14 Ctrl-C while blocked on an output FIFO: exit 130 ($verb)" ||
    fail "22.14 FIFO Ctrl-C ($c): exit $rc, $(cat err)"
done
mkdir -p rin2
cp "$in" rin2/a.mp4
runs_refused "22.14 a new report inside the input folder: refused" 4 "is inside the input folder" rin2/a.mp4 -- \
  "$V" batch rin2 rout2 --backend cpu --pipeline regression-hash --report rin2/r.jsonl
[ ! -e rin2/r.jsonl ] && [ ! -e rout2/a.framemd5 ] && pass "22.14 ... and nothing was written" || fail "22.14 report in input: $(ls rin2 rout2)"
"$V" batch rin2 rout2 --backend cpu --pipeline regression-hash --report rin2/.r.jsonl -q 2> err &&
  "$V" batch rin2 rout2 --backend cpu --pipeline regression-hash --report rin2/.r.jsonl --resume -q 2> err &&
  pass "22.14 a hidden report inside the input folder is taken, and the next run takes it again" ||
  fail "22.14 hidden report in input: $(cat err)"
"$V" hash --backend cpu in.mp4 -o ok.framemd5 2> /dev/null
sed 's/^0,          2,/0, 99999999999999999999999,/' ok.framemd5 > ovf.framemd5
python3 -c 'import sys
d = open("ok.framemd5", "rb").read().split(b"\n"); d[8] = d[8][:10] + b"\0" + d[8][10:]; open("nul.framemd5", "wb").write(b"\n".join(d))'
expect "22.14 hash list: an overflowing dts is refused, naming the line" 3 \
  "ovf.framemd5:[0-9]+: a number out of range" -- "$V" compare ovf.framemd5 ok.framemd5
expect "22.14 hash list: a NUL byte is refused, naming the line" 3 "nul.framemd5:9: a frame hash line with a NUL byte" -- \
  "$V" compare nul.framemd5 ok.framemd5

# ---- 28.2: --resume carries on its own report without -y; -y keeps its meaning for outputs ----
mkdir -p r2in
cp "$in" r2in/a.mp4
cp "$in" r2in/b.mp4
"$V" batch r2in r2out --backend cpu --frames 3 --crf 30 -q --report r2.jsonl 2> /dev/null
asum=$(sum r2out/a.mkv)
"$V" batch r2in r2out --backend cpu --frames 3 --crf 30 --resume -q --report r2.jsonl 2> err
rc=$?
[ $rc = 0 ] && [ "$(grep -c '"status": "skipped"' r2.jsonl)" = 2 ] && grep -q '"summary": true' r2.jsonl &&
  pass "28.2 --resume with the same --report: no -y needed, the report says what this run did" ||
  fail "28.2 --resume --report: exit $rc, $(tail -1 err)"
"$V" batch r2in r2out --backend cpu --frames 3 --crf 20 --resume -q --report r2.jsonl 2> err
rc=$?
[ $rc = 4 ] && [ "$(sum r2out/a.mkv)" = "$asum" ] && grep -q "exists, but it was made with other settings" err &&
  [ "$(grep -c '"status": "failed"' r2.jsonl)" = 2 ] &&
  pass "28.2 --resume --report without -y still refuses outputs made with other settings" ||
  fail "28.2 other settings: exit $rc, $(tail -1 err)"
echo notes > notes.txt
runs_refused "28.2 --resume does not replace a file that is not a batch report" 4 "notes.txt: already exists" notes.txt -- \
  "$V" batch r2in r2out --backend cpu --frames 3 --crf 30 --resume -q --report notes.txt

# ---- 28.4: two signals a few ms apart (timeout -s INT) are one interruption ----
mkdir -p t4in
for i in 1 2 3; do cp "$in" t4in/f$i.mp4; done
"$V" batch t4in t4out --backend cpu --pipeline ./slow.pipe -q --report t4.jsonl 2> err &
pid=$!
if wait_for '\.part' t4out; then
  two_signals $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] && grep -q 'interrupted; partial output removed' err && grep -q '"summary": true' t4.jsonl &&
    [ -z "$(leftovers t4out)" ] &&
    pass "28.4 SIGINT twice 3 ms apart: the clean stop (exit 130, the interrupted line, the report's summary)" ||
    fail "28.4 two signals: exit $rc, stderr: $(tr '\n' ' ' < err), summary: $(grep -c summary t4.jsonl 2> /dev/null)"
else
  kill -9 $pid; wait $pid 2> /dev/null; fail "28.4: no temporary output appeared"
fi
rm -rf t4out t4.jsonl
timeout --preserve-status -s INT 1.5 "$V" batch t4in t4out --backend cpu --pipeline ./slow.pipe -q --report t4.jsonl 2> err
rc=$?
[ $rc = 130 ] && grep -q 'interrupted' err && grep -q '"summary": true' t4.jsonl &&
  pass "28.4 timeout -s INT: the clean stop with its summary" || fail "28.4 timeout -s INT: exit $rc, $(tr '\n' ' ' < err)"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A user's files are sacred, third pass (issue 33, items 1-7): a batch
# report never replaces the preset the batch reads; standard input and
# standard output redirected from or onto an input are that input; an
# output folder that is the input folder under a bind mount is the input
# folder; verify --update never loses lines added to a manifest while it
# ran, nor writes two different contents into one hashes file; and a
# resumed batch tells an input rewritten within the same second, or
# replaced by another file, from the one it processed.
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
# runs_refused NAME CODE PATTERN FILE -- command: the exit code, a stderr
# line matching PATTERN, and FILE keeps its bytes.
runs_refused() {
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
# from FILE command...: the command with standard input read from FILE.
from() {
  local f=$1; shift
  "$@" < "$f"
}
# onto FILE command...: the command with standard output appended to FILE.
onto() {
  local f=$1; shift
  "$@" >> "$f"
}
w=$TMP/w
mkdir -p "$w"
cd "$w" || exit 1
cp "$in" in.mp4
"$V" --backend cpu -q in.mp4 -o clip.mkv --frames 10 2> /dev/null
"$V" --backend cpu -q in.mp4 -o clip.y4m --frames 3 2> /dev/null
# fresh NAME.EXT: a new copy of clip.EXT (each check on its own file: one
# that a build without the fix damages leaves the next checks theirs)
fresh() { rm -f "$1"; cp "clip.${1##*.}" "$1"; }

# ---- 33.1: a batch's report never replaces the preset it reads ----
mkdir -p b1
cp in.mp4 b1/a.mp4
printf 'description mine\nop copy\n' > p.pipe
mkdir -p presets
cp p.pipe presets/mine.pipe
runs_refused "33.1 batch --report the --pipeline preset -y: refused" 4 "p.pipe: is the same file as .*an input of this job" \
  p.pipe -- "$V" batch b1 b1out --backend cpu --frames 1 --pipeline ./p.pipe --report p.pipe -y
[ -z "$(ls -A b1out 2> /dev/null)" ] && pass "33.1 ... before any file ran" || fail "33.1 the batch ran: $(ls -A b1out | tr '\n' ' ')"
runs_refused "33.1 batch --report the preset found through VKCU_PIPELINES -y: refused" 4 \
  "presets/mine.pipe: is the same file as .*an input of this job" presets/mine.pipe -- \
  env VKCU_PIPELINES="$w/presets" "$V" batch b1 b1out2 --backend cpu --frames 1 --pipeline mine --report presets/mine.pipe -y

# ---- 33.2: standard input redirected from a file is that input ----
fresh in.mkv
runs_refused "33.2 - -o the file standard input reads, -y: refused" 4 \
  "in.mkv: is the same file as standard input, an input of this job" in.mkv -- \
  from in.mkv "$V" --backend cpu - -o in.mkv -y
fresh in.mkv
runs_refused "33.2 hash - -o the file standard input reads, -y: refused" 4 \
  "in.mkv: is the same file as standard input, an input of this job" in.mkv -- \
  from in.mkv "$V" hash --backend cpu - -o in.mkv -y
fresh in.mkv
ln in.mkv link.mkv
runs_refused "33.2 - -o a hard link of the file standard input reads, -y: refused" 4 \
  "link.mkv: is the same file as standard input" in.mkv -- from in.mkv "$V" --backend cpu - -o link.mkv -y
fresh in.mkv
from in.mkv "$V" hash --backend cpu - -o other.framemd5 2> err && [ -s other.framemd5 ] &&
  pass "33.2 hash - < in.mkv -o another file: written" || fail "33.2 hash - to another file: $(cat err)"

# ---- 33.3: standard output appended onto an input is that input ----
fresh app.mkv
runs_refused "33.3 app.mkv -o - >> app.mkv: refused" 4 "standard output is the same file as app.mkv, an input of this job" \
  app.mkv -- onto app.mkv "$V" --backend cpu app.mkv -o - -f matroska
fresh app.y4m
runs_refused "33.3 app.y4m -o - >> app.y4m: refused" 4 "standard output is the same file as app.y4m" app.y4m -- \
  onto app.y4m "$V" --backend cpu app.y4m -o - -f yuv4mpegpipe
fresh app.mkv
runs_refused "33.3 hash app.mkv >> app.mkv (the hashes on standard output): refused" 4 \
  "standard output is the same file as app.mkv" app.mkv -- onto app.mkv "$V" hash --backend cpu app.mkv
fresh app.mkv
runs_refused "33.3 hash app.mkv -o - >> app.mkv: refused" 4 "standard output is the same file as app.mkv" app.mkv -- \
  onto app.mkv "$V" hash --backend cpu app.mkv -o -
fresh app.mkv
runs_refused "33.3 -o /dev/stdout >> app.mkv: refused as before, with the same exit code" 4 \
  "is the same file as app.mkv, an input" app.mkv -- onto app.mkv "$V" --backend cpu app.mkv -o /dev/stdout -f matroska
mkdir -p b3
cp in.mp4 b3/a.mp4
runs_refused "33.3 batch --report - >> one of its inputs: refused" 4 "standard output is the same file as b3/a.mp4" b3/a.mp4 -- \
  onto b3/a.mp4 "$V" batch b3 b3out --backend cpu --frames 1 --report -
fresh app.mkv
"$V" --backend cpu app.mkv -o - -f matroska --frames 3 > piped.mkv 2> err && [ -s piped.mkv ] &&
  pass "33.3 -o - > another file: written" || fail "33.3 -o - to another file: $(cat err)"

# ---- 33.4: an output folder that is the input folder through a bind mount ----
mkdir -p b4 bind4
cp in.mp4 b4/z.mp4
echo "the user's own z.mkv" > b4/z.mkv
if mount --bind b4 bind4 2> mount.err; then
  mounts+=("$w/bind4")
  runs_refused "33.4 batch IN BIND-MOUNT-OF-IN -y: refused, the same folder" 2 \
    "bind4: the output folder is the input folder" b4/z.mkv -- \
    "$V" batch b4 bind4 --backend cpu --frames 1 --include '*.mp4' -y
  [ -z "$(ls -A b4 | grep -F .vkcu-)" ] && pass "33.4 ... and nothing was written into the input folder" ||
    fail "33.4 written into the input folder: $(ls -A b4 | tr '\n' ' ')"
  runs_refused "33.4 --report inside the input folder through its bind mount: refused" 4 "is inside the input folder" \
    b4/z.mp4 -- "$V" batch b4 b4out --backend cpu --frames 1 --exclude z.mkv --report bind4/r.jsonl
  [ ! -e b4/r.jsonl ] && pass "33.4 ... and no report appeared in the input folder" || fail "33.4 report written into b4"
  umount bind4 && mounts=()
else
  skip "33.4 bind mount of the input folder: mount --bind is not permitted here ($(head -1 mount.err))"
fi

# ---- 33.5: verify --update never loses lines added to the manifest meanwhile ----
# The case reads a FIFO: the writer's open returns once verify opens it,
# long after the manifest was loaded; the line goes in, then the clip, and
# the case ends only after that, so the change always falls inside the run.
mkdir -p v5
mkfifo v5/clip.mkv
printf 'vkcu-manifest 1\n[case live]\ninput = clip.mkv\nbackend = cpu\nframes = 3\n' > v5/m.manifest
"$V" verify v5/m.manifest --update > v5.out 2> v5.err &
pid=$!
(
  exec 3> v5/clip.mkv
  echo '# added by hand while verify ran' >> v5/m.manifest
  cat "$m/trim.mkv" >&3
) &
writer=$!
wait $pid
rc=$?
kill $writer 2> /dev/null
wait $writer 2> /dev/null
expected=$(printf 'vkcu-manifest 1\n[case live]\ninput = clip.mkv\nbackend = cpu\nframes = 3\n# added by hand while verify ran\n')
[ $rc = 4 ] && grep -q 'v5/m.manifest: changed while the cases ran' v5.err && [ "$(cat v5/m.manifest)" = "$expected" ] &&
  pass "33.5 verify --update: a manifest changed while the case ran is not rewritten, the added line stays (exit 4)" ||
  fail "33.5 manifest changed mid-run: exit $rc, $(tail -1 v5.err), manifest now: $(tr '\n' '|' < v5/m.manifest)"

# ---- 33.6: two cases, one hashes file, different frames: refused before writing ----
cat > v6.manifest << EOF
vkcu-manifest 1
[case plain]
input = in.mp4
backend = cpu
frames = 3
hashes = same.framemd5

[case scaled]
input = in.mp4
backend = cpu
frames = 3
chain = scale=w=32:h=24
hashes = same.framemd5

[case inline]
input = in.mp4
backend = cpu
frames = 2
EOF
v6sum=$(sum v6.manifest)
"$V" verify v6.manifest --update > out 2> err
rc=$?
[ $rc = 2 ] && grep -q "same.framemd5: cases 'plain' (v6.manifest:2) and 'scaled' (v6.manifest:8) both take their expected hashes from it" err &&
  [ ! -e same.framemd5 ] && [ "$(sum v6.manifest)" = "$v6sum" ] &&
  pass "33.6 verify --update, two cases sharing a hashes file with different frames: refused naming both (exit 2), nothing written" ||
  fail "33.6 shared hashes file: exit $rc, $(tail -1 err), $(grep -c UPDATED out) UPDATED, file $( [ -e same.framemd5 ] && echo written || echo absent), manifest $( [ "$(sum v6.manifest)" = "$v6sum" ] && echo kept || echo rewritten)"
"$V" verify v6.manifest --update --case plain --case inline > /dev/null 2>&1
plainsum=$(sum same.framemd5)
for j in 1 2; do
  runs_refused "33.6 ... also over an existing file, -j$j: the file keeps the first case's frames" 2 \
    "same.framemd5: cases 'plain' .* and 'scaled' .* both take" same.framemd5 -- "$V" verify v6.manifest --update -j$j
done
sed 's/^chain = scale.*/chain = copy/' v6.manifest > v6same.manifest
"$V" verify v6same.manifest --update > out 2> err
rc=$?
"$V" verify v6same.manifest > out2 2>&1
rc2=$?
[ $rc = 0 ] && [ $rc2 = 0 ] && [ "$(tail -1 out2)" = "3 passed, 0 failed" ] && [ "$(sum same.framemd5)" = "$plainsum" ] &&
  pass "33.6 two cases sharing a hashes file with the same frames: updated once, both pass" ||
  fail "33.6 shared file, same frames: exits $rc/$rc2, $(tail -1 err) $(tail -1 out2)"

# ---- 33.7: --resume tells an input rewritten within the same second, or replaced ----
mkdir -p r7
cp clip.y4m r7/a.y4m
"$V" batch r7 r7out --backend cpu -q 2> err || fail "33.7 first run: $(cat err)"
outsum=$(sum r7out/a.mkv)
# rewrite_in_place FILE: one byte of the last frame changed, same size, same second, another nanosecond
ns_ok=$(python3 - r7/a.y4m << 'EOF'
import os, sys
p = sys.argv[1]
st = os.stat(p)
with open(p, 'r+b') as f:
    f.seek(st.st_size - 100)
    b = f.read(1)
    f.seek(st.st_size - 100)
    f.write(bytes([b[0] ^ 0x55]))
sec, nsec = divmod(st.st_mtime_ns, 10**9)
want = sec * 10**9 + (nsec + 500000000) % 10**9
os.utime(p, ns=(st.st_atime_ns, want))
now = os.stat(p)
print('yes' if now.st_mtime_ns == want and now.st_size == st.st_size and now.st_mtime_ns != st.st_mtime_ns else 'no')
EOF
)
if [ "$ns_ok" = yes ]; then
  runs_refused "33.7 --resume after the input was rewritten with the same size in the same second: not taken as done" 4 \
    "r7out/a.mkv: exists, but it was made with other settings \(input-mtime-nsec" r7out/a.mkv -- \
    "$V" batch r7 r7out --backend cpu -q --resume
  "$V" batch r7 r7out --backend cpu -q --resume -y 2> err && grep -q '1 done' err && [ "$(sum r7out/a.mkv)" != "$outsum" ] &&
    pass "33.7 ... and --resume -y redoes it" || fail "33.7 --resume -y: $(cat err)"
else
  skip "33.7 same-second rewrite: this filesystem keeps no nanoseconds in modification times"
fi
outsum=$(sum r7out/a.mkv)
python3 - r7/a.y4m << 'EOF'
import os, shutil, sys
p = sys.argv[1]
st = os.stat(p)
shutil.copyfile(p, p + '.new')
with open(p + '.new', 'r+b') as f:
    f.seek(st.st_size - 200)
    b = f.read(1)
    f.seek(st.st_size - 200)
    f.write(bytes([b[0] ^ 0x55]))
os.utime(p + '.new', ns=(st.st_atime_ns, st.st_mtime_ns))
os.rename(p + '.new', p)
EOF
runs_refused "33.7 --resume after the input was replaced by another file of the same size and time: not taken as done" 4 \
  "r7out/a.mkv: exists, but it was made with other settings \(input-inode" r7out/a.mkv -- \
  "$V" batch r7 r7out --backend cpu -q --resume
# A record of an earlier vkcu has neither key: read on what it holds.
"$V" batch r7 r7out --backend cpu -q --resume -y 2> /dev/null
rec=$(ls -A r7out/.vkcu-*.settings)
grep -q '^input-mtime-nsec=' "$rec" && grep -q '^input-inode=' "$rec" && sed -i '/^input-mtime-nsec=/d; /^input-inode=/d' "$rec"
"$V" batch r7 r7out --backend cpu -q --resume 2> err
rc=$?
[ $rc = 0 ] && grep -q '1 skipped' err && pass "33.7 a record without nanoseconds and inode (vkcu before issue 33) still reads as done" ||
  fail "33.7 old record: exit $rc, $(cat err)"

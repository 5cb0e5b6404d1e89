#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Errors and exit codes, third pass (issue 33, items 13-17): each check is
# named after its item and failed before its fix.
#   33.13 an operator output larger than FFmpeg's frames: exit 2 naming the
#         limit, before anything is written; the largest size that fits works;
#   33.14 an IVF packet header claiming 4 GB: the frames before it kept (as
#         ffmpeg keeps them), the damage named; --strict: exit 3;
#   33.15 hash lists of equal counts whose timestamps repeat, go backwards or
#         differ: the verdict says which, not "frame count differs";
#   33.16 every text verb on a closed pipe: exit 0, quietly, every run (the
#         reader is gone before the first write, or after one byte); on
#         /dev/full: exit 4 with one line, probe and `help VERB` included;
#   33.17 messages that name the line or field at fault: '#tb', a UTF-8 BOM
#         (accepted), MD5s of 27 and 34 digits, y4m headers, out of inodes,
#         a report on a read-only mount (nothing made), Python start=nan.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
m=$MEDIA
cd "$TMP" || exit 1
mounts=()
cleanup() {
  local d
  for d in "${mounts[@]}"; do umount "$d" 2> /dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# ---- 33.13 ----
# expect_nothing NAME CHAIN: exit 2 naming FFmpeg's limit and the largest sizes; nothing on standard output, no file.
expect_too_large() {
  local name=$1 chain=$2 want=$3
  "$VKCU" hash --backend cpu --frames 1 --chain "$chain" "$m/h264-aac.mp4" > big.out 2> big.err
  local rc=$? bytes
  bytes=$(wc -c < big.out)
  "$VKCU" hash --backend cpu --frames 1 --chain "$chain" "$m/h264-aac.mp4" -o big.framemd5 2> /dev/null
  if [ "$rc" = 2 ] && [ "$bytes" = 0 ] && [ ! -e big.framemd5 ] && ! ls -A | grep -q '\.part' &&
     grep -q "larger than FFmpeg's frames can be ((8 x width + 1024) x (height + 128) must stay below 2^31 - 1" big.err &&
     grep -qF "$want" big.err; then
    pass "33.13 $name: exit 2 naming FFmpeg's frame size limit, nothing written"
  else
    fail "33.13 $name: exit $rc, $bytes bytes on standard output, $(ls big.framemd5 2> /dev/null) $(tail -1 big.err)"
  fi
}
expect_too_large "scale=w=16384:h=16384 (inside the keys' ranges)" scale=w=16384:h=16384 \
  "at width 16384 the height can be at most 16128, at height 16384 the width at most 16128"
expect_too_large "pad=w=32768:h=8192" pad=w=32768:h=8192 \
  "at width 32768 the height can be at most 8032, at height 8192 the width at most 32135"
# The largest canvas the message names works: one frame of 32768x8032 yuv420p.
"$VKCU" hash --backend cpu --frames 1 --chain pad=w=32768:h=8033 "$m/h264-aac.mp4" > /dev/null 2>&1
over=$?
if [ "$over" = 2 ] && "$VKCU" hash --backend cpu --frames 1 --chain pad=w=32768:h=8032 "$m/h264-aac.mp4" > pad.out 2> pad.err &&
   [ "$(frames pad.out | awk -F', *' '{print $5}')" = $((32768 * 8032 * 3 / 2)) ]; then
  pass "33.13 pad=w=32768:h=8032, the largest the limit allows, works (8033 is refused)"
else
  fail "33.13 pad at the limit: 8033 high: exit $over, expected 2; 8032 high: $(tail -1 pad.err 2> /dev/null)"
fi

# ---- 33.14 ----
# av1.ivf with the 4th packet's header claiming 0xFFFFFFF0 bytes.
python3 - "$m/av1.ivf" bad.ivf <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
pos = struct.unpack('<H', d[6:8])[0]
for _ in range(3):
    pos += 12 + struct.unpack('<I', d[pos:pos + 4])[0]
d[pos:pos + 4] = struct.pack('<I', 0xFFFFFFF0)
open(sys.argv[2], 'wb').write(d)
EOF
"$FFMPEG" -v quiet -i bad.ivf -f framemd5 - | frames /dev/stdin > ff.frames
"$VKCU" hash --backend cpu bad.ivf > ivf.out 2> ivf.err
rc=$?
frames ivf.out > ivf.frames
if [ "$rc" = 0 ] && [ "$(wc -l < ivf.frames)" = 3 ] && cmp -s ff.frames ivf.frames &&
   grep -q "bad.ivf: damaged container data after the video packet at 0.080 s (the ivf demuxer cannot read on: .*): the stream ends there, the frames before it are kept" ivf.err; then
  pass "33.14 IVF packet header claiming 4 GB: the 3 frames before it hashed as ffmpeg's, the damage named, exit 0"
else
  fail "33.14 damaged IVF: exit $rc, $(wc -l < ivf.frames) frames (ffmpeg $(wc -l < ff.frames)): $(tail -1 ivf.err)"
fi
expect "33.14 damaged IVF with --strict: exit 3 naming where" 3 \
  "bad.ivf: damaged container data after the video packet at 0.080 s \(the ivf demuxer" -- \
  "$VKCU" hash --backend cpu --strict bad.ivf

# ---- 33.15 ----
"$VKCU" hash --backend cpu --frames 5 "$m/h264-aac.mp4" -o a.framemd5 2> /dev/null
python3 - <<'EOF'
lines = open('a.framemd5').read().splitlines(True)
head = [l for l in lines if l.startswith('#')]
fr = [l for l in lines if not l.startswith('#')]
def ts(line, n):  # the line with its dts and pts set to n
    f = line.split(',')
    f[1] = f[2] = ' %10d' % n
    return ','.join(f)
reordered = fr[:]; reordered[1], reordered[2] = fr[2], fr[1]
repeated = fr[:]; repeated[3] = ts(fr[3], 2)
missing = fr[:]; missing[4] = ts(fr[4], 5)
for name, body in (('reordered', reordered), ('repeated', repeated), ('missing', missing)):
    open(name + '.framemd5', 'w').write(''.join(head + body))
EOF
verdict_has() { # NAME LIST TEXT: compare a.framemd5 LIST: exit 6, a verdict with TEXT and no "frame count differs"
  "$VKCU" compare a.framemd5 "$2" > cmp.out 2> cmp.err
  local rc=$? v
  v=$(grep '^result:' cmp.out)
  if [ "$rc" = 6 ] && grep -qF "result: MISMATCH: the timestamps differ (A and B have 5 frames each, but 1 only in A, 1 only in B)" cmp.out &&
     grep -qF "$3" <<< "$v" && ! grep -q 'frame count differs' cmp.out cmp.err; then
    pass "33.15 $1: $3"
  else
    fail "33.15 $1: exit $rc, $v"
  fi
}
verdict_has "reordered timestamps, equal counts" reordered.framemd5 \
  "B frame 2 (pts 0.040 s) comes after frame 1 (pts 0.080 s): out of order"
verdict_has "a repeated timestamp, equal counts" repeated.framemd5 \
  "B frame 3 repeats the timestamp of frame 2 (pts 0.080 s)"
verdict_has "a timestamp missing from B, equal counts" missing.framemd5 \
  "first unpaired: A frame 4 (pts 0.160 s) has no partner in B"

# ---- 33.16 ----
# closed_pipe ARGS...: the command's standard output is a pipe whose reader
# is closed before it starts (every write fails), then 20 runs whose reader
# leaves after one byte (`| head -c 1`); python restores SIGPIPE to its
# default for the child, whatever this shell inherited. Prints the failures.
closed_pipe() {
  python3 - "$@" <<'EOF'
import os, subprocess, sys
cmd, bad = sys.argv[1:], []
r, w = os.pipe()
os.close(r)
p = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE)
os.close(w)
if p.returncode != 0 or p.stderr:
    bad.append('reader gone before: exit %d %s' % (p.returncode, p.stderr.decode(errors='replace').strip()))
for i in range(20):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(1)
    p.stdout.close()
    err = p.stderr.read()
    rc = p.wait()
    if rc != 0 or err:
        bad.append('| head -c 1, run %d: exit %d %s' % (i + 1, rc, err.decode(errors='replace').strip()))
        break
print('; '.join(bad))
EOF
}
for args in "formats" "pipelines" "pipelines crop" "--help" "help" "help batch" "hash --help" "--version" \
            "--generate man" "hash --backend cpu --frames 3 --whole $m/h264-aac.mp4"; do
  # shellcheck disable=SC2086
  bad=$(closed_pipe "$VKCU" $args)
  label=${args/$m\//}
  [ -z "$bad" ] && pass "33.16 vkcu $label on a closed pipe: exit 0, nothing said (21 runs)" ||
    fail "33.16 vkcu $label on a closed pipe: $bad"
done

cp a.framemd5 ok.framemd5
printf 'vkcu-manifest 1\n[case one]\ninput = h264-aac.mp4\nhashes = ok.framemd5\nframes = 5\n' > ok.manifest
ln -s "$m/h264-aac.mp4" h264-aac.mp4
bad= n=0
for args in "probe" "help batch" "formats" "pipelines" "--help" "--version" \
            "hash --backend cpu --frames 3 h264-aac.mp4" "hash --backend cpu --frames 3 --whole h264-aac.mp4" \
            "--backend cpu --frames 3 h264-aac.mp4 -o - -f nut" "compare -q a.framemd5 ok.framemd5" \
            "verify ok.manifest --backend cpu"; do
  # shellcheck disable=SC2086
  "$VKCU" $args > /dev/full 2> full.err
  rc=$?
  n=$((n + 1))
  [ "$rc" = 4 ] && [ "$(grep -c 'error' full.err)" = 1 ] && grep -qE "cannot write|write error" full.err ||
    bad="$bad; vkcu $args: exit $rc: $(tr '\n' ' ' < full.err)"
done
[ -z "$bad" ] && pass "33.16 every verb > /dev/full: exit 4 with one line ($n commands, probe and help batch included)" ||
  fail "33.16 > /dev/full:$bad"

# ---- 33.17 ----
sed 's|^#tb 0: .*|#tb 0: 1/0|' a.framemd5 > tb.framemd5
expect "33.17 an invalid '#tb' line is named" 3 \
  "tb.framemd5:5: the '#tb 0:' line: '1/0' is not a time base" -- "$VKCU" compare tb.framemd5 a.framemd5
printf '\xEF\xBB\xBF' | cat - a.framemd5 > bom.framemd5
if "$VKCU" compare bom.framemd5 a.framemd5 > bom.out 2> bom.err && grep -q '^result: IDENTICAL: 5 frames$' bom.out &&
   cat bom.framemd5 | "$VKCU" compare /dev/stdin a.framemd5 > bom.out 2> bom.err &&
   grep -q '^result: IDENTICAL: 5 frames$' bom.out; then
  pass "33.17 a framemd5 with a UTF-8 BOM is read (file and pipe)"
else
  fail "33.17 framemd5 with a BOM: $(tail -1 bom.err)"
fi
printf '\xEF\xBB\xBF' | cat - ok.manifest > bom.manifest
if "$VKCU" verify bom.manifest --backend cpu > bomv.out 2> bomv.err && grep -q '^PASS one' bomv.out; then
  pass "33.17 a manifest with a UTF-8 BOM is read"
else
  fail "33.17 manifest with a BOM: $(tail -1 bomv.err)"
fi
for n in 27 34; do
  awk -v n=$n -F', *' 'BEGIN{OFS=", "} /^#/ {print; next} {k++} k==3 {h=$6 $6; $6=substr(h, 1, n)} {print}' \
    a.framemd5 > h$n.framemd5
  expect "33.17 an MD5 of $n hex digits is refused, naming the line" 3 \
    "h$n.framemd5:13: MD5 hashes have 32 hex digits, this one $n" -- "$VKCU" compare h$n.framemd5 a.framemd5
done

y4m() { # HEADER FILE: two 16x16 frames
  python3 -c 'import sys; open(sys.argv[2], "wb").write(sys.argv[1].encode() + b"\n" + (b"FRAME\n" + bytes(384)) * 2)' "$1" "$2"
}
y4m 'YUV4MPEG2 W16 H16 F25:1 Ip A1:1 C420jpeg' good.y4m
y4m 'YUV4MPEG2 W16 H16 F25:1 Ix A1:1 C420jpeg' inter.y4m
y4m 'YUV4MPEG2 W16 H16 F25:1 Im A1:1 C420jpeg' mixed.y4m
y4m 'YUV4MPEG2 W16 H16 F25:1 Ip A1:1 Cpurple' colour.y4m
y4m "YUV4MPEG2 W16 H16 F25:1 Ip A1:1 C420jpeg X$(printf 'a%.0s' $(seq 130))" long.y4m
if "$VKCU" hash --backend cpu good.y4m > /dev/null 2>&1; then
  expect "33.17 y4m header: a bad interlacing field is named" 3 \
    "inter.y4m: the YUV4MPEG header's interlacing field 'Ix' is invalid" -- "$VKCU" hash --backend cpu inter.y4m
  expect "33.17 y4m header: mixed interlacing is named" 3 \
    "mixed.y4m: the YUV4MPEG header's interlacing field 'Im' is for mixed progressive and interlaced frames" -- \
    "$VKCU" hash --backend cpu mixed.y4m
  expect "33.17 y4m header: an unknown colour space is named" 3 \
    "colour.y4m: the YUV4MPEG header's colour space 'Cpurple' is not one FFmpeg reads" -- \
    "$VKCU" hash --backend cpu colour.y4m
  expect "33.17 y4m header: a header line too long is named" 3 \
    "long.y4m: the YUV4MPEG header line is longer than the 127 bytes FFmpeg reads" -- "$VKCU" hash --backend cpu long.y4m
else
  fail "33.17 y4m: the good header does not read"
fi

# Out of inodes: a tmpfs of 16 inodes, filled to leave k free for k = 0..4;
# whichever file the batch cannot create (claim, output, its settings
# record), the line names the output it processes.
mkdir -p in1 mnt ro && cp "$m/h264-aac.mp4" in1/a.mp4
if mount -t tmpfs -o size=16m,nr_inodes=16 tmpfs mnt 2> mount.err; then
  mounts+=("$TMP/mnt")
  bad= record=
  for keep in 0 1 2 3 4; do
    rm -rf mnt/* mnt/.[!.]* && mkdir mnt/out
    i=0
    while [ "$(df --output=iavail mnt | tail -1)" -gt "$keep" ]; do : > mnt/fill$i; i=$((i + 1)); done
    "$VKCU" batch in1 mnt/out --backend cpu --frames 2 -q > /dev/null 2> ino.err
    rc=$?
    [ "$rc" = 0 ] && continue
    line=$(grep 'error' ino.err | head -1)
    case "$line" in
      "vkcu: error: $TMP/mnt/out/a.mkv: "*|"vkcu: error: mnt/out/a.mkv: "*) ;;
      *) bad="$bad; $keep inodes free: exit $rc: $line" ;;
    esac
    grep -q 'a.mkv: cannot write the record of its settings beside it (.vkcu-[0-9a-f]*.settings, read by a resumed batch): .*No space left' ino.err && record=1
  done
  [ -z "$bad" ] && [ -n "$record" ] &&
    pass "33.17 out of inodes: the batch names the output it processes (its settings record too)" ||
    fail "33.17 out of inodes:${bad:- no run failed at the settings record}"
else
  skip "33.17 out of inodes: cannot mount a tmpfs here ($(head -1 mount.err))"
fi
# A report on a read-only mount, or in a missing folder: nothing is made, the new output folder neither.
if mount -t tmpfs -o size=1m,ro tmpfs ro 2> mount.err; then
  mounts+=("$TMP/ro")
  "$VKCU" batch in1 newout --backend cpu --frames 2 -q --report ro/report.jsonl > /dev/null 2> ro.err
  rc=$?
  if [ "$rc" = 4 ] && [ ! -e newout ] && grep -q "cannot write the report: ro/report.jsonl: output folder ro is not writable (read-only filesystem)" ro.err; then
    pass "33.17 a report on a read-only mount: exit 4, the output folder not made"
  else
    fail "33.17 report on a read-only mount: exit $rc, $(ls -d newout 2> /dev/null) $(tail -1 ro.err)"
  fi
else
  skip "33.17 report on a read-only mount: cannot mount a tmpfs here ($(head -1 mount.err))"
fi
"$VKCU" batch in1 newout2 --backend cpu --frames 2 -q --report nosuch/report.jsonl > /dev/null 2> nf.err
rc=$?
[ "$rc" = 4 ] && [ ! -e newout2 ] && grep -q "nosuch/report.jsonl: output folder nosuch does not exist" nf.err &&
  pass "33.17 a report in a missing folder: exit 4, the output folder not made" ||
  fail "33.17 report in a missing folder: exit $rc, $(ls -d newout2 2> /dev/null) $(tail -1 nf.err)"

# Python: start=nan is no number (not a negative one).
lib=${VKCU_BUILD:-$root/build}/libvkcu.so # the current major, whatever its number
if [ -n "${VKCU_WRAPPER:-}" ] || [ "${VKCU_BUILD:-$root/build}" != "$root/build" ]; then
  # a sanitizer build's library needs its runtime first in the process, which python is not (python.sh skips alike)
  skip "33.17 python: runs on the plain build (make test), not ${VKCU_BUILD:-}"
elif [ -e "$lib" ]; then
  out=$(PYTHONPATH=$root/python VKCU_LIBRARY=$lib python3 -c '
import vkcu, sys
try:
    vkcu.hash(sys.argv[1], start=float("nan"))
except vkcu.UsageError as e:
    print(e)' "$m/h264-aac.mp4" 2>&1)
  grep -q "^start=nan: not a number" <<< "$out" && pass "33.17 python: start=nan is named not a number" ||
    fail "33.17 python: start=nan: $out"
else
  skip "33.17 python: $lib missing"
fi

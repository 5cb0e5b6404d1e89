#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One stream on several software decoders (issue 39, the CPU backend): for
# every clip of media/gen (the corpus too), every conformance stream and
# streams made here for each cut rule, a decode in pieces
# (VKCU_DECODE_SEGMENT_MIN=1: a piece at every cut, 3 decoders) must give
# the frames, timestamps, exit code and warnings-free output of one decoder,
# in both timing modes. The cut rules, each with its stream: HEVC open GOPs
# (CRA with RASL pictures, which the piece before decodes), HEVC closed GOPs
# with RADL pictures, H.264 open GOPs (recovery points: no cut), one key
# frame, raw streams without timestamps, MPEG-TS, parameter sets in the
# packets that change mid-stream, a size change, damaged GOPs (decoded on in
# sequence). Then the frames waiting bound, transcodes, random access
# through Python, and the option's range.
source "$(dirname "$0")/lib.sh"
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y -cpuflags 0 "$@"; }
src="testsrc2=size=320x240:rate=25:duration=4.8"
x5="log-level=error:pools=none:frame-threads=1:scenecut=0:keyint=24:min-keyint=24:bframes=4"
x4="keyint=24:min-keyint=24:scenecut=0:bframes=3:threads=1"
ff -filter_complex "$src" -c:v libx265 -preset ultrafast -x265-params "$x5:open-gop=1" -pix_fmt yuv420p "$TMP/cra.mkv"
ff -filter_complex "$src" -c:v libx265 -preset ultrafast -x265-params "$x5:open-gop=0:radl=2" -pix_fmt yuv420p "$TMP/radl.mp4"
ff -filter_complex "$src" -c:v libx264 -preset veryfast -x264-params "$x4:open-gop=1" "$TMP/opengop.mp4"
ff -filter_complex "$src" -c:v libx264 -preset veryfast -x264-params "keyint=1000:scenecut=0:threads=1" "$TMP/onekey.mp4"
ff -filter_complex "$src" -c:v libx264 -preset veryfast -x264-params "$x4" -f h264 "$TMP/idr.h264"
ff -filter_complex "$src" -c:v libx264 -preset veryfast -x264-params "$x4" -f mpegts "$TMP/idr.ts"
# In-band parameter sets whose PPS changes every second GOP (the chroma QP
# offset) and goes back to the first: a raw stream that carries each SPS and
# PPS only where it changes (python3 drops the repeats x264 writes before
# every IDR), so that a piece's decoder must be handed the latest ones from
# before its cut; and the same parts in Matroska, their parameter sets at
# every IDR.
for q in 0 3 0 5; do
  ff -filter_complex "testsrc2=size=320x240:rate=25:duration=1.92" -c:v libx264 -preset veryfast \
    -x264-params "$x4:chroma-qp-offset=$q" -f h264 - >> "$TMP/pps-repeated.h264"
  [ -e "$TMP/pps$q.mkv" ] || ff -filter_complex "testsrc2=size=320x240:rate=25:duration=0.96" -c:v libx264 \
    -preset veryfast -x264-params "$x4:chroma-qp-offset=$q:repeat-headers=1" "$TMP/pps$q.mkv"
  echo "file 'pps$q.mkv'" >> "$TMP/pps.txt"
done
python3 - "$TMP/pps-repeated.h264" "$TMP/ppschange.h264" << 'PYEOF'
import re, sys
d = open(sys.argv[1], "rb").read()
starts = [m.start() for m in re.finditer(b"\x00\x00\x01", d)]
out, last, dropped = bytearray(), {}, 0
for i, s in enumerate(starts):
    nal = d[s + 3:starts[i + 1] if i + 1 < len(starts) else len(d)].rstrip(b"\x00")
    t = nal[0] & 0x1F
    if t in (7, 8):
        if last.get(t) == nal:
            dropped += 1
            continue
        last[t] = nal
    out += b"\x00\x00\x00\x01" + nal
open(sys.argv[2], "wb").write(out)
assert dropped >= 8, dropped
PYEOF
ff -f concat -safe 0 -i "$TMP/pps.txt" -c copy "$TMP/ppschange.mkv"
made=(cra.mkv radl.mp4 opengop.mp4 onekey.mp4 idr.h264 idr.ts ppschange.h264 ppschange.mkv)
for f in "${made[@]}"; do [ -s "$TMP/$f" ] || fail "decode-parallel: $f was not made"; done

# hash FILE OUT [extra options]: stdout and exit code to OUT, stderr to OUT.err
par() { local f=$1 out=$2; shift 2
  VKCU_DECODE_SEGMENT_MIN=1 "$VKCU" hash "$f" --backend cpu --decode-parallel 3 --log-level verbose "$@" > "$out" 2> "$out.err"
  echo "rc=$?" >> "$out"; }
one() { local f=$1 out=$2; shift 2
  "$VKCU" hash "$f" --backend cpu --decode-parallel off "$@" > "$out" 2> "$out.err"
  echo "rc=$?" >> "$out"; }
segments() { grep -o "parallel decode: [0-9]* segment" "$1" | grep -o "[0-9]*" | tail -1; }

n=0 bad=0 cut=0
inputs=()
for f in "$MEDIA"/*.* "$MEDIA"/corpus/*; do [ -f "$f" ] && inputs+=("$f"); done
if [ -d "${VKCU_CONFORMANCE:-}" ]; then
  for f in "$VKCU_CONFORMANCE"/*; do
    case $f in *.md5|*.framemd5|*.md|*.txt|*.json) continue ;; esac
    [ -f "$f" ] && inputs+=("$f")
  done
fi
for f in "${made[@]}"; do inputs+=("$TMP/$f"); done
for f in "${inputs[@]}"; do
  for timing in ffmpeg decoded; do
    one "$f" "$TMP/one.txt" --timing "$timing"
    par "$f" "$TMP/par.txt" --timing "$timing"
    n=$((n + 1))
    if ! cmp -s "$TMP/one.txt" "$TMP/par.txt"; then
      bad=$((bad + 1))
      fail "decode-parallel: $f (--timing $timing): the pieces' frames differ from one decoder's: $(diff "$TMP/one.txt" "$TMP/par.txt" | sed -n 2p)"
    fi
    s=$(segments "$TMP/par.txt.err")
    [ "${s:-1}" -gt 1 ] && [ "$timing" = ffmpeg ] && cut=$((cut + 1))
    cp "$TMP/par.txt.err" "$TMP/$(basename "$f").$timing.log"
  done
done
[ $bad = 0 ] && pass "decode-parallel: ${#inputs[@]} streams, both timings ($n decodes): the pieces give one decoder's frames, timestamps and exit codes ($cut of them cut in two or more)"
[ "$cut" -ge 20 ] && pass "decode-parallel: $cut streams were decoded in two or more pieces" ||
  fail "decode-parallel: only $cut streams were cut: the test no longer tests pieces"

# Each cut rule did what it says.
log() { cat "$TMP/$1.ffmpeg.log"; }
[ "$(log cra.mkv | grep -c '(CRA)')" -ge 3 ] && pass "decode-parallel: HEVC open GOPs are cut at their CRA pictures" ||
  fail "decode-parallel: cra.mkv was not cut at its CRAs: $(log cra.mkv | grep segment | head -2)"
[ "$(segments "$TMP/radl.mp4.ffmpeg.log")" -ge 4 ] && pass "decode-parallel: HEVC closed GOPs (IDR with RADL pictures) are cut" ||
  fail "decode-parallel: radl.mp4 was not cut"
[ "$(segments "$TMP/opengop.mp4.ffmpeg.log")" = 1 ] && pass "decode-parallel: H.264 recovery points (open GOPs) are no cut" ||
  fail "decode-parallel: opengop.mp4 was cut at a recovery point"
[ "$(segments "$TMP/onekey.mp4.ffmpeg.log")" = 1 ] && pass "decode-parallel: one key frame, one piece" ||
  fail "decode-parallel: onekey.mp4 was cut"
for f in idr.h264 idr.ts ppschange.h264 ppschange.mkv; do
  [ "$(segments "$TMP/$f.ffmpeg.log")" -ge 4 ] && pass "decode-parallel: $f is cut at its IDRs" || fail "decode-parallel: $f was not cut"
done
if [ -f "$MEDIA/corrupt.h264" ]; then
  grep -q "[1-9][0-9]* redone in sequence" "$TMP/corrupt.h264.ffmpeg.log" &&
    pass "decode-parallel: damage after a cut is decoded on in sequence (corrupt.h264)" ||
    fail "decode-parallel: corrupt.h264: no piece was redone: $(grep 'parallel decode' "$TMP/corrupt.h264.ffmpeg.log")"
fi

# --frames N: the pieces stop with the Nth frame (they were drained to their
# ends, decoding hundreds of frames for 5), and the frames are one decoder's.
for n in 5 40; do
  VKCU_DECODE_SEGMENT_MIN=1 "$VKCU" hash "$MEDIA/long.mp4" --backend cpu --decode-parallel 2 --frames $n --stats \
    > "$TMP/fp.txt" 2> "$TMP/fp.err"
  "$VKCU" hash "$MEDIA/long.mp4" --backend cpu --decode-parallel off --frames $n > "$TMP/fo.txt" 2> /dev/null
  if grep -q "stats: frames: decoded=$n " "$TMP/fp.err" && cmp -s "$TMP/fp.txt" "$TMP/fo.txt"; then
    pass "decode-parallel: --frames $n decodes $n frames in pieces, one decoder's hashes"
  else
    fail "decode-parallel: --frames $n in pieces: $(grep -o 'decoded=[0-9]*' "$TMP/fp.err"), hashes $(cmp -s "$TMP/fp.txt" "$TMP/fo.txt" && echo equal || echo differ)"
  fi
done

# The frames waiting stay near the budget (1 MiB here): beyond it, the piece
# being taken runs 8 frames ahead, and each other piece may hold one frame.
one "$MEDIA/long.mp4" "$TMP/one.txt"
VKCU_DECODE_PARALLEL_MIB=1 par "$MEDIA/long.mp4" "$TMP/par.txt"
peak=$(grep -o "([0-9.]* MiB) waited" "$TMP/par.txt.err" | grep -o "[0-9.]*" | head -1)
nframes=$(grep -o "at most [0-9]* frames" "$TMP/par.txt.err" | grep -o "[0-9]*" | head -1)
if cmp -s "$TMP/one.txt" "$TMP/par.txt" && awk -v p="${peak:-99}" -v n="${nframes:-1}" 'BEGIN { exit !(p <= 1.0 + 11 * p / n) }'; then
  pass "decode-parallel: with a 1 MiB budget at most $peak MiB of frames waited, the same frames"
else
  fail "decode-parallel: 1 MiB budget: $peak MiB waited, or the frames differ"
fi

# A transcode decoded in pieces writes one decoder's frames and timestamps
# (the files themselves differ anyway: Matroska's UIDs).
for m in off 3; do
  VKCU_DECODE_SEGMENT_MIN=1 "$VKCU" "$TMP/cra.mkv" -o "$TMP/t-$m.mkv" --backend cpu --encoder ffv1 --decode-parallel $m -q -y ||
    fail "decode-parallel: transcode with --decode-parallel $m failed"
  one "$TMP/t-$m.mkv" "$TMP/t-$m.txt" --timing decoded
done
cmp -s "$TMP/t-off.txt" "$TMP/t-3.txt" && [ "$(frames "$TMP/t-3.txt" | grep -c ,)" = 120 ] &&
  pass "decode-parallel: a transcode decoded in pieces writes one decoder's 120 frames and timestamps" ||
  fail "decode-parallel: the transcodes' frames differ"

# The option: auto, off, 1..64; anything else is a usage error naming the range.
for v in auto off 1 64; do
  "$VKCU" hash "$MEDIA/long.mp4" --backend cpu --decode-parallel $v -q > /dev/null ||
    fail "decode-parallel: --decode-parallel $v refused"
done
for v in 0 65 many; do
  expect "decode-parallel: --decode-parallel $v is refused, naming 1..64, auto and off" 2 "\\[1, 64\\], nor auto or off" -- \
    "$VKCU" hash "$MEDIA/long.mp4" --decode-parallel $v
done

# Iteration through Python decodes in pieces (a job), random access with one
# decoder (a piece would decode the groups after its key frame for nothing):
# the same frames either way.
py=
for c in python3 /usr/bin/python3; do
  if "$c" -c 'import numpy' > /dev/null 2>&1; then py=$c; break; fi
done
if [ -z "${VKCU_WRAPPER:-}" ] && [ -e "${VKCU_BUILD:-}/libvkcu.so" ] && [ -n "$py" ]; then
  res=$(VKCU_DECODE_SEGMENT_MIN=1 PYTHONPATH="$(cd "$(dirname "$0")/../.." && pwd)/python" \
    VKCU_LIBRARY="$VKCU_BUILD/libvkcu.so" "$py" - "$TMP/cra.mkv" << 'PYEOF' 2>&1
import hashlib, sys
import vkcu
f = sys.argv[1]
def frames(par):
    with vkcu.Reader(f, backend="cpu", decode_parallel=par, copy=True) as r:
        return [(fr.pts, hashlib.md5(fr.tobytes()).hexdigest()) for fr in r]
one, three = frames("off"), frames(3)
bad = [] if one == three else ["iteration differs"]
with vkcu.Reader(f, backend="cpu", decode_parallel=3) as r:
    for i in (100, 3, 47, 48, 0, 119, 60, 23, 24):
        h = hashlib.md5(r.get_frames_at([i])[0].tobytes()).hexdigest()
        if h != one[i][1]:
            bad.append("frame %d" % i)
print("OK %d" % len(one) if not bad else "; ".join(bad))
PYEOF
  )
  [[ $res == "OK 120" ]] && pass "decode-parallel: Python's iteration in pieces gives one decoder's frames, and random access the same" ||
    fail "decode-parallel: Python: $res"
else
  skip "decode-parallel: Python: the package does not load here (needs the plain build and numpy)"
fi

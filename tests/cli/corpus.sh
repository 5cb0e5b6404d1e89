#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every file ffmpeg 7.1 reads goes through every verb with the frames and
# timestamps ffmpeg gives. For each clip of the generated corpus
# (tools/make-corpus.sh: every codec and container of issue 11):
#   corpus bytes: the clip is byte-identical to media/corpus.sha256, so the
#     corpus is the same on every machine (a FAIL names the clip that changed)
#   corpus hash CLIP: `vkcu hash` (framemd5, the default) equals
#     `ffmpeg -i CLIP -map 0:v:0 -f framemd5 -` frame by frame: md5, size and
#     pts. Both write pts in 1/frame rate units from the stream start, so the
#     `#tb` lines must be equal and the pts columns equal as integers: a file
#     that diffs against ffmpeg's is what vkcu promises (README, docs/hash.md).
#   corpus mkv|mp4|nut CLIP: `vkcu CLIP -o out.EXT` and `ffmpeg -i CLIP
#     out.EXT` (each with its default encoder, libx264; rawvideo for nut, vkcu's
#     default there) hold the same number of video packets, the same
#     presentation times, duration and frame rates (r_frame_rate and
#     avg_frame_rate), as ffprobe reads them. Times
#     compare within 1 ms, Matroska's resolution: vkcu keeps an input's
#     timestamps where ffmpeg's MP4 output re-times frames to the exact frame
#     rate (an mkv input's 0.501 s becomes 0.5005 s at 29.97 fps).
#   corpus y4m CLIP: `vkcu CLIP -o out.y4m` declares ffmpeg's frame rate (F)
#     and holds as many frames.
# Then every conformance stream ($VKCU_CONFORMANCE) transcodes into mkv and
# mp4 with ffmpeg's packet count, times and duration (both sides with libx264
# -preset superfast: B-frames as at the default preset, with which muxers
# refused raw streams' timestamps; the default preset would take minutes on
# the 1080p streams).
#
# A case that fails for a known reason someone is fixing may be listed in
# known_failing below with its owner. A listed
# case still runs and reports SKIP with the first difference; once it passes
# it reports PASS with a reminder to drop it from the list.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$MEDIA/corpus

# case name (a shell pattern) | owner (the helper fixing it) | what is wrong today
known_failing='
'

known_owner() { # case name -> owner, if a line of known_failing matches it
  local pat owner _
  while IFS='|' read -r pat owner _; do
    pat=${pat% } owner=${owner# } owner=${owner% }
    # shellcheck disable=SC2053
    [ -n "$pat" ] && [[ $1 == $pat ]] && { echo "$owner"; return; }
  done <<< "$known_failing"
}
report() { # case-name status(0 ok) detail
  local owner
  owner=$(known_owner "$1")
  if [ "$2" = 0 ]; then
    if [ -n "$owner" ]; then pass "$1 ($3; listed as known failing in tests/cli/corpus.sh: remove it)"; else pass "$1 ($3)"; fi
  elif [ -n "$owner" ]; then
    skip "$1: known failing, issue 11 (owner: $owner): $3"
  else
    fail "$1: $3"
  fi
}
err1() { grep -v '^\s*$' "$1" | tail -1; }

# framemd5 comparison: tb header, then md5, size and pts of each frame.
cmp_framemd5() { # vkcu-file ffmpeg-file -> one line; exit 0 when equal
  python3 - "$1" "$2" <<'EOF'
import sys
def load(path):
    tb, rows = None, []
    for line in open(path):
        if line.startswith('#tb 0:'):
            tb = line.split(':', 1)[1].strip()
        elif line.strip() and not line.startswith('#'):
            f = [x.strip() for x in line.split(',')]
            if f[0] == '0':
                rows.append(f)
    return tb, rows
(vtb, v), (ftb, f) = load(sys.argv[1]), load(sys.argv[2])
if vtb != ftb:
    print(f'time base {vtb}, ffmpeg {ftb}'); sys.exit(1)
for i, (a, b) in enumerate(zip(v, f)):
    for col, name in ((5, 'md5'), (4, 'size'), (2, 'pts')):
        if a[col] != b[col]:
            print(f'frame {i}: {name} {a[col]}, ffmpeg {b[col]} ({len(v)} frames, ffmpeg {len(f)})'); sys.exit(1)
if len(v) != len(f):
    print(f'{len(v)} frames, ffmpeg {len(f)}'); sys.exit(1)
print(f'{len(v)} frames: md5, size and pts equal ffmpeg framemd5')
EOF
}

# Container comparison from ffprobe JSON: video packet count, sorted pts, duration, frame rates.
probe_json() { # file -> JSON on stdout
  "$FFPROBE" -v error -select_streams v:0 -show_entries packet=pts_time:stream=r_frame_rate,avg_frame_rate:format=duration -of json "$1"
}
cmp_container() { # vkcu-json ffmpeg-json -> one line; exit 0 when equal
  python3 - "$1" "$2" <<'EOF'
import json, sys
def load(path):
    j = json.load(open(path))
    pts = sorted(float(p['pts_time']) for p in j.get('packets', []) if p.get('pts_time', 'N/A') != 'N/A')
    n = len(j.get('packets', []))
    dur = j.get('format', {}).get('duration')
    st = (j.get('streams') or [{}])[0]
    rate = f"{st.get('r_frame_rate')} fps (average {st.get('avg_frame_rate')})"
    return n, pts, float(dur) if dur not in (None, 'N/A') else None, rate
(vn, vp, vd, vr), (fn, fp, fd, fr) = load(sys.argv[1]), load(sys.argv[2])
tol = 0.001 + 1e-9
if vn != fn:
    print(f'{vn} video packets, ffmpeg {fn}'); sys.exit(1)
if len(vp) != vn:
    print(f'{vn - len(vp)} packets without pts'); sys.exit(1)
for i, (a, b) in enumerate(zip(vp, fp)):
    if abs(a - b) > tol:
        print(f'frame {i} (in presentation order): pts {a:.6f} s, ffmpeg {b:.6f} s'); sys.exit(1)
if vd is None or fd is None or abs(vd - fd) > tol:
    print(f'duration {vd} s, ffmpeg {fd} s'); sys.exit(1)
if vr != fr:
    print(f'frame rate {vr}, ffmpeg {fr}'); sys.exit(1)
print(f'{vn} frames, pts, duration {vd:.3f} s and {vr} equal ffmpeg')
EOF
}

# y4m: the stream header's F field and the number of frames, each a FRAME
# line and the picture whose size the W, H and C fields give.
y4m_info() { # file -> "F<rate> <frames>"
  python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
end = data.index(b'\n')
tags = {t[:1].decode(): t[1:].decode() for t in data[:end].split()[1:]}
w, h, c = int(tags['W']), int(tags['H']), tags.get('C', '420')
depth = 2 if 'p' in c and c.split('p')[-1] in ('9', '10', '12', '14', '16') else 1
chroma = 0 if c.startswith('mono') else (w + 1) // 2 * ((h + 1) // 2) if c.startswith('420') \
    else (w + 1) // 2 * h if c.startswith('422') else (w + 3) // 4 * h if c.startswith('411') else w * h
size = (w * h + 2 * chroma + (w * h if c.startswith('444alpha') else 0)) * depth
n, pos = 0, end + 1
while pos < len(data) and data.startswith(b'FRAME', pos):
    pos = data.index(b'\n', pos) + 1 + size
    n += 1
print(f"F{tags.get('F', '?')} {n}{'' if pos == len(data) else '+junk'}")
EOF
}

# refused_format ERR-FILE EXIT: vkcu never converts pixels behind the user's
# back: an encoder that cannot take the decoded format is exit 2 with one
# line naming both, and true only when the encoder really lacks it.
refused_format() {
  local line enc fmt
  line=$(err1 "$1")
  [ "$2" = 2 ] && [[ $line =~ encoder\ ([a-z0-9_]+)\ takes\ .*,\ not\ ([a-z0-9]+):\ (add\ convert=format=|convert\ does\ not\ read) ]] || return 1
  enc=${BASH_REMATCH[1]} fmt=${BASH_REMATCH[2]}
  ! "$FFMPEG" -hide_banner -h "encoder=$enc" 2>/dev/null | grep -i 'pixel formats:' | grep -qw "$fmt"
}
transcode_case() { # kind(mkv|mp4) clip case-name [extra vkcu args] -- [extra ffmpeg args]
  local ext=$1 clip=$2 name=$3; shift 3
  local vargs=() fargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  fargs=("$@")
  local t=$TMP/t
  rm -rf "$t"; mkdir -p "$t"
  if ! "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$clip" -map 0:v:0 "${fargs[@]}" "$t/ff.$ext" 2> "$t/ff.err"; then
    fail "$name: ffmpeg itself failed: $(err1 "$t/ff.err")"; return
  fi
  "$VKCU" "$clip" --backend cpu -q -o "$t/vk.$ext" "${vargs[@]}" 2> "$t/vk.err"
  local rc=$?
  if [ $rc != 0 ] && refused_format "$t/vk.err" "$rc"; then
    report "$name" 0 "$(err1 "$t/vk.err" | sed 's/.*: encoder/encoder/'): vkcu refuses, exit 2, where ffmpeg converts"
    return
  fi
  if [ $rc != 0 ]; then report "$name" 1 "vkcu exit $rc: $(err1 "$t/vk.err")"; return; fi
  if ! { probe_json "$t/vk.$ext" > "$t/vk.json" && probe_json "$t/ff.$ext" > "$t/ff.json"; }; then
    fail "$name: ffprobe failed on an output"; return
  fi
  local msg
  msg=$(cmp_container "$t/vk.json" "$t/ff.json")
  report "$name" $? "$msg"
}

# --- the corpus -------------------------------------------------------------
if ! FFMPEG_BIN=$FFMPEG_BIN bash "$root/tools/make-corpus.sh" "$corpus" 2> "$TMP/gen.err"; then
  fail "corpus: tools/make-corpus.sh failed: $(err1 "$TMP/gen.err")"
  exit 0
fi
sums=$root/media/corpus.sha256
changed=()
while read -r sum file; do
  if [ ! -f "$corpus/$file" ]; then changed+=("$file (missing)"); continue; fi
  [ "$(sha256sum < "$corpus/$file" | cut -c1-64)" = "$sum" ] || changed+=("$file")
done < "$sums"
for f in "$corpus"/*; do
  grep -q " ${f##*/}\$" "$sums" || changed+=("${f##*/} (not in media/corpus.sha256)")
done
if [ ${#changed[@]} = 0 ]; then
  pass "corpus bytes: $(wc -l < "$sums") clips byte-identical to media/corpus.sha256"
else
  for c in "${changed[@]}"; do
    fail "corpus bytes: $c differs from media/corpus.sha256 (the encoder, FFmpeg or tools/make-corpus.sh changed: regenerate the list and review)"
  done
fi

while read -r _ file; do
  clip=$corpus/$file
  [ -f "$clip" ] || continue
  # hash: vkcu framemd5 against ffmpeg's
  if ! "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$clip" -map 0:v:0 -f framemd5 - > "$TMP/ff.md5" 2> "$TMP/ff.err"; then
    fail "corpus hash $file: ffmpeg itself failed: $(err1 "$TMP/ff.err")"
  else
    "$VKCU" hash "$clip" --backend cpu -o "$TMP/vk.md5" -y 2> "$TMP/vk.err"
    rc=$?
    if [ $rc != 0 ]; then
      report "corpus hash $file" 1 "vkcu hash exit $rc: $(err1 "$TMP/vk.err")"
    else
      msg=$(cmp_framemd5 "$TMP/vk.md5" "$TMP/ff.md5")
      report "corpus hash $file" $? "$msg"
    fi
  fi
  # transcode into mkv and mp4 with the default encoder
  transcode_case mkv "$clip" "corpus mkv $file"
  transcode_case mp4 "$clip" "corpus mp4 $file"
  transcode_case nut "$clip" "corpus nut $file" -- -c:v rawvideo
  # y4m frame rate and frame count
  rm -f "$TMP/vk.y4m" "$TMP/ff.y4m"
  if ! "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$clip" -map 0:v:0 -strict -1 -f yuv4mpegpipe "$TMP/ff.y4m" 2> "$TMP/ff.err"; then
    # A format y4m cannot carry (RGB, alpha): vkcu must refuse it too, and leave nothing.
    if "$VKCU" "$clip" --backend cpu -q -o "$TMP/vk.y4m" 2> "$TMP/vk.err" || [ -e "$TMP/vk.y4m" ]; then
      fail "corpus y4m $file: ffmpeg cannot write it ($(err1 "$TMP/ff.err")), vkcu wrote one"
    else
      pass "corpus y4m $file: y4m cannot carry its format: ffmpeg and vkcu both refuse, nothing written"
    fi
    continue
  fi
  "$VKCU" "$clip" --backend cpu -q -o "$TMP/vk.y4m" 2> "$TMP/vk.err"
  rc=$?
  if [ $rc != 0 ]; then report "corpus y4m $file" 1 "vkcu exit $rc: $(err1 "$TMP/vk.err")"; continue; fi
  read -r vrate vn <<< "$(y4m_info "$TMP/vk.y4m")"
  read -r frate fn <<< "$(y4m_info "$TMP/ff.y4m")"
  if [ "$vrate" = "$frate" ] && [ "$vn" = "$fn" ]; then
    report "corpus y4m $file" 0 "$vrate, $vn frames, as ffmpeg"
  else
    report "corpus y4m $file" 1 "$vrate with $vn frames, ffmpeg $frate with $fn frames"
  fi
done < "$sums"

# --- the conformance streams ------------------------------------------------
if [ ! -d "$VKCU_CONFORMANCE" ]; then
  skip "conformance mkv/mp4: no conformance streams at $VKCU_CONFORMANCE (set VKCU_CONFORMANCE)"
  exit 0
fi
for s in "$VKCU_CONFORMANCE"/*.264 "$VKCU_CONFORMANCE"/*.h264 "$VKCU_CONFORMANCE"/*.h265; do
  [ -f "$s" ] || continue
  for ext in mkv mp4; do
    transcode_case "$ext" "$s" "conformance $ext $(basename "$s")" --preset superfast -- -c:v libx264 -preset superfast
  done
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# compare's metrics on the GPU (src/gpu/metrics.c, kernels/metrics.cu)
# against the CPU backend's, run by tests/gpu.sh. On the GPU backend both
# inputs' frames stay in device memory and each pair is measured there; the
# figures must equal the CPU backend's bit for bit: every per-frame row of
# --json (PSNR, SSIM, largest difference, printed with 17 digits) and the
# whole report. Pairs:
# - every case of media/clips.manifest with a `chain`: its input against its
#   processed self (compare A A --chain-b CHAIN); chains whose output is a
#   packed layout reach the host and are measured on the CPU by both runs;
# - the conformance streams and the manifest's clips against a libx264 or
#   libx265 crf 35 copy (same layout);
# - the bench clips ($BIG) against their denoise=tnr:sigma=4 + libx264
#   ultrafast transcode, with a --report and a --diff-image (the only
#   pictures that may come to the host).
# Where both inputs decode to a planar layout, --stats must say that every
# pair was measured on the GPU and that no picture byte reached the host
# (without --report/--diff-image).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }

# pair NAME A B EXPECT [compare options]: EXPECT "gpu" (every pair measured
# on the GPU, no picture to the host) or "any".
pair() {
  local name=$1 a=$2 b=$3 expect=$4
  shift 4
  local k rc
  for k in gpu cpu; do
    timeout -s KILL 600 "$VKCU" compare --backend $k "$a" "$b" --json "$out/$k.json" --per-frame --stats -y "$@" \
      > "$out/$k.txt" 2> "$out/$k.err"
    rc=$?
    echo $rc > "$out/$k.rc"
    if [ $rc != 0 ] && [ $rc != 6 ]; then
      echo "FAIL metrics-gpu: $name: compare --backend $k exit $rc: $(tail -1 "$out/$k.err")"
      return
    fi
  done
  local res
  res=$(python3 - "$out/gpu.json" "$out/cpu.json" <<'PYEOF'
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
gf, cf = g.get('frames', []), c.get('frames', [])
if not gf:
    print('NOROWS'); sys.exit()
for k, (x, y) in enumerate(zip(gf, cf)):
    if x != y:
        print('DIFF frame %d: GPU %s, CPU %s' % (k, json.dumps(x, sort_keys=True)[:300], json.dumps(y, sort_keys=True)[:300]))
        sys.exit()
if len(gf) != len(cf) or g.get('result') != c.get('result'):
    print('DIFF %d/%d rows, result %r / %r' % (len(gf), len(cf), g.get('result'), c.get('result'))); sys.exit()
print('SAME %d' % len(gf))
PYEOF
  )
  case $res in
    SAME*) ;;
    *) echo "FAIL metrics-gpu: $name: ${res:-could not read the JSON}"; return ;;
  esac
  if ! cmp -s "$out/gpu.txt" "$out/cpu.txt" || [ "$(cat "$out/gpu.rc")" != "$(cat "$out/cpu.rc")" ]; then
    echo "FAIL metrics-gpu: $name: the reports differ (exit $(cat "$out/gpu.rc")/$(cat "$out/cpu.rc")): $(diff "$out/gpu.txt" "$out/cpu.txt" | head -3 | tr '\n' ' ')"
    return
  fi
  local pairs on_gpu dtoh
  pairs=$(stat_of "$out/gpu.err" pairs) on_gpu=$(stat_of "$out/gpu.err" measured_on_gpu) dtoh=$(stat_of "$out/gpu.err" frames_dtoh_bytes)
  if [ "$expect" = gpu ] && { [ "$on_gpu" != "$pairs" ] || [ "$dtoh" != 0 ]; }; then
    echo "FAIL metrics-gpu: $name: equal figures, but measured_on_gpu=$on_gpu of $pairs pairs, frames_dtoh_bytes=$dtoh (expected all, 0)"
    return
  fi
  echo "PASS metrics-gpu: $name: ${res#SAME } rows and the report equal the CPU backend's bit for bit (on the GPU: $on_gpu of $pairs pairs, picture bytes to the host: $dtoh)"
}

# The manifest's cases: input and chain (variables as verify expands them).
manifest=$(dirname "$0")/../../media/clips.manifest
python3 "$(dirname "$0")/manifest_cases.py" "$manifest" "$MEDIA" > "$out/cases.tsv"
declare -A clips=()
while IFS=$'\t' read -r name input chain; do
  case $input in *'${'*) continue ;; esac # conformance streams: the noisy copies below
  [ -s "$input" ] || continue
  "$VKCU" compare --backend cpu "$input" "$input" --chain-b "$chain" -q > "$out/probe.txt" 2>&1
  grep -qE '^(IDENTICAL: |MISMATCH: [0-9]+ of [0-9]+ frames differ)' "$out/probe.txt" || continue # size or count changes
  pair "clips.manifest $name ($chain)" "$input" "$input" any --chain-b "$chain"
  clips[$input]=1
done < "$out/cases.tsv"

# Clips and conformance streams against a lossy copy of the same layout.
for c in "${!clips[@]}" "$CONF"/*.264 "$CONF"/*.h264 "$CONF"/*.h265; do
  [ -s "$c" ] || continue
  base=$(basename "$c")
  case $base in
    hevc10*|hdr10*|*.h265) ff -i "$c" -an -c:v libx265 -preset ultrafast -crf 35 -x265-params log-level=error "$out/lossy-$base.mkv" ;;
    *) ff -i "$c" -an -c:v libx264 -preset veryfast -crf 35 "$out/lossy-$base.mkv" ;;
  esac || { echo "FAIL metrics-gpu: could not make a lossy copy of $c"; continue; }
  pair "$base against its crf 35 copy" "$c" "$out/lossy-$base.mkv" gpu --min-psnr 1
done

# The bench clips: frames stay on the GPU; then with the report and the difference picture.
for c in h264-1080p.mp4 hevc10-1080p.mp4 h264-2160p.mp4; do
  [ -s "$BIG/$c" ] || { echo "SKIP metrics-gpu: $c: not made (tools/gpu-env.sh make_big_clips)"; continue; }
  t=$out/tnr-$c
  timeout -s KILL 600 "$VKCU" "$BIG/$c" -o "$t" --backend gpu --chain 'denoise=tnr:sigma=4' --encoder libx264 \
    --preset ultrafast --frames 120 -y 2> "$out/tnr.err" ||
    { echo "FAIL metrics-gpu: could not transcode $c: $(tail -1 "$out/tnr.err")"; continue; }
  pair "$c against denoise=tnr:sigma=4 + libx264" "$BIG/$c" "$t" gpu --frames 120 --min-psnr 1
  for k in gpu cpu; do
    timeout -s KILL 600 "$VKCU" compare --backend $k "$BIG/$c" "$t" --frames 120 --stats --report "$out/$k.html" \
      --diff-image "$out/$k.png" -y > "$out/r$k.txt" 2> "$out/r$k.err"
  done
  dtoh=$(stat_of "$out/rgpu.err" frames_dtoh_bytes)
  if cmp -s "$out/gpu.png" "$out/cpu.png" && [ -s "$out/gpu.png" ] &&
    cmp -s <(grep -v '^report: ' "$out/rgpu.txt" | sed 's/gpu\.png/X.png/') <(grep -v '^report: ' "$out/rcpu.txt" | sed 's/cpu\.png/X.png/') &&
    [ "${dtoh:-0}" -gt 0 ]; then
    echo "PASS metrics-gpu: $c with --report and --diff-image: the same picture and report as the CPU backend; picture bytes to the host $dtoh (the worst frames only)"
  else
    echo "FAIL metrics-gpu: $c with --report/--diff-image: pictures $(cmp -s "$out/gpu.png" "$out/cpu.png" && echo equal || echo differ), reports: $(diff <(grep -v '^report: ' "$out/rgpu.txt") <(grep -v '^report: ' "$out/rcpu.txt") | head -4 | tr '\n' ' '), frames_dtoh_bytes=$dtoh"
  fi
done

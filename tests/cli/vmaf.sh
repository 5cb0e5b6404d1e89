#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# compare --vmaf, --min-vmaf and the manifest key min-vmaf.
# (a) In a build without libvmaf (the default: Debian has no libvmaf
#     package): one clear line, exit 2, nothing written.
# (b) In a build with libvmaf (make VMAF_PREFIX=DIR): per-frame scores equal
#     the `vmaf` tool of the same libvmaf build on the same pictures (y4m or
#     raw), to 0.01: 8-bit 4:2:0, 10-bit 4:2:0, 8-bit 4:2:2, NV12; min-vmaf
#     passes and fails, in compare and in a manifest (reference = VMAF's
#     reference). FFmpeg's libvmaf filter is not in our FFmpeg; the tool is
#     the same library and model, so it is the oracle (docs/regression.md).
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
ff() { "$FFMPEG" -hide_banner -loglevel error -nostdin -y "$@"; }
manifest() { # FILE MIN-VMAF [MIN-VMAF2]: a metric case per limit, the lossy copy against the source
  { echo "vkcu-manifest 1"; local i=0 v
    for v in "${@:2}"; do i=$((i + 1)); printf '\n[case vmaf%d]\ninput = lossy.mp4\nreference = %s\nmin-vmaf = %s\n' "$i" "$in" "$v"; done
  } > "$1"
}

# Both builds: min-vmaf is part of the manifest grammar, checked like min-psnr.
manifest "$TMP/range.manifest" 150
expect "vmaf: min-vmaf outside [0, 100] is a manifest error naming the key (exit 3)" 3 \
  "range.manifest:[0-9]+: min-vmaf '150' is not a number in \[0, 100\]" -- "$VKCU" verify "$TMP/range.manifest"
printf 'vkcu-manifest 1\n[case c]\ninput = %s\nmin-vmaf = 80\n' "$in" > "$TMP/noref.manifest"
expect "vmaf: min-vmaf without a reference is a manifest error (exit 3)" 3 \
  "case 'c': max-diff/min-psnr/min-vmaf need a reference input" -- "$VKCU" verify "$TMP/noref.manifest"
expect "vmaf: --min-vmaf outside [0, 100] is a usage error (exit 2)" 2 "--min-vmaf: '101' is not a number in \[0, 100\]" \
  -- "$VKCU" compare "$in" "$in" --min-vmaf 101

if ! "$VKCU" --version | grep -q '^VMAF: libvmaf '; then
  # (a) no libvmaf
  "$VKCU" --version | grep -q '^VMAF: not built in' && pass "vmaf: --version says VMAF is not built in" ||
    fail "vmaf: --version lacks 'VMAF: not built in': $("$VKCU" --version | grep -i vmaf)"
  missing='this vkcu was built without libvmaf \(Debian has no libvmaf package\).*VMAF_PREFIX=DIR'
  for opt in --vmaf "--min-vmaf 50"; do
    # shellcheck disable=SC2086
    "$VKCU" compare --backend cpu "$in" "$in" $opt --csv "$TMP/rows.csv" --json "$TMP/rows.json" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    if [ "$rc" = 2 ] && [ "$(wc -l < "$TMP/err")" = 1 ] && grep -qE -- "^vkcu: error: ${opt% *}: $missing" "$TMP/err" &&
      [ ! -s "$TMP/out" ] && [ ! -e "$TMP/rows.csv" ] && [ ! -e "$TMP/rows.json" ]; then
      pass "vmaf: compare ${opt% *} without libvmaf: one line, exit 2, no output written"
    else
      fail "vmaf: compare ${opt% *} without libvmaf: exit $rc; stderr: $(head -2 "$TMP/err" | tr '\n' ' '); stdout $(wc -c < "$TMP/out") bytes; $(ls "$TMP"/rows.* 2>/dev/null)"
    fi
  done
  manifest "$TMP/m.manifest" 50
  "$VKCU" verify "$TMP/m.manifest" --backend cpu --junit "$TMP/j.xml" --summary "$TMP/s.md" > "$TMP/out" 2> "$TMP/err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l < "$TMP/err")" = 1 ] &&
    grep -qE -- "m.manifest:3: case 'vmaf1': min-vmaf: $missing" "$TMP/err" && [ ! -s "$TMP/out" ] &&
    [ ! -e "$TMP/j.xml" ] && [ ! -e "$TMP/s.md" ]; then
    pass "vmaf: verify of a min-vmaf case without libvmaf: one line naming the case, exit 2, nothing run or written"
  else
    fail "vmaf: verify min-vmaf without libvmaf: exit $rc; stderr: $(head -2 "$TMP/err" | tr '\n' ' '); stdout: $(head -2 "$TMP/out" | tr '\n' ' ')"
  fi
  skip "vmaf: scores against the vmaf tool: libvmaf not built in: Debian 12 has no libvmaf package; see docs/regression.md (VMAF) to build vkcu with it"
  exit 0
fi

# (b) libvmaf built in
skip "vmaf: the errors of a build without libvmaf: this build has libvmaf (make test in a build without VMAF_PREFIX checks them)"
tool=${VMAF_TOOL:-}
if [ -z "$tool" ]; then
  prefix=$(sed -n 's/^VMAF_PREFIX := //p' "${VKCU_BUILD:-$(dirname "$VKCU")}/vmaf.mk" 2>/dev/null)
  tool=$prefix/bin/vmaf
fi
if [ ! -x "$tool" ]; then
  skip "vmaf: scores against the vmaf tool: no vmaf tool at '$tool' (set VMAF_TOOL to the one built with libvmaf)"
  exit 0
fi
lib_version=$("$VKCU" --version | sed -n 's/^VMAF: libvmaf \([^,]*\),.*/\1/p')
tool_version=$("$tool" --version 2>&1 | tail -1)
[ "$lib_version" = "$tool_version" ] || fail "vmaf: the tool ($tool, $tool_version) is not the libvmaf built in ($lib_version)"

ff -i "$in" -an -c:v libx264 -threads 1 -preset veryfast -crf 35 -fflags +bitexact "$TMP/lossy.mp4" &&
  ff -i "$MEDIA/hevc10.mkv" -an -c:v libx265 -preset ultrafast -crf 32 \
    -x265-params log-level=error:pools=none:frame-threads=1 "$TMP/lossy10.mkv" &&
  ff -i "$MEDIA/h264-422.mkv" -an -c:v libx264 -threads 1 -preset veryfast -crf 35 "$TMP/lossy422.mkv" ||
  { fail "vmaf: could not make the lossy copies with $FFMPEG"; exit 0; }

# The oracle is libvmaf's CPU path: a tool built with the CUDA backend uses
# the GPU unless its gpumask forbids every GPU operation.
cpu_only="--gpumask 0xffffffff"

# check NAME REF DIST TOOL-ARGS LO HI [compare options]: vkcu compare REF DIST
# --vmaf (CSV, JSON and text) against `vmaf TOOL-ARGS`, frame by frame; the
# tool's mean must lie in (LO, HI) so that the pair tests something.
check() {
  local name=$1 ref=$2 dist=$3 targs=$4 lo=$5 hi=$6
  shift 6
  rm -f "$TMP/v.csv" "$TMP/v.json"
  # shellcheck disable=SC2086
  (cd "$TMP" && "$tool" -q $cpu_only $targs --json -o "$TMP/tool.json" > /dev/null 2>&1) ||
    { fail "vmaf: $name: the vmaf tool failed on $targs"; return; }
  "$VKCU" compare --backend cpu "$ref" "$dist" --vmaf --per-frame --csv "$TMP/v.csv" --json "$TMP/v.json" "$@" \
    > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  [ "$rc" = 6 ] || { fail "vmaf: $name: compare exit $rc, expected 6: $(tail -1 "$TMP/err")"; return; }
  local res
  res=$(python3 - "$TMP/tool.json" "$TMP/v.csv" "$TMP/v.json" "$TMP/out" "$lo" "$hi" <<'PYEOF'
import csv, json, re, sys
tool = json.load(open(sys.argv[1]))
want = [f['metrics']['vmaf'] for f in tool['frames']]
mean = tool['pooled_metrics']['vmaf']['mean']
rows = list(csv.DictReader(open(sys.argv[2])))
jrows = json.load(open(sys.argv[3]))['frames']
text = open(sys.argv[4]).read()
lines = [float(v) for v in re.findall(r'^frame \d+ .*; VMAF ([0-9.]+)$', text, re.M)]
summary = re.search(r'^VMAF mean:([0-9.]+) min:([0-9.]+) \(frame (\d+)\)', text, re.M)
lo, hi = float(sys.argv[5]), float(sys.argv[6])
bad = []
for what, got in (('CSV', [float(r['vmaf']) for r in rows]), ('JSON', [r['vmaf'] for r in jrows]), ('text', lines)):
    if len(got) != len(want):
        bad.append('%s has %d scores, the tool %d' % (what, len(got), len(want)))
        continue
    d = max(abs(a - b) for a, b in zip(got, want))
    if d > 0.01 + (0.005 if what == 'text' else 0):
        i = max(range(len(want)), key=lambda k: abs(got[k] - want[k]))
        bad.append('%s frame %d: %.6f, the tool %.6f' % (what, i, got[i], want[i]))
if not summary:
    bad.append('no VMAF summary line')
else:
    if abs(float(summary.group(1)) - mean) > 0.01:
        bad.append('mean %s, the tool %.6f' % (summary.group(1), mean))
    if abs(float(summary.group(2)) - min(want)) > 0.01 or int(summary.group(3)) != want.index(min(want)):
        bad.append('min %s (frame %s), the tool %.6f (frame %d)' % (summary.group(2), summary.group(3), min(want), want.index(min(want))))
if not lo < mean < hi:
    bad.append('not a useful pair: the tool says %.2f, expected %g..%g' % (mean, lo, hi))
maxd = max(abs(float(r['vmaf']) - w) for r, w in zip(rows, want)) if len(rows) == len(want) else -1
print('; '.join(bad) if bad else '%d frames, mean %.4f (tool %.4f), largest per-frame difference %.6f' % (len(want), float(summary.group(1)), mean, maxd))
sys.exit(1 if bad else 0)
PYEOF
  ) && pass "vmaf: $name: per-frame scores equal the vmaf tool's ($res)" || fail "vmaf: $name: $res"
}

# Pictures for the tool, as FFmpeg decodes them (vkcu's frames are the same: tests/cli/compare.sh).
ff -i "$in" "$TMP/ref8.y4m" && ff -i "$TMP/lossy.mp4" "$TMP/dist8.y4m" &&
  ff -i "$MEDIA/hevc10.mkv" -strict -1 "$TMP/ref10.y4m" && ff -i "$TMP/lossy10.mkv" -strict -1 "$TMP/dist10.y4m" &&
  ff -i "$MEDIA/h264-422.mkv" -f rawvideo "$TMP/ref422.yuv" && ff -i "$TMP/lossy422.mkv" -f rawvideo "$TMP/dist422.yuv" ||
  { fail "vmaf: could not write the tool's pictures"; exit 0; }
check "8-bit 4:2:0, x264 crf 35 (y4m pair)" "$TMP/ref8.y4m" "$TMP/dist8.y4m" "-r ref8.y4m -d dist8.y4m" 50 95
check "8-bit 4:2:0, x264 crf 35 (the mp4 files, decoded by vkcu)" "$in" "$TMP/lossy.mp4" "-r ref8.y4m -d dist8.y4m" 50 95
check "10-bit 4:2:0, x265 crf 32" "$MEDIA/hevc10.mkv" "$TMP/lossy10.mkv" "-r ref10.y4m -d dist10.y4m" 50 98
check "8-bit 4:2:2, x264 crf 35 (raw 4:2:2 for the tool)" "$MEDIA/h264-422.mkv" "$TMP/lossy422.mkv" \
  "-r ref422.yuv -d dist422.yuv -w 320 -h 240 -p 422 -b 8" 50 95
check "NV12 frames (convert=format=nv12 on both sides) score as their planar YUV" "$in" "$TMP/lossy.mp4" \
  "-r ref8.y4m -d dist8.y4m" 50 95 --chain convert=format=nv12
# VMAF is not symmetric: A is the reference. Swapped, the tool's swapped run is the oracle.
check "B against A (swapped inputs)" "$TMP/lossy.mp4" "$in" "-r dist8.y4m -d ref8.y4m" 20 99

# Where VMAF ran: one line after the headers. --backend cpu: the CPU, a
# worker per CPU this process may use. The GPU backend (here: the default,
# auto) asks for libvmaf's CUDA backend; where it cannot run (no driver on
# CI, or a libvmaf without it) the CPU scores, the line says why, and the
# scores are the CPU's to the last digit.
cpus=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
[ "$cpus" = 1 ] && want_cpu="on the CPU, 1 thread" || want_cpu="on the CPU, $cpus threads"
"$VKCU" compare --backend cpu "$in" "$TMP/lossy.mp4" --vmaf --csv "$TMP/cpu.csv" > "$TMP/out" 2>&1
line=$(sed -n '3p' "$TMP/out")
[ "$line" = "VMAF: libvmaf $lib_version $want_cpu" ] && pass "vmaf: --backend cpu says '$line' after the headers" ||
  fail "vmaf: --backend cpu: line 3 is '$line', expected 'VMAF: libvmaf $lib_version $want_cpu'"
"$VKCU" compare "$in" "$TMP/lossy.mp4" --vmaf --csv "$TMP/auto.csv" > "$TMP/out" 2>&1
line=$(sed -n '3p' "$TMP/out")
case $line in
  "VMAF: libvmaf $lib_version on the GPU (CUDA device "*)
    pass "vmaf: the GPU backend scores on the GPU here ('$line'; tests/gpu.d/vmaf.sh compares it with the CPU)" ;;
  "VMAF: libvmaf $lib_version $want_cpu (libvmaf's CUDA backend is not available: "?*")")
    if ! "$VKCU" --version | grep -q 'CUDA backend built in' && [[ $line != *"built without it"* ]]; then
      fail "vmaf: fallback line does not say this libvmaf has no CUDA backend: '$line'"
    elif cmp -s <(cut -d, -f14 "$TMP/cpu.csv") <(cut -d, -f14 "$TMP/auto.csv") && [ "$(wc -l < "$TMP/cpu.csv")" -gt 40 ]; then
      pass "vmaf: no GPU for libvmaf here: compare scores on the CPU and says why in one line ('$line'), the CPU's scores"
    else
      fail "vmaf: the fallback's scores differ from --backend cpu's: $(diff <(cut -d, -f14 "$TMP/cpu.csv") <(cut -d, -f14 "$TMP/auto.csv") | head -3 | tr '\n' ' ')"
    fi ;;
  *) fail "vmaf: the default backend: line 3 is '$line', expected where VMAF ran (and why not on the GPU)" ;;
esac

# --min-vmaf: the mean decides.
mean=$("$VKCU" compare --backend cpu "$in" "$TMP/lossy.mp4" --vmaf 2> /dev/null | sed -n 's/^VMAF mean:\([0-9.]*\) .*/\1/p')
below=$(python3 -c "print(round($mean - 3, 2))") above=$(python3 -c "print(round($mean + 3, 2))")
"$VKCU" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-vmaf "$below" > "$TMP/out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "^result: PASS: 50 of 50 frames differ, within --min-vmaf $below$" "$TMP/out" &&
  pass "vmaf: --min-vmaf $below passes a pair of mean $mean (exit 0)" ||
  fail "vmaf: --min-vmaf $below: exit $rc: $(tail -1 "$TMP/out")"
"$VKCU" compare --backend cpu "$in" "$TMP/lossy.mp4" --min-vmaf "$above" > "$TMP/out" 2>&1
rc=$?
[ "$rc" = 6 ] && grep -qE "^result: MISMATCH: VMAF mean [0-9.]+ is below --min-vmaf $above \(lowest: frame [0-9]+, [0-9.]+\)$" "$TMP/out" &&
  pass "vmaf: --min-vmaf $above fails a pair of mean $mean (exit 6)" ||
  fail "vmaf: --min-vmaf $above: exit $rc: $(tail -1 "$TMP/out")"

# A manifest: the case's reference is VMAF's reference, whatever the order in compare.
mkdir -p "$TMP/m" && cp "$TMP/lossy.mp4" "$TMP/m/"
manifest "$TMP/m/vmaf.manifest" "$below" "$above"
"$VKCU" verify "$TMP/m/vmaf.manifest" --backend cpu > "$TMP/out" 2>&1
rc=$?
"$tool" -q $cpu_only -r "$TMP/ref8.y4m" -d "$TMP/dist8.y4m" --json -o "$TMP/tool.json" > /dev/null 2>&1
tool_mean=$(python3 -c "import json; print('%.2f' % json.load(open('$TMP/tool.json'))['pooled_metrics']['vmaf']['mean'])")
if [ "$rc" = 6 ] && grep -qE "^PASS vmaf1: PASS: 50 of 50 frames differ, within --min-vmaf $below; VMAF mean $tool_mean " "$TMP/out" &&
  grep -qE "^FAIL vmaf2: MISMATCH: VMAF mean $tool_mean is below --min-vmaf $above" "$TMP/out" &&
  grep -q '^1 passed, 1 failed' "$TMP/out"; then
  pass "vmaf: manifest min-vmaf $below passes and $above fails (mean $tool_mean, the tool's with the reference as reference)"
else
  fail "vmaf: manifest min-vmaf: exit $rc: $(head -3 "$TMP/out" | tr '\n' ' ') (tool mean $tool_mean)"
fi

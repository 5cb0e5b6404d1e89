#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu verify: the golden manifests pass on the CPU backend (and the
# conformance expectations equal FFmpeg's .framemd5 data); a changed frame,
# a lost frame and a missing expectation fail and say where; --update
# rewrites inline and sidecar expectations and prints the change; JUnit XML
# is well formed; metric cases; manifest errors name file:line; exit codes.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
in=$MEDIA/h264-aac.mp4
export VKCU_MEDIA=$MEDIA
v() { "$VKCU" verify "$@" > "$TMP/out" 2> "$TMP/err"; echo $? > "$TMP/rc"; }
rc() { cat "$TMP/rc"; }
last() { tail -1 "$TMP/out"; }
xml_ok() { # file tests failures: well-formed JUnit with these totals
  python3 - "$@" <<'EOF'
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
root = d.documentElement
cases = d.getElementsByTagName('testcase')
fails = d.getElementsByTagName('failure')
ok = (root.tagName == 'testsuites' and len(cases) == int(sys.argv[2]) and len(fails) == int(sys.argv[3])
      and root.getAttribute('tests') == sys.argv[2] and root.getAttribute('failures') == sys.argv[3])
sys.exit(0 if ok else 1)
EOF
}

# The golden manifests on the CPU backend.
n_conf=$(grep -c '^\[case ' "$root/media/conformance.manifest")
n_streams=$(ls "$VKCU_CONFORMANCE"/*.264 "$VKCU_CONFORMANCE"/*.h264 "$VKCU_CONFORMANCE"/*.h265 2>/dev/null | wc -l)
v --backend cpu "$root/media/conformance.manifest" --junit "$TMP/conf.xml"
if [ "$(rc)" = 0 ] && [ "$(last)" = "$n_conf passed, 0 failed" ] && [ "$n_conf" = "$n_streams" ]; then
  pass "verify: media/conformance.manifest, $n_conf streams on the CPU backend"
else
  fail "verify: conformance manifest: exit $(rc), '$(last)' ($n_conf cases, $n_streams streams): $(grep -m2 ^FAIL "$TMP/out" | tr '\n' ' ')"
fi
xml_ok "$TMP/conf.xml" "$n_conf" 0 && pass "verify: --junit writes well-formed XML ($n_conf testcases)" ||
  fail "verify: --junit XML malformed or wrong totals: $(head -3 "$TMP/conf.xml" | tr '\n' ' ')"
bad=0
for s in "$VKCU_CONFORMANCE"/*.framemd5; do
  g=$root/media/golden/conformance/$(basename "$s")
  cmp -s <(frames "$s") <(frames "$g") || { bad=1; fail "verify: golden $(basename "$g") differs from the conformance .framemd5"; }
done
[ "$bad" = 0 ] && pass "verify: golden conformance hashes equal FFmpeg's .framemd5 data"

n_clips=$(grep -c '^\[case ' "$root/media/clips.manifest")
v --backend cpu "$root/media/clips.manifest"
if [ "$(rc)" = 0 ] && [ "$(last)" = "$n_clips passed, 0 failed" ]; then
  pass "verify: media/clips.manifest, $n_clips cases (every operator and preset) on the CPU backend"
else
  fail "verify: clips manifest: exit $(rc), '$(last)': $(grep -m3 ^FAIL "$TMP/out" | tr '\n' ' ')"
fi

# A manifest of our own: an inline case, a sidecar case, a metric case.
"$FFMPEG" -hide_banner -loglevel error -nostdin -y -i "$in" -an \
  -vf "drawbox=x=10:y=10:w=40:h=30:color=red:t=fill:enable='eq(n,17)'" -c:v ffv1 "$TMP/altered.mkv" ||
  fail "verify: could not make the altered copy"
mkdir -p "$TMP/m"
cp "$in" "$TMP/m/clip.mp4"
cat > "$TMP/m/t.manifest" <<'EOF'
# test manifest
vkcu-manifest 1

[case inline]
input = clip.mp4
frames = 20

[case sidecar]
input = ${VKCU_MEDIA}/h264-aac.mp4
chain = copy
hashes = t.sidecar.framemd5

[case metric]
input = clip.mp4
reference = ../altered.mkv
min-psnr = 25
EOF
v "$TMP/m/t.manifest"
[ "$(rc)" = 6 ] && grep -q '^FAIL inline: no expected hashes (record them: rerun .* with --update)' "$TMP/out" &&
  grep -q '^FAIL sidecar: no expected hashes: .*t.sidecar.framemd5 does not exist' "$TMP/out" &&
  grep -q '^PASS metric: PASS: 1 of 50 frames differ, within --min-psnr 25' "$TMP/out" && [ "$(last)" = "1 passed, 2 failed" ] &&
  pass "verify: cases without expectations fail and say how to record them" ||
  fail "verify: first run: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

v "$TMP/m/t.manifest" --update
if [ "$(rc)" = 0 ] && grep -q '^UPDATED inline: recorded 20 frames' "$TMP/out" && grep -q '^UPDATED sidecar: recorded 50 frames' "$TMP/out" &&
  [ "$(grep -c '^0, ' "$TMP/m/t.manifest")" = 20 ] && [ "$(frames "$TMP/m/t.sidecar.framemd5" | wc -l)" = 50 ] &&
  grep -q '^\[case sidecar\]' "$TMP/m/t.manifest" && grep -q '^# test manifest' "$TMP/m/t.manifest" && no_leftovers "$TMP/m"; then
  pass "verify: --update records 20 inline frame lines and a 50-frame sidecar, keeps the rest of the manifest"
else
  fail "verify: --update: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"
fi
cmp -s <(frames "$TMP/m/t.sidecar.framemd5") <("$VKCU" hash --backend cpu "$in" | grep -v '^#') &&
  pass "verify: the recorded sidecar equals vkcu hash" || fail "verify: sidecar differs from vkcu hash"
v "$TMP/m/t.manifest" --junit "$TMP/m/t.xml"
[ "$(rc)" = 0 ] && [ "$(last)" = "3 passed, 0 failed" ] && xml_ok "$TMP/m/t.xml" 3 0 && pass "verify: after --update every case passes" ||
  fail "verify: after update: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

# One changed frame in the sidecar: that frame is named, exit 6, JUnit has the failure.
cp "$TMP/m/t.sidecar.framemd5" "$TMP/m/good.framemd5"
python3 - "$TMP/m/t.sidecar.framemd5" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split('\n')
frame_lines = [i for i, l in enumerate(lines) if l and not l.startswith('#')]
i = frame_lines[17]
h = lines[i][-32:]
lines[i] = lines[i][:-32] + ('0' if h[0] != '0' else '1') + h[1:]
open(sys.argv[1], 'w').write('\n'.join(lines))
EOF
v "$TMP/m/t.manifest" --junit "$TMP/m/t.xml" -y
[ "$(rc)" = 6 ] && grep -q '^FAIL sidecar: 1 of 50 frames differ; first: frame 17 (pts 17): hash ' "$TMP/out" &&
  grep -q 'if intended: rerun .* with --update)' "$TMP/out" && [ "$(last)" = "2 passed, 1 failed" ] && xml_ok "$TMP/m/t.xml" 3 1 &&
  grep -q '<failure message="1 of 50 frames differ; first: frame 17' "$TMP/m/t.xml" &&
  pass "verify: a changed frame fails naming frame 17 (exit 6, JUnit failure)" ||
  fail "verify: changed frame: exit $(rc): $(grep ^FAIL "$TMP/out" | tr '\n' ' ')"

# One frame lost from the expectation: one unexpected frame, not 33 changed ones.
grep -v '^0, *18,' "$TMP/m/good.framemd5" > "$TMP/m/t.sidecar.framemd5"
v "$TMP/m/t.manifest" --case sidecar
[ "$(rc)" = 6 ] && grep -q '^FAIL sidecar: 50 frames, expected 49 (0 missing, 1 not expected, 0 changed); first: frame 18 (pts 18) is not expected' "$TMP/out" &&
  pass "verify: a frame count change is reported as such, not as a cascade" ||
  fail "verify: count change: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

# --update after a deliberate change (a new chain) prints what changed.
sed -i 's/^frames = 20$/frames = 20\nchain = denoise=tnr:sigma=6/' "$TMP/m/t.manifest"
v "$TMP/m/t.manifest" --case inline
[ "$(rc)" = 6 ] && grep -q '^FAIL inline: [0-9]* of 20 frames differ; first: frame [0-9]* (pts [0-9]*): hash [0-9a-f]*, expected [0-9a-f]*' "$TMP/out" &&
  pass "verify: changing the chain fails the inline case" || fail "verify: chain change: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"
v "$TMP/m/t.manifest" --update
[ "$(rc)" = 0 ] && grep -q '^UPDATED inline: [0-9]* of 20 frames differ; first: frame [0-9]* (pts [0-9]*): hash [0-9a-f]*, expected [0-9a-f]*; wrote' "$TMP/out" &&
  grep -q '^UPDATED sidecar: 50 frames, expected 49 (0 missing, 1 not expected, 0 changed)' "$TMP/out" &&
  grep -q '^PASS metric' "$TMP/out" && [ "$(last)" = "1 passed, 0 failed, 2 updated" ] &&
  [ "$(grep -c '^0, ' "$TMP/m/t.manifest")" = 20 ] && cmp -s "$TMP/m/t.sidecar.framemd5" "$TMP/m/good.framemd5" &&
  pass "verify: --update rewrites both expectations and prints what changed" ||
  fail "verify: update after change: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"
v "$TMP/m/t.manifest"
[ "$(rc)" = 0 ] && [ "$(last)" = "3 passed, 0 failed" ] && pass "verify: the updated manifest passes" ||
  fail "verify: after second update: exit $(rc): $(last)"

# Metric cases: limits decide.
sed -i 's/^min-psnr = 25$/max-diff = 10/' "$TMP/m/t.manifest"
v "$TMP/m/t.manifest" --case metric
[ "$(rc)" = 6 ] && grep -q '^FAIL metric: MISMATCH: 1 of 50 frames outside the limits (--max-diff 10); first: frame 17 (pts 0.680 s)' "$TMP/out" &&
  pass "verify: a metric case outside --max-diff fails on frame 17" || fail "verify: metric case: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

# Backend pinning: a case whose expectation holds on the GPU only is skipped on the CPU.
printf 'vkcu-manifest 1\n[case g]\ninput = clip.mp4\nbackends = gpu\nframes = 2\n' > "$TMP/m/g.manifest"
v --backend cpu "$TMP/m/g.manifest"
[ "$(rc)" = 0 ] && grep -q '^SKIP g: the expectation holds on gpu only, not on cpu' "$TMP/out" && [ "$(last)" = "0 passed, 0 failed, 1 skipped" ] &&
  pass "verify: backends = gpu is skipped under --backend cpu" || fail "verify: backends: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

# Variables that resolve to nothing: the case fails and says what to set.
mkdir -p "$TMP/iso/a/b"
printf 'vkcu-manifest 1\n[case c]\ninput = ${VKCU_TEST_UNSET}/x.mp4\n' > "$TMP/iso/a/b/u.manifest"
VKCU_TEST_UNSET= v "$TMP/iso/a/b/u.manifest"
[ "$(rc)" = 6 ] && grep -q 'VKCU_TEST_UNSET} is not set (set it in the environment, or write ${NAME:-default})' "$TMP/out" &&
  pass "verify: an unset \${VARIABLE} fails its case and says what to do" || fail "verify: unset variable: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"
printf 'vkcu-manifest 1\n[case c]\ninput = ${CONFORMANCE}/bear.h265\n' > "$TMP/iso/a/b/c.manifest"
above=$(d=$TMP/iso/a/b; while [ "$d" != / ]; do [ -d "$d/../shared/conformance" ] && echo "$d/../shared/conformance"; d=$(dirname "$d"); done | head -1)
if [ -n "$above" ]; then
  skip "verify: unresolvable \${CONFORMANCE}: this machine has $above above the test folder"
else
  VKCU_CONFORMANCE= v "$TMP/iso/a/b/c.manifest"
  [ "$(rc)" = 6 ] && grep -q 'CONFORMANCE} is not set (set VKCU_CONFORMANCE' "$TMP/out" &&
    pass "verify: unresolvable \${CONFORMANCE} names the variable to set" ||
    fail "verify: CONFORMANCE: exit $(rc): $(cat "$TMP/out" "$TMP/err" | tr '\n' ' ')"
fi
# ... and found as ../shared/conformance above the manifest's folder.
mkdir -p "$TMP/iso/shared" && ln -s "$VKCU_CONFORMANCE" "$TMP/iso/shared/conformance"
printf '[case c]\ninput = ${CONFORMANCE}/bear.h265\nhashes = ${CONFORMANCE}/bear.h265.framemd5\n' >> "$TMP/iso/a/b/c.manifest"
sed -i '2,3d' "$TMP/iso/a/b/c.manifest"
# The expectation lies beside the streams, outside the manifest's folder: --allow-outside.
VKCU_CONFORMANCE= v "$TMP/iso/a/b/c.manifest" --allow-outside
[ "$(rc)" = 0 ] && grep -q '^PASS c: 30 frames' "$TMP/out" && pass "verify: \${CONFORMANCE} found as ../shared/conformance above the manifest" ||
  fail "verify: CONFORMANCE search: exit $(rc): $(cat "$TMP/out" "$TMP/err" | tr '\n' ' ')"

# A missing input fails its case naming the file; a missing pipeline too.
printf 'vkcu-manifest 1\n[case gone]\ninput = nope.mp4\n[case nopipe]\ninput = clip.mp4\npipeline = no-such-preset\n' > "$TMP/m/e.manifest"
v "$TMP/m/e.manifest"
[ "$(rc)" = 6 ] && grep -q '^FAIL gone: .*nope.mp4: no such file' "$TMP/out" && grep -q "^FAIL nopipe: .*no-such-preset" "$TMP/out" &&
  pass "verify: missing input and unknown pipeline fail their cases" || fail "verify: missing input: exit $(rc): $(cat "$TMP/out" | tr '\n' ' ')"

# Manifest errors name file:line and run nothing (exit 3); usage errors exit 2.
printf 'vkcu-manifest 1\n[case a]\ninput = clip.mp4\ncolour = blue\n' > "$TMP/m/bad.manifest"
expect "verify: unknown key names file:line (exit 3)" 3 "bad.manifest:4: unknown key 'colour'" -- "$VKCU" verify "$TMP/m/bad.manifest"
printf '[case a]\ninput = clip.mp4\n' > "$TMP/m/nover.manifest"
expect "verify: missing format line (exit 3)" 3 "nover.manifest:1: not a vkcu manifest" -- "$VKCU" verify "$TMP/m/nover.manifest"
printf 'vkcu-manifest 1\n[case a]\n[case a]\ninput = x\n' > "$TMP/m/dup.manifest"
expect "verify: duplicate case (exit 3)" 3 "dup.manifest:3: case 'a' already defined on line 2" -- "$VKCU" verify "$TMP/m/dup.manifest"
expect "verify: missing manifest (exit 3)" 3 'nope.manifest: no such file' -- "$VKCU" verify "$TMP/nope.manifest"
expect "verify: no manifest is a usage error" 2 'no manifest' -- "$VKCU" verify
expect "verify: --chain on the command line is a usage error" 2 'belongs in a manifest case' -- "$VKCU" verify --chain copy "$TMP/m/t.manifest"
expect "verify: unwritable --junit exits 4" 4 'no-dir/j.xml' -- "$VKCU" verify "$TMP/m/t.manifest" --junit "$TMP/no-dir/j.xml"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fluster over the repository's conformance streams with vkcu's CPU decoder:
# tools/fluster/make-suite.py writes the suites (results from the build's
# FFmpeg), tools/fluster/vkcu_fluster.py runs fluster with vkcu's decoders,
# and its JUnit XML must list every stream as passed. A suite with one wrong
# result must then report that vector as failed.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

# The GPU decoders' guard: a software decode is an error, not a fallback.
s=$VKCU_CONFORMANCE/64x64-I-P-B-P.h265
expect "fluster: --require-gpu-decode refuses the CPU backend (exit 5)" 5 "require-gpu-decode" -- \
  "$VKCU" hash --whole --backend cpu --require-gpu-decode "$s"
if ! nvidia-smi > /dev/null 2>&1; then
  expect "fluster: --require-gpu-decode without a GPU fails instead of decoding in software (exit 5)" 5 "require-gpu-decode" -- \
    "$VKCU" hash --whole --require-gpu-decode "$s"
fi

# fluster writes JUnit XML through junitparser (Debian: python3-junitparser)
have_fluster() { /usr/bin/python3 -c 'import fluster.main, junitparser' 2>/dev/null; }
if ! have_fluster; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fluster python3-junitparser > "$TMP/apt.log" 2>&1 ||
      { apt-get update -qq > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fluster python3-junitparser > "$TMP/apt.log" 2>&1; }
  fi
  have_fluster || { skip "fluster: not installed and cannot be installed here (apt-get install fluster python3-junitparser, as root)"; exit 0; }
fi
py=/usr/bin/python3
n_streams=$(ls "$VKCU_CONFORMANCE"/*.264 "$VKCU_CONFORMANCE"/*.h264 "$VKCU_CONFORMANCE"/*.h265 2>/dev/null | wc -l)
[ "$n_streams" -gt 0 ] || { fail "fluster: no streams in $VKCU_CONFORMANCE"; exit 0; }
if ! FFMPEG_BIN=$FFMPEG_BIN "$py" "$root/tools/fluster/make-suite.py" "$VKCU_CONFORMANCE" "$TMP/fl" > "$TMP/gen.log" 2>&1; then
  fail "fluster: make-suite.py failed: $(tail -1 "$TMP/gen.log")"; exit 0
fi
run_fluster() { # junit-file suite-dir
  (cd "$TMP" && VKCU=$VKCU "$py" "$root/tools/fluster/vkcu_fluster.py" -ne -tsd "$2" -r "$TMP/fl/resources" \
    -o "$TMP/fl/results" run -j 1 -d vkcu-H.264-cpu vkcu-H.265-cpu -f junitxml -so "$1") > "$TMP/run.log" 2>&1
}
count() { # junit-file -> "tests failures+errors" over all suites
  "$py" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.iter("testcase")
t = f = 0
for c in cases:
    t += 1
    f += any(x.tag in ("failure", "error") for x in c)
print(t, f)
PY
}
run_fluster "$TMP/junit.xml" "$TMP/fl/suites"
got=$(count "$TMP/junit.xml" 2>&1)
[ "$got" = "$n_streams 0" ] &&
  pass "fluster: vkcu CPU decoder passes all $n_streams local conformance vectors (JUnit XML)" ||
  fail "fluster: expected '$n_streams 0' (tests failures), got '$got': $(grep -iE 'fail|error' "$TMP/run.log" | head -2 | tr '\n' ' ')"

# one wrong expected result: that vector, and only it, fails
mkdir -p "$TMP/bad"
"$py" - "$TMP/fl/suites/vkcu-local-h265.json" "$TMP/bad/vkcu-local-h265.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["test_vectors"][0]["result"] = "0" * 32
json.dump(d, open(sys.argv[2], "w"))
PY
cp "$TMP/fl/suites/vkcu-local-h264.json" "$TMP/bad/"
run_fluster "$TMP/junit-bad.xml" "$TMP/bad"
got=$(count "$TMP/junit-bad.xml" 2>&1)
[ "$got" = "$n_streams 1" ] && pass "fluster: a wrong expected checksum is reported as one failure" ||
  fail "fluster: wrong checksum: expected '$n_streams 1', got '$got'"

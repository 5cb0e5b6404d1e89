#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# verify for big suites: -j N prints the same lines in manifest order as
# -j 1, --fail-fast stops at the first failure, a case's `timeout` key and
# --timeout fail a case that runs too long, --summary writes Markdown (an
# existing file is refused without -y).
. "$(dirname "$0")/lib.sh"
C=$VKCU_CONFORMANCE
for s in 64x64-I-P-B-P.h265 bear.h265 64x64-I-P-B-P-high.h264 test-25fps.h265 test-25fps.h264; do
  [ -f "$C/$s" ] || { fail "verify-suite: $C/$s missing"; exit 0; }
done
m=$TMP/suite.manifest
cat > "$m" <<EOF2
vkcu-manifest 1
[case c1]
input = $C/64x64-I-P-B-P.h265
hashes = c1.framemd5
backend = cpu
[case c2]
input = $C/bear.h265
hashes = c2.framemd5
backend = cpu
[case c3]
input = $C/64x64-I-P-B-P-high.h264
hashes = c3.framemd5
backend = cpu
[case c4]
input = $C/test-25fps.h265
hashes = c4.framemd5
backend = cpu
[case c5]
input = $C/test-25fps.h264
hashes = c5.framemd5
backend = cpu
EOF2
"$VKCU" verify --update "$m" > "$TMP/upd" 2>&1 || { fail "verify-suite: recording failed: $(tail -1 "$TMP/upd")"; exit 0; }
# c2 expects something else for its second frame
awk -F', ' 'BEGIN{OFS=", "} !/^#/ && ++n == 2 {$6 = "00000000000000000000000000000000"} {print}' "$TMP/c2.framemd5" > "$TMP/x" &&
  mv "$TMP/x" "$TMP/c2.framemd5"

"$VKCU" verify "$m" > "$TMP/j1" 2>&1; rc1=$?
"$VKCU" verify -j 4 "$m" > "$TMP/j4" 2>&1; rc4=$?
[ "$rc1" = 6 ] && [ "$rc4" = 6 ] && cmp -s "$TMP/j1" "$TMP/j4" &&
  [ "$(cut -d: -f1 "$TMP/j4" | head -5 | tr '\n' ' ')" = "PASS c1 FAIL c2 PASS c3 PASS c4 PASS c5 " ] &&
  grep -qx '4 passed, 1 failed' "$TMP/j4" &&
  pass "verify-suite: -j 4 prints the same lines as -j 1, in manifest order (exit 6, a mismatch)" ||
  fail "verify-suite: -j 4 (exit $rc4) differs from -j 1 (exit $rc1): $(diff "$TMP/j1" "$TMP/j4" | head -3 | tr '\n' ' ') $(head -5 "$TMP/j4" | cut -c1-40 | tr '\n' ' ')"

for j in 1 3; do
  "$VKCU" verify -j $j --fail-fast "$m" > "$TMP/ff" 2>&1; rc=$?
  [ "$rc" = 6 ] && [ "$(grep -c '^PASS\|^FAIL' "$TMP/ff")" = 2 ] && grep -q '^FAIL c2' "$TMP/ff" &&
    grep -qx '1 passed, 1 failed, 3 not run (--fail-fast)' "$TMP/ff" &&
    pass "verify-suite: --fail-fast -j $j stops at c2, 3 cases not run" ||
    fail "verify-suite: --fail-fast -j $j (exit $rc): $(tr '\n' ' ' < "$TMP/ff" | cut -c1-300)"
done

# timeout: the manifest key for one case, --timeout for every case without one
sed 's/^\[case c5\]$/[case c5]\ntimeout = 0.001/' "$m" > "$TMP/t.manifest"
"$VKCU" verify --case c5 --case c1 "$TMP/t.manifest" > "$TMP/t" 2>&1; rc=$?
[ "$rc" = 6 ] && grep -q '^FAIL c5: .*time limit' "$TMP/t" && grep -q '^PASS c1' "$TMP/t" &&
  pass "verify-suite: a case's 'timeout' key fails it at its time limit, others pass" ||
  fail "verify-suite: timeout key (exit $rc): $(tr '\n' ' ' < "$TMP/t" | cut -c1-300)"
"$VKCU" verify --timeout 0.001 -j 2 "$m" > "$TMP/t2" 2>&1; rc=$?
[ "$rc" = 6 ] && [ "$(grep -c '^FAIL c[1-5]: .*time limit' "$TMP/t2")" = 5 ] &&
  pass "verify-suite: --timeout fails every case that runs longer" ||
  fail "verify-suite: --timeout (exit $rc): $(tr '\n' ' ' < "$TMP/t2" | cut -c1-300)"
expect "verify-suite: --timeout 0 is a usage error" 2 "--timeout" -- "$VKCU" verify --timeout 0 "$m"
expect "verify-suite: -j 0 is a usage error" 2 "-j" -- "$VKCU" verify -j 0 "$m"
expect "verify-suite: a bad timeout key names its line" 3 "bad.manifest:[0-9]+: timeout" -- "$VKCU" verify "$(sed 's/0.001/soon/' "$TMP/t.manifest" > "$TMP/bad.manifest"; echo "$TMP/bad.manifest")"

# Markdown summary
"$VKCU" verify -j 2 --summary "$TMP/sum.md" "$m" > /dev/null 2>&1; rc=$?
[ "$rc" = 6 ] && grep -q '^## vkcu verify: FAILED' "$TMP/sum.md" && grep -q '^4 passed, 1 failed' "$TMP/sum.md" &&
  grep -q '^- \*\*c2\*\*' "$TMP/sum.md" && [ "$(grep -c '^| c[1-5] |' "$TMP/sum.md")" = 5 ] &&
  grep -q '^| c2 | .* | FAIL |' "$TMP/sum.md" &&
  pass "verify-suite: --summary writes a Markdown table of every case and the failures" ||
  fail "verify-suite: --summary (exit $rc): $(head -c 300 "$TMP/sum.md" 2>&1 | tr '\n' ' ')"
cp "$TMP/sum.md" "$TMP/sum.before"
expect "verify-suite: an existing --summary file is refused without -y" 4 "already exists" -- "$VKCU" verify --summary "$TMP/sum.md" "$m"
cmp -s "$TMP/sum.md" "$TMP/sum.before" && "$VKCU" verify -y --case c1 --summary "$TMP/sum.md" "$m" > /dev/null 2>&1 &&
  grep -q '^## vkcu verify: passed' "$TMP/sum.md" && no_leftovers "$TMP" &&
  pass "verify-suite: the refused summary is untouched; -y replaces it" ||
  fail "verify-suite: summary with -y: $(head -2 "$TMP/sum.md" | tr '\n' ' ')"

# ${CONFORMANCE} unset: the `conformance` folder beside the manifest (the
# repository's media/conformance beside media/conformance.manifest)
mkdir -p "$TMP/own" && ln -s "$C" "$TMP/own/conformance"
printf 'vkcu-manifest 1\n[case own]\ninput = ${CONFORMANCE}/bear.h265\nhashes = ${CONFORMANCE}/bear.h265.framemd5\n' > "$TMP/own/m.manifest"
VKCU_CONFORMANCE= "$VKCU" verify --allow-outside "$TMP/own/m.manifest" > "$TMP/own.out" 2>&1; rc=$?
[ "$rc" = 0 ] && grep -q '^PASS own: 30 frames' "$TMP/own.out" &&
  pass "verify-suite: \${CONFORMANCE} unset finds the conformance folder beside the manifest" ||
  fail "verify-suite: own conformance folder: exit $rc: $(tr '\n' ' ' < "$TMP/own.out")"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HTML reports: `compare --report` and `verify --html` write one valid,
# self-contained page (no external address, no script) whose charts have one
# point per paired frame, whose worst frames are the lowest-PSNR rows of
# --csv, and which shows odd file names (quotes, backslashes, <>&, a newline,
# a stray non-UTF-8 byte) as their bytes; a real headless browser (Debian's
# chromium, else firefox-esr) draws the charts; the output-file rule holds.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
check() { python3 "$root/tests/cli/report-check.py" "$@"; }
in=$MEDIA/h264-aac.mp4
odd=$(printf 'we"ird\\<a&b>\nc\351.mp4')
mkdir -p "$TMP/odd"
cp "$in" "$TMP/odd/$odd"
a=$TMP/odd/$odd

# compare --report: A (odd name) against its denoised self, within the limit
"$VKCU" compare --backend cpu "$a" "$in" --chain-b 'denoise=tnr:sigma=6' --min-psnr 30 \
  --report "$TMP/r.html" --csv "$TMP/r.csv" > "$TMP/out" 2> "$TMP/err"
rc=$?
if [ $rc = 0 ] && grep -q '^report: .*r.html (50 frames plotted, 4 worst frames)$' "$TMP/out"; then
  msg=$(check "$TMP/r.html" compare "$TMP/r.csv" "$a" 2>&1)
  [ "$msg" = ok ] &&
    pass "report: compare --report is one valid self-contained page: PSNR Y/U/V and SSIM with 50 points each, the 4 lowest-PSNR frames of --csv as A/B/difference PNGs, the odd name shown as its bytes" ||
    fail "report: compare page: $msg"
else
  fail "report: compare --report: exit $rc, $(tail -1 "$TMP/out") $(tail -1 "$TMP/err")"
fi
grep -q 'we&quot;ird\\&lt;a&amp;b&gt;<span class="esc">\\x0A</span>c<span class="esc">\\xE9</span>\.mp4' "$TMP/r.html" &&
  pass "report: the name's quote, backslash, <, &, >, newline and stray byte are escaped in the page's text" ||
  fail "report: the odd name is not escaped as expected: $(grep -o 'id="name-a">[^<]*' "$TMP/r.html" | head -1)"

# with libvmaf built in, a VMAF chart of one point per frame joins them
if "$VKCU" --version | grep -q '^VMAF: libvmaf'; then
  "$VKCU" compare --backend cpu "$in" "$in" --chain-b 'denoise=tnr:sigma=6' --frames 10 --vmaf --report "$TMP/vmaf.html" \
    > /dev/null 2> "$TMP/err"
  n=$(python3 -c 'import re,sys; t=open(sys.argv[1]).read(); f=re.search(r"id=\"cmp-vmaf\".*?</figure>", t, re.S).group(0); print(len(re.search(r"<polyline[^>]*points=\"([^\"]*)\"", f).group(1).split()))' \
    "$TMP/vmaf.html" 2>&1)
  [ "$n" = 10 ] && grep -q '<th>VMAF</th><td>mean: ' "$TMP/vmaf.html" &&
    pass "report: with --vmaf the page has a VMAF chart of 10 points and the mean in the summary" ||
    fail "report: VMAF chart: $n $(tail -1 "$TMP/err")"
else
  skip "report: VMAF chart: this build has no libvmaf (docs/regression.md, VMAF)"
fi

# a mismatch still writes its page; the result says so
"$VKCU" compare --backend cpu "$in" "$in" --chain-b 'denoise=tnr:sigma=6' --frames 5 --report "$TMP/mis.html" \
  > /dev/null 2>&1
rc=$?
[ $rc = 6 ] && grep -q '<td class="fail" id="result">MISMATCH: 5 of 5 frames differ' "$TMP/mis.html" &&
  grep -q '<td>identical frames required</td>' "$TMP/mis.html" &&
  pass "report: a mismatch (exit 6) writes the page with the MISMATCH result and the limit" ||
  fail "report: mismatch page: exit $rc"

# a hash list has no pictures: the page says so and draws no chart
"$VKCU" hash --backend cpu "$in" -o "$TMP/h.framemd5" 2> "$TMP/err"
"$VKCU" compare --backend cpu "$TMP/h.framemd5" "$in" --report "$TMP/h.html" > /dev/null 2> "$TMP/err"
rc=$?
msg=$(check "$TMP/h.html" empty 'a hash list holds no pictures' 2>&1)
[ $rc = 0 ] && [ "$msg" = ok ] && grep -q 'IDENTICAL: 50 frames' "$TMP/h.html" &&
  pass "report: against a hash list the page has the result and says why there is no chart" ||
  fail "report: hash-list page: exit $rc, $msg $(tail -1 "$TMP/err")"

# the output-file rule
echo keep > "$TMP/exists.html"
expect "report: an existing --report file is refused without -y (exit 4, before decoding)" 4 "exists.html.*-y" -- \
  "$VKCU" compare --backend cpu "$in" "$in" --report "$TMP/exists.html"
[ "$(cat "$TMP/exists.html")" = keep ] || fail "report: the refused file was changed"
"$VKCU" compare --backend cpu "$in" "$in" --frames 3 --report "$TMP/exists.html" -y > /dev/null 2>&1 &&
  grep -q 'IDENTICAL: 3 frames' "$TMP/exists.html" && pass "report: -y replaces it" || fail "report: -y did not replace the page"
cp "$in" "$TMP/in.mp4"
expect "report: --report naming an input is refused even with -y" 4 "" -- \
  "$VKCU" compare --backend cpu "$TMP/in.mp4" "$in" --report "$TMP/in.mp4" -y
cmp -s "$in" "$TMP/in.mp4" || fail "report: the input was changed"
expect "report: one file for --csv and --report is a usage error" 2 "given to two outputs" -- \
  "$VKCU" compare --backend cpu "$in" "$in" --csv "$TMP/same" --report "$TMP/same"
expect "report: a --report in a missing folder is exit 4 naming it" 4 "nothere/r.html" -- \
  "$VKCU" compare --backend cpu "$in" "$in" --frames 2 --report "$TMP/nothere/r.html"
ls -A "$TMP" | grep -q '\.part' && fail "report: a temporary file was left: $(ls -A "$TMP" | grep '\.part')"

# verify --html: a passing case, a hash case with a changed and a missing
# frame, a metric case outside its limit, a case whose input is missing;
# the manifest's folder has an odd name too
md=$TMP/$(printf 'man "<&>\\\351')
mkdir -p "$md"
cp "$in" "$md/clip.mp4"
"$VKCU" hash --backend cpu "$md/clip.mp4" -o "$md/good.framemd5" 2> "$TMP/err"
sed -e '/^0, *4,/s/, [0-9a-f]*$/, 00000000000000000000000000000000/' "$md/good.framemd5" > "$md/bad.framemd5"
"$FFMPEG" -v error -nostdin -i "$in" -an -vf 'select=not(eq(n\,9))' -fps_mode passthrough -c:v ffv1 "$md/lost.mkv"
cat > "$md/t.manifest" <<'EOF'
vkcu-manifest 1
[case good]
input = clip.mp4
hashes = good.framemd5
[case changed]
input = clip.mp4
hashes = bad.framemd5
[case lost]
input = lost.mkv
hashes = good.framemd5
[case fidelity]
input = clip.mp4
chain = denoise=tnr:sigma=6
reference = clip.mp4
min-psnr = 45
[case gone]
input = nothere.mp4
hashes = good.framemd5
EOF
"$VKCU" verify --backend cpu "$md/t.manifest" --html "$TMP/v.html" > "$TMP/out" 2> "$TMP/err"
rc=$?
msg=$(check "$TMP/v.html" verify "$md/t.manifest" \
  "good:PASS changed:FAIL:marks=50:changed=1:missing=0 lost:FAIL:marks=50:changed=0:missing=1 fidelity:FAIL:points=50 gone:FAIL" 2>&1)
[ $rc = 6 ] && [ "$msg" = ok ] && grep -q '<p class="fail" id="totals">1 passed, 4 failed</p>' "$TMP/v.html" &&
  pass "report: verify --html: valid self-contained page, every case, each failure linked to its frames (hash cases) or charts (metric case)" ||
  fail "report: verify --html: exit $rc, $msg $(tail -1 "$TMP/err")"
expect "report: an existing --html file is refused before any case runs (exit 4)" 4 "v.html" -- \
  "$VKCU" verify --backend cpu "$md/t.manifest" --html "$TMP/v.html"

# A real browser draws the charts: the page and the same page without its
# polylines, screenshot; the series must change pixels and bring the SSIM
# colour (#7b3fb5) that the page without them lacks.
browser=
for b in chromium chromium-browser google-chrome firefox-esr firefox; do
  command -v "$b" > /dev/null && { browser=$b; break; }
done
if [ -z "$browser" ]; then
  bash "$root/tools/deps.sh" --test-packages >> "$TMP/deps.log" 2>&1
  command -v chromium > /dev/null && browser=chromium
fi
shot() { # page png: 1000x1000 screenshot
  case $browser in
    firefox*) timeout 180 "$browser" --headless --window-size=1000,1000 --screenshot "$2" "file://$1" ;;
    *) timeout 180 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/profile" \
         --window-size=1000,1000 --screenshot="$2" "file://$1" ;;
  esac > "$TMP/browser.log" 2>&1
  [ -s "$2" ] && "$FFMPEG" -v error -nostdin -y -i "$2" -f rawvideo -pix_fmt rgb24 "$2.rgb"
}
if [ -z "$browser" ]; then
  skip "report: no headless browser (chromium or firefox-esr) and none could be installed ($(tail -1 "$TMP/deps.log"))"
else
  sed '/<polyline/d' "$TMP/r.html" > "$TMP/bare.html"
  if shot "$TMP/r.html" "$TMP/page.png" && shot "$TMP/bare.html" "$TMP/bare.png"; then
    read -r differ with without < <(check pixels "$TMP/page.png.rgb" "$TMP/bare.png.rgb" 1000 1000 7b3fb5)
    [ "${differ:-0}" -gt 2000 ] && [ "${with:-0}" -gt 300 ] && [ "${without:-1}" -lt 60 ] &&
      pass "report: $browser draws the charts: the series change $differ pixels, $with pixels of the SSIM colour ($without without them)" ||
      fail "report: $browser did not draw the series: $differ pixels differ, SSIM colour $with with, $without without"
  else
    fail "report: $browser could not screenshot the page: $(tail -2 "$TMP/browser.log" | tr '\n' ' ')"
  fi
fi

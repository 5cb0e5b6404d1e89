# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for tests/cli/*.sh: each test prints one PASS/FAIL/SKIP line.
# Sourced with VKCU, FFMPEG_BIN, MEDIA and VKCU_CONFORMANCE set by tests/run.sh.
: "${VKCU:?run through tests/run.sh}"
FFPROBE="$FFMPEG_BIN/ffprobe"
FFMPEG="$FFMPEG_BIN/ffmpeg"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
skip() { echo "SKIP $*"; }
# expect NAME EXIT-CODE PATTERN -- command...: exit code and one stderr line matching PATTERN
expect() {
  local name=$1 code=$2 pat=$3; shift 4
  "$@" > "$TMP/.stdout" 2> "$TMP/.stderr"
  local rc=$?
  if [ "$rc" != "$code" ]; then fail "$name: exit $rc, expected $code ($(tail -1 "$TMP/.stderr"))"; return 1; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" "$TMP/.stderr"; then fail "$name: stderr lacks /$pat/: $(head -2 "$TMP/.stderr" | tr '\n' ' ')"; return 1; fi
  pass "$name"
}
frames() { grep -v '^#' "$1"; }
# await_part DIR [MIN_BYTES]: until a temporary output (*.part*) shows up
# somewhere under DIR, holding at least MIN_BYTES (default 0). For a test
# that interrupts a job once it is writing: the condition is what the job
# did, never a time, and the bound (120 s) is only there so that a broken
# job cannot hang the test. Returns non-zero when it never showed up.
await_part() {
  local size=() f
  [ -n "${2:-}" ] && size=(-size +"$(($2 - 1))"c)
  for _ in $(seq 6000); do
    f=$(find "$1" -name '*.part*' "${size[@]}" 2> /dev/null | head -1)
    [ -n "$f" ] && return 0
    sleep 0.02
  done
  return 1
}
# no_leftovers DIR: no temporary or partial files left behind
no_leftovers() { ! ls -A "$1" | grep -q '\.part'; }
probe_val() { # file stream entry
  "$FFPROBE" -v error -select_streams "$2" -show_entries "$3" -of default=nw=1:nk=1 "$1" | head -1
}
# metrics_vs_ffmpeg OUT A B GRAPH KEY LO HI: vkcu compare's PSNR/SSIM summary
# (in file OUT) equals ffmpeg's psnr and ssim filters on the pairs GRAPH makes
# of [0:v] and [1:v] (GRAPH ends with the two pads), to 0.01 dB and 0.001, and
# ffmpeg's PSNR KEY (y or average) lies in (LO, HI) so the pair tests something.
# Prints the figures (or what differs); returns non-zero on a difference.
metrics_vs_ffmpeg() {
  local out=$1 a=$2 b=$3 g=$4 key=$5 lo=$6 hi=$7
  "$FFMPEG" -hide_banner -nostdin -i "$a" -i "$b" -lavfi "${g}psnr" -f null - 2>&1 | grep -o 'PSNR y:.*' > "$TMP/ffpsnr"
  "$FFMPEG" -hide_banner -nostdin -i "$a" -i "$b" -lavfi "${g}ssim" -f null - 2>&1 | grep -o 'SSIM Y:.*' > "$TMP/ffssim"
  python3 - "$out" "$TMP/ffpsnr" "$TMP/ffssim" "$key" "$lo" "$hi" <<'PYEOF'
import re, sys
out = open(sys.argv[1]).read()
ffp, ffs = open(sys.argv[2]).read(), open(sys.argv[3]).read()
key, lo, hi = sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
def vals(text, keys):
    return {k: float(re.search(r'\b%s:([0-9.]+|inf)' % k, text).group(1)) for k in keys}
ours_p = vals(re.search(r'^PSNR .*$', out, re.M).group(0), ['y', 'u', 'v', 'average', 'min'])
ours_s = vals(re.search(r'^SSIM .*$', out, re.M).group(0), ['Y', 'U', 'V', 'All'])
theirs_p, theirs_s = vals(ffp, ['y', 'u', 'v', 'average', 'min']), vals(ffs, ['Y', 'U', 'V', 'All'])
bad = ['PSNR %s %.4f vs %.4f' % (k, ours_p[k], theirs_p[k]) for k in ours_p if abs(ours_p[k] - theirs_p[k]) > 0.01]
bad += ['SSIM %s %.5f vs %.5f' % (k, ours_s[k], theirs_s[k]) for k in ours_s if abs(ours_s[k] - theirs_s[k]) > 0.001]
if not lo < theirs_p[key] < hi:
    bad.append('the pair is not a useful test (FFmpeg PSNR %s %.2f, expected %g..%g)' % (key, theirs_p[key], lo, hi))
print('; '.join(bad) if bad else 'PSNR %s %.4f/%.4f dB, SSIM All %.5f/%.5f' % (key, ours_p[key], theirs_p[key], ours_s['All'], theirs_s['All']))
sys.exit(1 if bad else 0)
PYEOF
}

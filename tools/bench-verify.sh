#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Verify's cost per case (issue 22.12: parsing grew quadratically; 200k
# cases had printed nothing after 30 s). Times `vkcu verify` over generated
# manifests of 20k and 200k cases that each end as a SKIP without decoding
# (below), so the rows measure what grows with the manifest: loading,
# selecting, the run loop, the per-case lines and the JUnit file.
#
#   tools/bench-verify.sh                # CPU only; any machine
#
# Environment: BENCH_COUNTS ("20000 200000"), BENCH_DIR (a temporary folder,
# removed at the end). The target: 200k cases in at most 2 s, and the
# 200k/20k ratio near 10 (linear), not 100 (quadratic).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/gpu-env.sh
source "$root/tools/gpu-env.sh"
counts=${BENCH_COUNTS:-20000 200000}
[ -x "$VKCU" ] || { echo "bench-verify: no vkcu at $VKCU (build it, or unpack the GPU bundle)" >&2; exit 1; }
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
clip=$work/clip.mp4
: > "$clip" # never opened: every case is skipped before its input is read

# Each case asks for a backend its expectation does not hold on (backend =
# cpu, backends = gpu): verify skips it with its reason, without a job.
make_manifest() { # count file
  awk -v n="$1" -v clip="$clip" 'BEGIN {
    print "vkcu-manifest 1"
    for (i = 0; i < n; i++)
      printf "[case c%d]\ninput = %s\nbackend = cpu\nbackends = gpu\nframes = 1\nhashes = golden/c%d.framemd5\n", i, clip, i
  }' > "$2"
}

echo "vkcu verify: manifests of skipped cases (load, select, run loop, per-case lines, --junit)"
printf '%8s %10s %10s %10s\n' cases seconds "us/case" result
declare -A secs
for n in $counts; do
  m=$work/m$n.manifest
  make_manifest "$n" "$m"
  t0=$(date +%s.%N)
  "$VKCU" verify "$m" --junit "$work/j$n.xml" -y > "$work/out$n.txt" 2> "$work/err$n.txt"
  rc=$?
  t1=$(date +%s.%N)
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
  secs[$n]=$s
  skipped=$(grep -c '^SKIP ' "$work/out$n.txt")
  res="ok"
  [ "$rc" = 0 ] && [ "$skipped" = "$n" ] || res="FAILED (exit $rc, $skipped skipped: $(tail -1 "$work/err$n.txt"))"
  printf '%8s %10.2f %10.2f %10s\n' "$n" "$s" "$(awk -v s="$s" -v n="$n" 'BEGIN {print s * 1e6 / n}')" "$res"
done
first=${counts%% *}
last=${counts##* }
if [ "$first" != "$last" ]; then
  awk -v a="${secs[$first]}" -v b="${secs[$last]}" -v na="$first" -v nb="$last" 'BEGIN {
    r = b / a; lin = nb / na
    printf "ratio %s/%s cases: %.1f (linear: %.0f; quadratic: %.0f)\n", nb, na, r, lin, lin * lin
  }'
fi
awk -v s="${secs[$last]}" -v n="$last" 'BEGIN {
  printf "target: %s cases in at most 2 s: %.2f s (%s)\n", n, s, s <= 2 ? "met" : "NOT met"
}'

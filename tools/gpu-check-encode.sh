#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The compute encoders' GPU checks and benchmark (issue 25) in one call of
# the GPU machine, each part with its own deadline so that the whole stays
# under DEADLINE seconds (default 570): the GPU unit programs of the output
# ring and the encoders, tests/gpu.d/encode-compute.sh and transcode.sh
# (PASS/FAIL/SKIP lines), then BENCH_ONLY=compute tools/bench-transcode.sh.
# Everything goes to $OUT/encode/ (OUT defaults to build/); the last lines
# printed are the summary: the counts and the benchmark table.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$SECONDS
deadline=${DEADLINE:-570}
export OUT=${OUT:-$root/build}
log=$OUT/encode
mkdir -p "$log"
source tools/gpu-env.sh
left() { echo $(( deadline - (SECONDS - start) )); }
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; [ "$want" -lt 1 ] && want=1; echo "$want"; }
# The clips the checks and the benchmark read (made once; kept in .gpu/media).
timeout "$(cap 150)" bash -c 'source tools/gpu-env.sh; make_big_clips h264-10k.mp4 h264-1080p.mp4 h264-2160p.mp4' \
  > "$log/clips.log" 2>&1
# Only the result lines of what runs (timeout kills a part's whole process group).
tally() { grep --line-buffered -E '^(PASS|FAIL|SKIP)'; }
{
  for t in test_pack_gpu test_encode_ring_gpu test_vkencode; do
    timeout -s KILL "$(cap 90)" "$TESTBIN/$t" > "$log/$t.txt" 2>&1
    rc=$?
    case $rc in
      0) echo "PASS $t: $(tail -1 "$log/$t.txt")" ;;
      77) echo "SKIP $t: $(tail -1 "$log/$t.txt")" ;;
      *) echo "FAIL $t (exit $rc): $(tail -3 "$log/$t.txt" | tr '\n' ' ')" ;;
    esac
  done
  OUTDIR=$log timeout -s KILL "$(cap 300)" bash tests/gpu.d/encode-compute.sh 2> "$log/encode-compute.err"
  OUTDIR=$log timeout -s KILL "$(cap 90)" bash tests/gpu.d/transcode.sh 2> "$log/transcode.err"
} | tally | tee "$log/checks.txt"
read -r pass fail skip <<< "$(awk '/^PASS/{p++} /^FAIL/{f++} /^SKIP/{s++} END {print p+0, f+0, s+0}' "$log/checks.txt")"
echo "checks: $pass passed, $fail failed, $skip skipped ($((SECONDS - start)) s)"
OUT=$log BENCH_ONLY=compute timeout -s KILL "$(cap 240)" bash tools/bench-transcode.sh > "$log/bench.log" 2>&1
echo "bench (exit $?, $((SECONDS - start)) s in all): $log/bench-compute.md"
[ -s "$log/bench-compute.md" ] && grep '^|' "$log/bench-compute.md"
[ "$fail" = 0 ]

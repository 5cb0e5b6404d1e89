#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package's GPU tests and benchmark in one command with a
# deadline, for one call on the GPU machine (docs/python.md):
#   bash tools/gpu-python.sh        # logs and results under $OUT
# Makes the bench clips it needs (tools/gpu-env.sh), runs test_reader_gpu
# (the C API), tests/gpu.d/python.sh (PASS/FAIL/SKIP lines) and tools/bench-python.sh
# (the table and ratios), each under its own time limit, then prints both.
# GPU_PYTHON_DEADLINE (seconds, default 560) bounds the whole run.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
export OUT=${OUT:-$(mktemp -d)}
deadline=$(( $(date +%s) + ${GPU_PYTHON_DEADLINE:-560} ))
left() { echo $(( deadline - $(date +%s) )); }
source "$root/tools/gpu-env.sh"
timeout -s KILL "$(left)" bash -c "$(declare -f make_big_clips); make_big_clips h264-1080p.mp4 h264-2160p.mp4 h264-10k.mp4" \
  > "$OUT/clips.log" 2>&1 || echo "gpu-python: clips: $(tail -2 "$OUT/clips.log" | tr '\n' ' ')"
# The C API first (test_reader_gpu: CUDA frames = CPU frames, counters,
# random access, stream order, flat memory over the 10,000-frame clip).
if [ -x "$TESTBIN/test_reader_gpu" ]; then
  timeout -s KILL 120 "$TESTBIN/test_reader_gpu" "$BIG/h264-10k.mp4" > "$OUT/test_reader_gpu.txt" 2>&1
  echo "== test_reader_gpu (exit $?; 0 pass, 77 no GPU)"
  tail -6 "$OUT/test_reader_gpu.txt"
else
  echo "== test_reader_gpu: not built ($TESTBIN)"
fi
t=$(( $(left) - 200 )); [ "$t" -gt 30 ] || t=30
OUTDIR=$OUT timeout -s KILL "$t" bash "$root/tests/gpu.d/python.sh" > "$OUT/python-gpu.txt" 2> "$OUT/python-gpu.err"
echo "== tests/gpu.d/python.sh (exit $?): $(grep -c '^PASS' "$OUT/python-gpu.txt") PASS, $(grep -c '^FAIL' "$OUT/python-gpu.txt") FAIL, $(grep -c '^SKIP' "$OUT/python-gpu.txt") SKIP"
grep -v '^PASS python-cpu' "$OUT/python-gpu.txt"
cat "$OUT/python-gpu.err"
t=$(( $(left) - 5 )); [ "$t" -gt 10 ] || t=10
timeout -s KILL "$t" bash "$root/tools/bench-python.sh" > "$OUT/bench-python.log" 2>&1
echo "== tools/bench-python.sh (exit $?)"
cat "$OUT/bench-python.log"

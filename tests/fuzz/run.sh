#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make fuzz FUZZ_SECONDS=N`: runs each libFuzzer target for N seconds from
# its seed corpus (tests/fuzz/corpus/TARGET) plus what earlier runs found
# (BUILD/corpus/TARGET, kept between runs, not committed), and prints the
# executions per target. A crash, leak, timeout or out-of-memory input is
# written to tests/fuzz/regress/TARGET/: commit it with the fix, and
# `make test` replays it from then on.
# Usage: tests/fuzz/run.sh BIN-FOLDER SECONDS TARGET...
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bin=$1 secs=$2
shift 2
work=$(dirname "$bin")/corpus
logs=$(dirname "$bin")/fuzz-logs
mkdir -p "$logs"
failed=0
for t in "$@"; do
  mkdir -p "$work/$t" "tests/fuzz/regress/$t"
  log=$logs/$t.log
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: the fuzzer
  # stops an input that drives memory past 2 GiB (also a finding).
  "$bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="tests/fuzz/regress/$t/" "$work/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  found=$(sed -n 's/^artifact_prefix=.*Test unit written to //p' "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    echo "fuzz $t: ${execs:-?} executions in ${secs} s (${rate:-?}/s, ${cov:-cov: ?}, corpus $(ls "$work/$t" | wc -l) files)"
  else
    failed=1
    echo "fuzz $t: FAILED after ${execs:-?} executions: ${found:-see $log} ($(grep -m1 -E 'ERROR|check failed|runtime error' "$log" | cut -c1-160))"
  fi
done
exit $failed

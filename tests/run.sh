#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make test`: every unit program in build/tests (one line each) and every
# shell test in tests/cli/*.sh (PASS/FAIL/SKIP lines), then one total line.
# Unit programs exit 0 (pass), 77 (skip, with the reason as their last
# line) or anything else (fail). GPU programs are skipped here: they need an
# NVIDIA GPU and run under `make test-gpu`.
# The build folder is the first argument, else $BUILD, else build/
# (`make test-asan` runs the same tests over build-asan/ this way).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-${BUILD:-build}}
case $build in /*) ;; *) build=$root/$build ;; esac
# VKCU_WRAPPER: a script that runs $build/vkcu (tests/asan/run.sh sets one).
export VKCU=${VKCU_WRAPPER:-$build/vkcu} VKCU_BUILD=$build FFMPEG_BIN=$(sed -n 's/^FFMPEG_BIN := //p' "$build/deps.mk")
export VKCU_CONFORMANCE=${VKCU_CONFORMANCE:-$root/media/conformance}
export MEDIA=$root/media/gen
log=$build/test-logs
rm -rf "$log"; mkdir -p "$log"
pass=0 fail=0 skip=0
count() {
  case $1 in
    PASS*) pass=$((pass + 1)) ;;
    FAIL*) fail=$((fail + 1)) ;;
    SKIP*) skip=$((skip + 1)) ;;
  esac
  echo "$1"
}
# Under `make test-asan` (tests/asan/run.sh) sanitizers write their reports
# into $VKCU_SANITIZER_REPORTS; any report fails the test that caused it,
# whatever its exit code was.
sanitizer_check() {
  local dir=${VKCU_SANITIZER_REPORTS:-} f
  [ -n "$dir" ] || return 0
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    if grep -qE 'ERROR: |runtime error|SUMMARY: ' "$f"; then
      count "FAIL $1: sanitizer report $(basename "$f"): $(grep -m1 -E 'ERROR: |runtime error' "$f" | cut -c1-200)"
      mkdir -p "$log/sanitizer"; mv "$f" "$log/sanitizer/$1.$(basename "$f")"
    else
      rm -f "$f"
    fi
  done
}

for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  case $n in
    *gpu*) count "SKIP $n: needs an NVIDIA GPU with Vulkan Video (run 'make test-gpu' there)"; continue ;;
  esac
  timeout 600 "$t" > "$log/$n.log" 2>&1
  rc=$?
  case $rc in
    0) count "PASS $n" ;;
    77) count "SKIP $n: $(tail -1 "$log/$n.log")" ;;
    *) count "FAIL $n (exit $rc): $(tail -3 "$log/$n.log" | tr '\n' ' ')" ;;
  esac
  sanitizer_check "$n"
done

for s in tests/cli/*.sh; do
  n=$(basename "$s" .sh)
  while IFS= read -r line; do
    case $line in
      PASS*|FAIL*|SKIP*) count "$line" ;;
      *) echo "$line" >> "$log/$n.log" ;;
    esac
  done < <(timeout 1200 bash "$s" 2>>"$log/$n.log"; rc=$?; [ $rc = 0 ] || echo "FAIL $n: script exited $rc (see ${log#"$root"/}/$n.log)")
  sanitizer_check "$n"
done

echo
if [ "$skip" -gt 0 ]; then
  echo "($skip skipped, each with its reason above: GPU programs need an NVIDIA GPU with Vulkan Video and run under 'make test-gpu')"
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ]

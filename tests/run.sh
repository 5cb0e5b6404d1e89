#!/usr/bin/env bash
# `make test`: every unit program in build/tests (one line each) and every
# shell test in tests/cli/*.sh (PASS/FAIL/SKIP lines), then one total line.
# Unit programs exit 0 (pass), 77 (skip, with the reason as their last
# line) or anything else (fail). GPU programs are skipped here: they need an
# NVIDIA GPU and run under `make test-gpu`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export VKCU="$root/build/vkcu" FFMPEG_BIN=$(sed -n 's/^FFMPEG_BIN := //p' build/deps.mk)
export VKCU_CONFORMANCE=${VKCU_CONFORMANCE:-$root/../shared/conformance}
export MEDIA=$root/media/gen
log=$root/build/test-logs
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

for t in build/tests/test_*; do
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
done

for s in tests/cli/*.sh; do
  n=$(basename "$s" .sh)
  while IFS= read -r line; do
    case $line in
      PASS*|FAIL*|SKIP*) count "$line" ;;
      *) echo "$line" >> "$log/$n.log" ;;
    esac
  done < <(timeout 1200 bash "$s" 2>>"$log/$n.log"; rc=$?; [ $rc = 0 ] || echo "FAIL $n: script exited $rc (see build/test-logs/$n.log)")
done

echo
if [ "$skip" -gt 0 ]; then
  echo "($skip skipped, each with its reason above: GPU programs need an NVIDIA GPU with Vulkan Video and run under 'make test-gpu')"
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ]

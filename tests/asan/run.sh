#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make test-asan`: every test of `make test` (tests/run.sh) over the
# AddressSanitizer + UndefinedBehaviorSanitizer build. Reports go to files
# that tests/run.sh turns into a FAIL of the test that caused them, so a
# sanitizer finding fails the run even where a test only checks for a
# non-zero exit. Usage: tests/asan/run.sh BUILD-FOLDER (see README.md).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: tests/asan/run.sh BUILD-FOLDER}
case $build in /*) ;; *) build=$root/$build ;; esac
reports=$build/sanitizer-reports
rm -rf "$reports"; mkdir -p "$reports"
export VKCU_SANITIZER_REPORTS=$reports
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would put
# its guard (needed on GPU machines, harmless elsewhere).
# quarantine_size_mb=8: freed blocks held back to catch use-after-free count
# in peak RSS; ASan's default 256 MB made transcode.sh's memory-flatness test
# (20 MB between 100 and 750 frames) see 20.7 MB of growth; 8 MB gives 16.4.
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:protect_shadow_gap=0:strict_string_checks=1:detect_stack_use_after_return=1:quarantine_size_mb=8"
export LSAN_OPTIONS="suppressions=$root/tests/asan/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
# Mesa's software Vulkan driver (lavapipe, the Vulkan device of GPU-less CI
# machines) keeps process-lifetime data that only its own globals point to.
# The Vulkan loader unloads the driver when vkcu destroys its instance, and
# LeakSanitizer then reports that data as leaked from "<unknown module>",
# which no suppression can name. vkcu runs with the driver preloaded, so it
# stays mapped and the data reachable; leaks of vkcu's own still show.
# (ASan's runtime must come first in the preload list.)
lvp=$(ldconfig -p 2>/dev/null | awk '$1 == "libvulkan_lvp.so" {print $NF; exit}')
asan=$(ldd "$build/vkcu" | awk '$1 ~ /^libasan/ {print $3; exit}')
if [ -n "$lvp" ] && [ -n "$asan" ]; then
  mkdir -p "$build/asan-wrapper"
  printf '#!/bin/sh\nLD_PRELOAD="%s:%s${LD_PRELOAD:+:$LD_PRELOAD}" exec "%s" "$@"\n' "$asan" "$lvp" "$build/vkcu" \
    > "$build/asan-wrapper/vkcu"
  chmod +x "$build/asan-wrapper/vkcu"
  export VKCU_WRAPPER=$build/asan-wrapper/vkcu
fi
exec bash "$root/tests/run.sh" "$build"

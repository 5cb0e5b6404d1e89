#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The output ring's CPU-side surface (issue 16): `vkcu probe` says per
# Vulkan device whether the CUDA -> Vulkan output ring and zero-copy Vulkan
# Video encode are possible, and why not; `--download cuda|vulkan` is
# checked before anything runs; on the CPU backend it changes nothing. The
# ring itself runs in tests/gpu.d/ring*.sh (GPU) and test_outring (lavapipe).
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4

"$VKCU" probe > "$TMP/p" 2>&1
n_dev=$(grep -c '^  \[[0-9]*\] .*UUID' "$TMP/p") n_cap=$(grep -c '^      output ring (CUDA -> Vulkan): .*; zero-copy encode: ' "$TMP/p")
if [ "$n_dev" = 0 ]; then
  skip "probe capability line: no Vulkan device here"
elif [ "$n_cap" != "$n_dev" ]; then
  fail "probe capability line: $n_cap lines for $n_dev Vulkan devices: $(grep -m1 'output ring' "$TMP/p")"
elif grep -q 'llvmpipe' "$TMP/p" && ! grep -q 'external semaphore FD: yes' "$TMP/p"; then
  # Mesa's lavapipe before 23 exports memory but not semaphores.
  grep -qx '      output ring (CUDA -> Vulkan): no (lacks VK_KHR_external_semaphore_fd); zero-copy encode: no (needs the output ring)' "$TMP/p" &&
    pass "probe capability line (lavapipe): $(grep -m1 -o 'output ring.*' "$TMP/p")" ||
    fail "probe capability line (lavapipe): $(grep -m1 'output ring' "$TMP/p")"
else
  pass "probe capability line: $(grep -m1 -o 'output ring.*' "$TMP/p")"
fi

expect "--download: bad value" 2 "^vkcu: error: --download: 'gl' is not cuda or vulkan" -- "$VKCU" hash --download gl "$in"
expect "--download: no value" 2 "^vkcu: error: --download needs a value" -- "$VKCU" hash "$in" --download
"$VKCU" --help 2>&1 | grep -q -- '--download cuda|vulkan' && pass "--download in --help" || fail "--download missing from --help"

# On the CPU backend the option changes nothing (frames are on the host already).
"$VKCU" hash --backend cpu "$in" > "$TMP/a" 2> "$TMP/a.err"
"$VKCU" hash --backend cpu --download vulkan "$in" > "$TMP/b" 2> "$TMP/b.err"
if [ -s "$TMP/a" ] && cmp -s "$TMP/a" "$TMP/b"; then
  pass "--download vulkan on the CPU backend: the same $(frames "$TMP/a" | wc -l) hashes"
else
  fail "--download vulkan on the CPU backend: $(tail -1 "$TMP/b.err")"
fi

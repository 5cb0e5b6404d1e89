#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every conformance stream hashed by the CPU backend equals FFmpeg's software
# decode (.framemd5), frame by frame: hash, size and timestamps.
source "$(dirname "$0")/lib.sh"
n=0
for s in "$VKCU_CONFORMANCE"/*.264 "$VKCU_CONFORMANCE"/*.h264 "$VKCU_CONFORMANCE"/*.h265; do
  [ -f "$s.framemd5" ] || continue
  n=$((n + 1))
  name="conformance $(basename "$s")"
  if ! "$VKCU" hash --backend cpu "$s" -o "$TMP/h" -y 2> "$TMP/err"; then
    fail "$name: vkcu hash failed: $(tail -1 "$TMP/err")"; continue
  fi
  if diff <(frames "$TMP/h") <(frames "$s.framemd5") > "$TMP/diff"; then
    pass "$name ($(frames "$s.framemd5" | wc -l) frames bit-exact)"
  else
    fail "$name: first difference: $(sed -n 2p "$TMP/diff")"
  fi
done
[ "$n" -gt 0 ] || fail "conformance: no streams found in $VKCU_CONFORMANCE"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package's ctypes mirror (python/vkcu/_lib.py) against the
# public headers: every struct with each field's offset, size and kind,
# every enumerator and VKCU_ constant, and the vocabularies built from the
# enums (tests/cli/python-abi.py says how). A struct, field or constant
# missing or different in Python fails. Needs only python3 and a C
# compiler; _lib.py loads this build's libvkcu.so.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
if [ -n "${VKCU_WRAPPER:-}" ] || [ "$build" != "$root/build" ]; then
  # a sanitizer build's library would need its runtime preloaded into python
  skip "python-abi: runs on the plain build (make test), not $build"
  exit 0
fi
major=$(sed -n 's/^#define VKCU_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$root/include/vkcu/version.h")
lib=$build/libvkcu.so.$major
[ -e "$lib" ] || { fail "python-abi: $lib missing (make)"; exit 0; }
command -v python3 > /dev/null || { skip "python-abi: no python3"; exit 0; }
if ! VKCU_LIBRARY=$lib PYTHONDONTWRITEBYTECODE=1 python3 "$root/tests/cli/python-abi.py" "$root" "$TMP" \
     > "$TMP/out" 2> "$TMP/err"; then
  cat "$TMP/out"
  fail "python-abi: python-abi.py failed: $(tail -2 "$TMP/err" | tr '\n' ' ')"
  exit 0
fi
cat "$TMP/out"
grep -q '^PASS ' "$TMP/out" || fail "python-abi: the comparison passed nothing"

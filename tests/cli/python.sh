#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package (python/, docs/python.md) on the CPU backend:
#   python: install: `pip install ./python` with no package index (offline)
#     builds and installs it, and the installed copy loads this build's
#     libvkcu.so;
#   python: TEST: each test of python/tests, run by pytest against that
#     installed copy (frames of every corpus clip through numpy.from_dlpack
#     hash equal to `vkcu hash`, get_frames_at against a full decode, the
#     exceptions, the pytest plugin on a passing and a failing golden, 10,000
#     frames through the pool with memory and file descriptors flat).
# Needs python3 with numpy and pytest (Debian: python3-numpy, python3-pytest;
# tools/deps.sh installs them as test packages): without them, SKIP with the
# reason.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
if [ -n "${VKCU_WRAPPER:-}" ] || [ "$build" != "$root/build" ]; then
  # a sanitizer build's library would need its runtime preloaded into python
  skip "python: runs on the plain build (make test), not $build"
  exit 0
fi
lib=$build/libvkcu.so.$(sed -n 's/^#define VKCU_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$root/include/vkcu/version.h")
[ -e "$lib" ] || { fail "python: $lib missing (make)"; exit 0; }

# The first python3 that has both (a pyenv shim may shadow Debian's).
py=
for c in python3 /usr/bin/python3; do
  command -v "$c" > /dev/null 2>&1 || continue
  if "$c" -c 'import numpy, pytest' > /dev/null 2>&1; then py=$(command -v "$c"); break; fi
done
if [ -z "$py" ]; then
  skip "python: no python3 with numpy and pytest (Debian: apt-get install python3-numpy python3-pytest, or bash tools/deps.sh --test-packages)"
  exit 0
fi

# Offline install into a folder of its own: no index, so nothing can be fetched.
site=$TMP/site
pkg=$root/python
plugin=(-p vkcu.pytest_plugin) # an installed copy registers it itself (entry point pytest11)
if "$py" -m pip --version > /dev/null 2>&1; then
  if "$py" -m pip install --no-index --no-cache-dir --quiet --target "$site" "$root/python" > "$TMP/pip.log" 2>&1 &&
     [ -f "$site/vkcu/__init__.py" ] &&
     loaded=$(cd "$TMP" && VKCU_LIBRARY="$lib" PYTHONPATH="$site" "$py" -c 'import vkcu, vkcu._lib as l; print(vkcu.__file__, l.lib._name)') &&
     [[ $loaded == "$site/vkcu/__init__.py $lib" ]]; then
    pass "python: install: pip install ./python with no package index; the installed copy loads $(basename "$lib")"
    pkg=$site plugin=()
  else
    fail "python: install: pip install --no-index ./python: $(tail -3 "$TMP/pip.log" | tr '\n' ' ') ${loaded:-}"
  fi
else
  skip "python: install: $py has no pip (python3-pip); the tests run from the tree"
fi

# One line per test, from pytest's JUnit report.
( cd "$root/python/tests" &&
  VKCU_LIBRARY="$lib" PYTHONPATH="$pkg" VKCU_ROOT="$root" PYTHONDONTWRITEBYTECODE=1 \
    timeout 900 "$py" -m pytest "${plugin[@]}" -p no:cacheprovider -q --junitxml "$TMP/junit.xml" --ignore=gpu . \
    > "$TMP/pytest.log" 2>&1 )
rc=$?
if [ ! -s "$TMP/junit.xml" ]; then
  fail "python: pytest did not run (exit $rc): $(tail -5 "$TMP/pytest.log" | tr '\n' ' ')"
  exit 0
fi
"$py" - "$TMP/junit.xml" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET
n = 0
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    n += 1
    name = tc.get("classname", "").rsplit(".", 1)[-1] + "::" + tc.get("name", "")
    bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
    skipped = tc.find("skipped")
    if bad is not None:
        msg = " ".join((bad.get("message") or bad.text or "").split())[:300]
        print(f"FAIL python: {name}: {msg}")
    elif skipped is not None:
        print(f"SKIP python: {name}: {' '.join((skipped.get('message') or '').split())[:200]}")
    else:
        print(f"PASS python: {name}")
if not n:
    print("FAIL python: pytest collected no tests")
PYEOF

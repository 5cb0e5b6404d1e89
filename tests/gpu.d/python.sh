#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package on the GPU (run by tests/gpu.sh, which sets VKCU, MEDIA,
# BIG and OUTDIR and makes the large clips): python/tests/gpu with pytest,
# one PASS/FAIL/SKIP line per test. torch.from_dlpack of GPU frames equals
# the CPU backend's frames; the counters show no host copy; random access;
# the consumer's stream ordering the reuse of a released buffer; CuPy; the
# pool flat over 10,000 frames (docs/python.md). Then the package's CPU tests
# (python/tests), so that the GPU machine's Python (3.12, numpy 2) runs them
# too. Needs python3 with torch (CUDA) and pytest; without, SKIP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUTDIR:-$(mktemp -d)}/python
mkdir -p "$out"
py=$(command -v python3)
if [ -z "$py" ] || ! "$py" -c 'import torch, pytest, numpy' > /dev/null 2>&1; then
  echo "SKIP python-gpu: python3 lacks torch, pytest or numpy"
  exit 0
fi
# The library: the checkout's build, else the bundle's (on LD_LIBRARY_PATH, tools/gpu-env.sh).
# Its soname carries the major version (include/vkcu/version.h).
so=libvkcu.so.$(sed -n 's/^#define VKCU_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$root/include/vkcu/version.h")
lib=
[ -e "$root/build/$so" ] && lib=$root/build/$so
[ -z "$lib" ] && [ -n "${VKCU:-}" ] && [ -e "$(dirname "$VKCU")/../lib/$so" ] &&
  lib=$(cd "$(dirname "$VKCU")/../lib" && pwd)/$so
if [ -z "$lib" ]; then
  echo "FAIL python-gpu: no $so in build/ or beside \$VKCU (tools/gpu-bundle.sh carries it)"
  exit 0
fi
run() { # name folder [pytest args]
  local name=$1 dir=$2; shift 2
  ( cd "$root/python/tests/$dir" && VKCU_LIBRARY="$lib" PYTHONPATH="$root/python" VKCU_ROOT="$root" \
      VKCU_CONFORMANCE="${CONF:-$root/media/conformance}" PYTHONDONTWRITEBYTECODE=1 \
      timeout -s KILL 600 "$py" -m pytest -p vkcu.pytest_plugin -p no:cacheprovider \
      -q -s --basetemp "$out/tmp-$name" --junitxml "$out/$name.xml" "$@" . > "$out/$name.log" 2>&1 )
  set -- "$name"
  if [ ! -s "$out/$1.xml" ]; then
    echo "FAIL $1: pytest did not run: $(tail -3 "$out/$1.log" | tr '\n' ' ')"
    return
  fi
  "$py" - "$out/$1.xml" "$1" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    name = sys.argv[2] + ": " + tc.get("classname", "").rsplit(".", 1)[-1] + "::" + tc.get("name", "")
    bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
    sk = tc.find("skipped")
    if bad is not None:
        print("FAIL " + name + ": " + " ".join((bad.get("message") or bad.text or "").split())[:300])
    elif sk is not None:
        print("SKIP " + name + ": " + " ".join((sk.get("message") or "").split())[:200])
    else:
        print("PASS " + name)
PYEOF
}
"$py" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, torch.version.cuda)' \
  > "$out/versions.txt" 2>&1
run python-gpu gpu
# The CPU tests there, with the GPU machine's Python; media from the bundle.
run python-cpu-on-gpu-host . --ignore=gpu
grep -h "RSS\|device free" "$out"/*.log 2> /dev/null | sed 's/^/# /' >&2

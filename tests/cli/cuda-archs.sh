#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernels are built for every GPU of CUDA_ARCHS (Makefile), with PTX of
# the last one for newer GPUs: without an architecture's code a user's GPU answers "no kernel
# image is available". Read with tools/cuda-archs.py (cuobjdump's listing).
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
# The flags nvcc was given, as the objects recorded them (Makefile,
# flags_record); sanitizer builds share build/'s CUDA objects.
rec=$build/obj/.nvflags
[ -f "$rec" ] || rec=$root/build/obj/.nvflags
if [ ! -f "$rec" ]; then
  fail "cuda-archs: no obj/.nvflags in $build or build/ (run make)"
  exit 0
fi
elf=$(grep -o 'code=sm_[0-9]*' "$rec" | sed 's/code=/elf /' | sort -t_ -k2 -n -u | tr '\n' ' ')
ptx=$(grep -o 'code=compute_[0-9]*' "$rec" | sed 's/code=compute_/ptx sm_/' | sort -u)
expected="$elf$ptx"
n_cu=$(cd "$root" && ls kernels/*.cu src/*.cu src/*/*.cu 2>/dev/null | wc -l)

for f in "$build/vkcu" "$build/libvkcu.so"; do
  name=${f##*/}
  if [ ! -f "$f" ]; then fail "cuda-archs: $f not built"; continue; fi
  python3 "$root/tools/cuda-archs.py" --each "$f" > "$TMP/each" 2> "$TMP/err"
  n=$(wc -l < "$TMP/each")
  bad=$(grep -vxF "$expected" "$TMP/each" | head -1)
  if [ "$n" = "$n_cu" ] && [ -z "$bad" ]; then
    pass "cuda-archs: $name: all $n CUDA sources carry $expected"
  else
    fail "cuda-archs: $name: $n containers for $n_cu CUDA sources; expected '$expected' in each, got '${bad:-$(head -1 "$TMP/each")}' $(cat "$TMP/err")"
  fi
done

# The listing can fail: a C object has no GPU code.
obj=$(ls "$build"/obj/src/log.o "$build"/obj/src/*/log.o 2>/dev/null | head -1)
if [ -n "$obj" ]; then
  if python3 "$root/tools/cuda-archs.py" "$obj" > "$TMP/out" 2> "$TMP/err"; then
    fail "cuda-archs: $obj (C, no GPU code) listed as '$(cat "$TMP/out")'"
  elif grep -q 'no GPU code' "$TMP/err"; then
    pass "cuda-archs: a C object is reported as holding no GPU code"
  else
    fail "cuda-archs: $obj: $(cat "$TMP/err")"
  fi
fi


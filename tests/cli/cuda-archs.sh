#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernels are built for every GPU of CUDA_ARCHS (Makefile; by default all
# the x86-64 architectures CUDA 13 builds for), with PTX of the highest for
# newer GPUs: without its architecture's code a user's GPU answers "no kernel
# image is available". Read with tools/cuda-archs.py (cuobjdump's listing).
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
nvcc=${NVCC:-${CUDA:-/usr/local/cuda}/bin/nvcc}
# The architectures in effect: CUDA_ARCHS from the environment (`make test
# CUDA_ARCHS=90` passes it down), else the Makefile's default.
archs=$(make -s -C "$root" --no-print-directory print-cuda-archs)
highest=${archs##* }
want="$(for a in $archs; do printf 'elf sm_%s ' "$a"; done)ptx sm_$highest"
n_cu=$(cd "$root" && ls kernels/*.cu src/*.cu src/*/*.cu 2>/dev/null | wc -l)

# Each CUDA source, in each product, carries machine code for every
# architecture and PTX of the highest: a source built apart with other flags
# would show here. vkcu holds no GPU code of its own: it runs the kernels of
# the libvkcu.so beside it (below).
# libvkcu.so also holds libvmaf's kernels when libvmaf has its CUDA backend
# (tools/deps.sh): libvmaf.a's own fat binaries, built for libvmaf's list
# (sm_75, 80, 90, 100, 120 and PTX of 120 with CUDA 13: code that 86, 89
# and 103 run too). They are set aside here, as many as libvmaf.a has and
# exactly as libvmaf.a has them.
vmaf_a=$(sed -n 's/^VMAF_LIBS := \(.*libvmaf\.a\)$/\1/p' "$build/vmaf.mk" 2>/dev/null)
: > "$TMP/vmaf_each"
[ -f "$vmaf_a" ] && python3 "$root/tools/cuda-archs.py" --each "$vmaf_a" > "$TMP/vmaf_each" 2> /dev/null
for f in "$build/libvkcu.so" "$build/libvkcu.a"; do
  name=${f##*/}
  if [ ! -f "$f" ]; then fail "cuda-archs: $f not built"; continue; fi
  python3 "$root/tools/cuda-archs.py" --each "$f" > "$TMP/each.all" 2> "$TMP/err"
  if [ "$name" = libvkcu.so ] && [ -s "$TMP/vmaf_each" ]; then
    # Removes one line of each.all per line of vmaf_each; what is left is vkcu's.
    python3 - "$TMP/each.all" "$TMP/vmaf_each" > "$TMP/each" <<'PYEOF'
import sys
ours = open(sys.argv[1]).read().splitlines()
for line in open(sys.argv[2]).read().splitlines():
    if line in ours:
        ours.remove(line)
    else:
        print('libvmaf container missing: ' + line)
if ours:
    print('\n'.join(ours))
PYEOF
  else
    cp "$TMP/each.all" "$TMP/each"
  fi
  n=$(wc -l < "$TMP/each")
  bad=$(grep -vxF "$want" "$TMP/each" | head -1)
  if [ "$n" = "$n_cu" ] && [ -z "$bad" ]; then
    pass "cuda-archs: $name: all $n CUDA sources carry $want"
  else
    fail "cuda-archs: $name: $n containers for $n_cu CUDA sources; expected '$want' in each, got '${bad:-$(head -1 "$TMP/each")}' $(cat "$TMP/err")"
  fi
done

# The vkcu a user runs loads that libvkcu.so, and carries no older copy of
# the kernels itself.
loaded=$(ldd "$build/vkcu" 2> /dev/null | awk '$1 ~ /^libvkcu\.so/ {print $3}')
if [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$build/libvkcu.so")" ] &&
   ! python3 "$root/tools/cuda-archs.py" "$build/vkcu" > /dev/null 2>&1; then
  pass "cuda-archs: vkcu runs the kernels of $(basename "$(readlink -f "$loaded")") beside it, and holds no GPU code itself"
else
  fail "cuda-archs: vkcu loads '${loaded:-no libvkcu}' (expected $build/libvkcu.so) or holds GPU code of its own"
fi

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

if [ ! -x "$nvcc" ]; then
  skip "cuda-archs: no nvcc at $nvcc to check CUDA_ARCHS against"
  exit 0
fi

# The default is fixed in the Makefile (a build does not change with the
# toolkit) and equals what this nvcc builds for, less the aarch64 boards (87
# Jetson Orin, 110 Jetson Thor, 121 DGX Spark) and 88, an Ampere variant
# that sm_86 code serves (Makefile, CUDA_ARCHS).
# A toolkit with a new architecture fails here until the default names it.
default=$(env -u CUDA_ARCHS make -s -C "$root" --no-print-directory print-cuda-archs)
x86=$("$nvcc" --list-gpu-code | sed -n 's/^sm_//p' | grep -vxE '87|88|110|121' | sort -n | tr '\n' ' ')
release=$("$nvcc" --version | grep -o 'release [0-9.]*')
if [ "$default " = "$x86" ]; then
  pass "cuda-archs: the default CUDA_ARCHS ($default) is every x86-64 architecture nvcc $release builds for"
else
  fail "cuda-archs: the default CUDA_ARCHS ($default) differs from nvcc $release's x86-64 architectures ($x86): update CUDA_ARCHS in the Makefile"
fi

# Narrowing: the nvcc command make would run (-n, in a scratch build folder
# so that build/ keeps its objects) carries exactly the architectures asked
# for, whatever their order, and PTX of the highest.
mkdir -p "$TMP/b" && cp "$root/build/deps.mk" "$TMP/b/" 2>/dev/null || cp "$build/deps.mk" "$TMP/b/"
gencode() { # CUDA_ARCHS value (unset: the default) -> the -gencode flags, one per line
  local v=()
  [ "$1" = "-" ] || v=("CUDA_ARCHS=$1")
  env -u CUDA_ARCHS make -n -C "$root" --no-print-directory BUILD="$TMP/b" CU_BUILD="$TMP/b" "${v[@]}" \
    "$TMP/b/obj/kernels/croppad.cu.o" 2> "$TMP/make.err" | grep -o 'arch=compute_[0-9]*,code=[a-z]*_[0-9]*' | sort
}
narrow() { # name CUDA_ARCHS expected-flags
  local got
  got=$(gencode "$2" | tr '\n' ' ')
  if [ "$got" = "$3" ]; then
    pass "cuda-archs: $1: nvcc gets $got"
  else
    fail "cuda-archs: $1: nvcc gets '$got', expected '$3' $(head -1 "$TMP/make.err")"
  fi
}
narrow "CUDA_ARCHS=90" 90 "arch=compute_90,code=compute_90 arch=compute_90,code=sm_90 "
narrow "CUDA_ARCHS='120 86' (any order; PTX of the highest)" "120 86" \
  "arch=compute_120,code=compute_120 arch=compute_120,code=sm_120 arch=compute_86,code=sm_86 "
all=$(for a in $default; do printf 'arch=compute_%s,code=sm_%s\n' "$a" "$a"; done; printf 'arch=compute_%s,code=compute_%s\n' "${default##* }" "${default##* }")
narrow "the default" - "$(printf '%s\n' "$all" | sort | tr '\n' ' ')"

# A wrong value stops make with one line that names it, before any nvcc run.
bad() { # name CUDA_ARCHS pattern
  env -u CUDA_ARCHS make -n -C "$root" --no-print-directory BUILD="$TMP/b" CU_BUILD="$TMP/b" "CUDA_ARCHS=$2" \
    "$TMP/b/obj/kernels/croppad.cu.o" > "$TMP/bad.out" 2> "$TMP/bad.err"
  local rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l < "$TMP/bad.err")" = 1 ] && grep -qE -- "$3" "$TMP/bad.err" && ! grep -q nvcc "$TMP/bad.out"; then
    pass "cuda-archs: $1 refused: $(cat "$TMP/bad.err")"
  else
    fail "cuda-archs: $1: make exit $rc, expected 2 with one line /$3/: $(head -2 "$TMP/bad.err" | tr '\n' ' ')"
  fi
}
bad "CUDA_ARCHS='90 sm_80'" "90 sm_80" '^Makefile:[0-9]+: \*\*\* CUDA_ARCHS: sm_80: not a GPU architecture .* \(it knows 75 .*90.*\)'
bad "CUDA_ARCHS=91" 91 'CUDA_ARCHS: 91: not a GPU architecture'
bad "an empty CUDA_ARCHS" "" 'CUDA_ARCHS is empty: .*CUDA_ARCHS=90'

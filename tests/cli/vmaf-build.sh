#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libvmaf's build (tools/deps.sh) and how vkcu links it:
# - the libvmaf this vkcu was built with is the one tools/deps.sh picks for
#   this machine: with its CUDA backend where nvcc is (unless
#   VKCU_VMAF_CUDA=0), and then configured with it (libvmaf_cuda.h
#   installed, vmaf_cuda_state_init and the picture calls in libvmaf.a,
#   `vkcu --version` saying so), the CPU-only build otherwise;
# - nothing links libcuda: no undefined cu*/cuda* symbol in libvmaf.a, no
#   libcuda in ldd of vkcu and libvkcu.so, no undefined driver symbol in
#   libvkcu.so, so the driverless CI machines run everything;
# - the CPU-only build stays selectable: VKCU_VMAF_CUDA=0 gives another
#   prefix with no CUDA in it (built once, about 18 s, then cached);
#   VKCU_VMAF_CUDA=1 without nvcc, and a bad value, are one-line errors.
# Skips without libvmaf's source beside the checkout (a clone alone).
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
mk=${VKCU_BUILD:-$(dirname "$VKCU")}/vmaf.mk
prefix=$(sed -n 's/^VMAF_PREFIX := //p' "$mk" 2>/dev/null)
cuda=$(sed -n 's/^VMAF_CUDA := //p' "$mk" 2>/dev/null)
if [ -z "$prefix" ]; then
  skip "vmaf-build: this vkcu has no libvmaf ($mk names none: docs/regression.md, VMAF)"
  exit 0
fi
if ! want=$(bash "$root/tools/deps.sh" --vmaf-prefix 2> "$TMP/deps.err"); then
  skip "vmaf-build: tools/deps.sh builds no libvmaf here ($(tail -1 "$TMP/deps.err")); this vkcu uses $prefix"
  exit 0
fi

[ "$prefix" = "$want" ] && pass "vmaf-build: vkcu is built with the libvmaf tools/deps.sh picks here ($(basename "$want"))" ||
  fail "vmaf-build: vkcu is built with $prefix, tools/deps.sh picks $want (run make deps)"

# has_cuda PREFIX: 0 when that libvmaf has its CUDA backend in full, 1 when
# it has none of it, 2 (with a message) for anything between.
has_cuda() {
  local p=$1 hdr=0 n
  [ -f "$p/include/libvmaf/libvmaf_cuda.h" ] && hdr=1
  n=$(nm "$p/lib/libvmaf.a" 2>/dev/null | grep -cE ' T vmaf_cuda_(state_init|import_state|preallocate_pictures|fetch_preallocated_picture)$')
  [ "$hdr" = 1 ] && [ "$n" = 4 ] && return 0
  [ "$hdr" = 0 ] && [ "$n" = 0 ] && return 1
  echo "libvmaf_cuda.h $([ $hdr = 1 ] && echo present || echo missing), $n of 4 vmaf_cuda_* entry points in libvmaf.a"
  return 2
}

nvcc=${NVCC:-${CUDA:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc)
has_cuda "$prefix" > "$TMP/why"
state=$?
if [ -n "$nvcc" ] && [ "${VKCU_VMAF_CUDA:-}" != 0 ]; then
  if [ $state = 0 ] && [ "$cuda" = 1 ] && "$VKCU" --version | grep -q '^VMAF: libvmaf .*, CUDA backend built in$'; then
    pass "vmaf-build: nvcc is here ($nvcc): libvmaf has its CUDA backend (libvmaf_cuda.h, the 4 vmaf_cuda_* calls), vmaf.mk says VMAF_CUDA := 1, --version says so"
  else
    fail "vmaf-build: nvcc is here ($nvcc), yet libvmaf's CUDA backend: state $state $(cat "$TMP/why"); vmaf.mk VMAF_CUDA=$cuda; $("$VKCU" --version | grep '^VMAF')"
  fi
else
  [ $state = 1 ] && [ "$cuda" = 0 ] && pass "vmaf-build: no nvcc (or VKCU_VMAF_CUDA=0): the CPU-only libvmaf, VMAF_CUDA := 0" ||
    fail "vmaf-build: without nvcc libvmaf should be CPU-only: state $state $(cat "$TMP/why"), VMAF_CUDA=$cuda"
fi

# Nothing links libcuda.
undef=$(nm -u "$prefix/lib/libvmaf.a" 2>/dev/null | grep -E '^ +U (cu|cuda)[A-Z]' | sort -u | tr -s ' \n' ' ')
lib=$(readlink -f "$(dirname "$mk")/libvkcu.so")
dyn=$(nm -D --undefined-only "$lib" 2>/dev/null | grep -E ' (cu|cuda)[A-Z]' | tr -s ' \n' ' ')
linked=$(ldd "$VKCU" "$lib" 2>/dev/null | grep -E 'libcuda\.so|libnvidia' | tr -s ' \t\n' ' ')
if [ -z "$undef" ] && [ -z "$dyn" ] && [ -z "$linked" ]; then
  pass "vmaf-build: nothing links libcuda (no undefined cu*/cuda* symbol in libvmaf.a or libvkcu.so, no libcuda in ldd)"
else
  fail "vmaf-build: a link-time CUDA driver dependency: libvmaf.a needs [$undef], libvkcu.so [$dyn], ldd [$linked]"
fi

# The CPU-only build, selectable where nvcc is.
if cpu_prefix=$(VKCU_VMAF_CUDA=0 bash "$root/tools/deps.sh" --vmaf-prefix 2> "$TMP/deps0.err"); then
  has_cuda "$cpu_prefix" > "$TMP/why0"
  st=$?
  if [ $st = 1 ] && [ -f "$cpu_prefix/lib/libvmaf.a" ] && { [ $state = 1 ] || [ "$cpu_prefix" != "$prefix" ]; }; then
    pass "vmaf-build: VKCU_VMAF_CUDA=0 gives a CPU-only libvmaf, cached apart ($(basename "$cpu_prefix"))"
  else
    fail "vmaf-build: VKCU_VMAF_CUDA=0 gave $cpu_prefix: state $st $(cat "$TMP/why0") (the CUDA build is $prefix)"
  fi
else
  fail "vmaf-build: VKCU_VMAF_CUDA=0 tools/deps.sh --vmaf-prefix failed: $(tail -1 "$TMP/deps0.err")"
fi
if PATH=/usr/bin:/bin command -v nvcc > /dev/null; then
  skip "vmaf-build: VKCU_VMAF_CUDA=1 without nvcc: this machine has nvcc in /usr/bin or /bin"
else
  expect "vmaf-build: VKCU_VMAF_CUDA=1 without nvcc is one line naming where it looked (exit 1)" 1 \
    '^deps: error: VKCU_VMAF_CUDA=1: no nvcc \(looked for /nonexistent/bin/nvcc and on PATH\)' -- \
    env -u NVCC VKCU_VMAF_CUDA=1 CUDA=/nonexistent PATH=/usr/bin:/bin bash "$root/tools/deps.sh" --vmaf-prefix
fi
expect "vmaf-build: VKCU_VMAF_CUDA=yes is refused with the values it takes (exit 1)" 1 \
  '^deps: error: VKCU_VMAF_CUDA=yes: use 1 \(CUDA backend\), 0 \(CPU only\)' -- \
  env VKCU_VMAF_CUDA=yes bash "$root/tools/deps.sh" --vmaf-prefix

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libvkcu exports the public API and nothing else: every global symbol of
# libvkcu.a carries the vkcu_ prefix (a program linking it statically
# keeps its own cv_*, tm_* ... names), exactly the functions the public
# headers declare with VKCU_API have default visibility (the rest is hidden,
# so a shared libvkcu built from these objects exports only the API), and
# every declared function is defined. libvkcu.so, where the build has one,
# exports that same set.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
lib=$build/libvkcu.a
[ -f "$lib" ] || { fail "api-symbols: $lib missing (make)"; exit 0; }
# Compiler-made globals that are hidden anyway: g++/nvcc's personality
# reference (C++ exception tables of the CUDA objects), and under
# -fsanitize=address (make test-asan) the ODR indicator ASan emits beside
# each of our own globals (__odr_asan.vkcu_op_copy for vkcu_op_copy).
allowed='^(DW\.ref\.__gxx_personality_v0|__odr_asan\.vkcu_[A-Za-z0-9_]+)$'

# The public functions: names declared with VKCU_API in include/vkcu/.
python3 - "$root"/include/vkcu/*.h > "$TMP/api" <<'PYEOF'
import re, sys
for p in sys.argv[1:]:
    t = re.sub(r'/\*.*?\*/', '', open(p).read(), flags=re.S)
    t = re.sub(r'^[ \t]*#.*$', '', t, flags=re.M)
    for n in re.findall(r'VKCU_API[^;(]*?\b(\w+)\s*\(', t):
        print(n)
PYEOF
sort -u -o "$TMP/api" "$TMP/api"
[ "$(wc -l < "$TMP/api")" -ge 10 ] && pass "api-symbols: $(wc -l < "$TMP/api") public functions declared" ||
  fail "api-symbols: only $(wc -l < "$TMP/api") VKCU_API functions found in include/vkcu"

nm -g --defined-only "$lib" 2> /dev/null | awk 'NF == 3 {print $3}' | sort -u > "$TMP/globals"
stray=$(grep -vE '^vkcu_' "$TMP/globals" | grep -vE "$allowed" | tr '\n' ' ')
[ -z "$stray" ] && pass "api-symbols: all $(wc -l < "$TMP/globals") global symbols of libvkcu.a start with vkcu_" ||
  fail "api-symbols: globals without the vkcu_ prefix in libvkcu.a: $stray"

# Visibility, object by object: DEFAULT only for the public functions.
readelf -Ws "$lib" 2> /dev/null | awk '$5 ~ /GLOBAL|WEAK/ && $7 != "UND" && $8 != "" {print $8, $6}' | sort -u > "$TMP/vis"
wrong_default=$(awk '$2 == "DEFAULT" {print $1}' "$TMP/vis" | sort -u | comm -23 - "$TMP/api" | grep -vE "$allowed" | tr '\n' ' ')
[ -z "$wrong_default" ] && pass "api-symbols: only public functions have default visibility" ||
  fail "api-symbols: internal symbols with default visibility (exported from a shared libvkcu): $wrong_default"
wrong_hidden=$(awk '$2 != "DEFAULT" {print $1}' "$TMP/vis" | sort -u | comm -12 - "$TMP/api" | tr '\n' ' ')
[ -z "$wrong_hidden" ] && pass "api-symbols: every public function is visible" ||
  fail "api-symbols: public functions built hidden (missing VKCU_API on the declaration?): $wrong_hidden"
missing=$(comm -23 "$TMP/api" "$TMP/globals" | tr '\n' ' ')
[ -z "$missing" ] && pass "api-symbols: every public function is defined in libvkcu.a" ||
  fail "api-symbols: declared in include/vkcu but not defined: $missing"

so=$(ls "$build"/libvkcu.so* 2> /dev/null | head -1)
if [ -n "$so" ]; then
  nm -D --defined-only "$so" | awk 'NF == 3 {print $3}' | sort -u > "$TMP/dyn"
  extra=$(comm -23 "$TMP/dyn" "$TMP/api" | grep -vE "$allowed|^_init$|^_fini$" | tr '\n' ' ')
  absent=$(comm -13 "$TMP/dyn" "$TMP/api" | tr '\n' ' ')
  [ -z "$extra$absent" ] && pass "api-symbols: $(basename "$so") exports exactly the public API" ||
    fail "api-symbols: $(basename "$so") exports beyond the API: ${extra:-none}; lacks: ${absent:-none}"
else
  skip "api-symbols: no libvkcu.so in $build (this build makes only the static library)"
fi

# The command line is a client of the library like any other program: vkcu
# needs libvkcu.so (it does not carry the library's objects), defines none
# of the library's functions and calls only the public ones.
if [ -x "$build/vkcu" ] && [ -n "$so" ]; then
  needed=$(readelf -d "$build/vkcu" | sed -n 's/.*(NEEDED).*\[\(libvkcu[^]]*\)\].*/\1/p')
  soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
  own=$(nm --defined-only "$build/vkcu" | awk '$3 ~ /^vkcu_/ {print $3}' | tr '\n' ' ')
  nm -u "$build/vkcu" | awk '$2 ~ /^vkcu_/ {sub(/@.*/, "", $2); print $2}' | sort -u > "$TMP/calls"
  beyond=$(comm -23 "$TMP/calls" "$TMP/api" | tr '\n' ' ')
  if [ -n "$soname" ] && [ "$needed" = "$soname" ] && [ -z "$own$beyond" ] && [ "$(wc -l < "$TMP/calls")" -ge 20 ]; then
    pass "api-symbols: vkcu needs $needed and calls $(wc -l < "$TMP/calls") of its public functions, nothing else of it"
  else
    fail "api-symbols: vkcu needs '${needed:-no libvkcu}' (soname '$soname'); defines ${own:-none}; calls beyond the API: ${beyond:-none}"
  fi
fi

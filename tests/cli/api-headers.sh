#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every public header (include/vkcu/*.h) compiles alone, first in a file of
# its own, in C11 and C++17 with every warning an error and -pedantic, and
# without FFmpeg's headers on the include path: a program may include any
# one of them first. Also checks that each declares nothing outside the
# vkcu_/VKCU_ namespace (a C++ program including two libraries must not
# collide) and that each is wrapped in extern "C" (a C++ caller links).
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc} CXX=${CXX:-g++}
command -v "$CXX" > /dev/null || CXX=
n=0
for h in "$root"/include/vkcu/*.h; do
  name=vkcu/$(basename "$h")
  n=$((n + 1))
  printf '#include <%s>\nint main(void) { return 0; }\n' "$name" > "$TMP/h.c"
  if "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -I"$root/include" -c -o "$TMP/h.o" "$TMP/h.c" 2> "$TMP/err"; then
    pass "api-headers: $name compiles alone in C11"
  else
    fail "api-headers: $name alone in C11: $(head -3 "$TMP/err" | tr '\n' ' ')"
  fi
  if [ -n "$CXX" ]; then
    printf '#include <%s>\nint main() { return 0; }\n' "$name" > "$TMP/h.cpp"
    if "$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic -I"$root/include" -c -o "$TMP/h.o" "$TMP/h.cpp" 2> "$TMP/err"; then
      pass "api-headers: $name compiles alone in C++17"
    else
      fail "api-headers: $name alone in C++17: $(head -3 "$TMP/err" | tr '\n' ' ')"
    fi
  else
    skip "api-headers: $name in C++17: no C++ compiler ($CXX)"
  fi
  # Identifiers a header defines: macros, typedefs, tags, enumerators,
  # functions. Each must carry the project's prefix (or be a guard).
  "$CC" -std=c11 -I"$root/include" -E -dM -x c - <<< "#include <$name>" | awk '{print $2}' | sed 's/(.*//' |
    grep -v '^__' | sort -u > "$TMP/macros"
  "$CC" -std=c11 -E -dM -x c /dev/null | awk '{print $2}' | sed 's/(.*//' | sort -u > "$TMP/builtin"
  # stddef.h/stdint.h/stdio.h macros are not ours: drop what those define alone.
  "$CC" -std=c11 -E -dM -x c - <<< $'#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>' |
    awk '{print $2}' | sed 's/(.*//' | sort -u >> "$TMP/builtin"
  stray=$(sort -u "$TMP/builtin" | comm -23 "$TMP/macros" - | grep -vE '^VKCU_' | tr '\n' ' ')
  [ -z "$stray" ] && pass "api-headers: $name defines only VKCU_ macros" || fail "api-headers: $name defines macros outside VKCU_: $stray"
  # Functions (VKCU_API), types and enumerators.
  bad=$(python3 - "$h" <<'PYEOF'
import re, sys
t = re.sub(r'/\*.*?\*/', '', open(sys.argv[1]).read(), flags=re.S)
t = re.sub(r'^\s*#.*$', '', t, flags=re.M)
t = re.sub(r'extern "C"\s*\{', '', t)
t = re.sub(r'^\}\s*$', '', t, flags=re.M)
names = []
for body in re.findall(r'enum\s+\w*\s*\{(.*?)\}', t, flags=re.S):
    names += re.findall(r'^\s*(\w+)', body, flags=re.M)
names += re.findall(r'\b(?:struct|enum)\s+(\w+)\s*\{', t)
while re.search(r'\{[^{}]*\}', t):
    t = re.sub(r'\{[^{}]*\}', '', t)
names += re.findall(r'VKCU_API[^;(]*?\b(\w+)\s*\(', t)
names += re.findall(r'typedef[^;(]*?\b(\w+)\s*;', t) + re.findall(r'typedef[^;]*?\(\s*\*\s*(\w+)\)', t)
print(' '.join(sorted(set(n for n in names if not re.match(r'(vkcu_|VKCU_|AV)', n)))))
PYEOF
)
  [ -z "$bad" ] && pass "api-headers: $name declares only vkcu_ names" || fail "api-headers: $name declares names outside vkcu_/VKCU_: $bad"
  if grep -q 'VKCU_API' "$h"; then
    grep -q 'extern "C"' "$h" && pass "api-headers: $name has extern \"C\"" || fail "api-headers: $name lacks extern \"C\" for C++ callers"
  fi
done
[ "$n" -ge 5 ] && pass "api-headers: $n public headers" || fail "api-headers: only $n public headers in include/vkcu (expected vkcu, version, common, chain, job, regress...)"
# The umbrella header includes every other one.
for h in "$root"/include/vkcu/*.h; do
  b=$(basename "$h")
  [ "$b" = vkcu.h ] && continue
  grep -q "#include \"$b\"" "$root/include/vkcu/vkcu.h" || fail "api-headers: vkcu.h does not include $b"
done

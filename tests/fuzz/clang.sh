#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes sure clang with libFuzzer is there for `make fuzz`: Debian 12's
# clang (14) and the runtime package that holds -fsanitize=fuzzer.
set -euo pipefail
have() {
  command -v clang >/dev/null &&
    [ -f "$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ] &&
    [ -f "$(clang -print-file-name=libclang_rt.asan-x86_64.a 2>/dev/null)" ]
}
have && exit 0
packages=(clang libclang-rt-dev)
# Debian 12 names the runtime after the clang version.
v=$(apt-cache policy clang 2>/dev/null | sed -n 's/^ *Candidate: [0-9]*:\([0-9]*\)\..*/\1/p')
[ -n "$v" ] && packages=(clang "libclang-rt-$v-dev")
[ "$(id -u)" = 0 ] || { echo "fuzz: clang with libFuzzer is missing; install ${packages[*]} (as root)" >&2; exit 1; }
echo "fuzz: installing ${packages[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
have || { echo "fuzz: clang has no libFuzzer runtime after installing ${packages[*]}" >&2; exit 1; }

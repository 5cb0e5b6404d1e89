#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install` into a staging folder (DESTDIR), as a package build does:
# the binary runs from there and finds its presets; the libraries carry their
# soname; vkcu.pc answers pkg-config; the public headers compile from the
# stage; then `make uninstall` removes exactly what install wrote.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCU_BUILD:-$root/build}
if [ -n "${VKCU_WRAPPER:-}" ] || [ "$build" != "$root/build" ]; then
  # make install would rebuild a sanitizer build's objects with plain flags
  skip "install: runs on the plain build (make test), not $build"
  exit 0
fi
command -v pkg-config > /dev/null || { fail "install: pkg-config not found (tools/deps.sh installs it)"; exit 0; }

prefix=/usr/local
stage=$TMP/stage
P=$stage$prefix
version=$(make -s -C "$root" --no-print-directory print-version 2>/dev/null)
major=${version%%.*}

# Something of the user's already in the prefix: install and uninstall must
# leave it alone.
mkdir -p "$P/bin" "$P/lib/pkgconfig" "$P/share/man/man1"
echo mine > "$P/bin/other-tool"; echo mine > "$P/lib/pkgconfig/other.pc"

if ! make -s -C "$root" --no-print-directory DESTDIR="$stage" PREFIX="$prefix" install > "$TMP/install.log" 2>&1; then
  fail "install: make install failed: $(tail -3 "$TMP/install.log" | tr '\n' ' ')"
  exit 0
fi

# What a user runs: the binary, from the staged prefix, finds the presets
# installed beside it.
n_pipes=$(ls "$root"/pipelines/*.pipe | wc -l)
if [ -x "$P/bin/vkcu" ] && "$P/bin/vkcu" --version 2>&1 | grep -q "^vkcu $version" &&
   [ "$("$P/bin/vkcu" pipelines 2>/dev/null | wc -l)" -ge "$n_pipes" ] &&
   [ -f "$P/share/vkcu/pipelines/web-720p.pipe" ]; then
  pass "install: bin/vkcu $version runs from the stage and lists the $n_pipes installed presets"
else
  fail "install: bin/vkcu from the stage: $("$P/bin/vkcu" --version 2>&1 | head -1); $("$P/bin/vkcu" pipelines 2>&1 | wc -l) presets"
fi

# The shared library: real file, soname link, development link; the soname
# recorded in the library is the one the link names.
soname=$(readelf -d "$P/lib/libvkcu.so.$version" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = "libvkcu.so.$major" ] && [ "$(readlink "$P/lib/libvkcu.so.$major")" = "libvkcu.so.$version" ] &&
   [ "$(readlink "$P/lib/libvkcu.so")" = "libvkcu.so.$major" ] && [ -f "$P/lib/libvkcu.a" ]; then
  pass "install: libvkcu.so.$version (soname $soname) with its links, and libvkcu.a"
else
  fail "install: shared library: soname '$soname', links $(ls -l "$P/lib" | grep libvkcu | awk '{print $9 $10 $11}' | tr '\n' ' ')"
fi

# Only the library's own symbols leave it: the bundled FFmpeg and CUDA's
# runtime stay inside (a program may link its own FFmpeg beside it).
leaked=$(nm -D --defined-only "$P/lib/libvkcu.so" | awk '{print $3}' | grep -E '^(av|avcodec|avformat|sws|swr|ff|cuda|x264)_' | head -3)
if [ -z "$leaked" ]; then
  pass "install: libvkcu.so exports no FFmpeg or CUDA runtime symbol"
else
  fail "install: libvkcu.so exports bundled symbols: $leaked"
fi

# pkg-config as a program built against the stage runs it (make, below, runs
# without these)
export PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
if [ "$(pkg-config --modversion vkcu 2>&1)" = "$version" ] &&
   pkg-config --cflags vkcu | grep -qF -- "-I$P/include" &&
   pkg-config --libs vkcu | grep -qF -- "-L$P/lib -lvkcu"; then
  pass "install: pkg-config finds vkcu $version in the stage ($(pkg-config --cflags --libs vkcu))"
else
  fail "install: pkg-config vkcu: $(pkg-config --modversion --cflags --libs vkcu 2>&1 | tr '\n' ' ')"
fi

# Every public header is installed and compiles alone from the stage.
if [ ! -d "$root/include/vkcu" ]; then
  skip "install: the public API is not in include/vkcu/ yet (issue 14.1): installed headers not compiled"
else
hdr_bad=
for h in "$P"/include/vkcu/*.h; do
  printf '#include <vkcu/%s>\n' "${h##*/}" > "$TMP/hdr.c"
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags vkcu) -fsyntax-only "$TMP/hdr.c" 2> "$TMP/hdr.err" ||
    hdr_bad+="${h##*/}: $(head -1 "$TMP/hdr.err") "
done
n_hdr=$(ls "$P"/include/vkcu/*.h 2>/dev/null | wc -l)
if [ "$n_hdr" -ge 1 ] && [ -z "$hdr_bad" ]; then
  pass "install: $n_hdr public headers installed, each compiles alone with pkg-config's flags"
else
  fail "install: installed headers: $n_hdr; $hdr_bad"
fi
fi

# Man pages and completion, where the build made them; docs and licence.
man_bad=
for m in "$build"/man/*.[1-8]; do
  [ -f "$m" ] || continue
  cmp -s "$m" "$P/share/man/man${m##*.}/${m##*/}" || man_bad+="${m##*/} "
done
if [ -f "$build/completion/vkcu" ] && ! cmp -s "$build/completion/vkcu" "$P/share/bash-completion/completions/vkcu"; then
  man_bad+="bash completion "
fi
if [ -z "$man_bad" ] && cmp -s "$root/LICENSE" "$P/share/doc/vkcu/LICENSE" &&
   [ -f "$P/share/doc/vkcu/README.md" ] && [ -f "$P/share/doc/vkcu/docs/regression.md" ]; then
  pass "install: LICENSE, README and docs in share/doc/vkcu; $(ls "$build"/man/*.[1-8] 2>/dev/null | wc -l) man pages"
else
  fail "install: missing or different: ${man_bad}$(cmp "$root/LICENSE" "$P/share/doc/vkcu/LICENSE" 2>&1)"
fi

# A second install over the first changes nothing and is still removed whole.
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
if ! make -s -C "$root" --no-print-directory DESTDIR="$stage" PREFIX="$prefix" install > "$TMP/install2.log" 2>&1; then
  fail "install: a second make install failed: $(tail -3 "$TMP/install2.log" | tr '\n' ' ')"
fi
(cd "$stage" && find . ! -type d | sort) > "$TMP/installed"
if ! make -s -C "$root" --no-print-directory DESTDIR="$stage" PREFIX="$prefix" uninstall > "$TMP/uninstall.log" 2>&1; then
  fail "install: make uninstall failed: $(tail -2 "$TMP/uninstall.log" | tr '\n' ' ')"
  exit 0
fi
left=$(cd "$stage" && find . ! -type d | sort | tr '\n' ' ')
dirs=$(cd "$stage" && find . -type d -path '*vkcu*' | tr '\n' ' ')
if [ "$left" = "./usr/local/bin/other-tool ./usr/local/lib/pkgconfig/other.pc " ] && [ -z "$dirs" ] &&
   [ "$(cat "$P/bin/other-tool")" = mine ] && [ "$(wc -l < "$TMP/installed")" -ge 20 ]; then
  pass "install: make uninstall removed the $(($(wc -l < "$TMP/installed") - 2)) files install wrote, kept the user's two"
else
  fail "install: after uninstall: files left: $left; folders left: $dirs"
fi
expect "install: uninstall twice says there is nothing to remove" 2 'nothing to uninstall' -- \
  make -s -C "$root" --no-print-directory DESTDIR="$stage" PREFIX="$prefix" uninstall

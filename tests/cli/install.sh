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

# bin/vkcu links libvkcu.so: its rpath finds the staged library (LIBDIR seen
# from BINDIR), not the build folder's, also with LD_LIBRARY_PATH pointing
# there (DT_RPATH is searched first).
loaded=$(LD_LIBRARY_PATH=$build ldd "$P/bin/vkcu" 2>&1 | awk '$1 == "libvkcu.so.'"$major"'" {print $3}')
if [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$P/lib/libvkcu.so.$major")" ]; then
  pass "install: bin/vkcu loads the staged lib/libvkcu.so.$major (rpath $(readelf -d "$P/bin/vkcu" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p'))"
else
  fail "install: bin/vkcu loads '${loaded:-no libvkcu.so.$major}', not $P/lib/libvkcu.so.$major"
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

# ---- examples/: built from the stage alone (no -I or -L into the checkout),
# against libvkcu.so and, statically, against libvkcu.a with what
# `pkg-config --static` adds. A sysroot holds the toolchain too: CUDA's
# static runtime, which Libs.private names, is linked into the stage.
mkdir -p "$stage/usr/local"
ln -s /usr/local/cuda "$stage/usr/local/cuda"
cflags=$(pkg-config --cflags vkcu) libs=$(pkg-config --libs vkcu)
static_libs=$(pkg-config --static --libs vkcu | sed 's/-lvkcu\b/-l:libvkcu.a/')
built=1
for ex in hash-frames decode-chain; do
  # shellcheck disable=SC2086
  if ! cc -std=c11 -Wall -Wextra -Werror $cflags -o "$TMP/$ex" "$root/examples/$ex.c" $libs 2> "$TMP/$ex.err"; then
    fail "install: examples/$ex.c against libvkcu.so: $(head -3 "$TMP/$ex.err" | tr '\n' ' ')"; built=
  fi
  # shellcheck disable=SC2086
  if ! cc -std=c11 -Wall -Wextra -Werror $cflags -o "$TMP/$ex-static" "$root/examples/$ex.c" $static_libs 2> "$TMP/$ex-static.err"; then
    fail "install: examples/$ex.c static (pkg-config --static): $(grep -m2 -E 'undefined|cannot find|error' "$TMP/$ex-static.err" | tr '\n' ' ')"; built=
  fi
done
if [ -n "$built" ]; then
  needs=$(readelf -d "$TMP/hash-frames" | grep -c 'NEEDED.*libvkcu.so.'"$major")
  needs_static=$(readelf -d "$TMP/hash-frames-static" | grep -c 'NEEDED.*libvkcu')
  if [ "$needs" = 1 ] && [ "$needs_static" = 0 ]; then
    pass "install: both examples build from the stage with pkg-config, shared (NEEDED libvkcu.so.$major) and static"
  else
    fail "install: examples: the shared build needs libvkcu.so.$major $needs times, the static one libvkcu $needs_static times"
  fi
  export LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # hash-frames: the same lines as vkcu hash, whatever the algorithm
  for c in "h264-aac.mp4 md5" "hevc10.mkv blake3"; do
    set -- $c
    "$VKCU" hash "$MEDIA/$1" --algo "$2" > "$TMP/want.$2" 2> /dev/null
    for v in hash-frames hash-frames-static; do
      if "$TMP/$v" "$MEDIA/$1" "$2" > "$TMP/got.$v" 2> "$TMP/got.$v.err" && [ "$(frames "$TMP/want.$2" | wc -l)" -ge 5 ] &&
         cmp -s "$TMP/want.$2" "$TMP/got.$v"; then
        pass "install: $v $1 $2: $(frames "$TMP/got.$v" | wc -l) frame hashes equal vkcu hash's"
      else
        fail "install: $v $1 $2 differs from vkcu hash: $(diff "$TMP/want.$2" "$TMP/got.$v" | head -3 | tr '\n' ' ') $(tail -1 "$TMP/got.$v.err")"
      fi
    done
  done
  # decode-chain: the frame callback sees the frames vkcu hash hashes after
  # the same chain, at the size and rate its framemd5 header gives (#tb is
  # one frame's duration there), and its pixels, read through vkcu_picture
  # alone, are the bytes `vkcu hash --whole` hashes
  chain='crop=w=128:h=96:x=16:y=8,scale=w=64:h=48'
  "$VKCU" hash "$MEDIA/h264-aac.mp4" --chain "$chain" > "$TMP/want.chain" 2> /dev/null
  want_md5=$("$VKCU" hash "$MEDIA/h264-aac.mp4" --chain "$chain" --whole 2> /dev/null | sed -n 's/^MD5=//p')
  n_want=$(frames "$TMP/want.chain" | wc -l)
  dims=$(sed -n 's/^#dimensions 0: //p' "$TMP/want.chain") tb=$(sed -n 's/^#tb 0: //p' "$TMP/want.chain")
  fps="${tb#*/}/${tb%/*}"
  for v in decode-chain decode-chain-static; do
    "$TMP/$v" "$MEDIA/h264-aac.mp4" "$chain" "$TMP/$v.raw" > "$TMP/got.$v" 2> "$TMP/got.$v.err"; rc=$?
    got_md5=$(md5sum < "$TMP/$v.raw" 2> /dev/null | cut -d' ' -f1)
    if [ "$rc" = 0 ] && [ "$n_want" -ge 5 ] && grep -q "^stream: $dims yuv420p, $fps fps, " "$TMP/got.$v" &&
       [ "$(grep -c '^frame ' "$TMP/got.$v")" = "$n_want" ] && grep -q "^frame 0 pts 0 key\$" "$TMP/got.$v" &&
       grep -q "^frame $((n_want - 1)) pts [0-9]*\$" "$TMP/got.$v" && grep -q "^frames: $n_want (" "$TMP/got.$v" &&
       [ -n "$want_md5" ] && [ "$got_md5" = "$want_md5" ]; then
      pass "install: $v: $n_want frames of $dims at $fps fps through '$chain', pixels as vkcu hash --whole gives them"
    else
      fail "install: $v (exit $rc): $(head -1 "$TMP/got.$v"), $(grep -c '^frame ' "$TMP/got.$v") frames, pixels md5 $got_md5; vkcu hash: $n_want frames of $dims at $fps fps, md5 $want_md5 $(tail -1 "$TMP/got.$v.err")"
    fi
  done
  # The raw file is never replaced, and the refusal leaves it as it was.
  expect "install: decode-chain refuses to replace an existing raw file" 1 'decode-chain.raw: File exists' -- \
    "$TMP/decode-chain" "$MEDIA/h264-aac.mp4" "$chain" "$TMP/decode-chain.raw"
  [ "$(md5sum < "$TMP/decode-chain.raw" | cut -d' ' -f1)" = "$want_md5" ] &&
    pass "install: decode-chain left the existing raw file unchanged" ||
    fail "install: decode-chain changed an existing raw file"
  expect "install: decode-chain refuses an invalid chain before opening anything" 2 'invalid chain: .*nosuchop' -- \
    "$TMP/decode-chain" "$MEDIA/h264-aac.mp4" 'nosuchop=1'
fi
rm -f "$stage/usr/local/cuda"

# The Python package: installed where the system's python3 reads packages for
# the prefix, it loads the staged library (its _paths.py names LIBDIR; in a
# stage the library is elsewhere, so VKCU_LIBRARY points there), registers
# its pytest plugin, and its frames hash as vkcu hash's.
pydir=$(cd "$stage" && find . -path '*/vkcu/__init__.py' -printf '%h\n' | head -1)
py=$(command -v /usr/bin/python3 || command -v python3)
if [ -z "$pydir" ] || [ -z "$py" ]; then
  skip "install: the Python package: no python3 here${pydir:+ to import it}"
else
  site=$stage/${pydir#./}/..
  got=$(cd "$TMP" && VKCU_LIBRARY="$P/lib/libvkcu.so.$major" PYTHONPATH="$site" "$py" - "$MEDIA/h264-aac.mp4" 2>&1 <<'PYEOF'
import hashlib, sys
from importlib.metadata import entry_points
import vkcu, vkcu._lib, vkcu._paths
f = next(iter(vkcu.open(sys.argv[1], backend="cpu")))
plugin = [e.value for e in entry_points(group="pytest11") if e.name == "vkcu"]
print(vkcu.__version__, vkcu._lib.lib._name, vkcu._paths.LIBDIRS, plugin, hashlib.md5(f.tobytes()).hexdigest())
PYEOF
)
  want=$("$VKCU" hash "$MEDIA/h264-aac.mp4" --backend cpu 2> /dev/null | grep -v '^#' | head -1 | awk '{print $NF}')
  if [ "$got" = "$version $P/lib/libvkcu.so.$major ['$prefix/lib'] ['vkcu.pytest_plugin'] $want" ]; then
    pass "install: the Python package in ${pydir#./usr/local/} imports, loads the staged library, registers its pytest plugin, hashes as vkcu hash"
  else
    fail "install: the Python package: '$got', expected frame md5 $want"
  fi
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

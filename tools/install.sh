#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install` and `make uninstall` (docs/install.md).
#
#   tools/install.sh install    copy the build into $DESTDIR$PREFIX
#   tools/install.sh uninstall  remove exactly what install wrote there
#
# install records every file and link it writes, relative to the prefix, in
# PREFIX/share/vkcu/install-manifest (a second install adds to the list), so
# uninstall removes those and nothing else, even after the build folder is
# gone or the tree has changed. Folders are removed only when vkcu's own and
# left empty; bin/, lib/, share/man/ ... stay.
#
# Environment (the Makefile passes them): BUILD, PREFIX, DESTDIR, BINDIR,
# LIBDIR, INCLUDEDIR, DATADIR, MANDIR, DOCDIR, BASHCOMPDIR (absolute paths
# under PREFIX or elsewhere), VKCU_VERSION, SONAME, FFMPEG_BUNDLED_LIBS (the
# bundled FFmpeg's static archives: installed for static linking),
# PYTHONDIR (where the Python package goes; default: the folder the system's
# python3 reads for PREFIX, see python_dir) and PYTHON (that python3).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'vkcu install: %s\n' "$*" >&2; exit 1; }

: "${BUILD:=build}" "${PREFIX:=/usr/local}" "${DESTDIR:=}"
: "${BINDIR:=$PREFIX/bin}" "${LIBDIR:=$PREFIX/lib}" "${INCLUDEDIR:=$PREFIX/include}"
: "${DATADIR:=$PREFIX/share}" "${MANDIR:=$DATADIR/man}" "${DOCDIR:=$DATADIR/doc/vkcu}"
: "${BASHCOMPDIR:=$DATADIR/bash-completion/completions}"
: "${VKCU_VERSION:?}" "${SONAME:?}"
case $PREFIX in /*) ;; *) die "PREFIX=$PREFIX: must be an absolute path (e.g. PREFIX=/usr/local)" ;; esac

manifest=$DESTDIR$DATADIR/vkcu/install-manifest
# Folders vkcu owns: uninstall removes them once empty (deepest first).
own_dirs=("$DATADIR/vkcu/pipelines" "$DATADIR/vkcu" "$DOCDIR/docs" "$DOCDIR" "$INCLUDEDIR/vkcu" "$LIBDIR/vkcu")

# The public headers: include/vkcu/ once the API has its own folder,
# src/core/vkcu.h before.
public_headers() {
  if compgen -G 'include/vkcu/*.h' > /dev/null; then
    printf '%s\n' include/vkcu/*.h
  else
    echo src/core/vkcu.h
  fi
}

# The Python package (python/, docs/python.md): where the system's python3
# looks for packages under PREFIX (Debian: /usr/local/lib/python3.X/
# dist-packages), else PREFIX/lib/python3.X/site-packages (then PYTHONPATH
# must name it). Empty when there is no python3 and no PYTHONDIR.
python_bin() {
  if [ -n "${PYTHON:-}" ]; then command -v "$PYTHON"; elif [ -x /usr/bin/python3 ]; then echo /usr/bin/python3;
  else command -v python3; fi
}
python_dir() {
  local py
  [ -n "${PYTHONDIR:-}" ] && { echo "$PYTHONDIR"; return 0; }
  py=$(python_bin) || return 0
  "$py" - "$PREFIX" <<'PYEOF' 2> /dev/null
import sys, sysconfig
prefix = sys.argv[1].rstrip("/") + "/"
for scheme in (sysconfig.get_default_scheme(), "posix_prefix"):
    try:
        path = sysconfig.get_path("purelib", scheme)
    except KeyError:
        continue
    if path.startswith(prefix):
        print(path)
        break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix.rstrip("/"), "platbase": prefix.rstrip("/")}))
PYEOF
}
# The package's generated files: _paths.py naming LIBDIR, and the metadata
# (entry point of the pytest plugin) the in-tree build backend writes.
python_prepare() {
  local py
  rm -rf "$BUILD/python-install" && mkdir -p "$BUILD/python-install"
  printf '# SPDX-License-Identifier: GPL-2.0-or-later\n# Written by make install: where libvkcu.so was installed.\nLIBDIRS = [%s]\n' \
    "'$LIBDIR'" > "$BUILD/python-install/_paths.py"
  py=$(python_bin) || py=python3
  "$py" -c 'import sys; sys.path.insert(0, "python/_build"); import vkcu_backend as b; print(b.prepare_metadata_for_build_wheel(sys.argv[1]))' \
    "$BUILD/python-install" > "$BUILD/python-install/dist-info" || die "cannot write the Python package's metadata"
  echo "vkcu make install" > "$BUILD/python-install/$(cat "$BUILD/python-install/dist-info")/INSTALLER"
}

# One line per thing to install: MODE SOURCE DEST (DEST absolute, without
# DESTDIR); MODE "link" makes DEST a symbolic link to SOURCE.
plan() {
  local f
  echo "755 $BUILD/vkcu $BINDIR/vkcu"
  echo "644 $BUILD/libvkcu.a $LIBDIR/libvkcu.a"
  echo "755 $BUILD/libvkcu.so.$VKCU_VERSION $LIBDIR/libvkcu.so.$VKCU_VERSION"
  echo "link libvkcu.so.$VKCU_VERSION $LIBDIR/$SONAME"
  echo "link $SONAME $LIBDIR/libvkcu.so"
  for f in ${FFMPEG_BUNDLED_LIBS:-}; do echo "644 $f $LIBDIR/vkcu/${f##*/}"; done
  echo "644 $BUILD/vkcu.pc $LIBDIR/pkgconfig/vkcu.pc"
  while IFS= read -r f; do echo "644 $f $INCLUDEDIR/vkcu/${f##*/}"; done < <(public_headers)
  for f in pipelines/*.pipe; do echo "644 $f $DATADIR/vkcu/pipelines/${f##*/}"; done
  # man pages and completion: generated from the option table into the build folder
  for f in "$BUILD"/man/*.[1-8]; do
    [ -f "$f" ] && echo "644 $f $MANDIR/man${f##*.}/${f##*/}"
  done
  [ -f "$BUILD/completion/vkcu" ] && echo "644 $BUILD/completion/vkcu $BASHCOMPDIR/vkcu"
  echo "644 LICENSE $DOCDIR/LICENSE"
  echo "644 README.md $DOCDIR/README.md"
  for f in docs/*.md; do echo "644 $f $DOCDIR/docs/${f##*/}"; done
  if [ -n "$pydir" ]; then
    for f in python/vkcu/*.py python/vkcu/py.typed; do
      [ "${f##*/}" = _paths.py ] || echo "644 $f $pydir/vkcu/${f##*/}"
    done
    echo "644 $BUILD/python-install/_paths.py $pydir/vkcu/_paths.py"
    local di; di=$(cat "$BUILD/python-install/dist-info")
    for f in "$BUILD/python-install/$di"/*; do echo "644 $f $pydir/$di/${f##*/}"; done
  fi
}

# DEST relative to the prefix when under it (the manifest then survives a
# DESTDIR staging and a relocated tree), else absolute.
rel() { case $1 in "$PREFIX"/*) printf '%s\n' "${1#"$PREFIX"/}" ;; *) printf '%s\n' "$1" ;; esac; }
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PREFIX/$1" ;; esac; }

do_install() {
  local mode src dest
  pydir=$(python_dir)
  if [ -n "$pydir" ]; then python_prepare; else
    echo "vkcu install: no python3 found: the Python package is not installed (set PYTHONDIR to install it)" >&2
  fi
  list=$(mktemp)
  trap 'rm -f "$list"' EXIT
  # check every source first: a half-done install is worse than none
  while read -r mode src dest; do
    [ "$mode" = link ] || [ -f "$src" ] || die "$src: not built (run 'make' first)"
  done < <(plan)
  while read -r mode src dest; do
    mkdir -p "$DESTDIR${dest%/*}"
    if [ "$mode" = link ]; then
      ln -sfn "$src" "$DESTDIR$dest"
    else
      install -m "$mode" "$src" "$DESTDIR$dest"
    fi
    rel "$dest" >> "$list"
  done < <(plan)
  mkdir -p "${manifest%/*}"
  [ -f "$manifest" ] && cat "$manifest" >> "$list"
  rel "$DATADIR/vkcu/install-manifest" >> "$list"
  sort -u "$list" > "$manifest.new" && chmod 644 "$manifest.new" && mv "$manifest.new" "$manifest"
  echo "vkcu: installed $(wc -l < "$manifest") files under $DESTDIR$PREFIX (list: $manifest)"
}

do_uninstall() {
  local f n=0 d
  [ -f "$manifest" ] || die "nothing to uninstall: $manifest not found (was vkcu installed with this PREFIX and DESTDIR?)"
  removed=()
  while IFS= read -r f; do
    removed+=("$f")
    f=$DESTDIR$(abs "$f")
    if [ -e "$f" ] || [ -L "$f" ]; then rm -f "$f"; n=$((n + 1)); fi
  done < "$manifest"
  rm -f "$manifest"
  # The Python package's folders: its byte code (written by whoever
  # imported it), then the folders themselves once empty.
  while IFS= read -r f; do
    case $f in */vkcu/__init__.py|*/vkcu-*.dist-info/METADATA)
      d=$DESTDIR$(abs "${f%/*}")
      rm -rf "$d/__pycache__"
      [ -d "$d" ] && rmdir --ignore-fail-on-non-empty "$d" ;;
    esac
  done < <(printf '%s\n' "${removed[@]}")
  for d in "${own_dirs[@]}"; do
    [ -d "$DESTDIR$d" ] && rmdir --ignore-fail-on-non-empty "$DESTDIR$d"
  done
  echo "vkcu: removed $n files from $DESTDIR$PREFIX"
}

case ${1:-} in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: tools/install.sh install|uninstall" >&2; exit 2 ;;
esac

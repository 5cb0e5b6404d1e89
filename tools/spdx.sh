#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SPDX licence lines in vkcu's source files (C, CUDA, headers, shell, Python,
# Makefiles): one line near the top naming the licence in LICENSE, so a file
# copied out of the tree still says under which terms.
#
#   tools/spdx.sh --list    the files that must carry the line
#   tools/spdx.sh --check   name every one that lacks it (exit 1 if any)
#   tools/spdx.sh --add     add it where it is missing (after a #! line)
#
# The line must be within the first two lines: a file starts with it, or
# with its #! line and then it.
set -euo pipefail
cd "$(dirname "$0")/.."

SPDX_ID=GPL-2.0-or-later
tag="SPDX-License-Identifier: $SPDX_ID"

# Tracked files when this is a git checkout (so build outputs and media do
# not count); every file under the source folders otherwise (a tarball).
list_all() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files
  else
    find . -path ./build -prune -o -path './build-*' -prune -o -path ./media/gen -prune -o \
      -path ./.git -prune -o -type f -print | sed 's|^\./||'
  fi
}

is_source() {
  case $1 in
    *.c|*.h|*.cu|*.cuh|*.sh|*.py|*.mk|*.sbatch|Makefile|*/Makefile) return 0 ;;
  esac
  # scripts without a suffix (.ci/run)
  [ -f "$1" ] && [ "$(head -c2 "$1" | tr -d '\0')" = '#!' ]
}

list_sources() {
  local f
  list_all | while IFS= read -r f; do
    [ -f "$f" ] && is_source "$f" && printf '%s\n' "$f"
  done
}

has_tag() { head -n2 "$1" | grep -qF "$tag"; }

comment_for() {
  case $1 in
    *.c|*.h|*.cu|*.cuh) printf '/* %s */' "$tag" ;;
    *) printf '# %s' "$tag" ;;
  esac
}

add_tag() {
  local f=$1 line tmp
  line=$(comment_for "$f")
  tmp=$(mktemp "$f.spdx.XXXXXX")
  if [ "$(head -c2 "$f" | tr -d '\0')" = '#!' ]; then
    { head -n1 "$f"; printf '%s\n' "$line"; tail -n +2 "$f"; } > "$tmp"
  else
    { printf '%s\n' "$line"; cat "$f"; } > "$tmp"
  fi
  chmod --reference="$f" "$tmp"
  mv "$tmp" "$f"
}

case ${1:---check} in
  --list) list_sources ;;
  --check)
    missing=0
    while IFS= read -r f; do
      has_tag "$f" || { echo "spdx: $f: no '$tag' in its first two lines (run tools/spdx.sh --add)"; missing=$((missing + 1)); }
    done < <(list_sources)
    [ "$missing" = 0 ]
    ;;
  --add)
    while IFS= read -r f; do
      has_tag "$f" || { add_tag "$f"; echo "spdx: added to $f"; }
    done < <(list_sources)
    ;;
  *) echo "usage: tools/spdx.sh [--list|--check|--add]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Generated test media is byte-identical on every machine: each clip that
# tools/make-media.sh made must match media/gen.sha256 (fixed encoder threads,
# bitexact muxing). A mismatch names the clip, so a golden-hash failure
# elsewhere can be traced to the clip rather than to vkcu.
source "$(dirname "$0")/lib.sh"
list=$(cd "$(dirname "$0")/../.." && pwd)/media/gen.sha256
[ -f "$list" ] || { fail "media: media/gen.sha256 missing"; exit 0; }
while read -r sum name; do
  if [ ! -f "$MEDIA/$name" ]; then
    fail "media $name: missing from $MEDIA (run make media)"
  elif [ "$(sha256sum < "$MEDIA/$name" | cut -d' ' -f1)" = "$sum" ]; then
    pass "media $name: byte-identical to media/gen.sha256"
  else
    fail "media $name: differs from media/gen.sha256 (tools/make-media.sh or FFmpeg changed, or an encoder is not deterministic on this machine)"
  fi
done < "$list"
extra=$(cd "$MEDIA" && ls -A | grep -v '^\.' | grep -vxF -f <(awk '{print $2}' "$list") | grep -v / || true)
if [ -n "$extra" ]; then
  for e in $extra; do
    if [ -f "$MEDIA/$e" ]; then fail "media $e: made by tools/make-media.sh but not listed in media/gen.sha256"; fi
  done
fi

# The decoded pictures of every clip (generated and corpus) equal
# media/frames.md5: a clip whose bytes changed (a new FFmpeg's muxer or
# audio encoder) still decodes to the same frames, and a decoder that
# changed what it outputs is named here rather than in a golden far away.
frames=$(dirname "$list")/frames.md5
root=$(cd "$(dirname "$0")/../.." && pwd)
n=0 bad=0
while read -r sum name; do
  case $sum in '#'*|'') continue ;; esac
  n=$((n + 1))
  got=$(bash "$root/tools/frames-digest.sh" "$FFMPEG" "$MEDIA" "$name" | cut -d' ' -f1)
  if [ "$got" != "$sum" ]; then
    bad=$((bad + 1))
    fail "media frames $name: decodes to other pictures than media/frames.md5 lists (${got:-nothing decoded})"
  fi
done < "$frames"
[ "$bad" = 0 ] && pass "media frames: all $n clips decode to the pictures media/frames.md5 lists"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The decoded pictures of each video clip, as one MD5: of the MD5 column of
# `ffmpeg -map 0:v:0 -f framemd5` (each frame's pixels, in decode order of
# output), so that timestamps and container bytes do not enter it.
# media/frames.md5 lists them for the generated clips and the corpus;
# tests/cli/media.sh checks them, so a change of FFmpeg (or of an encoder)
# that changes what the clips decode to is seen apart from one that only
# changes their container bytes (a muxer's, an audio encoder's).
#
#   tools/frames-digest.sh FFMPEG DIR [NAME...]   one "MD5  NAME" line each
set -euo pipefail
ff=$1 dir=$2
shift 2
for name in "$@"; do
  if out=$("$ff" -hide_banner -loglevel error -nostdin -threads 1 -i "$dir/$name" -map 0:v:0 -f framemd5 - 2>/dev/null) &&
     [ -n "$(grep -v '^#' <<< "$out")" ]; then
    printf '%s  %s\n' "$(grep -v '^#' <<< "$out" | awk -F', *' '{print $NF}' | md5sum | cut -c1-32)" "$name"
  fi
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make demo`: transcode the bundled clip with a denoise + colour chain and
# print what happened. Uses the GPU when there is one, else the CPU backend.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ffprobe=$(sed -n 's/^FFMPEG_BIN := //p' build/deps.mk)/ffprobe
in=media/demo.mp4
out=build/demo/demo-denoised.mkv
mkdir -p build/demo
chain='denoise=tnr:sigma=6,convert=matrix=bt709:range=limited:format=yuv420p'
echo "demo: vkcu $in -o $out --chain '$chain' --stats -y"
build/vkcu "$in" -o "$out" --chain "$chain" --stats -y
echo
echo "demo: output streams:"
"$ffprobe" -v error -show_entries stream=index,codec_name,width,height,pix_fmt,color_primaries,nb_frames:format=duration,size \
  -of compact=p=0 "$out" | sed 's/^/  /'
echo "demo: per-frame hashes of the output: build/vkcu hash $out | head"
build/vkcu hash "$out" | sed -n '11,13p' | sed 's/^/  /'
echo "demo: done: $out"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The operator acceptance matrix (issue 11): every operator, with its key
# variants, over small inputs of every layout family FFmpeg's decoders give
# (4:2:0, 4:2:2, 4:4:4, 10-bit, full-range yuvj from MJPEG and H.264, gray,
# planar RGB, packed RGB). One line per case:
#   INPUT CHAIN EXIT HASH
# EXIT is vkcu hash's exit code (0: accepted), HASH the MD5 of its frame
# lines ("-" when refused). Both backends must print the same lines:
# tests/cli/op-matrix.sh checks the CPU backend's exit codes against
# tests/cli/op-matrix.expected, tests/gpu.d/op-matrix.sh the GPU backend's
# lines against the CPU backend's.
# Usage: VKCU=... FFMPEG=... tools/op-matrix.sh cpu|gpu DIR  (inputs are made in DIR once)
set -u
backend=$1 dir=$2
mkdir -p "$dir"
gen() { # name encoder-args...: 3 frames of testsrc2, made deterministically (one thread)
  local name=$1
  shift
  [ -s "$dir/$name" ] && return 0
  "$FFMPEG" -hide_banner -loglevel error -nostdin -threads 1 -filter_complex testsrc2=size=64x48:rate=25 -frames:v 3 \
    -threads 1 "$@" "$dir/$name" || echo "op-matrix: cannot make $name" >&2
}
gen yuv420p.mkv -pix_fmt yuv420p -c:v ffv1
gen yuv420p10.mkv -pix_fmt yuv420p10le -c:v ffv1
gen yuv422p.mkv -pix_fmt yuv422p -c:v ffv1
gen yuv422p10.mkv -pix_fmt yuv422p10le -c:v ffv1
gen yuv444p.mkv -pix_fmt yuv444p -c:v ffv1
gen yuvj420p.avi -pix_fmt yuvj420p -c:v mjpeg -q:v 3
gen yuvj422p.avi -pix_fmt yuvj422p -c:v mjpeg -q:v 3
gen yuvj444p.avi -pix_fmt yuvj444p -c:v mjpeg -q:v 3
gen h264-full.mp4 -pix_fmt yuvj420p -c:v libx264 -preset ultrafast -qp 20
gen hevc10.mkv -pix_fmt yuv420p10le -c:v libx265 -x265-params pools=1:frame-threads=1:log-level=error -preset ultrafast
gen gray.mkv -pix_fmt gray -c:v ffv1
gen gbrp.mkv -pix_fmt gbrp -c:v ffv1
gen rgb24.nut -pix_fmt rgb24 -c:v rawvideo

chains=(
  ""
  copy
  convert
  convert=format=yuv420p
  convert=format=yuv444p10:matrix=bt2020
  convert=format=nv12
  convert=format=rgb24
  convert=range=full
  convert=range=limited
  tonemap=in_transfer=pq
  tonemap=in_transfer=hlg:curve=hable
  denoise=tnr
  denoise=nlm:search=2
  denoise=tnr:planes=luma
  crop=w=32:h=16:x=8:y=4
  crop=w=33:h=17:x=3:y=1
  pad=w=80:h=64:x=-1:y=-1:color=navy
  crop=w=48:h=32,pad=w=64:h=48:x=8:y=8
  scale=w=40:h=-2
  scale=w=33:h=17:filter=bicubic
  scale=w=1:h=1:filter=bilinear
  scale=w=96:h=-1:filter=spline36:sar=keep
  convert=format=nv12,scale=w=50:h=-2
  fps=60
  fps=10:round=down
  fps=50,denoise=tnr
  deinterlace
  deinterlace=mode=frame:parity=bff
)
# Cases run in parallel (JOBS, default: the machine's cores; the GPU
# backend's per-process set-up dominates), each into its own line file,
# printed in the fixed order afterwards.
one() { # index input chain
  local out=$dir/res/$1 rc h=-
  timeout -s KILL 120 "$VKCU" hash --backend "$backend" -q ${3:+--chain "$3"} "$dir/$2" > "$out.txt" 2> /dev/null
  rc=$?
  [ $rc = 0 ] && h=$(grep -v '^#' "$out.txt" | md5sum | cut -c1-12)
  printf '%-14s %-38s %s %s\n' "$2" "${3:-(none)}" "$rc" "$h" > "$out.line"
  rm -f "$out.txt"
}
export -f one
export VKCU backend dir
rm -rf "$dir/res" && mkdir -p "$dir/res"
inputs=(yuv420p.mkv yuv420p10.mkv yuv422p.mkv yuv422p10.mkv yuv444p.mkv yuvj420p.avi yuvj422p.avi yuvj444p.avi \
  h264-full.mp4 hevc10.mkv gray.mkv gbrp.mkv rgb24.nut)
n=$((${#inputs[@]} * ${#chains[@]}))
for ((i = 0; i < n; i++)); do
  printf '%05d\0%s\0%s\0' "$i" "${inputs[i / ${#chains[@]}]}" "${chains[i % ${#chains[@]}]}"
done | xargs -0 -n 3 -P "${JOBS:-$(nproc)}" bash -c 'one "$@"' one
for ((i = 0; i < n; i++)); do cat "$dir/res/$(printf %05d $i).line"; done

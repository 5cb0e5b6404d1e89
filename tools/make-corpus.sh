#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The input corpus of tests/cli/corpus.sh and tests/gpu.d/corpus.sh: one small
# clip per codec and container a user brings (H.264, HEVC 8/10-bit, AV1, VP9,
# VP8, MPEG-2, MPEG-4 Part 2, ProRes, MJPEG, DNxHR, FFV1, DPX, raw video in mp4,
# mkv, mov, webm, ts, avi, mxf, raw elementary streams and y4m), made by the
# build's own ffmpeg.
#
# Every encoder and filter runs on one thread with FFmpeg's bit-exact flags,
# so the bytes depend only on FFmpeg's and the codec libraries' versions, not
# on the machine or its core count: media/corpus.sha256 records them and the
# test names any clip whose bytes changed.
#
#   tools/make-corpus.sh [DIR]    default media/gen/corpus
# DIR is rebuilt from scratch when this script or the ffmpeg binary changed
# (a stamp file records both), else kept. It is written under a temporary
# name and renamed when complete: an interrupted run leaves no half corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${FFMPEG_BIN:-$(sed -n 's/^FFMPEG_BIN := //p' "$root/build/deps.mk")}
out=${1:-$root/media/gen/corpus}
stamp="$(sha256sum "$root/tools/make-corpus.sh" | cut -c1-64) $(sha256sum "$bin/ffmpeg" | cut -c1-64)"
if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then exit 0; fi
tmp=$out.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"

# One thread everywhere (encoders, filter graphs), no version strings or
# random UIDs in the muxers, FFmpeg's own code without SIMD (-cpuflags 0: the
# float AAC encoder and swscale round differently per instruction set) and
# x264's cpu-independent mode (its mbtree SIMD differs between CPUs, seen on
# the H200's host): the same bytes on every machine.
ff() {
  "$bin/ffmpeg" -cpuflags 0 -hide_banner -loglevel error -nostdin -y -filter_threads 1 -filter_complex_threads 1 "$@"
}
clip() { # NAME FRAMES FILTER [output options...]
  local name=$1 frames=$2 filter=$3; shift 3
  ff -filter_complex "$filter" -frames:v "$frames" -threads 1 -flags +bitexact -fflags +bitexact "$@" "$tmp/$name"
}
src() { # RATE PIX_FMT [SIZE]: the moving test pattern, 176x144 unless given
  echo "testsrc2=size=${3:-176x144}:rate=$1,format=$2"
}
x264=(-c:v libx264 -preset veryfast -x264-params threads=1:cpu-independent=1 -g 12 -bf 2)
x265=(-c:v libx265 -preset ultrafast -x265-params pools=none:frame-threads=1:log-level=error -g 12)
aom=(-c:v libaom-av1 -cpu-used 8 -row-mt 0 -tiles 1x1 -g 12 -crf 40 -b:v 0)
# "good" deadline: libvpx's realtime mode picks its speed from measured encode times.
vp9=(-c:v libvpx-vp9 -deadline good -cpu-used 5 -row-mt 0 -g 12 -crf 40 -b:v 0)
vp8=(-c:v libvpx -deadline good -cpu-used 5 -g 12 -crf 20 -b:v 1M)

# H.264: B-frames in mp4; 29.97 fps in mkv; full range (yuvj420p, as phones
# record); MBAFF interlaced in MPEG-TS; a raw Annex B stream at 30 fps (the raw
# demuxer does not know the rate; ffmpeg reads it from the SPS timing info).
clip h264.mp4 24 "$(src 25 yuv420p)" "${x264[@]}"
clip h264-2997.mkv 24 "$(src 30000/1001 yuv420p)" "${x264[@]}"
clip h264-fullrange.mp4 20 "$(src 25 yuvj420p)" "${x264[@]}"
clip h264-mbaff.ts 20 "$(src 25 yuv420p),setfield=tff" "${x264[@]}" -flags +ildct+bitexact -x264-params threads=1:cpu-independent=1:tff=1
clip h264.264 24 "$(src 30 yuv420p)" "${x264[@]}"
# HEVC: 8-bit in mkv, Main 10 in mp4 (hvc1), a raw stream at 24 fps.
clip hevc.mkv 20 "$(src 25 yuv420p)" "${x265[@]}"
clip hevc10.mp4 20 "$(src 25 yuv420p10le)" "${x265[@]}" -tag:v hvc1
clip hevc.h265 20 "$(src 24 yuv420p)" "${x265[@]}"
# AV1 (libaom) in IVF and WebM, VP9 in WebM, VP8 in WebM and IVF.
clip av1.ivf 16 "$(src 25 yuv420p)" "${aom[@]}"
clip av1.webm 16 "$(src 25 yuv420p)" "${aom[@]}"
clip vp9.webm 20 "$(src 25 yuv420p)" "${vp9[@]}"
clip vp8.webm 20 "$(src 25 yuv420p)" "${vp8[@]}"
clip vp8.ivf 20 "$(src 30 yuv420p)" "${vp8[@]}"
# MPEG-2: interlaced (field DCT and motion, top field first) in MPEG-TS, as
# broadcast; progressive in MXF.
clip mpeg2-interlaced.ts 20 "$(src 25 yuv420p),setfield=tff" -c:v mpeg2video -flags +ildct+ilme+bitexact -top 1 -g 12 -bf 2 -q:v 4
clip mpeg2.mxf 20 "$(src 25 yuv420p)" -c:v mpeg2video -g 12 -bf 2 -q:v 4
# MPEG-4 Part 2 with B-frames and MJPEG (full-range yuvj420p) in AVI.
clip mpeg4.avi 20 "$(src 25 yuv420p)" -c:v mpeg4 -g 12 -bf 1 -q:v 4
clip mjpeg.avi 20 "$(src 25 yuvj420p)" -c:v mjpeg -q:v 4
# ProRes 422 HQ (4:2:2 10-bit) in MOV; DNxHR SQ (4:2:2 8-bit, at least
# 256x120) in MXF.
clip prores.mov 16 "$(src 25 yuv422p10le)" -c:v prores_ks -profile:v 3
clip dnxhr.mxf 16 "$(src 25 yuv422p 256x144)" -c:v dnxhd -profile:v dnxhr_sq
# FFV1 version 3 (slices, CRCs), 4:2:2 10-bit, in mkv.
clip ffv1.mkv 20 "$(src 25 yuv422p10le)" -c:v ffv1 -level 3 -slices 4 -slicecrc 1 -g 10
# FFmpeg 8.1 decodes FFV1, ProRes and DPX on Vulkan compute queues (the GPU
# path's compute decoders): FFV1 8-bit 4:2:0 at an odd size, 8-bit 4:4:4 and
# 12-bit 4:4:4 (level 3, slices), and version 1 (no slices) 4:2:0; ProRes 4444
# with alpha; DPX (10-bit RGB, the film scanners' format) in NUT.
clip ffv1-420-odd.mkv 12 "$(src 25 yuv420p 175x97)" -c:v ffv1 -level 3 -slices 4 -slicecrc 1 -g 6
clip ffv1-444.mkv 12 "$(src 25 yuv444p)" -c:v ffv1 -level 3 -slices 6 -slicecrc 1 -g 6
clip ffv1-444p12.mkv 12 "$(src 25 yuv444p12le)" -c:v ffv1 -level 3 -slices 4 -slicecrc 1 -g 6
clip ffv1-v1.avi 12 "$(src 25 yuv420p)" -c:v ffv1 -level 1 -g 6
clip prores4444-alpha.mov 12 "$(src 25 yuva444p10le)" -c:v prores_ks -profile:v 4444 -alpha_bits 16
clip dpx.nut 8 "$(src 25 gbrp10le)" -c:v dpx
# Uncompressed: y4m 4:2:0 and 4:2:2 10-bit.
clip raw.y4m 20 "$(src 25 yuv420p)" -f yuv4mpegpipe
clip raw-422p10.y4m 20 "$(src 25 yuv422p10le)" -f yuv4mpegpipe -strict -1

echo "$stamp" > "$tmp/.stamp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT

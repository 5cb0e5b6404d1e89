#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Packs what a run on the GPU machine needs into .gpu/ (git-ignored), for the
# device tool to carry: vkcu, the GPU test and benchmark programs, the FFmpeg
# programs, the codec libraries they load (the GPU machine has libc,
# libstdc++ and libcuda, nothing else) and the generated clips. The
# conformance streams travel with the checkout (media/conformance).
# On the GPU machine: tests/gpu.sh and tools/bench.sh unpack it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# BUILD: the build folder to pack (default build/). A build for the GPU
# machine's architecture alone (make BUILD=build-sm90 CUDA_ARCHS=90) packs
# to a fraction of the default fat build, whose binaries hold every GPU
# architecture's code (72 MB packed: over the device tool's 64 MiB).
b=${BUILD:-build}
ffbin=$(sed -n 's/^FFMPEG_BIN := //p' "$b/deps.mk")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/tests" .gpu
strip -o "$stage/bin/vkcu" "$b/vkcu"
strip -o "$stage/bin/ffmpeg" "$ffbin/ffmpeg"
strip -o "$stage/bin/ffprobe" "$ffbin/ffprobe"
for t in "$b"/tests/*gpu* "$b"/tests/bench_* "$b"/tests/test_qclaim; do # test_qclaim: gpu.d/claims.sh's holders
  [ -x "$t" ] && strip -o "$stage/tests/$(basename "$t")" "$t"
done
# libvkcu.so for vkcu (which finds it in ../lib by its rpath) and for the
# Python package (python/ travels with the checkout; it finds the library on
# LD_LIBRARY_PATH, which tools/gpu-env.sh sets).
so=$(readlink "$b/libvkcu.so") # the soname, libvkcu.so.MAJOR (Makefile)
strip -o "$stage/lib/$so" "$b/$so"
# The profiler of tools/prof/ (LD_PRELOAD=.../lib/libvkcu-prof.so): its
# module+offset stacks are named here with the unstripped build.
[ -f "$b/libvkcu-prof.so" ] && cp "$b/libvkcu-prof.so" "$stage/lib/"
# Shared libraries outside the C/C++ runtime (libvkcu is packed above: bin/vkcu
# resolves it in the stage already).
for f in "$stage"/bin/* "$stage"/tests/* "$stage/lib/$so"; do ldd "$f" 2>/dev/null; done |
  awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libvkcu)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp media/gen/*.mkv media/gen/*.ivf media/gen/*.mp4 media/gen/*.h264 "$stage/" 2>/dev/null || true
mkdir -p "$stage/media" && mv "$stage"/*.mkv "$stage"/*.ivf "$stage"/*.mp4 "$stage"/*.h264 "$stage/media/" 2>/dev/null || true
# The interlaced clips of tests/gpu.d/deint.sh (MPEG-TS, MOV).
cp media/gen/deint-*.ts media/gen/deint-*.mov "$stage/media/" 2>/dev/null || true
# The raw HEVC stream that changes size and depth (tests/gpu.d/streams.sh).
cp media/gen/*.hevc "$stage/media/" 2>/dev/null || true
# The generated corpus, for tests/gpu.d/corpus.sh.
if [ -d media/gen/corpus ]; then cp -r media/gen/corpus "$stage/media/"; fi
# xz -9: its 64 MiB window spans neighbouring programs, which carry the same
# GPU code for every architecture of CUDA_ARCHS (Makefile). With the default
# list the bundle is 34 MB this way and 73 MB at -6, over the device tool's
# 64 MiB; at no more CPU time.
XZ_OPT=-9 tar -C "$stage" -cJf .gpu/bundle.tar.xz .
ls -la .gpu/bundle.tar.xz >&2

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Dependency bootstrap for vkcu: Debian packages, then a static FFmpeg 8.1
# built from Debian's source package (sid's 8.1.2; docs/install.md says why
# that one) with Vulkan 1.4 headers and NVIDIA's codec headers unpacked
# locally; glslang 15 built from Debian 13's source (FFmpeg 8.1 compiles its
# Vulkan shaders at build time, and Debian 12's glslang 12 cannot); libvmaf
# 3.2.0 when its source lies in ../shared/third_party. Each is cached outside
# the clone, keyed by version and configuration, and reused when both match;
# the downloaded source packages are kept in the cache, so a rebuild of a
# cached version needs no network.
#
# Writes build/deps.mk (read by the Makefile) naming the FFmpeg prefix (and
# libvmaf's, when built).
#
# Environment:
#   VKCU_CACHE        cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/vkcu)
#   VKCU_FFMPEG=system  use the system's FFmpeg (>= 8.1 with Vulkan) if present
#   VKCU_NO_APT=1     do not install Debian packages (they must be there)
#   VKCU_JOBS         parallel build jobs (default: nproc)
#   VKCU_VMAF_SOURCE  libvmaf source tarball (default: ../shared/third_party/
#                     vmaf-3.2.0.tar.xz beside the checkout, used when present;
#                     `none` builds without libvmaf)
#   VKCU_VMAF_CUDA    libvmaf's CUDA backend (VMAF on the GPU): unset, built
#                     when nvcc is found (NVCC, else CUDA/bin/nvcc with CUDA
#                     defaulting to /usr/local/cuda, else nvcc on PATH); 1,
#                     built or an error; 0, CPU only. Each is cached apart.
#
# `tools/deps.sh --vmaf-prefix` builds (or finds) libvmaf alone for these
# settings and prints its prefix: no packages, no FFmpeg, build/deps.mk
# untouched (tests/cli/vmaf-build.sh).
set -euo pipefail

say() { printf 'deps: %s\n' "$*" >&2; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${VKCU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vkcu}
jobs=${VKCU_JOBS:-$(nproc)}
mkdir -p "$cache" "$root/build"

# Bump when the build recipe below changes in a way flags do not capture.
recipe=5

# FFmpeg is pinned to one exact Debian source version: the golden hashes
# depend on its decoders, so a point release must be a deliberate change here
# (docs/install.md, "Re-pinning FFmpeg": the version, the suite and the three
# checksums from `apt-cache showsrc ffmpeg`, then the golden manifests).
# Debian 13 (trixie) stays at 7.1; 8.1.2 comes from sid, which drops it once
# a newer one is uploaded: the cache keeps the downloaded files.
FFMPEG_DEB_VERSION=7:8.1.2-2
FFMPEG_SUITE=sid
FFMPEG_SHA256="\
70c48902dc81b3a0099244af28e9a630c14088eca5af0f53de0c54b9891f3cfe  ffmpeg_8.1.2-2.dsc
464beb5e7bf0c311e68b45ae2f04e9cc2af88851abb4082231742a74d97b524c  ffmpeg_8.1.2.orig.tar.xz
92c2192f4bda036c3052fca0e264492dab0a160e747938ef4c320030605d160b  ffmpeg_8.1.2-2.debian.tar.xz"

# glslang compiles FFmpeg 8.1's Vulkan shaders at build time. Debian 12's
# glslang 12 fails on the FFV1 shaders (GL_EXT_expect_assume) and Debian 13's
# binary package needs glibc 2.38, so Debian 13's source is built: the
# upstream tree alone, without Debian's patches (they make it link the
# system's SPIRV-Tools, which the standalone compiler does not need).
GLSLANG_DEB_VERSION=15.1.0+1.4.309.0-1
GLSLANG_SUITE=trixie
GLSLANG_SHA256="\
5ce0f9040bd1f03575976a1599830ef86c22f2ff7b8721c50eb841b3e235e30b  glslang_15.1.0+1.4.309.0-1.dsc
180f17ea51e6b71bf57b9e0fea78ba3ecd76e3ec8e4c91f0771b922eb22bf4b2  glslang_15.1.0+1.4.309.0.orig.tar.gz
1738dcf3cf37ea9a2fc9c11eb0e990cdfbc62ddd6a09d82675835fa310e57ff7  glslang_15.1.0+1.4.309.0-1.debian.tar.xz"

# Vulkan headers (header-only: FFmpeg and vkcu load libvulkan at run time).
# FFmpeg 8.1 builds its VP9 Vulkan decoder only with headers of at least
# 1.4.317; Debian 13 has 1.4.309, sid newer ones. Any version from that one
# on serves; the one fetched is part of FFmpeg's cache key.
VULKAN_HEADERS_SUITE=sid
VULKAN_HEADERS_MIN=317

# libvmaf 3.2.0 (Netflix, BSD-2-Clause-Patent) from the project's shared
# third-party folder, when it is there (docs/regression.md, VMAF).
VMAF_SHA256=7d9cc802cdcadc6dfb8f9738feba07fbf0e56b040fd35df3e049a05314343224
vmaf_source=${VKCU_VMAF_SOURCE:-$root/../shared/third_party/vmaf-3.2.0.tar.xz}

packages=(build-essential pkg-config nasm dpkg-dev xz-utils ca-certificates cmake python3
  libvulkan1 mesa-vulkan-drivers libzimg-dev libx264-dev libx265-dev
  libsvtav1enc-dev libdav1d-dev libvpx-dev libaom-dev glslang-dev zlib1g-dev libjansson-dev
  b3sum)
# libvmaf's build: meson and ninja, xxd for its built-in models.
[ "$vmaf_source" != none ] && [ -f "$vmaf_source" ] && packages+=(meson ninja-build xxd)

# Test-only: a headless browser opens the HTML reports (tests/cli/report.sh);
# numpy and pytest run the Python package's tests (tests/cli/python.sh).
# Not needed to build or run vkcu, so their absence is a warning; the tests
# say SKIP with the reason. About 75 s to install on a fresh Debian 12.
test_packages=(chromium python3-numpy python3-pytest)

install_test_packages() {
  [ "${VKCU_NO_APT:-0}" = 1 ] && return 0
  local missing=()
  for p in "${test_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    say "warning: ${missing[*]} not installed (not root): tests/cli/report.sh will skip its browser check"
    return 0
  fi
  say "installing test packages: ${missing[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    say "warning: apt-get install ${missing[*]} failed: tests/cli/report.sh will skip its browser check"
}

# --test-packages: only the test-only packages (tests/cli/report.sh calls it
# when a checkout set up before they were added lacks them)
if [ "${1:-}" = --test-packages ]; then
  install_test_packages
  exit 0
fi

install_packages() {
  [ "${VKCU_NO_APT:-0}" = 1 ] && return 0
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { say "Debian packages present"; return 0; }
  [ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root or install them"
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
}

# apt_suite SUITE: the archive the machine already uses, read from its apt
# configuration, pointed at that Debian suite (trixie, sid) in a private apt
# state under the cache; sets APT_OPTS. Its lists are read at most daily.
apt_suite() {
  local suite=$1 dir=$cache/apt-$1 uri=
  mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/archives/partial"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ]; then
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}')
  fi
  [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources.list*; add one"
  printf 'Types: deb deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "$suite" > "$dir/parts/$suite.sources"
  APT_OPTS=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dir/parts"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  if [ -z "$(find "$dir/lists" -name '*Sources*' -mmin -1440 2>/dev/null | head -1)" ]; then
    say "reading Debian $suite package lists from $uri"
    apt-get "${APT_OPTS[@]}" update -qq || die "cannot read Debian $suite from $uri"
  fi
}

# fetch_source PACKAGE VERSION SUITE SHA256SUMS: the pinned source package,
# checked, in $cache/sources/PACKAGE-VERSION, downloaded the first time only.
# Prints that folder.
fetch_source() {
  local pkg=$1 version=$2 suite=$3 sums=$4 dir
  dir=$cache/sources/$pkg-${version#*:}
  if (cd "$dir" 2>/dev/null && printf '%s\n' "$sums" | sha256sum --quiet -c - >/dev/null 2>&1); then
    echo "$dir"
    return 0
  fi
  apt_suite "$suite"
  say "downloading the $pkg source package $version (Debian $suite)"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && apt-get "${APT_OPTS[@]}" source --download-only -qq "$pkg=$version" >/dev/null 2>&1) ||
    die "Debian $suite no longer has the $pkg source package $version, the one tools/deps.sh pins: pin the version 'apt-cache showsrc $pkg' lists there, with its SHA-256 sums (docs/install.md, Re-pinning FFmpeg), and re-check the golden hashes"
  (cd "$dir.tmp" && printf '%s\n' "$sums" | sha256sum --quiet -c -) ||
    die "the $pkg source package $version does not match the SHA-256 sums pinned in tools/deps.sh"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  echo "$dir"
}

# Configuration: kept in one list so its hash names the cache entry.
# Every native decoder, demuxer, parser and bitstream filter is built (users
# bring every format), plus libdav1d and FFmpeg's Vulkan decoders (on video
# queues: H.264, HEVC, AV1, VP9; on compute queues: FFV1, ProRes, ProRes
# RAW, DPX); encoders, muxers and filters are the ones vkcu and its tests use
# (the test corpus is encoded by this ffmpeg), the Vulkan compute encoders
# (ffv1_vulkan, prores_ks_vulkan) among them.
ffmpeg_flags() {
  cat <<'EOF'
--enable-static --disable-shared --enable-pic --enable-gpl
--disable-autodetect --disable-doc --disable-debug --disable-everything
--enable-pthreads --enable-zlib
--enable-avcodec --enable-avformat --enable-avutil --enable-swscale --enable-swresample --enable-avfilter
--enable-ffmpeg --enable-ffprobe --disable-ffplay
--enable-vulkan --enable-libglslang
--enable-ffnvcodec --enable-nvdec --enable-cuvid
--enable-libx264 --enable-libx265 --enable-libsvtav1 --enable-libdav1d --enable-libzimg --enable-libvpx --enable-libaom
--enable-decoders --enable-demuxers --enable-parsers --enable-bsfs
--enable-hwaccel=h264_vulkan,hevc_vulkan,av1_vulkan,vp9_vulkan,ffv1_vulkan,prores_vulkan,prores_raw_vulkan,dpx_vulkan,h264_nvdec,hevc_nvdec,av1_nvdec
--disable-decoder=libaom_av1,libvpx_vp8,libvpx_vp9
--enable-encoder=libx264,libx265,libsvtav1,libaom_av1,libvpx_vp8,libvpx_vp9,ffv1,ffv1_vulkan,rawvideo,wrapped_avframe,h264_vulkan,hevc_vulkan,png,aac,ac3,opus,pcm_s16le,mpeg2video,mpeg4,mjpeg,prores_ks,prores_ks_vulkan,dnxhd,dpx
--enable-muxer=mp4,mov,matroska,webm,nut,yuv4mpegpipe,h264,hevc,ivf,obu,rawvideo,aac,ac3,mp3,ogg,opus,wav,mpegts,framemd5,framecrc,framehash,md5,null,image2,ffmetadata,avi,mxf,mxf_opatom,mpeg2video,m4v
--enable-protocol=file,pipe,fd
--enable-filter=nlmeans,nlmeans_vulkan,scale_vulkan,hwupload,hwdownload,hwmap,format,scale,null,nullsink,anull,anullsink,buffer,buffersink,abuffer,abuffersink,aformat,aresample,hqdn3d,zscale,psnr,ssim,testsrc,testsrc2,color,smptehdbars,trim,setpts,fps,split,crop,copy,sine,anullsrc,aevalsrc,settb,showinfo,setparams,select,pad,noise,geq,drawbox,concat,vflip,tpad,mandelbrot,gradients,overlay,boxblur,asetnsamples,atrim,asetpts,bwdif,yadif,bwdif_vulkan,interlace,tinterlace,setfield,setsar,setdar,fieldorder,framerate
EOF
}

# With libvmaf: FFmpeg's libvmaf filter (and libvmaf_cuda with hwupload_cuda
# when libvmaf has its CUDA backend), linked against the same libvmaf, so
# that the benchmark can run `ffmpeg -lavfi libvmaf` beside vkcu
# (tools/bench-compare-vmaf.sh). A filter only: decoders, and so the golden
# hashes, are untouched. Part of FFmpeg's cache key, with libvmaf's.
ffmpeg_vmaf_flags() {
  [ -n "$vmaf_prefix" ] || return 0
  echo "--enable-libvmaf --enable-filter=libvmaf,libvmaf_cuda,hwupload_cuda"
}

# The Vulkan headers (sid) and NVIDIA's codec headers (Debian 13), unpacked
# once per recipe; .stamp holds the Vulkan headers' version.
headers=$cache/headers-r$recipe
fetch_headers() {
  local v
  [ -f "$headers/.stamp" ] && return 0
  rm -rf "$headers"; mkdir -p "$headers/debs"
  apt_suite "$VULKAN_HEADERS_SUITE"
  say "fetching the Vulkan headers (Debian $VULKAN_HEADERS_SUITE)"
  (cd "$headers/debs" && apt-get "${APT_OPTS[@]}" download -qq libvulkan-dev) ||
    die "cannot download libvulkan-dev from Debian $VULKAN_HEADERS_SUITE"
  apt_suite trixie
  say "fetching NVIDIA's codec headers (Debian 13)"
  (cd "$headers/debs" && apt-get "${APT_OPTS[@]}" download -qq libffmpeg-nvenc-dev) ||
    die "cannot download libffmpeg-nvenc-dev from Debian 13"
  for d in "$headers"/debs/*.deb; do dpkg-deb -x "$d" "$headers"; done
  [ -f "$headers/usr/include/vulkan/vulkan_core.h" ] || die "Vulkan headers missing after unpacking"
  v=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\)$/\1/p' "$headers/usr/include/vulkan/vulkan_core.h")
  [ "${v:-0}" -ge "$VULKAN_HEADERS_MIN" ] ||
    die "Debian $VULKAN_HEADERS_SUITE's Vulkan headers are 1.4.${v:-?}; FFmpeg 8.1's VP9 Vulkan decoder needs 1.4.$VULKAN_HEADERS_MIN or newer"
  # ffnvcodec.pc says prefix=/usr; point a copy at the unpacked tree.
  mkdir -p "$headers/pkgconfig"
  sed "s|^prefix=.*|prefix=$headers/usr|" "$(find "$headers/usr" -name ffnvcodec.pc | head -1)" > "$headers/pkgconfig/ffnvcodec.pc"
  echo "vulkan-headers 1.4.$v" > "$headers/.stamp"
}

# glslang's standalone compiler, built once; prints its path.
build_glslang() {
  local flags="-DCMAKE_BUILD_TYPE=Release -DENABLE_OPT=OFF -DGLSLANG_TESTS=OFF -DBUILD_SHARED_LIBS=OFF"
  local key prefix src work t0
  key=$( (echo "recipe $recipe"; echo "$GLSLANG_DEB_VERSION"; echo "$flags") | sha256sum | cut -c1-12)
  prefix=$cache/glslang-${GLSLANG_DEB_VERSION%%+*}-$key
  if [ ! -x "$prefix/bin/glslang" ]; then
    src=$(fetch_source glslang "$GLSLANG_DEB_VERSION" "$GLSLANG_SUITE" "$GLSLANG_SHA256")
    work=$cache/build-glslang-$key
    rm -rf "$work"; mkdir -p "$work"
    (cd "$work" && dpkg-source --no-check --skip-patches -x "$src"/*.dsc src >/dev/null) ||
      die "cannot unpack the glslang source package"
    t0=$SECONDS
    say "building glslang ${GLSLANG_DEB_VERSION%%+*} with $jobs jobs (about 4 minutes on 2 cores; log: $work/build.log)"
    # shellcheck disable=SC2086
    { cmake -S "$work/src" -B "$work/b" $flags && cmake --build "$work/b" --target glslang-standalone -j"$jobs"; } \
      > "$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; die "glslang build failed (see $work/build.log)"; }
    rm -rf "$prefix.tmp"; mkdir -p "$prefix.tmp/bin"
    cp "$work/b/StandAlone/glslang" "$prefix.tmp/bin/glslang"
    rm -rf "$prefix"; mv "$prefix.tmp" "$prefix"; rm -rf "$work"
    say "glslang installed at $prefix ($((SECONDS - t0)) s)"
  fi
  echo "$prefix/bin/glslang"
}

# nvcc for libvmaf's CUDA backend, the one the Makefile uses (NVCC, else
# CUDA/bin/nvcc), else the first on PATH; prints nothing when there is none.
find_nvcc() {
  local c=${NVCC:-${CUDA:-/usr/local/cuda}/bin/nvcc}
  if [ -x "$c" ]; then echo "$c"; else command -v nvcc || true; fi
}

# libvmaf, static, with its built-in models and its `vmaf` tool (the VMAF
# tests' oracle), when its source is there; sets vmaf_prefix. With nvcc (see
# VKCU_VMAF_CUDA above) also its CUDA backend: integer ADM, VIF and motion
# on the GPU. That code loads libcuda at run time through the dynlink loader
# of NVIDIA's codec headers, so nothing links libcuda and the CPU-only
# machines that build and test vkcu need no driver; the headers need seven
# more driver functions (tools/ffnvcodec-libvmaf.patch), added to a copy in
# the build folder, its motion kernel for more than 8 bits needs
# upstream's later fix (tools/libvmaf-cuda-motion16.patch), and two of its
# extractors need their accumulators' resets ordered before the kernels
# that add into them (tools/libvmaf-cuda-reset-order.patch). The CUDA
# build's cache key holds nvcc's version, the headers' version and the
# patches;
# the CPU-only key is what it always was.
vmaf_prefix=
build_vmaf() {
  [ "$vmaf_source" != none ] && [ -f "$vmaf_source" ] || return 0
  local flags="--libdir=lib --buildtype=release -Ddefault_library=static -Dbuilt_in_models=true -Denable_tests=false -Denable_docs=false"
  local key prefix work src build t0 nvcc='' cuda_key='' patch=$root/tools/ffnvcodec-libvmaf.patch
  local vmaf_patches=("$root/tools/libvmaf-cuda-motion16.patch" "$root/tools/libvmaf-cuda-reset-order.patch") p
  echo "$VMAF_SHA256  $vmaf_source" | sha256sum --quiet -c - >/dev/null 2>&1 ||
    die "$vmaf_source does not match the SHA-256 pinned in tools/deps.sh"
  case ${VKCU_VMAF_CUDA:-} in
    0) ;;
    1) nvcc=$(find_nvcc)
       [ -n "$nvcc" ] || die "VKCU_VMAF_CUDA=1: no nvcc (looked for ${NVCC:-${CUDA:-/usr/local/cuda}/bin/nvcc} and on PATH): install the CUDA toolkit, set CUDA=DIR, or VKCU_VMAF_CUDA=0 for a CPU-only libvmaf" ;;
    '') nvcc=$(find_nvcc) ;;
    *) die "VKCU_VMAF_CUDA=$VKCU_VMAF_CUDA: use 1 (CUDA backend), 0 (CPU only) or leave it unset (CUDA when nvcc is found)" ;;
  esac
  if [ -n "$nvcc" ]; then
    fetch_headers
    flags="$flags -Denable_cuda=true"
    cuda_key=$(echo "cuda"; "$nvcc" --version | grep -E 'release|^Build'; sed -n 's/^Version: //p' "$headers/pkgconfig/ffnvcodec.pc";
      sha256sum < "$patch"; for p in "${vmaf_patches[@]}"; do sha256sum < "$p"; done)
  fi
  key=$( (echo "recipe $recipe"; echo "$VMAF_SHA256"; echo "$flags"; [ -z "$cuda_key" ] || echo "$cuda_key") |
    sha256sum | cut -c1-12)
  prefix=$cache/vmaf-3.2.0-${nvcc:+cuda-}$key
  if [ ! -f "$prefix/.complete" ]; then
    work=$cache/build-vmaf-$key
    rm -rf "$work" "$prefix"; mkdir -p "$work"
    tar -C "$work" -xJf "$vmaf_source" || die "cannot unpack $vmaf_source"
    src=$work/vmaf-3.2.0/libvmaf
    # libvmaf's CUDA targets name their include folders relative to a build
    # folder directly inside libvmaf/ (-I ../src), so it goes there.
    build=$src/build
    local cuda_env=() cuda_args=()
    if [ -n "$nvcc" ]; then
      mkdir -p "$work/include"
      cp -r "$headers/usr/include/ffnvcodec" "$work/include/"
      patch -s -p1 -d "$work/include" < "$patch" || die "cannot apply $patch to the ffnvcodec headers"
      for p in "${vmaf_patches[@]}"; do
        patch -s -p1 -d "$work/vmaf-3.2.0" < "$p" || die "cannot apply $p to libvmaf"
      done
      # meson finds nvcc and bin2c on PATH; the .cu files are compiled by
      # custom commands that take no include folders, hence NVCC_APPEND_FLAGS.
      cuda_env=(PATH="$(dirname "$nvcc"):$PATH" NVCC_APPEND_FLAGS="-I$work/include")
      cuda_args=(-Dc_args="-I$work/include")
    fi
    t0=$SECONDS
    say "building libvmaf 3.2.0${nvcc:+ with its CUDA backend ($nvcc)} (log: $work/build.log)"
    # shellcheck disable=SC2086
    { env "${cuda_env[@]}" meson setup "$build" "$src" --prefix="$prefix" $flags "${cuda_args[@]}" &&
      env "${cuda_env[@]}" ninja -C "$build" -j "$jobs" install; } > "$work/build.log" 2>&1 ||
      { tail -20 "$work/build.log" >&2; die "libvmaf build failed (see $work/build.log)"; }
    rm -rf "$work"; touch "$prefix/.complete"
    say "libvmaf installed at $prefix ($((SECONDS - t0)) s)"
  fi
  # The archive is partly C++ (its SVM) and, with CUDA, calls dlopen; its
  # libvmaf.pc names neither, so a static link through it (FFmpeg's
  # configure) fails. Added here rather than in the build above so that a
  # prefix cached before this fix gets it too.
  grep -q '^Libs: .*-lstdc++' "$prefix/lib/pkgconfig/libvmaf.pc" ||
    sed -i 's/^\(Libs: .*\)$/\1 -lstdc++ -ldl/' "$prefix/lib/pkgconfig/libvmaf.pc"
  vmaf_prefix=$prefix
}

# write_deps_mk LINES: build/deps.mk, whole or not at all, with libvmaf's
# prefix when it was built.
write_deps_mk() {
  { printf '%s\n' "$@"
    if [ -n "$vmaf_prefix" ]; then printf 'VMAF_PREFIX := %s\n' "$vmaf_prefix"; fi
  } > "$root/build/deps.mk.tmp"
  mv "$root/build/deps.mk.tmp" "$root/build/deps.mk"
}

use_system_ffmpeg() {
  # FFmpeg 8.1 is libavcodec 62.28.
  pkg-config --atleast-version=62.28.100 libavcodec 2>/dev/null || return 1
  local inc
  inc=$(pkg-config --variable=includedir libavutil)
  [ -f "$inc/libavutil/hwcontext_vulkan.h" ] || return 1
  command -v ffmpeg >/dev/null || return 1
  say "using the system's FFmpeg $(pkg-config --modversion libavcodec) (libavcodec)"
  write_deps_mk "# written by tools/deps.sh: system FFmpeg" \
    "FFMPEG_PKG_CONFIG_PATH :=" \
    "FFMPEG_BIN := $(dirname "$(command -v ffmpeg)")" \
    "VK_HEADERS := $headers/usr/include"
}

build_ffmpeg() {
  local version=$1 glslang=$2 key prefix src work t0
  key=$( (echo "recipe $recipe"; echo "$version"; cat "$headers/.stamp"; echo "glslang $GLSLANG_DEB_VERSION"; ffmpeg_flags
    [ -z "$vmaf_prefix" ] || { ffmpeg_vmaf_flags; basename "$vmaf_prefix"; }) |
    sha256sum | cut -c1-12)
  prefix=$cache/ffmpeg-${version#7:}-$key
  if [ -f "$prefix/.complete" ]; then
    say "FFmpeg ${version#7:} ($key) cached at $prefix"
  else
    src=$(fetch_source ffmpeg "$version" "$FFMPEG_SUITE" "$FFMPEG_SHA256")
    work=$cache/build-$key
    rm -rf "$work"; mkdir -p "$work"
    (cd "$work" && dpkg-source --no-check -x "$src"/*.dsc src >/dev/null) || die "cannot unpack the ffmpeg source package"
    src=$work/src
    t0=$SECONDS
    say "configuring FFmpeg (log: $work/configure.log)"
    # shellcheck disable=SC2046
    (cd "$src" && PKG_CONFIG_PATH=$headers/pkgconfig${vmaf_prefix:+:$vmaf_prefix/lib/pkgconfig} ./configure \
        --prefix="$prefix" --glslc="$glslang" --extra-cflags="-I$headers/usr/include" $(ffmpeg_flags) \
        $(ffmpeg_vmaf_flags) > "$work/configure.log" 2>&1) ||
      { tail -20 "$src/ffbuild/config.log" >&2; die "FFmpeg configure failed (see $work/configure.log)"; }
    say "building FFmpeg with $jobs jobs (about 10 minutes on 2 cores; log: $work/build.log)"
    (cd "$src" && make -j"$jobs" > "$work/build.log" 2>&1 && make install >> "$work/build.log" 2>&1) ||
      { tail -20 "$work/build.log" >&2; die "FFmpeg build failed (see $work/build.log)"; }
    # Keep the source tree: tests and contributors read FFmpeg's code.
    rm -rf "$prefix/src"; mv "$src" "$prefix/src"; rm -rf "$work"
    touch "$prefix/.complete"
    say "FFmpeg installed at $prefix (configure and build took $((SECONDS - t0)) s with $jobs jobs)"
  fi
  write_deps_mk "# written by tools/deps.sh: FFmpeg ${version#7:} built from Debian $FFMPEG_SUITE's source package" \
    "FFMPEG_PREFIX := $prefix" \
    "FFMPEG_PKG_CONFIG_PATH := $prefix/lib/pkgconfig:$headers/pkgconfig" \
    "FFMPEG_BIN := $prefix/bin" \
    "VK_HEADERS := $headers/usr/include"
}

if [ "${1:-}" = --vmaf-prefix ]; then
  build_vmaf
  [ -n "$vmaf_prefix" ] || die "no libvmaf source at $vmaf_source"
  echo "$vmaf_prefix"
  exit 0
fi

install_packages
install_test_packages
fetch_headers
build_vmaf
if [ "${VKCU_FFMPEG:-}" = system ] && use_system_ffmpeg; then
  exit 0
fi
glslang=$(build_glslang)
build_ffmpeg "$FFMPEG_DEB_VERSION" "$glslang"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Dependency bootstrap for vkcu: Debian packages, then a static FFmpeg 7.1
# built from Debian 13's source package with Vulkan 1.4 headers and NVIDIA's
# codec headers unpacked locally. The build is cached outside the clone, keyed
# by FFmpeg version and configuration, and reused when both match.
#
# Writes build/deps.mk (read by the Makefile) naming the FFmpeg prefix.
#
# Environment:
#   VKCU_CACHE        cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/vkcu)
#   VKCU_FFMPEG=system  use the system's FFmpeg (>= 7.1 with Vulkan) if present
#   VKCU_NO_APT=1     do not install Debian packages (they must be there)
#   VKCU_JOBS         parallel build jobs (default: nproc)
set -euo pipefail

say() { printf 'deps: %s\n' "$*" >&2; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${VKCU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vkcu}
jobs=${VKCU_JOBS:-$(nproc)}
mkdir -p "$cache" "$root/build"

# Bump when the build recipe below changes in a way flags do not capture.
recipe=4

# FFmpeg is pinned to one exact Debian 13 source version: the golden hashes
# depend on its decoders, so a point release must be a deliberate change here
# (update the version and the three checksums from `apt-cache showsrc ffmpeg`
# against Debian 13, then re-run the golden manifests).
FFMPEG_DEB_VERSION=7:7.1.5-0+deb13u1
FFMPEG_SHA256="\
9ed2ed34cbe7f056eeebbe9045c5e2d15e41b5b053fe7c8ba6979a0b6fb081ce  ffmpeg_7.1.5-0+deb13u1.dsc
de668509caf9e35e3cd162473441fdb29538c6d96ed080292b3cf9e6fc5d558f  ffmpeg_7.1.5.orig.tar.xz
a1be51d8a10744952fe94fa318bf71bbc8074bed0951382c079ab7ef227f74ef  ffmpeg_7.1.5-0+deb13u1.debian.tar.xz"

packages=(build-essential pkg-config nasm dpkg-dev xz-utils ca-certificates
  libvulkan1 mesa-vulkan-drivers libzimg-dev libx264-dev libx265-dev
  libsvtav1enc-dev libdav1d-dev libvpx-dev libaom-dev glslang-dev zlib1g-dev libjansson-dev
  b3sum)

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

# The archive the machine already uses, read from its apt configuration,
# pointed at Debian 13 (trixie) in a private apt state under the cache.
private_apt() {
  local dir=$cache/apt-trixie uri=
  mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/archives/partial"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ]; then
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}')
  fi
  [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources.list*; add one"
  printf 'Types: deb deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" > "$dir/parts/trixie.sources"
  APT_OPTS=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dir/parts"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  if [ -z "$(find "$dir/lists" -name '*Sources*' -mmin -1440 2>/dev/null | head -1)" ]; then
    say "reading Debian 13 package lists from $uri"
    apt-get "${APT_OPTS[@]}" update -qq || die "cannot read Debian 13 (trixie) from $uri"
  fi
}

ffmpeg_version() {
  apt-cache "${APT_OPTS[@]}" showsrc ffmpeg 2>/dev/null |
    awk '/^Version: / {print $2}' | grep -qxF "$FFMPEG_DEB_VERSION" ||
    die "Debian 13 no longer has ffmpeg $FFMPEG_DEB_VERSION (the pinned version); pin the current one in tools/deps.sh (FFMPEG_DEB_VERSION and FFMPEG_SHA256) and re-check the golden hashes"
  echo "$FFMPEG_DEB_VERSION"
}

# Configuration: kept in one list so its hash names the cache entry.
# Every native decoder, demuxer, parser and bitstream filter is built (users
# bring every format), plus libdav1d; encoders, muxers and filters are the
# ones vkcu and its tests use (the test corpus is encoded by this ffmpeg).
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
--enable-hwaccel=h264_vulkan,hevc_vulkan,av1_vulkan,h264_nvdec,hevc_nvdec,av1_nvdec
--disable-decoder=libaom_av1,libvpx_vp8,libvpx_vp9
--enable-encoder=libx264,libx265,libsvtav1,libaom_av1,libvpx_vp8,libvpx_vp9,ffv1,rawvideo,wrapped_avframe,h264_vulkan,hevc_vulkan,png,aac,ac3,opus,pcm_s16le,mpeg2video,mpeg4,mjpeg,prores_ks,dnxhd
--enable-muxer=mp4,mov,matroska,webm,nut,yuv4mpegpipe,h264,hevc,ivf,obu,rawvideo,aac,ac3,mp3,ogg,opus,wav,mpegts,framemd5,framecrc,framehash,md5,null,image2,ffmetadata,avi,mxf,mxf_opatom,mpeg2video,m4v
--enable-protocol=file,pipe
--enable-filter=nlmeans,nlmeans_vulkan,scale_vulkan,hwupload,hwdownload,hwmap,format,scale,null,nullsink,anull,anullsink,buffer,buffersink,abuffer,abuffersink,aformat,aresample,hqdn3d,zscale,psnr,ssim,testsrc,testsrc2,color,smptehdbars,trim,setpts,fps,split,crop,copy,sine,anullsrc,aevalsrc,settb,showinfo,setparams,select,pad,noise,geq,drawbox,concat,vflip,tpad,mandelbrot,gradients,overlay,boxblur,asetnsamples,atrim,asetpts,bwdif,yadif,bwdif_vulkan,interlace,tinterlace,setfield,setsar,setdar,fieldorder,framerate
EOF
}

use_system_ffmpeg() {
  pkg-config --atleast-version=61.19.100 libavcodec 2>/dev/null || return 1
  local inc
  inc=$(pkg-config --variable=includedir libavutil)
  [ -f "$inc/libavutil/hwcontext_vulkan.h" ] || return 1
  command -v ffmpeg >/dev/null || return 1
  say "using the system's FFmpeg $(pkg-config --modversion libavcodec) (libavcodec)"
  cat > "$root/build/deps.mk" <<EOF
# written by tools/deps.sh: system FFmpeg
FFMPEG_PKG_CONFIG_PATH :=
FFMPEG_BIN := $(dirname "$(command -v ffmpeg)")
VK_HEADERS := $cache/headers/usr/include
EOF
}

fetch_headers() {
  local dest=$cache/headers stamp=$cache/headers/.stamp-$recipe
  [ -f "$stamp" ] && return 0
  say "fetching Vulkan 1.4 headers and NVIDIA codec headers (Debian 13)"
  rm -rf "$dest"; mkdir -p "$dest/debs"
  (cd "$dest/debs" && apt-get "${APT_OPTS[@]}" download -qq libvulkan-dev libffmpeg-nvenc-dev) ||
    die "cannot download libvulkan-dev/libffmpeg-nvenc-dev from Debian 13"
  for d in "$dest"/debs/*.deb; do dpkg-deb -x "$d" "$dest"; done
  [ -f "$dest/usr/include/vulkan/vulkan_core.h" ] || die "Vulkan headers missing after unpacking"
  # ffnvcodec.pc says prefix=/usr; point a copy at the unpacked tree.
  mkdir -p "$dest/pkgconfig"
  sed "s|^prefix=.*|prefix=$dest/usr|" "$(find "$dest/usr" -name ffnvcodec.pc | head -1)" > "$dest/pkgconfig/ffnvcodec.pc"
  touch "$stamp"
}

build_ffmpeg() {
  local version=$1 key prefix src work
  key=$( (echo "recipe $recipe"; echo "$version"; ffmpeg_flags) | sha256sum | cut -c1-12)
  prefix=$cache/ffmpeg-${version#7:}-$key
  if [ -f "$prefix/.complete" ]; then
    say "FFmpeg ${version#7:} ($key) cached at $prefix"
  else
    work=$cache/build-$key
    rm -rf "$work"; mkdir -p "$work"
    say "downloading FFmpeg source package $version (Debian 13)"
    (cd "$work" && apt-get "${APT_OPTS[@]}" source --download-only -qq "ffmpeg=$version" >/dev/null) ||
      die "cannot download the ffmpeg source package $version"
    (cd "$work" && printf '%s\n' "$FFMPEG_SHA256" | sha256sum --quiet -c -) ||
      die "ffmpeg source package $version does not match the pinned SHA-256 sums in tools/deps.sh"
    (cd "$work" && dpkg-source --no-check -x ./*.dsc src >/dev/null) || die "cannot unpack the ffmpeg source package"
    src=$work/src
    local t0=$SECONDS
    say "configuring FFmpeg (log: $work/configure.log)"
    # shellcheck disable=SC2046
    (cd "$src" && PKG_CONFIG_PATH=$cache/headers/pkgconfig ./configure --prefix="$prefix" \
        --extra-cflags="-I$cache/headers/usr/include" $(ffmpeg_flags) > "$work/configure.log" 2>&1) ||
      { tail -20 "$src/ffbuild/config.log" >&2; die "FFmpeg configure failed (see $work/configure.log)"; }
    say "building FFmpeg with $jobs jobs (about 20 minutes on 2 cores; log: $work/build.log)"
    (cd "$src" && make -j"$jobs" > "$work/build.log" 2>&1 && make install >> "$work/build.log" 2>&1) ||
      { tail -20 "$work/build.log" >&2; die "FFmpeg build failed (see $work/build.log)"; }
    # Keep the source tree: tests and contributors read FFmpeg's code.
    rm -rf "$prefix/src"; mv "$src" "$prefix/src"; rm -rf "$work"
    touch "$prefix/.complete"
    say "FFmpeg installed at $prefix (configure and build took $((SECONDS - t0)) s with $jobs jobs)"
  fi
  cat > "$root/build/deps.mk.tmp" <<EOF
# written by tools/deps.sh: FFmpeg ${version#7:} built from Debian 13's source package
FFMPEG_PREFIX := $prefix
FFMPEG_PKG_CONFIG_PATH := $prefix/lib/pkgconfig:$cache/headers/pkgconfig
FFMPEG_BIN := $prefix/bin
VK_HEADERS := $cache/headers/usr/include
EOF
  mv "$root/build/deps.mk.tmp" "$root/build/deps.mk"
}

install_packages
install_test_packages
if [ "${VKCU_FFMPEG:-}" = system ] && use_system_ffmpeg; then
  private_apt; fetch_headers; exit 0
fi
private_apt
fetch_headers
version=$(ffmpeg_version)
[ -n "$version" ] || die "no ffmpeg 7.1.x source package in Debian 13's lists"
build_ffmpeg "$version"

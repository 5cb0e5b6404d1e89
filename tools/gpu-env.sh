# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests/gpu.sh and tools/bench.sh: finds vkcu, FFmpeg, the
# conformance streams and the clips, either in this checkout (a machine with
# the project built) or in the bundle tools/gpu-bundle.sh made (.gpu/).
# Sets VKCU FFMPEG CONF MEDIA TESTBIN; generates the large clips if missing.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -f "$root/.gpu/bundle.tar.xz" ] && [ ! -x "$root/build/vkcu" -o -n "${VKCU_USE_BUNDLE:-}" ]; then
  b=$root/.gpu/b
  if [ ! -f "$b/.stamp" ] || [ "$root/.gpu/bundle.tar.xz" -nt "$b/.stamp" ]; then
    rm -rf "$b"; mkdir -p "$b"; tar -C "$b" -xJf "$root/.gpu/bundle.tar.xz"; touch "$b/.stamp"
  fi
  export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  VKCU=$b/bin/vkcu FFMPEG=$b/bin/ffmpeg CONF=${VKCU_CONFORMANCE:-$root/media/conformance} MEDIA=$b/media TESTBIN=$b/tests
else
  VKCU=$root/build/vkcu TESTBIN=$root/build/tests
  FFMPEG=$(sed -n 's/^FFMPEG_BIN := //p' "$root/build/deps.mk" 2>/dev/null)/ffmpeg
  CONF=${VKCU_CONFORMANCE:-$root/media/conformance} MEDIA=$root/media/gen
fi
# The Vulkan loader carried in .gl (the GPU machine has the driver, not the loader).
if ls "$root"/.gl/*.deb >/dev/null 2>&1 && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
BIG=${VKCU_BIG_MEDIA:-$root/.gpu/media}
# A bundled vkcu has no pipelines folder beside it: the checkout's presets.
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
export VKCU FFMPEG CONF MEDIA TESTBIN BIG

# Benchmark helpers: median of numbers on stdin; wall CMD...: the median
# wall seconds of $reps runs of CMD (0 for a run that fails), each under
# timeout -s KILL ${WALL_TIMEOUT:-300}.
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
wall() {
  for _ in $(seq "${reps:-3}"); do
    local t0 t1
    t0=$(date +%s.%N)
    timeout -s KILL "${WALL_TIMEOUT:-300}" "$@" > /dev/null 2>&1 || { echo 0; continue; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
  done | median
}

# Large clips for GPU tests and benchmarks, made where they are used:
# make_big_clips [NAME...] makes the named ones (all when none is named)
# that are missing, at once.
make_big_clips() {
  mkdir -p "$BIG"
  local ff="$FFMPEG -hide_banner -loglevel error -nostdin -y" want=" $* "
  mk() {
    local name=$1 frames=$2 src=$3; shift 3
    [ -s "$BIG/$name" ] && return 0
    [ "$want" = "  " ] || [[ $want == *" $name "* ]] || return 0
    $ff -filter_complex "$src" -frames:v "$frames" "$@" "$BIG/.tmp-$name" && mv "$BIG/.tmp-$name" "$BIG/$name"
  }
  local noisy=noise=alls=10:allf=t
  mk h264-1080p.mp4 600 "testsrc2=size=1920x1080:rate=30,$noisy" -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p &
  mk h264-2160p.mp4 600 "testsrc2=size=3840x2160:rate=30,$noisy" -c:v libx264 -preset veryfast -crf 28 -pix_fmt yuv420p &
  mk hevc10-1080p.mp4 600 "testsrc2=size=1920x1080:rate=30,$noisy" -c:v libx265 -preset ultrafast -crf 28 \
    -pix_fmt yuv420p10le -x265-params log-level=error &
  mk h264-10k.mp4 10000 "testsrc2=size=320x240:rate=30,$noisy" -c:v libx264 -preset ultrafast -pix_fmt yuv420p &
  # 1080i25 (MBAFF, top field first): the deinterlace and broadcast
  # benchmarks; fields 1/50 s apart. Cheap to make (noise on the 300
  # interlaced frames, not the 600 fields; x264 ultrafast): a few seconds
  # on the GPU machine, so a benchmark section can make it on its own.
  mk h264-1080i.mkv 300 "testsrc2=size=1920x1080:rate=50,tinterlace=mode=interleave_top,setfield=tff,$noisy" \
    -c:v libx264 -preset ultrafast -crf 26 -pix_fmt yuv420p -flags +ildct -x264-params tff=1 &
  wait
}

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The output ring, CUDA -> Vulkan (issue 16; run by tests/gpu.sh, which sets
# VKCU, MEDIA, BIG, TESTBIN and OUTDIR). With --download vulkan, CUDA writes
# each output frame into an exportable Vulkan buffer of the ring, signals the
# slot's binary `filled` semaphore, a Vulkan transfer waits on it, reads the
# slot back into host memory and signals `drained`, which CUDA waits on
# before writing the slot again. Checked here:
# - the hashes equal the CPU backend's, at ring sizes 3 and 12, with the
#   binary and the timeline Vulkan->CUDA handoff, on 8- and 10-bit clips,
#   a chain that changes format and size, one that multiplies frames, and
#   the software-decode fallback; --stats shows one Vulkan readback per
#   output frame and the ring's imports (3 per slot) on top of the input
#   ring's, and --download cuda none;
# - an encode sink (rawvideo in NUT, frames queued behind the encoder) gives
#   the same file as the CPU backend;
# - 10,000 frames: imports = the slots', not the frames', FDs flat, no CUDA
#   memory lost (test_gpu_leaks CLIP vulkan).
# The golden manifests under --download vulkan are in ring-verify.sh.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! [ -x "${VKCU:-}" ]; then echo "SKIP ring: \$VKCU not set (run through tests/gpu.sh)"; exit 0; fi
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then echo "SKIP ring: no Vulkan/CUDA GPU pair"; exit 0; fi
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }
lines() { grep -v '^#' "$1"; }

# check name input ring handoff planes path [vkcu args]: md5 lines GPU (--download vulkan) = CPU.
check() {
  local name="ring $1" in=$2 k=$3 h=$4 planes=$5 want=$6; shift 6
  [ -s "$in" ] || { echo "SKIP $name: $in missing"; return; }
  timeout -s KILL 600 "$VKCU" hash --backend cpu "$in" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 600 "$VKCU" hash --backend gpu --download vulkan --ring-size "$k" --handoff "$h" --stats "$in" "$@" \
    -o "$out/gpu" -y 2> "$out/gpu.err" || { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path frames rb imports n
  path=$(stat_of "$out/gpu.err" path) frames=$(stat_of "$out/gpu.err" frames_out)
  rb=$(stat_of "$out/gpu.err" vk_readbacks) imports=$(stat_of "$out/gpu.err" imports)
  n=$(lines "$out/cpu" | wc -l)
  # Input ring: planes + (binary: ready, done) per slot, or one timeline; output ring: memory, filled, drained.
  local want_imports=$((k * planes + 1 + 3 * k))
  [ "$h" = binary ] && want_imports=$((k * (planes + 2) + 3 * k))
  if [ "$path" != "$want" ]; then
    echo "FAIL $name: path '$path', want $want"
  elif [ "$n" = 0 ] || ! cmp -s <(lines "$out/gpu") <(lines "$out/cpu"); then
    echo "FAIL $name: hashes differ from the CPU backend's ($n CPU frames): $(diff <(lines "$out/gpu") <(lines "$out/cpu") | head -2 | tr '\n' ' ')"
  elif [ "$rb" != "$frames" ] || [ "$frames" != "$n" ]; then
    echo "FAIL $name: $rb Vulkan readbacks for $frames output frames ($n CPU frames)"
  elif [ "$imports" != "$want_imports" ]; then
    echo "FAIL $name: $imports CUDA imports, want $want_imports (ring $k, $planes planes, $h handoff, + 3 per output slot)"
  else
    echo "PASS $name: $n frames = CPU, $rb Vulkan readbacks, $imports imports (ring $k, $h)"
  fi
}

for k in 3 12; do
  for h in binary timeline; do
    check "h264 k=$k $h" "$MEDIA/h264-aac.mp4" $k $h 2 vulkan-decode+cuda
    check "hevc10 k=$k $h" "$MEDIA/hevc10.mkv" $k $h 2 vulkan-decode+cuda
  done
done
check "convert+scale k=3" "$MEDIA/h264-aac.mp4" 3 binary 2 vulkan-decode+cuda \
  --chain 'convert=format=yuv444p10,scale=w=200:h=-2'
check "fps=60 (more outputs than inputs) k=3" "$MEDIA/h264-aac.mp4" 3 timeline 2 vulkan-decode+cuda --chain fps=60
check "denoise tnr 10-bit k=12" "$MEDIA/hevc10.mkv" 12 binary 2 vulkan-decode+cuda --chain 'denoise=tnr:sigma=6'
check "av1 fallback k=3" "$MEDIA/av1.ivf" 3 binary 3 sw-decode+upload+cuda
check "4K k=3" "$BIG/h264-2160p.mp4" 3 binary 2 vulkan-decode+cuda

# --download cuda (the other path) reads nothing back through Vulkan.
in=$MEDIA/h264-aac.mp4
if timeout -s KILL 300 "$VKCU" hash --backend gpu --download cuda --stats "$in" -o "$out/c" -y 2> "$out/c.err" &&
  [ "$(stat_of "$out/c.err" vk_readbacks)" = 0 ] && [ "$(stat_of "$out/c.err" imports)" = 16 ]; then
  echo "PASS ring download-cuda: no Vulkan readback, 16 imports (the input ring's only)"
else
  echo "FAIL ring download-cuda: vk_readbacks=$(stat_of "$out/c.err" vk_readbacks) imports=$(stat_of "$out/c.err" imports): $(tail -1 "$out/c.err")"
fi
# A bad value is a usage error before anything runs.
"$VKCU" hash --download opengl "$in" -o "$out/bad" 2> "$out/bad.err"
rc=$?
if [ $rc = 2 ] && grep -q "^vkcu: error: --download: 'opengl' is not cuda or vulkan" "$out/bad.err" && [ ! -e "$out/bad" ]; then
  echo "PASS ring download-usage: exit 2, '$(head -1 "$out/bad.err")'"
else
  echo "FAIL ring download-usage: exit $rc (want 2): $(head -1 "$out/bad.err")"
fi

# An encode sink: host frames wait in the encoder's queue while later slots are read back.
timeout -s KILL 600 "$VKCU" "$in" -o "$out/cpu.nut" --backend cpu --encoder rawvideo --chain 'denoise=tnr:sigma=4' -y \
  2> "$out/ecpu.err"
timeout -s KILL 600 "$VKCU" "$in" -o "$out/gpu.nut" --backend gpu --download vulkan --ring-size 3 --encoder rawvideo \
  --chain 'denoise=tnr:sigma=4' --stats -y 2> "$out/egpu.err"
rc=$?
if [ $rc = 0 ] && [ -s "$out/cpu.nut" ] && cmp -s "$out/cpu.nut" "$out/gpu.nut" &&
  [ "$(stat_of "$out/egpu.err" vk_readbacks)" = "$(stat_of "$out/egpu.err" frames_out)" ]; then
  echo "PASS ring encode-sink: rawvideo NUT identical to the CPU backend's ($(stat_of "$out/egpu.err" vk_readbacks) readbacks)"
else
  echo "FAIL ring encode-sink: exit $rc, files $(cmp "$out/cpu.nut" "$out/gpu.nut" 2>&1 | head -1): $(tail -1 "$out/egpu.err")"
fi

# 10,000 frames through the output ring: imports once per slot, FDs flat, no CUDA memory lost.
if [ ! -x "${TESTBIN:-}/test_gpu_leaks" ]; then
  echo "SKIP ring leaks: test_gpu_leaks not built"
elif [ ! -s "$BIG/h264-10k.mp4" ]; then
  echo "SKIP ring leaks: 10,000-frame clip missing ($BIG/h264-10k.mp4)"
elif timeout -s KILL 600 "$TESTBIN/test_gpu_leaks" "$BIG/h264-10k.mp4" vulkan > "$out/leaks.txt" 2>&1; then
  echo "PASS ring leaks: $(tail -1 "$out/leaks.txt")"
else
  echo "FAIL ring leaks: $(tail -3 "$out/leaks.txt" | tr '\n' ' ')"
fi

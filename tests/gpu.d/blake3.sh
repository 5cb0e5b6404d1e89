#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --algo blake3 on the GPU backend (run by tests/gpu.sh, which sets VKCU,
# FFMPEG, CONF, MEDIA, BIG and OUTDIR): frames are hashed on the GPU and
# only their digests leave it, and every digest equals the CPU backend's
# (itself equal to b3sum, tests/cli/blake3.sh). Per clip: the frame lines
# (pts, duration, size, digest) equal, the path taken is a GPU one, and
# dtoh_bytes is 32 per frame. Conformance streams and clips through Vulkan
# decode, clips the GPU cannot decode through software decode + upload
# (4:2:2, AV1, odd sizes down to 1x1, gray, 10-bit), chains, the timeline
# handoff, a small ring, 4K; then --whole and JSON (which download), and
# batch with the regression-blake3 preset over several streams at once.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}
if ! [ -x "${VKCU:-}" ]; then echo "SKIP blake3-gpu: \$VKCU not set (run through tests/gpu.sh)"; exit 0; fi
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then echo "SKIP blake3-gpu: no Vulkan/CUDA GPU pair"; exit 0; fi
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }
lines() { grep -v '^#' "$1"; }

check() { # name input path-wanted (vulkan|sw|any) [vkcu args]
  local name="blake3-gpu $1" in=$2 want=$3; shift 3
  [ -s "$in" ] || { echo "SKIP $name: $in missing"; return; }
  timeout -s KILL 600 "$VKCU" hash --backend cpu --algo blake3 "$in" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 600 "$VKCU" hash --backend gpu --algo blake3 --stats "$in" "$@" -o "$out/gpu" -y 2> "$out/gpu.err" ||
    { echo "FAIL $name: GPU backend failed: $(tail -1 "$out/gpu.err")"; return; }
  local path frames dtoh n
  path=$(stat_of "$out/gpu.err" path) frames=$(stat_of "$out/gpu.err" frames_out) dtoh=$(stat_of "$out/gpu.err" dtoh_bytes)
  n=$(lines "$out/cpu" | wc -l)
  case $want:$path in
    vulkan:vulkan-decode+cuda | sw:sw-decode+upload+cuda | any:vulkan-decode+cuda | any:sw-decode+upload+cuda) ;;
    *) echo "FAIL $name: took path '$path' (wanted $want)"; return ;;
  esac
  if [ "$n" = 0 ] || ! cmp -s <(lines "$out/gpu") <(lines "$out/cpu"); then
    echo "FAIL $name: GPU digests differ from the CPU's ($n frames): $(diff <(lines "$out/gpu") <(lines "$out/cpu") | sed -n '2p;4p' | tr '\n' ' ')"
  elif [ "$dtoh" != $((32 * frames)) ]; then
    echo "FAIL $name: $frames frames moved $dtoh bytes to the host, expected 32 per frame (digests only)"
  else
    echo "PASS $name: $n frames, GPU digests = CPU ($path, 32 bytes per frame to the host)"
  fi
}

for s in "$CONF"/*.264 "$CONF"/*.h264 "$CONF"/*.h265; do
  [ -f "$s" ] || continue
  check "conformance $(basename "$s")" "$s" any
done
check h264-aac.mp4 "$MEDIA/h264-aac.mp4" vulkan
check hevc10.mkv "$MEDIA/hevc10.mkv" vulkan
check "vfr.mkv (timestamps kept)" "$MEDIA/vfr.mkv" vulkan
check "crop-hevc10.mkv (cropped)" "$MEDIA/crop-hevc10.mkv" vulkan
check "hevc10.mkv --chain copy" "$MEDIA/hevc10.mkv" vulkan --chain copy
check "h264-aac.mp4 --chain convert to 4:4:4 10-bit" "$MEDIA/h264-aac.mp4" vulkan --chain convert=format=yuv444p10
check "hevc10.mkv --handoff timeline" "$MEDIA/hevc10.mkv" vulkan --handoff timeline
check "h264-aac.mp4 --ring-size 3" "$MEDIA/h264-aac.mp4" vulkan --ring-size 3
check "h264-422.mkv (software decode)" "$MEDIA/h264-422.mkv" sw
check "av1.ivf (software decode)" "$MEDIA/av1.ivf" sw
check "4K h264-2160p.mp4 (12150 chunks a frame)" "$BIG/h264-2160p.mp4" vulkan --duration 60f
check "4K 10-bit (24300 chunks: two parent passes)" "$BIG/h264-2160p.mp4" vulkan --duration 20f --chain convert=format=yuv420p10

# Small and odd frames (FFV1: software decode, uploaded into the ring).
ff() { "$FFMPEG" -v error -nostdin -cpuflags 0 -threads 1 "$@"; }
gen() { # name size pix_fmt
  local w=${2%x*} h=${2#*x}
  ff -filter_complex "testsrc2=size=96x96:rate=25,format=yuv444p16le,crop=$w:$h:'mod(n*7,96-$w)':'mod(n*5,96-$h)',format=$3" \
    -frames:v 5 -c:v ffv1 -fflags +bitexact -y "$out/$1.nut"
}
for spec in px1:1x1:yuv420p g1024:32x32:gray g1025:41x25:gray odd8:33x17:yuv420p odd10:35x19:yuv420p10le y444:45x31:yuv444p; do
  IFS=: read -r name size fmt <<< "$spec"
  gen "$name" "$size" "$fmt" || { echo "FAIL blake3-gpu $name: ffmpeg could not make the clip"; continue; }
  check "$name ($size $fmt)" "$out/$name.nut" sw
done

# --whole and JSON: the same digests; --whole hashes downloaded frames.
c=$MEDIA/hevc10.mkv
if [ -s "$c" ]; then
  a=$("$VKCU" hash --backend cpu --algo blake3 --whole "$c" 2>&1) b=$("$VKCU" hash --backend gpu --algo blake3 --whole "$c" 2>&1)
  [ "$a" = "$b" ] && [ "${a#BLAKE3=}" != "$a" ] && echo "PASS blake3-gpu --whole: GPU = CPU ($a)" ||
    echo "FAIL blake3-gpu --whole: GPU '$b', CPU '$a'"
  "$VKCU" hash --backend cpu --algo blake3 --format json "$c" -o "$out/j.cpu" -y 2> /dev/null
  "$VKCU" hash --backend gpu --algo blake3 --format json "$c" -o "$out/j.gpu" -y 2> "$out/j.err"
  cmp -s <(tail -n +2 "$out/j.cpu") <(tail -n +2 "$out/j.gpu") && [ "$(grep -c '"hash"' "$out/j.gpu")" -gt 1 ] &&
    echo "PASS blake3-gpu --format json: GPU = CPU" || echo "FAIL blake3-gpu --format json: GPU lines differ ($(tail -1 "$out/j.err"))"
fi

# batch --pipeline regression-blake3: several streams at once, each list = the CPU backend's.
mkdir -p "$out/in"
for f in h264-aac.mp4 hevc10.mkv vfr.mkv crop-hevc10.mkv h264-422.mkv; do [ -s "$MEDIA/$f" ] && ln -s "$MEDIA/$f" "$out/in/$f"; done
cp "$out/odd10.nut" "$out/in/" 2> /dev/null
if timeout -s KILL 600 "$VKCU" batch "$out/in" "$out/bg" --backend gpu --jobs 4 --pipeline regression-blake3 -q 2> "$out/bg.err" &&
   timeout -s KILL 600 "$VKCU" batch "$out/in" "$out/bc" --backend cpu --jobs 2 --pipeline regression-blake3 -q 2> "$out/bc.err"; then
  bad=""
  n=0
  for f in "$out"/bc/*.framemd5; do
    n=$((n + 1))
    cmp -s <(lines "$f") <(lines "$out/bg/$(basename "$f")") || bad="$bad $(basename "$f")"
  done
  [ "$n" -ge 5 ] && [ -z "$bad" ] && echo "PASS blake3-gpu batch regression-blake3 --jobs 4: $n lists, GPU = CPU" ||
    echo "FAIL blake3-gpu batch regression-blake3: $n lists; differ:${bad:- none}"
else
  echo "FAIL blake3-gpu batch regression-blake3: $(tail -1 "$out/bg.err") $(tail -1 "$out/bc.err")"
fi

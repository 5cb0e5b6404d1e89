#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU tests (`make test-gpu`): every frame that crosses the Vulkan -> CUDA
# interop ring must hash exactly as FFmpeg's software decode does (the
# conformance .framemd5 files, and the CPU backend on the same clips), the
# software-decode fallback must do the same, the statistics must show one
# on-GPU copy per frame and no host upload, and nothing may leak.
# Without a GPU every test is skipped, saying why.
set -u
source "$(dirname "$0")/../tools/gpu-env.sh"
OUTDIR=${OUT:-$(mktemp -d)}
pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
sk() { echo "SKIP $1: $2"; skip=$((skip + 1)); }
frames_of() { grep -v '^#' "$1"; }
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }

if ! timeout -s KILL 60 "$VKCU" probe > "$OUTDIR/probe.txt" 2>&1; then
  reason="no Vulkan/CUDA GPU pair on this machine ($(grep -m1 -i 'no CUDA' "$OUTDIR/probe.txt" | sed 's/^ *//'))"
  for t in probe conformance large-clips fallback handoff-timeline ring-sizes chain-copy leaks operators; do sk "$t" "$reason"; done
  for s in "$(dirname "$0")"/gpu.d/*.sh; do [ -f "$s" ] && sk "$(basename "$s" .sh)" "$reason"; done
  echo "$pass passed, $fail failed, $skip skipped"
  exit 0
fi
ok probe
[ -n "${VKCU_GPU_QUICK:-}" ] || make_big_clips

# gpu_vs name input reference-file: GPU hash must equal the reference's frame lines.
gpu_hash() { # name input [vkcu args...] -> $OUTDIR/name.gpu, name.stats
  local name=$1 in=$2; shift 2
  timeout -s KILL 300 "$VKCU" hash "$in" --backend gpu --stats "$@" -o "$OUTDIR/$name.gpu" -y 2> "$OUTDIR/$name.stats"
}
check_same() { # name file-a file-b
  if cmp -s <(frames_of "$2") <(frames_of "$3"); then return 0; fi
  local first
  first=$(diff <(frames_of "$2") <(frames_of "$3") | head -3 | tr '\n' ' ')
  ko "$1" "hashes differ: $first"
  return 1
}
check_path() { # name expected-path frames
  local f=$OUTDIR/$1.stats path dtod htod
  path=$(stat_of "$f" path) dtod=$(stat_of "$f" dtod_copies) htod=$(stat_of "$f" htod_bytes)
  if [ "$path" != "$2" ]; then ko "$1" "took path '$path', expected '$2'"; return 1; fi
  if [ "$2" = vulkan-decode+cuda ] && { [ "$dtod" != "$3" ] || [ "$htod" != 0 ]; }; then
    ko "$1" "expected $3 on-GPU copies and no host upload, got dtod_copies=$dtod htod_bytes=$htod"
    return 1
  fi
  return 0
}

# Conformance streams through Vulkan decode -> interop ring -> CUDA.
for s in "$CONF"/*.264 "$CONF"/*.h264 "$CONF"/*.h265; do
  n=conf-$(basename "$s")
  if ! gpu_hash "$n" "$s"; then ko "$n" "vkcu failed: $(tail -1 "$OUTDIR/$n.stats")"; continue; fi
  frames=$(frames_of "$s.framemd5" | wc -l)
  want=vulkan-decode+cuda
  # 64x64 HEVC is below the H200's HEVC decode minimum: FFmpeg's hwaccel
  # refuses it and vkcu falls back to software decode + upload.
  case $s in *64x64-I-P-B-P.h265) want=sw-decode+upload+cuda ;; esac
  check_same "$n" "$OUTDIR/$n.gpu" "$s.framemd5" && check_path "$n" "$want" "$frames" && ok "$n ($frames frames bit-exact, $want)"
done

# Large clips and the fallback clips: GPU equals the CPU backend.
cpu_vs_gpu() { # name input expected-path [vkcu args]
  local name=$1 in=$2 path=$3; shift 3
  [ -s "$in" ] || { sk "$name" "clip $in missing"; return; }
  timeout -s KILL 600 "$VKCU" hash "$in" --backend cpu "$@" -o "$OUTDIR/$name.cpu" -y 2> "$OUTDIR/$name.cpu.err" ||
    { ko "$name" "CPU backend failed: $(tail -1 "$OUTDIR/$name.cpu.err")"; return; }
  gpu_hash "$name" "$in" "$@" || { ko "$name" "vkcu failed: $(tail -1 "$OUTDIR/$name.stats")"; return; }
  local frames
  frames=$(frames_of "$OUTDIR/$name.cpu" | wc -l)
  check_same "$name" "$OUTDIR/$name.gpu" "$OUTDIR/$name.cpu" && check_path "$name" "$path" "$frames" &&
    ok "$name ($frames frames, GPU = CPU)"
}
for c in h264-1080p.mp4 h264-2160p.mp4 hevc10-1080p.mp4; do
  cpu_vs_gpu "large-$c" "$BIG/$c" vulkan-decode+cuda
done
cpu_vs_gpu fallback-av1 "$MEDIA/av1.ivf" sw-decode+upload+cuda
cpu_vs_gpu fallback-h264-422 "$MEDIA/h264-422.mkv" sw-decode+upload+cuda
cpu_vs_gpu handoff-timeline "$MEDIA/hevc10.mkv" vulkan-decode+cuda --handoff timeline
cpu_vs_gpu ring-size-3 "$MEDIA/h264-aac.mp4" vulkan-decode+cuda --ring-size 3
cpu_vs_gpu ring-size-12 "$MEDIA/h264-aac.mp4" vulkan-decode+cuda --ring-size 12
cpu_vs_gpu chain-copy "$MEDIA/hevc10.mkv" vulkan-decode+cuda --chain copy

# Imports happen once per slot: a 10,000-frame run, counted by the test program.
if [ -x "$TESTBIN/test_gpu_leaks" ]; then
  if [ -s "$BIG/h264-10k.mp4" ]; then
    if timeout -s KILL 600 "$TESTBIN/test_gpu_leaks" "$BIG/h264-10k.mp4" > "$OUTDIR/leaks.txt" 2>&1; then
      ok "leaks: $(tail -1 "$OUTDIR/leaks.txt")"
    else
      ko leaks "$(tail -2 "$OUTDIR/leaks.txt" | tr '\n' ' ')"
    fi
  else
    sk leaks "10,000-frame clip missing"
  fi
else
  sk leaks "test_gpu_leaks not built"
fi

# Operator GPU tests (CUDA output vs the CPU reference), one program each.
for t in "$TESTBIN"/test_*_gpu; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  timeout -s KILL 300 "$t" > "$OUTDIR/$n.txt" 2>&1
  rc=$?
  case $rc in
    0) ok "$n: $(tail -1 "$OUTDIR/$n.txt")" ;;
    77) sk "$n" "$(tail -1 "$OUTDIR/$n.txt")" ;;
    *) ko "$n" "exit $rc: $(tail -2 "$OUTDIR/$n.txt" | tr '\n' ' ')" ;;
  esac
done

# More GPU suites (verify manifests, batch, transcode): tests/gpu.d/*.sh print
# PASS/FAIL/SKIP lines like this script; they see the same variables.
# GPU_SUITES="a b" runs only those (names without .sh; "none": none), so
# a run can be split over calls of a limited length.
export OUTDIR
for s in "$(dirname "$0")"/gpu.d/*.sh; do
  [ -f "$s" ] || continue
  [ -z "${GPU_SUITES:-}" ] || [[ " $GPU_SUITES " == *" $(basename "$s" .sh) "* ]] || continue
  while IFS= read -r line; do
    case $line in
      PASS*) pass=$((pass + 1)); echo "$line" ;;
      FAIL*) fail=$((fail + 1)); echo "$line" ;;
      SKIP*) skip=$((skip + 1)); echo "$line" ;;
    esac
  done < <(timeout -s KILL 900 bash "$s" 2>> "$OUTDIR/gpu.d.log")
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

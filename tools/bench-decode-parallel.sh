#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One file on several decoders (issue 39): each bench clip looped to 3000
# frames (its GOPs repeated: `-stream_loop 4 -c copy`), decoded in sequence
# (--decode-parallel off) and in pieces (auto: a decoder per core), side by
# side in one run, the median wall time of $VKCU_BENCH_REPS runs (default 3),
# as frames per second and the ratio. Rows: decode only (`vkcu F
# --decode-only --null`) and `vkcu hash --algo blake3`, on the CPU backend
# here and on the GPU backend where a GPU is (Vulkan decoders, one per
# decode queue, on files of 32 MiB and more), and `vkcu compare` of each
# file with itself in pieces against ffmpeg's psnr+ssim on all cores, on
# each backend.
#   BENCH_CLIPS="h264-1080p.mp4 hevc10-1080p.mp4"  (default; h264-2160p.mp4 too on 8 cores or more)
# Writes decode-parallel.md in $OUT (else build/) and prints it.
set -u
source "$(dirname "$0")/gpu-env.sh"
outdir=${OUT:-$root/build}
mkdir -p "$outdir"
reps=${VKCU_BENCH_REPS:-3} WALL_TIMEOUT=1200
cores=$(nproc)
clips=${BENCH_CLIPS:-h264-1080p.mp4 hevc10-1080p.mp4$([ "$cores" -ge 8 ] && echo " h264-2160p.mp4")}
# shellcheck disable=SC2086
make_big_clips $clips
# pair CMD...: the median walls of CMD with --decode-parallel off and auto, run
# in turns (off, auto, off, auto ...) so that a machine whose speed drifts
# (a shared virtual machine) weighs on both alike. Prints "off auto".
pair() {
  local offs=() autos=() m t0 t1
  for _ in $(seq "$reps"); do
    for m in off auto; do
      t0=$(date +%s.%N)
      # on the GPU, pieces at any picture size (the automatic mode takes them from 4K up)
      if VKCU_GPU_PIECES_MIN_PIXELS=0 timeout -s KILL 1200 "$@" --decode-parallel $m > /dev/null 2>&1; then
        t1=$(date +%s.%N)
      else
        t1=$t0
      fi
      if [ $m = off ]; then offs+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
      else autos+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"); fi
    done
  done
  echo "$(printf '%s\n' "${offs[@]}" | median) $(printf '%s\n' "${autos[@]}" | median)"
}
fps() { awk -v n="$1" -v s="$2" 'BEGIN {printf "%.1f", (s > 0 ? n / s : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (a > 0 && b > 0 ? a / b : 0)}'; }
# BENCH_BACKENDS="gpu": only those backends (default: cpu, and gpu where one is)
backends=
for b in ${BENCH_BACKENDS:-cpu gpu}; do
  [ "$b" = gpu ] && ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1 && continue
  backends="$backends $b"
done
md=$outdir/decode-parallel.md
{
  echo "# One file on several decoders ($(date -u +%Y-%m-%d), $cores cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
  echo
  echo "3000 frames (each clip looped 5 times); median of $reps runs; fps = 3000 / wall seconds."
  echo
  echo "| clip | backend | what | one decoder fps | pieces fps | ratio | pieces (decoders) |"
  echo "| --- | --- | --- | ---: | ---: | ---: | --- |"
  for c in $clips; do
    f=$BIG/${c%.mp4}-x5.mp4
    [ -s "$f" ] || "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop 4 -i "$BIG/$c" -c copy "$f"
    for b in $backends; do
      pieces=$(VKCU_GPU_PIECES_MIN_PIXELS=0 "$VKCU" "$f" --decode-only --null --backend "$b" --log-level verbose 2>&1 |
        sed -n 's/.*parallel decode: \([0-9]*\) segments\? on \([0-9]*\) \(Vulkan \)\?decoders.*/\1 (\2)/p')
      for what in decode hash; do
        if [ $what = decode ]; then cmd=("$VKCU" "$f" --decode-only --null --backend "$b" -q)
        else cmd=("$VKCU" hash "$f" --algo blake3 --backend "$b" -q); fi
        read -r a p <<< "$(pair "${cmd[@]}")"
        echo "| $c | $b | $what | $(fps 3000 "$a") | $(fps 3000 "$p") | $(ratio "$a" "$p") | ${pieces:-1 (one: not cut)} |"
      done
    done
    # compare: the file with itself, PSNR + SSIM, against ffmpeg on all cores.
    g=$(wall "$FFMPEG" -hide_banner -loglevel error -nostdin -i "$f" -i "$f" \
      -lavfi '[0:v][1:v]psnr;[0:v][1:v]ssim' -f null -)
    for b in $backends; do
      v=$(VKCU_GPU_PIECES_MIN_PIXELS=0 wall "$VKCU" compare "$f" "$f" --backend "$b" -q)
      echo "| $c | $b | compare vs ffmpeg psnr+ssim | $(fps 3000 "$g") (ffmpeg) | $(fps 3000 "$v") (vkcu) | $(ratio "$g" "$v") | |"
    done
  done
} | tee "$md"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VMAF rows of the comparison benchmark (issue 35): in one run, per
# clip, `vkcu compare --vmaf` on the GPU backend (libvmaf's CUDA backend in
# vkcu's context) and on the CPU backend (libvmaf on every core), FFmpeg's
# `libvmaf` filter (n_threads = the cores) and, when this FFmpeg has it,
# `libvmaf_cuda` (frames decoded on the CPU and uploaded with hwupload_cuda:
# libvmaf_cuda takes yuv420p, not the NV12 that NVDEC gives, and a CUDA
# scale filter needs FFmpeg's non-free cuda-nvcc or clang). Pairs: the bench
# clips (tools/gpu-env.sh make_big_clips, 600 frames) against their
# denoise=tnr:sigma=4 + libx264 ultrafast transcode. Each row gives seconds,
# frames per second and the pooled VMAF (all rows must agree to about
# 0.01), then the ratios against the targets: the GPU at least 3x ffmpeg
# libvmaf at 4K and at least 200 fps at 1080p.
#
#   tools/bench-compare-vmaf.sh             # on the GPU machine (CPU rows anywhere)
#
# Or from another script (tools/bench-compare.sh): source this file, then
# `bench_vmaf_rows LABEL A B FRAMES` prints one clip's rows and ratios (it
# needs VKCU and FFMPEG, as tools/gpu-env.sh sets them).
#
# Environment: BENCH_FRAMES (600), BENCH_CLIPS ("h264-1080p.mp4
# h264-2160p.mp4"), BENCH_DIR (a temporary folder, removed at the end).

# bench_time OUT ERR CMD...: runs CMD, its output in OUT and ERR; prints
# the seconds it took; returns its exit status.
bench_time() {
  local out=$1 err=$2 t0 t1 rc
  shift 2
  t0=$(date +%s.%N)
  "$@" > "$out" 2> "$err"
  rc=$?
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}'
  return $rc
}

# bench_vmaf_rows LABEL A B FRAMES: A is the reference, B the distorted copy.
bench_vmaf_rows() {
  local label=$1 a=$2 b=$3 frames=$4 w cores secs rc mean note
  w=$(mktemp -d)
  cores=$(nproc)
  declare -A fps=()
  printf '%s, %s frames (A %s, B %s)\n' "$label" "$frames" "$(basename "$a")" "$(basename "$b")"
  printf '  %-46s %8s %8s %10s  %s\n' row seconds fps "VMAF mean" note
  row() { # name seconds mean note
    local f=n/a
    [ "$2" != - ] && f=$(awk -v s="$2" -v n="$frames" 'BEGIN {printf "%.1f", n / s}')
    printf '  %-46s %8s %8s %10s  %s\n' "$1" "$2" "$f" "$3" "$4"
    fps[$1]=$f
  }
  local k
  for k in gpu cpu; do
    secs=$(bench_time "$w/$k.txt" "$w/$k.err" "$VKCU" compare --backend $k "$a" "$b" --vmaf --frames "$frames")
    rc=$?
    mean=$(sed -n 's/^VMAF mean:\([0-9.]*\) .*/\1/p' "$w/$k.txt")
    note=$(sed -n 's/^VMAF: //p' "$w/$k.txt")
    if [ $rc != 0 ] && [ $rc != 6 ]; then
      row "vkcu compare --backend $k --vmaf" - - "failed (exit $rc): $(tail -1 "$w/$k.err")"
    elif [ $k = gpu ] && [[ $note != *"on the GPU"* ]]; then
      row "vkcu compare --backend $k --vmaf" - "$mean" "not on the GPU: $note"
    else
      row "vkcu compare --backend $k --vmaf" "$secs" "$mean" "$note"
    fi
  done
  # FFmpeg's filters take the distorted input first.
  local ff=("$FFMPEG" -hide_banner -nostdin -loglevel info -stats_period 100)
  if "$FFMPEG" -hide_banner -filters 2> /dev/null | grep -q ' libvmaf '; then
    secs=$(bench_time "$w/ff.txt" "$w/ff.err" "${ff[@]}" -i "$b" -i "$a" -frames:v "$frames" \
      -lavfi "[0:v][1:v]libvmaf=n_threads=$cores" -f null -)
    rc=$?
    mean=$(sed -n 's/.*VMAF score: \([0-9.]*\).*/\1/p' "$w/ff.err" | tail -1)
    if [ $rc = 0 ]; then row "ffmpeg libvmaf (n_threads=$cores)" "$secs" "$mean" ""
    else row "ffmpeg libvmaf (n_threads=$cores)" - - "failed: $(tail -1 "$w/ff.err")"; fi
  else
    row "ffmpeg libvmaf" - - "this FFmpeg has no libvmaf filter (tools/deps.sh builds it with libvmaf's source)"
  fi
  if "$FFMPEG" -hide_banner -filters 2> /dev/null | grep -q ' libvmaf_cuda '; then
    secs=$(bench_time "$w/ffc.txt" "$w/ffc.err" "${ff[@]}" -init_hw_device cuda=cu -filter_hw_device cu \
      -i "$b" -i "$a" -frames:v "$frames" -filter_complex \
      "[0:v]format=yuv420p,hwupload_cuda[d];[1:v]format=yuv420p,hwupload_cuda[r];[d][r]libvmaf_cuda" -f null -)
    rc=$?
    mean=$(sed -n 's/.*VMAF score: \([0-9.]*\).*/\1/p' "$w/ffc.err" | tail -1)
    if [ $rc = 0 ]; then row "ffmpeg libvmaf_cuda (CPU decode, hwupload_cuda)" "$secs" "$mean" ""
    else row "ffmpeg libvmaf_cuda (CPU decode, hwupload_cuda)" - - "failed: $(tail -1 "$w/ffc.err")"; fi
  else
    row "ffmpeg libvmaf_cuda" - - "this FFmpeg has no libvmaf_cuda filter"
  fi
  local gpu=${fps["vkcu compare --backend gpu --vmaf"]} lv=${fps["ffmpeg libvmaf (n_threads=$cores)"]:-n/a}
  local lvc=${fps["ffmpeg libvmaf_cuda (CPU decode, hwupload_cuda)"]:-n/a} cpu=${fps["vkcu compare --backend cpu --vmaf"]}
  awk -v g="$gpu" -v c="$cpu" -v l="$lv" -v lc="$lvc" -v label="$label" 'function r(x, y) {
      return (x == "n/a" || y == "n/a" || y == 0) ? "n/a" : sprintf("%.2fx", x / y) }
    BEGIN {
      printf "  ratios: GPU / ffmpeg libvmaf %s, GPU / ffmpeg libvmaf_cuda %s, CPU backend / ffmpeg libvmaf %s\n",
        r(g, l), r(g, lc), r(c, l)
      if (label ~ /2160p/)
        printf "  target (4K): GPU at least 3x ffmpeg libvmaf: %s\n",
          r(g, l) == "n/a" ? "not measured" : (g / l >= 3 ? "met" : "NOT met")
      if (label ~ /1080p/)
        printf "  target (1080p): GPU at least 200 fps: %s\n", g == "n/a" ? "not measured" : (g >= 200 ? "met" : "NOT met")
    }'
  rm -rf "$w"
}

bench_vmaf_main() {
  set -u
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  # shellcheck source=tools/gpu-env.sh
  source "$root/tools/gpu-env.sh"
  [ -x "$VKCU" ] || { echo "bench-compare-vmaf: no vkcu at $VKCU (build it, or unpack the GPU bundle)" >&2; return 1; }
  "$VKCU" --version | grep -q '^VMAF: libvmaf' ||
    { echo "bench-compare-vmaf: this vkcu has no libvmaf ($("$VKCU" --version | grep '^VMAF'))" >&2; return 1; }
  local frames=${BENCH_FRAMES:-600} clips=${BENCH_CLIPS:-h264-1080p.mp4 h264-2160p.mp4} work c
  work=${BENCH_DIR:-$(mktemp -d)}
  mkdir -p "$work"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  # shellcheck disable=SC2086
  make_big_clips $clips
  echo "VMAF, vkcu $("$VKCU" --version | head -1 | cut -d' ' -f2) ($("$VKCU" --version | grep '^VMAF:' | cut -c7-)), $(nproc) cores"
  for c in $clips; do
    [ -s "$BIG/$c" ] || { echo "$c: not made"; continue; }
    "$VKCU" "$BIG/$c" -o "$work/tnr-$c" --chain 'denoise=tnr:sigma=4' --encoder libx264 --preset ultrafast \
      --frames "$frames" -y 2> "$work/tnr.err" || { echo "$c: transcode failed: $(tail -1 "$work/tnr.err")"; continue; }
    bench_vmaf_rows "${c%.mp4}" "$BIG/$c" "$work/tnr-$c" "$frames"
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  bench_vmaf_main "$@"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The comparison benchmark (issue 35, `make bench`): per bench clip (600
# frames of tools/gpu-env.sh make_big_clips) against its denoise=tnr:sigma=4
# + libx264 ultrafast transcode, in one run:
#   vkcu compare --backend gpu      PSNR + SSIM on the GPU (frames never leave it)
#   vkcu compare --backend cpu      the CPU backend, metrics on every core
#   decode-bound                    the two inputs decoded alone on the GPU, at once
#                                   (two `vkcu --null --chain copy` processes): what the
#                                   GPU compare can reach while one stream decodes on
#                                   one engine; and two streams in one process, steady
#                                   (bench_multistream), compare's own situation, beside
#                                   compare's steady rate (the 600-frame run less a
#                                   30-frame one)
#   --decode-threads                the CPU backend with frame-threaded decoders
#   ffmpeg psnr+ssim                ffmpeg's psnr and ssim filters, its default threads
#   ffmpeg -hwaccel cuda            the same filters on NVDEC-decoded frames
# then the VMAF rows of tools/bench-compare-vmaf.sh. Each row: seconds,
# pairs per second, and the summary figures (which must agree between the
# rows: the PSNR to the printed digits). Then the ratios and the targets:
# the GPU at least 0.9x the decode-bound rate and at least ffmpeg's
# psnr+ssim; the CPU backend at least ffmpeg's psnr+ssim.
#
#   tools/bench-compare.sh            # on the GPU machine (the CPU rows run anywhere)
#
# Environment: BENCH_FRAMES (600), BENCH_CLIPS ("h264-1080p.mp4
# h264-2160p.mp4"), BENCH_VMAF (1: the VMAF rows too; 0: not), BENCH_DIR.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/gpu-env.sh
source "$root/tools/gpu-env.sh"
# shellcheck source=tools/bench-compare-vmaf.sh
source "$root/tools/bench-compare-vmaf.sh"
[ -x "$VKCU" ] || { echo "bench-compare: no vkcu at $VKCU (build it, or unpack the GPU bundle)" >&2; exit 1; }
frames=${BENCH_FRAMES:-600}
clips=${BENCH_CLIPS:-h264-1080p.mp4 h264-2160p.mp4}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
# shellcheck disable=SC2064
trap "rm -rf '$work'" EXIT
gpu=1
timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1 || gpu=0
# shellcheck disable=SC2086
make_big_clips $clips
cores=$(nproc)
echo "compare: vkcu $("$VKCU" --version | head -1 | cut -d' ' -f2), $cores cores, $frames frames a clip$([ $gpu = 0 ] && echo ', no GPU here: CPU rows only')"

# psnr_of FILE: vkcu's summary PSNR average, or ffmpeg's.
psnr_vkcu() { sed -n 's/^PSNR .* average:\([0-9.inf]*\) .*/\1/p' "$1"; }
psnr_ffmpeg() { sed -n 's/.*PSNR .* average:\([0-9.inf]*\) .*/\1/p' "$1" | tail -1; }
ssim_vkcu() { sed -n 's/^SSIM .* All:\([0-9.]*\).*/\1/p' "$1"; }
ssim_ffmpeg() { sed -n 's/.*SSIM .* All:\([0-9.]*\) .*/\1/p' "$1" | tail -1; }

for c in $clips; do
  [ -s "$BIG/$c" ] || { echo "$c: not made"; continue; }
  a=$BIG/$c b=$work/tnr-$c
  "$VKCU" "$a" -o "$b" --chain 'denoise=tnr:sigma=4' --encoder libx264 --preset ultrafast --frames "$frames" -y \
    2> "$work/tnr.err" || { echo "$c: transcode failed: $(tail -1 "$work/tnr.err")"; continue; }
  declare -A fps=()
  printf '%s, %s frame pairs (A %s, B its tnr + x264 transcode)\n' "${c%.mp4}" "$frames" "$c"
  printf '  %-40s %8s %8s %10s %9s  %s\n' row seconds pairs/s "PSNR avg" "SSIM" note
  row() { # name seconds psnr ssim note
    local f=n/a
    [ "$2" != - ] && f=$(awk -v s="$2" -v n="$frames" 'BEGIN {printf "%.1f", n / s}')
    printf '  %-40s %8s %8s %10s %9s  %s\n' "$1" "$2" "$f" "$3" "$4" "$5"
    fps[$1]=$f
  }
  for k in gpu cpu; do
    [ $k = gpu ] && [ $gpu = 0 ] && { row "vkcu compare --backend gpu" - - - "no GPU here"; continue; }
    # The same on 30 frames: the difference is the steady part, set-up excluded.
    short=$(bench_time "$work/s$k.txt" "$work/s$k.err" "$VKCU" compare --backend $k "$a" "$b" --frames 30 --min-psnr 1)
    secs=$(bench_time "$work/$k.txt" "$work/$k.err" "$VKCU" compare --backend $k --stats "$a" "$b" --frames "$frames" \
      --min-psnr 1)
    rc=$?
    note=$(sed -n 's/^stats: //p' "$work/$k.err")
    if [ $rc = 0 ] || [ $rc = 6 ]; then
      row "vkcu compare --backend $k" "$secs" "$(psnr_vkcu "$work/$k.txt")" "$(ssim_vkcu "$work/$k.txt")" "$note"
      steady=$(awk -v a="$secs" -v b="$short" -v n="$frames" 'BEGIN {printf "%.2f", (a - b) * n / (n - 30)}')
      row "vkcu compare --backend $k, steady" "$steady" - - "set-up excluded: (600 frames - 30 frames) time, scaled"
    else
      row "vkcu compare --backend $k" - - - "failed (exit $rc): $(tail -1 "$work/$k.err")"
    fi
  done
  # The CPU backend with threaded decoders: what its metrics allow once decoding is not one thread per input.
  dt=$((cores / 2))
  secs=$(bench_time "$work/cput.txt" "$work/cput.err" "$VKCU" compare --backend cpu "$a" "$b" --frames "$frames" \
    --min-psnr 1 --decode-threads "$dt")
  row "vkcu compare --backend cpu --decode-threads $dt" "$secs" "$(psnr_vkcu "$work/cput.txt")" "$(ssim_vkcu "$work/cput.txt")" \
    "frame threads: not the default (a damaged stream decodes differently run to run)"
  if [ $gpu = 1 ]; then
    # The two inputs decoded on the GPU at once, frames dropped: what decoding alone allows.
    t0=$(date +%s.%N)
    "$VKCU" "$a" --null --chain copy --backend gpu --frames "$frames" -q 2> "$work/da.err" &
    pa=$!
    "$VKCU" "$b" --null --chain copy --backend gpu --frames "$frames" -q 2> "$work/db.err" &
    pb=$!
    wait $pa
    ra=$?
    wait $pb
    rb=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    if [ $ra = 0 ] && [ $rb = 0 ]; then row "decode-bound (A and B decoded at once)" "$secs" - - "two processes, set-up included"
    else row "decode-bound (A and B decoded at once)" - - - "failed: $(tail -1 "$work/da.err") $(tail -1 "$work/db.err")"; fi
    # Two streams in one process, as compare decodes them, steady (after a warm-up): its anchor.
    if [ -x "$TESTBIN/bench_multistream" ]; then
      agg=$("$TESTBIN/bench_multistream" "$a" 2 copy 2>&1 | sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p')
      if [ -n "$agg" ]; then
        secs=$(awk -v f="$agg" -v n="$frames" 'BEGIN {printf "%.2f", n / (f / 2)}')
        row "decode, one process (2 streams of A, steady)" "$secs" - - "bench_multistream A 2 copy: $agg fps in all"
      fi
    fi
  fi
  ff=("$FFMPEG" -hide_banner -nostdin -loglevel info -stats_period 100)
  lavfi='[0:v][1:v]psnr;[0:v][1:v]ssim'
  secs=$(bench_time "$work/ff.txt" "$work/ff.err" "${ff[@]}" -i "$a" -i "$b" -frames:v "$frames" -lavfi "$lavfi" -f null -)
  if [ $? = 0 ]; then row "ffmpeg psnr+ssim (default threads)" "$secs" "$(psnr_ffmpeg "$work/ff.err")" "$(ssim_ffmpeg "$work/ff.err")" ""
  else row "ffmpeg psnr+ssim (default threads)" - - - "failed: $(tail -1 "$work/ff.err")"; fi
  if [ $gpu = 1 ] && "$FFMPEG" -hide_banner -hwaccels 2> /dev/null | grep -qx cuda; then
    secs=$(bench_time "$work/ffc.txt" "$work/ffc.err" "${ff[@]}" -hwaccel cuda -i "$a" -hwaccel cuda -i "$b" \
      -frames:v "$frames" -lavfi "$lavfi" -f null -)
    if [ $? = 0 ]; then row "ffmpeg -hwaccel cuda psnr+ssim" "$secs" "$(psnr_ffmpeg "$work/ffc.err")" "$(ssim_ffmpeg "$work/ffc.err")" ""
    else row "ffmpeg -hwaccel cuda psnr+ssim" - - - "failed: $(tail -1 "$work/ffc.err")"; fi
  else
    row "ffmpeg -hwaccel cuda psnr+ssim" - - - "$([ $gpu = 0 ] && echo 'no GPU here' || echo 'this FFmpeg has no cuda hwaccel')"
  fi
  g=${fps["vkcu compare --backend gpu"]} cpu=${fps["vkcu compare --backend cpu"]} dec=${fps["decode-bound (A and B decoded at once)"]:-n/a}
  gs=${fps["vkcu compare --backend gpu, steady"]:-n/a} d1=${fps["decode, one process (2 streams of A, steady)"]:-n/a}
  ffr=${fps["ffmpeg psnr+ssim (default threads)"]} ffc=${fps["ffmpeg -hwaccel cuda psnr+ssim"]}
  awk -v g="$g" -v c="$cpu" -v d="$dec" -v f="$ffr" -v fc="$ffc" -v gs="$gs" -v d1="$d1" 'function r(x, y) {
      return (x == "n/a" || y == "n/a" || y == 0) ? "n/a" : sprintf("%.2fx", x / y) }
    function t(x, y, want) { return r(x, y) == "n/a" ? "not measured" : (x / y >= want ? "met" : "NOT met") }
    BEGIN {
      printf "  ratios: GPU / decode-bound %s, GPU / ffmpeg %s, GPU / ffmpeg -hwaccel cuda %s, CPU backend / ffmpeg %s\n",
        r(g, d), r(g, f), r(g, fc), r(c, f)
      printf "  steady: GPU compare / one-process two-stream decode %s\n", r(gs, d1)
      printf "  targets: GPU at least 0.9x decode-bound: %s (two processes), %s (one process, steady); GPU at least 1x ffmpeg psnr+ssim: %s; CPU backend at least 1x ffmpeg: %s\n",
        t(g, d, 0.9), t(gs, d1, 0.9), t(g, f, 1), t(c, f, 1)
    }'
  if [ "${BENCH_VMAF:-1}" = 1 ] && "$VKCU" --version | grep -q '^VMAF: libvmaf'; then
    bench_vmaf_rows "${c%.mp4}" "$a" "$b" "$frames"
  fi
  unset fps
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Transcode benchmark (issue 5), run on the GPU machine: 1080p and 4K H.264
# -> HEVC (libx265 -preset fast) and -> FFV1, with convert + denoise=tnr,
# vkcu (--backend gpu) against the nearest FFmpeg command line:
#   ffmpeg -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i IN
#          -vf hwdownload,format=nv12,hqdn3d,format=yuv420p -c:v ENCODER ...
# Same encoder and settings on both sides, the first N frames of each clip
# (VKCU_BENCH_FRAMES, default 600: the whole clips). Reports fps, the ratio and CPU time
# (user + system of the process and its threads) per frame, as a markdown
# table in bench-transcode.md ($OUT when set, else build/).
# BENCH_ONLY=transcode or BENCH_ONLY=broadcast (the 1080i -> 720p50 row
# alone, making only its clip: about a minute on the H200) runs one table;
# BENCH_ONLY=compute the compute encoders' table (issue 25: ffv1_vulkan and
# prores_ks_vulkan fed from the output ring, against vkcu with the CPU
# encoder and against FFmpeg 8.1's own GPU pipeline; bench-compute.md).
set -u
source "$(dirname "$0")/gpu-env.sh"
outdir=${OUT:-$root/build}
mkdir -p "$outdir"
only=${BENCH_ONLY:-all}
case $only in
  all | transcode | broadcast | compute) ;;
  *) echo "bench-transcode: BENCH_ONLY: no section '$only' (sections: transcode broadcast compute)" >&2; exit 2 ;;
esac
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then
  echo "bench-transcode: no Vulkan/CUDA GPU pair here; run it on the GPU machine (see docs/transcode.md)" >&2
  exit 0
fi
case $only in
  all) make_big_clips ;;
  transcode | compute) make_big_clips h264-1080p.mp4 h264-2160p.mp4 ;;
  broadcast) make_big_clips h264-1080i.mkv ;;
esac
frames=${VKCU_BENCH_FRAMES:-600}
reps=${VKCU_BENCH_REPS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# timed CMD... -> "wall_seconds cpu_seconds" (cpu: the child's user + system,
# from bash's `times` in a subshell, so no /usr/bin/time is needed).
timed() {
  local t0 t1 cpu
  t0=$(date +%s.%N)
  cpu=$( ( "$@" > "$work/log" 2>&1 || echo FAILED >> "$work/log"; times ) | tail -1 |
    awk '{ n = split($0, f, " "); s = 0; for (i = 1; i <= n; i++) { split(f[i], ms, "m"); s += ms[1] * 60 + ms[2] } print s }')
  t1=$(date +%s.%N)
  if grep -q FAILED "$work/log"; then
    echo "bench-transcode: failed: $*: $(tail -2 "$work/log" | tr '\n' ' ')" >&2
    echo "0 0"; return
  fi
  awk -v a="$t0" -v b="$t1" -v c="$cpu" 'BEGIN { print b - a, c }'
}
best() { # reps, CMD... -> the fastest run's "wall cpu"
  local n=$1 r; shift
  for _ in $(seq "$n"); do timed "$@"; done | sort -g | awk '$1 > 0' | head -1
}
fmt_row() { # name target vkcu(wall cpu) ffmpeg(wall cpu) vkcu-bytes ffmpeg-bytes
  awk -v name="$1" -v target="$2" -v f="$frames" -v vw="$3" -v vc="$4" -v fw="$5" -v fc="$6" -v vb="$7" -v fb="$8" 'BEGIN {
    vf = vw > 0 ? f / vw : 0; ff = fw > 0 ? f / fw : 0
    printf "| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f |\n", name, target, vf, ff, (ff > 0 ? vf / ff : 0),
      vc * 1000 / f, fc * 1000 / f, vb / 1e6, fb / 1e6 }'
}
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

chain='convert=format=yuv420p,denoise=tnr'
[ "$only" = broadcast ] || [ "$only" = compute ] || {
  echo "Transcode benchmark, first $frames frames of each clip, $(date -u +%Y-%m-%d) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)."
  echo "vkcu: \`--backend gpu --chain '$chain'\`; ffmpeg: \`-threads 1 -hwaccel vulkan -hwaccel_output_format vulkan\`, \`hwdownload,format=nv12,hqdn3d,format=yuv420p\`."
  echo "Same encoder and settings; vkcu's FFV1 encodes $(( $(nproc) / 4 < 8 ? $(nproc) / 4 : 8 )) GOPs at once (--encode-workers auto: packets identical to one encoder)."
  echo "Output sizes differ because tnr and hqdn3d leave different detail: FFV1's time per frame follows its output size."
  echo
  echo "| clip | target | vkcu fps | ffmpeg fps | vkcu/ffmpeg | vkcu CPU ms/frame | ffmpeg CPU ms/frame | vkcu output MB | ffmpeg output MB |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for c in h264-1080p.mp4 h264-2160p.mp4; do
    clip=$BIG/$c
    for target in "hevc:libx265:--preset fast:-preset fast -x265-params log-level=error" "ffv1:ffv1::"; do
      IFS=: read -r name enc vopts fopts <<< "$target"
      # shellcheck disable=SC2086
      v=$(best "$reps" "$VKCU" "$clip" -o "$work/v.mkv" -y -q --backend gpu --chain "$chain" --frames "$frames" --encoder "$enc" $vopts)
      # shellcheck disable=SC2086
      f=$(best "$reps" "$FFMPEG" -hide_banner -loglevel error -nostdin -y -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan \
        -i "$clip" -frames:v "$frames" -vf hwdownload,format=nv12,hqdn3d,format=yuv420p -an -c:v "$enc" $fopts "$work/f.mkv")
      fmt_row "$c" "$name ($enc)" ${v:-0 0} ${f:-0 0} "$(size "$work/v.mkv")" "$(size "$work/f.mkv")"
    done
  done
} | tee "$outdir/bench-transcode.md"
[ "$only" != transcode ] || exit 0

# ---- FFmpeg 8.1's compute encoders fed from the output ring (issue 25) ----
# Per clip and codec: vkcu on the GPU into ffv1_vulkan / prores_ks_vulkan
# (decode -> denoise=tnr,convert -> the ring -> the encoder, no host copy),
# against (a) vkcu with the CPU encoder (ffv1 GOP-parallel, prores_ks; all
# cores) and (b) FFmpeg 8.1's own GPU pipeline (Vulkan decode, download,
# hqdn3d, upload, the same Vulkan encoder and options). Host CPU time per
# frame from vkcu's --stats (the process's user + system time), for ffmpeg
# from `times`; the encoder's own GPU time from the timestamps vkcu takes
# around its submissions (--stats), with the rate it alone allows: where
# that rate is what vkcu reaches, the encoder is the limit.
compute_section() {
  if ! "$VKCU" probe 2>/dev/null | grep -q 'zero-copy encode: ffv1_vulkan prores_ks_vulkan (compute'; then
    echo "compute encoders: not on this machine ($("$VKCU" probe 2>/dev/null | grep -m1 'zero-copy encode:' | sed 's/^ *//'))"
    return
  fi
  # vk NAME ARGS...: "wall host_cpu_ms_per_frame enc_gpu_ms_per_frame enc_gpu_fps encoder instances busy%" of one
  # vkcu run (busy%: the instances' summed encode time against instances x wall; - for one encoder).
  vk() {
    local t0 t1
    t0=$(date +%s.%N)
    "$VKCU" "$@" -y -q --stats > "$work/vk.log" 2>&1 || echo FAILED >> "$work/vk.log"
    t1=$(date +%s.%N)
    cp "$work/vk.log" "$outdir/bench-compute-$(echo "$*" | md5sum | cut -c1-8).log"
    if grep -q FAILED "$work/vk.log"; then
      echo "bench-transcode: failed: vkcu $*: $(grep -v '^stats' "$work/vk.log" | tail -2 | tr '\n' ' ')" >&2
      echo "0 0 0 0 none 0 -"; return
    fi
    local cpu gms gfps enc inst busy
    inst=$(sed -n 's/^stats: encoders at once: \([0-9]*\);.*/\1/p' "$work/vk.log")
    busy=$(sed -n 's/^stats: encoders at once: .*(\([0-9]*\)% of .*/\1/p' "$work/vk.log")
    cpu=$(sed -n 's/^stats: host cpu ms\/frame=\([0-9.]*\).*/\1/p' "$work/vk.log")
    gms=$(sed -n 's/^stats: encoder gpu ms\/frame: busy=\([0-9.]*\).*/\1/p' "$work/vk.log")
    gfps=$(sed -n 's/.*alone it would run at \([0-9.]*\) fps.*/\1/p' "$work/vk.log")
    enc=$(sed -n 's/^stats: encoder=\([^ ]*\).*/\1/p' "$work/vk.log")
    awk -v a="$t0" -v b="$t1" -v c="${cpu:-0}" -v g="${gms:-0}" -v f="${gfps:-0}" -v e="${enc:-?}" -v i="${inst:-1}" \
      -v u="${busy:--}" 'BEGIN { print b - a, c, g, f, e, i, u }'
  }
  local depth=3 # the encoders' async_depth, vkcu's default: FFmpeg is given the same
  echo "Compute encoders fed from the output ring, first $frames frames of each clip, $(date -u +%Y-%m-%d) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores."
  echo "vkcu GPU: \`--backend gpu --chain 'denoise=tnr,convert=format=F' --encoder ffv1_vulkan|prores_ks_vulkan\`; (a) the same with \`--encoder ffv1|prores_ks\` (FFV1: GOP-parallel); (b) \`ffmpeg -threads 1 -init_hw_device vulkan=vk -hwaccel vulkan -hwaccel_output_format vulkan -filter_hw_device vk -i IN -vf hwdownload,format=nv12,hqdn3d,format=F,hwupload -c:v ffv1_vulkan|prores_ks_vulkan -async_depth $depth\`."
  echo "FFV1 at level 4 (4:2:0 at 1920x1080 and 3840x2160 needs it in ffv1_vulkan: \`-level 4 -strict experimental\`, vkcu \`--encoder-opt level=4\`); the CPU ffv1 at its default level 3. ProRes: yuv422p10, profile auto (HQ... as FFmpeg picks), all three encoders the same."
  echo "Host CPU ms/frame: vkcu's from --stats, ffmpeg's from \`times\`. Encoder GPU: its submissions' own GPU time per frame (timestamps around them, one encoder: the N=1 run) and the rate that alone allows."
  echo "vkcu GPU runs N instances of the encoder (\`--encode-workers N\`, BENCH_INSTANCES, default 4; N=1: one encoder); busy: the instances' summed encode time (each waits for its frame's GPU work) against N x wall."
  echo
  echo "| clip | codec | N | vkcu GPU fps | N=1 fps | (a) vkcu CPU-encoder fps | (b) ffmpeg GPU fps | vs (a) | vs (b) | vkcu host CPU ms/frame | (a) host CPU ms/frame | (b) host CPU ms/frame | instances busy | encoder GPU ms/frame (N=1) | encoder-limited fps (N=1) |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  local c clip row
  for c in h264-1080p.mp4 h264-2160p.mp4; do
    clip=$BIG/$c
    for row in "ffv1:ffv1_vulkan:ffv1:yuv420p:level=4:-level 4 -strict experimental" \
               "prores:prores_ks_vulkan:prores_ks:yuv422p10::"; do
      IFS=: read -r name genc cenc pixfmt vopt fopts <<< "$row"
      local ch="denoise=tnr,convert=format=$pixfmt" g g1 a f
      # shellcheck disable=SC2086
      g=$(vk "$clip" -o "$work/g.mkv" --backend gpu --chain "$ch" --frames "$frames" --encoder "$genc" \
        --encode-workers "${BENCH_INSTANCES:-4}" ${vopt:+--encoder-opt "$vopt"})
      # shellcheck disable=SC2086
      g1=$(vk "$clip" -o "$work/g1.mkv" --backend gpu --chain "$ch" --frames "$frames" --encoder "$genc" --encode-workers 1 \
        ${vopt:+--encoder-opt "$vopt"})
      a=$(vk "$clip" -o "$work/a.mkv" --backend gpu --chain "$ch" --frames "$frames" --encoder "$cenc")
      # shellcheck disable=SC2086
      f=$(timed "$FFMPEG" -hide_banner -loglevel error -nostdin -y -threads 1 -init_hw_device vulkan=vk -hwaccel vulkan \
        -hwaccel_output_format vulkan -filter_hw_device vk -i "$clip" -frames:v "$frames" \
        -vf "hwdownload,format=nv12,hqdn3d,format=$pixfmt,hwupload" -an -c:v "$genc" -async_depth "$depth" $fopts "$work/f.mkv")
      read -r gw gc _ _ ge gn gb <<< "$g"
      read -r g1w _ gg gf _ _ _ <<< "$g1"
      read -r aw ac _ _ ae _ _ <<< "$a"
      read -r fw fc <<< "$f"
      awk -v clip="$c" -v name="$name ($ge / $ae / $genc)" -v n="$frames" -v gw="$gw" -v gc="$gc" -v gg="$gg" -v gf="$gf" \
        -v aw="$aw" -v ac="$ac" -v fw="$fw" -v fc="$fc" -v gn="$gn" -v gb="$gb" -v g1w="$g1w" 'BEGIN {
        g = gw > 0 ? n / gw : 0; a = aw > 0 ? n / aw : 0; f = fw > 0 ? n / fw : 0; g1 = g1w > 0 ? n / g1w : 0
        printf "| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %s%% | %.3f | %.1f |\n", clip,
          name, gn, g, g1, a, f, (a > 0 ? g / a : 0), (f > 0 ? g / f : 0), gc, ac, fc * 1000 / n, gb, gg, gf }'
    done
  done
  echo
  echo "Targets (issue 25): vs (b) >= 1.50 at 4K; vs (a) >= 1.50 with host CPU ms/frame <= a quarter of (a)'s;"
  echo "where vkcu GPU fps is within 10% of the encoder-limited fps, the encoder's own GPU work is the limit and that rate is the target."
}
if [ "$only" = compute ]; then
  compute_section | tee "$outdir/bench-compute.md"
  exit 0
fi

# A whole broadcast transcode (issue 17): 1080i25 -> 720p50 -> x264, the
# broadcast-1080i-to-720p50 preset against the nearest ffmpeg command line
# (Vulkan decode, bwdif_vulkan field mode, scale_vulkan, download, the same
# x264 settings). fps counts output frames (50 per second of input).
[ "$only" != broadcast ] || : > "$outdir/bench-transcode.md"
{
  echo
  echo "1080i25 -> 720p50 -> x264 (CRF 20, preset medium), first $frames output frames, $(date -u +%Y-%m-%d)."
  echo "vkcu: \`--backend gpu --pipeline broadcast-1080i-to-720p50\`; ffmpeg: \`-threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -vf bwdif_vulkan=mode=send_field,scale_vulkan=w=1280:h=720,hwdownload,format=nv12 -c:v libx264 -crf 20 -preset medium -profile:v high\`."
  echo
  echo "| clip | target | vkcu fps | ffmpeg fps | vkcu/ffmpeg | vkcu CPU ms/frame | ffmpeg CPU ms/frame | vkcu output MB | ffmpeg output MB |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  clip=$BIG/h264-1080i.mkv
  if [ -s "$clip" ]; then
    v=$(best "$reps" "$VKCU" "$clip" -o "$work/v.mkv" -y -q --backend gpu --pipeline broadcast-1080i-to-720p50 --frames "$frames")
    f=$(best "$reps" "$FFMPEG" -hide_banner -loglevel error -nostdin -y -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan \
      -i "$clip" -frames:v "$frames" -vf bwdif_vulkan=mode=send_field,scale_vulkan=w=1280:h=720,hwdownload,format=nv12 -an \
      -c:v libx264 -crf 20 -preset medium -profile:v high "$work/f.mkv")
    fmt_row h264-1080i.mkv "720p50 (libx264)" ${v:-0 0} ${f:-0 0} "$(size "$work/v.mkv")" "$(size "$work/f.mkv")"
  else
    echo "| h264-1080i.mkv | 720p50 | missing: make_big_clips did not make it | | | | | | |"
  fi
} | tee -a "$outdir/bench-transcode.md"
[ "$only" = all ] && compute_section | tee "$outdir/bench-compute.md"
exit 0

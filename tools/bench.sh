#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench`: the GPU benchmark, every row measured side by side in one
# run, reported as fps and ratios (issue 3's table). Each figure is the
# median of 3 runs. Writes bench.md (in $OUT when set, else build/).
#   vkcu decode-only          Vulkan Video decode, frames dropped
#   vkcu +handoff+copy        decode, on-GPU copy into the interop ring,
#                             binary-semaphore handoff, CUDA `copy` kernel
#   vkcu ... timeline         the same with one timeline semaphore
#   ffmpeg vulkan             ffmpeg -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -f null
#   ffmpeg nvdec              ffmpeg -hwaccel cuda -hwaccel_output_format cuda -f null
#   batch hashing             vkcu batch --jobs 7, md5 / xxh64 / blake3 presets, vs decode-only
#   scale 4K -> 1080p         CUDA time of scale (lanczos, bilinear) and of copy, against
#                             ffmpeg's scale_vulkan on the same Vulkan-decoded frames
#   set-up                    --stats setup and its breakdown, vkcu's Vulkan device vs FFmpeg's
#   download                  frames to the host: CUDA copy vs the output ring's Vulkan readback
#   deinterlace 1080i         field mode, CUDA time against ffmpeg's bwdif_vulkan
#   processes 1080p           N `vkcu --decode-only --null` processes (queue claims on, and off)
#                             against N decode-only streams in one process (bench_multistream)
#   batch 1080p               vkcu batch --jobs N against bench_multistream, the same files
#   one file, several decoders tools/bench-decode-parallel.sh (decode-parallel.md): each clip
#                             looped to 3000 frames, one decoder against pieces (issue 39)
# BENCH_ONLY=NAME[,NAME...] runs only those sections, each making only the
# clips it reads (about a minute each on the H200 but batch and decode):
#   decode (with set-up), hash, download, multistream, batch, twogpu (two GPUs), nlm, scale
#   (with bench_scale), deint, processes, batch1080, pdecode, kernels (the other tests/bench programs).
set -u
source "$(dirname "$0")/gpu-env.sh"
outdir=${OUT:-$root/build}
mkdir -p "$outdir"
sections="decode hash download multistream batch twogpu nlm scale deint processes batch1080 pdecode kernels"
only=",${BENCH_ONLY:-all},"
for s in ${BENCH_ONLY//,/ }; do
  [[ " $sections " == *" $s "* ]] || { echo "bench: BENCH_ONLY: no section '$s' (sections: $sections)" >&2; exit 2; }
done
want() { [ "$only" = ",all," ] || [[ $only == *",$1,"* ]]; }
if ! timeout -s KILL 60 "$VKCU" probe > /dev/null 2>&1; then
  echo "bench: no Vulkan/CUDA GPU pair here; the benchmark runs on the GPU machine (see README)" >&2
  exit 0
fi
if [ "$only" = ",all," ]; then
  make_big_clips
else
  clips=()
  want decode && clips+=(h264-1080p.mp4 h264-2160p.mp4 hevc10-1080p.mp4)
  { want nlm || want download; } && clips+=(h264-1080p.mp4)
  { want hash || want download || want multistream || want batch || want twogpu || want scale || want kernels; } &&
    clips+=(h264-2160p.mp4)
  want deint && clips+=(h264-1080i.mkv)
  { want processes || want batch1080; } && clips+=(h264-1080p.mp4 hevc10-1080p.mp4)
  [ ${#clips[@]} = 0 ] || make_big_clips "${clips[@]}"
fi
reps=${VKCU_BENCH_REPS:-3}
# The presets of this checkout (a bundled vkcu may sit where <binary>/../pipelines is absent).
export VKCU_PIPELINES=${VKCU_PIPELINES:-$root/pipelines}

div() { awk -v a="$1" -v b="$2" 'BEGIN {print (b > 0 ? a / b : 0)}'; }
# batch_steady DIR STREAMS FRAMES ARGS...: `vkcu batch DIR/in DIR/out --backend
# gpu ARGS -q`, $reps times whole and $reps times with --frames 30. Prints
# "whole steady": whole is the batch summary's fps (set-up included), steady
# STREAMS x (FRAMES - 30) / (median wall of the full batch - median wall of
# the short one), so that set-up cancels.
batch_steady() {
  local dir=$1 streams=$2 n=$3 whole=() full=() short=() f w
  shift 3
  batch_once() { # ARGS... -> "summary-fps wall-seconds"
    rm -rf "$dir/out" "$dir/rep.jsonl"
    local t0 t1
    t0=$(date +%s.%N)
    timeout -s KILL 600 "$VKCU" batch "$dir/in" "$dir/out" --backend gpu "$@" -q --report "$dir/rep.jsonl" \
      > /dev/null 2>&1 || { echo "0 0"; return; }
    t1=$(date +%s.%N)
    echo "$(tail -1 "$dir/rep.jsonl" | sed -n 's/.*"fps": \([0-9.]*\).*/\1/p') $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
  }
  for _ in $(seq "$reps"); do
    read -r f w <<< "$(batch_once "$@")"
    whole+=("$f") full+=("$w")
    read -r f w <<< "$(batch_once "$@" --frames 30)"
    short+=("$w")
  done
  awk -v s="$streams" -v n="$n" -v wf="$(printf '%s\n' "${whole[@]}" | median)" \
    -v a="$(printf '%s\n' "${full[@]}" | median)" -v b="$(printf '%s\n' "${short[@]}" | median)" \
    'BEGIN {print wf, (a > b ? s * (n - 30) / (a - b) : 0)}'
}
vkcu_fps() { # field clip args... -> median of the --stats field (fps or fps_steady)
  local field=$1; shift
  for _ in $(seq "$reps"); do
    timeout -s KILL 300 "$VKCU" "$@" --stats -q 2>&1 | sed -n "s/.* $field=\([0-9.]*\).*/\1/p" | head -1
  done | median
}
ffmpeg_fps() { # frames, ffmpeg args...
  local frames=$1; shift
  for _ in $(seq "$reps"); do
    local t0 t1
    t0=$(date +%s.%N)
    timeout -s KILL 300 "$FFMPEG" -hide_banner -loglevel error -nostdin "$@" -f null - || { echo 0; continue; }
    t1=$(date +%s.%N)
    awk -v f="$frames" -v a="$t0" -v b="$t1" 'BEGIN {print f / (b - a)}'
  done | median
}
parallel_fps() { # n frames-each, command... -> aggregate fps of n copies at once
  local n=$1 frames=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  for _ in $(seq "$n"); do "$@" & done
  wait
  t1=$(date +%s.%N)
  awk -v f="$frames" -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {print n * f / (b - a)}'
}

{
  if want decode; then
  echo "### Decode and handoff (issue 3)"
  echo
  echo "Steady fps exclude set-up (device, imports); whole-job fps include it, as FFmpeg's wall time does."
  echo
  echo "| clip | vkcu decode-only steady | +handoff+copy binary steady | ratio | +handoff+copy timeline steady | ratio | vkcu decode-only whole | ffmpeg vulkan | vkcu/ffmpeg-vulkan | ffmpeg nvdec | vkcu/nvdec |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  setup_rows=
  for c in h264-1080p.mp4 h264-2160p.mp4 hevc10-1080p.mp4; do
    clip=$BIG/$c
    frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
    dec=$(vkcu_fps fps_steady "$clip" --backend gpu --decode-only)
    decw=$(vkcu_fps fps "$clip" --backend gpu --decode-only)
    bin=$(vkcu_fps fps_steady "$clip" --backend gpu --null --chain copy --handoff binary)
    tl=$(vkcu_fps fps_steady "$clip" --backend gpu --null --chain copy --handoff timeline)
    ffv=$(ffmpeg_fps "$frames" -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip")
    ffn=$(ffmpeg_fps "$frames" -hwaccel cuda -hwaccel_output_format cuda -i "$clip")
    printf '| %s (%s frames) | %.1f | %.1f | %.3f | %.1f | %.3f | %.1f | %.1f | %.2f | %.1f | %.2f |\n' "$c" "$frames" \
      "$dec" "$bin" "$(div "$bin" "$dec")" "$tl" "$(div "$tl" "$dec")" "$decw" "$ffv" "$(div "$decw" "$ffv")" "$ffn" "$(div "$decw" "$ffn")"
    # Set-up (issue 15.1): vkcu's own Vulkan device against FFmpeg's device creation.
    su=$(vkcu_fps setup "$clip" --backend gpu --decode-only)
    suf=$(VKCU_VULKAN_DEVICE=ffmpeg vkcu_fps setup "$clip" --backend gpu --decode-only)
    decwf=$(VKCU_VULKAN_DEVICE=ffmpeg vkcu_fps fps "$clip" --backend gpu --decode-only)
    bd=$("$VKCU" "$clip" --backend gpu --decode-only --stats -q 2>&1 |
      sed -n 's/^stats: setup ms: \(.*\) (on their own threads, beside) \(.*\); Vulkan device: \(.*\)/\1, \2 (\3)/p')
    setup_rows+=$(printf '| %s | %.3f | %.3f | %s | %.1f | %.1f | %.1f | %.2f | %.1f | %.2f |' "$c" "$su" "$suf" "$bd" "$decw" \
      "$decwf" "$ffn" "$(div "$decw" "$ffn")" "$ffv" "$(div "$decw" "$ffv")")$'\n'
  done
  echo
  echo "### Set-up to the first frame, and whole jobs (issue 15.1: under 0.3 s; whole job at least NVDEC's)"
  echo
  echo "Set-up: job start to the first decoded frame (\`--stats\` setup, median of $reps), with vkcu's own Vulkan device"
  echo "and with FFmpeg's device creation (\`VKCU_VULKAN_DEVICE=ffmpeg\`). Breakdown (ms, one run, own device): the"
  echo "Vulkan instance, device and CUDA start run on their own threads beside demux; gpu_open is what the job thread"
  echo "waited for them. Whole job: decode-only fps including set-up, against FFmpeg's wall time (\`-f null\`)."
  echo
  echo "| clip | set-up, s | set-up with FFmpeg's device, s | breakdown | vkcu whole-job fps | same, FFmpeg's device | ffmpeg nvdec | vkcu/nvdec | ffmpeg vulkan | vkcu/ffmpeg-vulkan |"
  echo "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  printf '%s' "$setup_rows"
  echo
  fi
  if want hash; then
  echo "### Hashing GPU frames at 4K (issue 7: at most 10% of decode time)"
  echo
  echo "| hash | vkcu decode-only steady fps | vkcu hash --backend gpu steady fps | extra time per frame vs decode |"
  echo "| --- | ---: | ---: | ---: |"
  clip=$BIG/h264-2160p.mp4
  dec=$(vkcu_fps fps_steady "$clip" --backend gpu --decode-only)
  for algo in md5 xxh64; do
    h=$(for _ in $(seq "$reps"); do timeout -s KILL 300 "$VKCU" hash "$clip" --backend gpu --algo $algo --stats -o /dev/null 2>&1 |
          sed -n 's/.* fps_steady=\([0-9.]*\).*/\1/p'; done | median)
    printf '| %s | %.1f | %.1f | %+.1f%% |\n' "$algo" "$dec" "$h" "$(awk -v d="$dec" -v h="$h" 'BEGIN {print (h > 0 ? (d / h - 1) * 100 : 0)}')"
  done
  echo
  fi
  if want download; then
  echo "### Download to the host: CUDA copy vs the output ring (issue 16)"
  echo
  echo "\`vkcu hash --algo xxh64 --backend gpu\` (a cheap host consumer), steady fps, \`--download cuda\` (planar"
  echo "kernel into a staging buffer, cudaMemcpyAsync into pinned memory) against \`--download vulkan\` (planar"
  echo "kernel into the output ring's exportable buffer, binary semaphores, one Vulkan transfer into host-visible"
  echo "memory). The faster one should be the default."
  echo
  echo "| clip | download cuda | download vulkan | vulkan / cuda |"
  echo "| --- | ---: | ---: | ---: |"
  for c in h264-1080p.mp4 h264-2160p.mp4; do
    dl() { for _ in $(seq "$reps"); do timeout -s KILL 300 "$VKCU" hash "$BIG/$c" --backend gpu --algo xxh64 --download "$1" \
             --stats -o /dev/null 2>&1 | sed -n 's/.* fps_steady=\([0-9.]*\).*/\1/p'; done | median; }
    dc=$(dl cuda) dv=$(dl vulkan)
    printf '| %s | %.1f | %.1f | %.2f |\n' "$c" "${dc:-0}" "${dv:-0}" "$(div "${dv:-0}" "${dc:-0}")"
  done
  echo
  fi
  if want multistream; then
  echo "### Concurrent 4K streams (issue 6): aggregate fps"
  echo
  echo "| streams | vkcu one process, decode+convert, queues spread | same, FFmpeg's queue choice | ffmpeg vulkan, N processes | ffmpeg nvdec, N processes | vkcu/nvdec |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
  clip=$BIG/h264-2160p.mp4
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  for n in 1 7; do
    ms=$("$TESTBIN/bench_multistream" "$clip" "$n" 2>&1 | sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p')
    ms0=$(VKCU_DECODE_QUEUE_SPREAD=0 "$TESTBIN/bench_multistream" "$clip" "$n" 2>&1 | sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p')
    pv=$(parallel_fps "$n" "$frames" timeout -s KILL 300 "$FFMPEG" -hide_banner -loglevel error -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -f null -)
    pn=$(parallel_fps "$n" "$frames" timeout -s KILL 300 "$FFMPEG" -hide_banner -loglevel error -nostdin -hwaccel cuda -hwaccel_output_format cuda -i "$clip" -f null -)
    printf '| %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n' "$n" "${ms:-0}" "${ms0:-0}" "$pv" "$pn" "$(div "${ms:-0}" "$pn")"
  done
  echo
  fi
  if want batch; then
  echo "### Batch hashing at decode speed (issue 15.3: blake3 at least 95% of decode-only)"
  echo
  echo "\`vkcu batch --jobs 7 --backend gpu\` over 7 links to the 4K clip, one hash preset each (md5: regression-hash,"
  echo "blake3: regression-blake3, xxh64: the same with \`hash xxh64\`). Whole: the batch summary's fps (set-up included)."
  echo "Steady: 7 x (frames - 30) / (wall of the full batch - wall of the same batch with --frames 30), so set-up cancels."
  echo "Decode-only: bench_multistream, 7 streams of the clip in one process (null sink, \`copy\` chain), after a warm-up."
  echo
  echo "| hash | batch whole fps | batch steady fps | decode-only fps | steady / decode-only |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  clip=$BIG/h264-2160p.mp4
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  bdir=$(mktemp -d)
  mkdir -p "$bdir/in"
  for i in 1 2 3 4 5 6 7; do ln -s "$clip" "$bdir/in/s$i.mp4"; done
  printf 'description batch bench: xxh64 per frame\noutput hash\nhash xxh64\ncontainer framemd5\n' > "$bdir/xxh64.pipe"
  dec=$(for _ in $(seq "$reps"); do "$TESTBIN/bench_multistream" "$clip" 7 copy 2>&1 |
          sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p'; done | median)
  for h in md5:regression-hash xxh64:$bdir/xxh64.pipe blake3:regression-blake3; do
    read -r wf st <<< "$(batch_steady "$bdir" 7 "$frames" --jobs 7 --pipeline "${h#*:}")"
    printf '| %s | %.1f | %.1f | %.1f | %.3f |\n' "${h%%:*}" "$wf" "$st" "${dec:-0}" "$(div "$st" "${dec:-0}")"
  done
  rm -rf "$bdir"
  echo
  fi
  if want twogpu; then
  echo "### Two GPUs (issue 15.4: at least 1.9x the one-GPU aggregate)"
  echo
  ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
  if [ "${ngpu:-0}" -lt 2 ]; then
    echo "Not measured: this machine has ${ngpu:-0} NVIDIA GPU(s) (run it on nvidia-h200-x2)."
  else
  echo "\`vkcu batch --jobs 14 --backend gpu --pipeline regression-blake3\` over 14 links to the 4K clip,"
  echo "\`--devices 0\` against \`--devices all\`. Steady fps as in the batch rows: 14 x (frames - 30) /"
  echo "(wall of the full batch - wall of the same batch with --frames 30)."
  echo
  echo "| devices | batch whole fps | batch steady fps |"
  echo "| --- | ---: | ---: |"
  clip=$BIG/h264-2160p.mp4
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  tdir=$(mktemp -d)
  mkdir -p "$tdir/in"
  for i in $(seq -w 1 14); do ln -s "$clip" "$tdir/in/s$i.mp4"; done
  declare -A tg_steady
  for d in 0 all; do
    read -r wf tg_steady[$d] <<< "$(batch_steady "$tdir" 14 "$frames" --jobs 14 --devices "$d" --pipeline regression-blake3)"
    printf '| %s | %.1f | %.1f |\n' "$d" "$wf" "${tg_steady[$d]}"
  done
  printf '\nall / one GPU (steady): %.2f\n' "$(div "${tg_steady[all]}" "${tg_steady[0]}")"
  rm -rf "$tdir"
  fi
  echo
  fi
  if want nlm; then
  echo "### nlm against FFmpeg's nlmeans_vulkan (issue 4: at least 5x), 1080p H.264, the same radii"
  echo
  echo "nlmeans_vulkan \`s=4\` at its default patch 7x7 and search 15x15; vkcu \`denoise=nlm:patch=3:search=7:tradius=0\`"
  echo "(radii 3 and 7: the same windows). Both decode with Vulkan Video and keep frames on the GPU (\`-f null\`, \`--null\`)."
  echo "FFmpeg's denoiser time per frame is the difference of the wall times with and without it; vkcu's is its CUDA"
  echo "kernel time (\`--stats\` cuda_ops), larger than its wall-time difference, which decode overlaps."
  echo
  echo "| | decode only, s | with the denoiser, s | denoiser ms/frame | denoiser fps | whole job fps |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  clip=$BIG/h264-1080p.mp4
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  ffd=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -f null -)
  ffn=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -vf nlmeans_vulkan=s=4 -f null -)
  vkd=$(wall "$VKCU" "$clip" --null --backend gpu --chain copy)
  nlm=(--null --backend gpu --chain denoise=nlm:patch=3:search=7:tradius=0)
  vkn=$(wall "$VKCU" "$clip" "${nlm[@]}")
  vko=$("$VKCU" "$clip" "${nlm[@]}" --stats -q 2>&1 | sed -n 's/.* cuda_ops=\([0-9.]*\).*/\1/p')
  ffms=$(awk -v a="$ffd" -v b="$ffn" -v f="$frames" 'BEGIN {print (b - a) * 1000 / f}')
  awk -v f="$frames" -v fd="$ffd" -v fn="$ffn" -v vd="$vkd" -v vn="$vkn" -v fm="$ffms" -v vm="$vko" 'BEGIN {
    printf "| ffmpeg nlmeans_vulkan | %.2f | %.2f | %.2f | %.1f | %.1f |\n", fd, fn, fm, (fm > 0 ? 1000 / fm : 0), f / fn
    printf "| vkcu nlm | %.2f | %.2f | %.2f | %.1f | %.1f |\n", vd, vn, vm, (vm > 0 ? 1000 / vm : 0), f / vn
    printf "| vkcu / ffmpeg | | | | **%.1fx** | %.1fx |\n", (vm > 0 ? fm / vm : 0), fn / vn }'
  echo
  fi
  if want scale; then
  echo "### scale 4K -> 1080p (issue 17: lanczos at most 3x a device-to-device copy of the input frame)"
  echo
  echo "Vulkan-decoded 4K H.264, frames kept on the GPU (\`--null\`, \`-f null\`). vkcu: CUDA kernel time per frame"
  echo "(\`--stats\` cuda_ops) of \`copy\` (the input frame copied on the device) and of \`scale\`. FFmpeg's"
  echo "\`scale_vulkan\` (bilinear; it has no lanczos): the wall-time difference with and without it, per frame."
  echo "tests/bench/bench_scale.c (below) times the kernels alone against cudaMemcpy of the frame."
  echo
  echo "| | ms/frame | x the copy | whole job fps |"
  echo "| --- | ---: | ---: | ---: |"
  clip=$BIG/h264-2160p.mp4
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  ops() { "$VKCU" "$clip" --null --backend gpu --chain "$1" --stats -q 2>&1 | sed -n 's/.* cuda_ops=\([0-9.]*\).*/\1/p'; }
  cpy=$(ops copy)
  fpsc=$(vkcu_fps fps "$clip" --null --backend gpu --chain copy)
  scl=$(ops scale=w=1920:h=1080:filter=lanczos)
  scb=$(ops scale=w=1920:h=1080:filter=bilinear)
  fpsl=$(vkcu_fps fps "$clip" --null --backend gpu --chain scale=w=1920:h=1080:filter=lanczos)
  fpsb=$(vkcu_fps fps "$clip" --null --backend gpu --chain scale=w=1920:h=1080:filter=bilinear)
  ffd=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -f null -)
  ffs=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -vf scale_vulkan=w=1920:h=1080 -f null -)
  awk -v f="$frames" -v c="$cpy" -v fc="$fpsc" -v l="$scl" -v fl="$fpsl" -v b="$scb" -v fb="$fpsb" \
    -v fd="$ffd" -v fs="$ffs" 'BEGIN {
    fm = (fs - fd) * 1000 / f
    printf "| vkcu copy (device-to-device, the reference) | %.4f | 1 | %.1f |\n", c, fc
    printf "| vkcu scale lanczos | %.4f | **%.2f** | %.1f |\n", l, (c > 0 ? l / c : 0), fl
    printf "| vkcu scale bilinear | %.4f | %.2f | %.1f |\n", b, (c > 0 ? b / c : 0), fb
    printf "| ffmpeg scale_vulkan (bilinear) | %.4f | %.2f | %.1f |\n", fm, (c > 0 ? fm / c : 0), (fs > 0 ? f / fs : 0)
    printf "| ffmpeg scale_vulkan / vkcu scale bilinear | %.2fx | | |\n", (b > 0 ? fm / b : 0) }'
  echo
  if [ -x "$TESTBIN/bench_scale" ]; then
    echo "\`bench_scale\` (CUDA events, the kernels alone, 4K -> 1080p against cudaMemcpy of the input frame):"
    echo
    echo '```'
    timeout -s KILL 300 "$TESTBIN/bench_scale" 2>&1 | tee "$outdir/bench_scale.txt"
    echo '```'
    echo
  fi
  fi
  if want processes; then
  echo "### N processes on one GPU against N streams in one process (issue 27.1: at least 0.9x)"
  echo
  echo "N \`vkcu CLIP --decode-only --null --backend gpu\` processes at once on the clip looped 5 times (3000 frames,"
  echo "stream copy), the sum of their steady fps (\`--stats\` fps_steady), with queue claims (the default: each process"
  echo "claims the least-claimed decode queue) and with \`VKCU_QUEUE_CLAIMS=off\` (every process on queues 0 and 1, as"
  echo "before claims); against bench_multistream CLIP N none 5 (N decode-only streams in one process, the same frames)."
  echo "Each figure the median of $reps runs."
  echo
  echo "| clip | N | N processes, claims | N processes, claims off | N streams, one process | claims / one process | off / one process |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  for c in h264-1080p hevc10-1080p; do
    long=$BIG/$c-x5.mp4
    if [ ! -s "$long" ] && "$FFMPEG" -hide_banner -loglevel error -nostdin -y -stream_loop 4 -i "$BIG/$c.mp4" -c copy \
      "$BIG/.tmp-$c-x5.mp4"; then
      mv "$BIG/.tmp-$c-x5.mp4" "$long"
    fi
    for n in 7 14; do
      procs_fps() { # ENV... -> the sum of N processes' fps_steady
        local pdir i
        pdir=$(mktemp -d)
        for i in $(seq "$n"); do
          env "$@" timeout -s KILL 300 "$VKCU" "$long" --decode-only --null --backend gpu --stats > "$pdir/$i" 2>&1 &
        done
        wait
        cat "$pdir"/* | sed -n 's/.* fps_steady=\([0-9.]*\).*/\1/p' | awk '{s += $1} END {print s + 0}'
        rm -rf "$pdir"
      }
      pc=$(for _ in $(seq "$reps"); do procs_fps; done | median)
      po=$(for _ in $(seq "$reps"); do procs_fps VKCU_QUEUE_CLAIMS=off; done | median)
      one=$(for _ in $(seq "$reps"); do timeout -s KILL 300 "$TESTBIN/bench_multistream" "$BIG/$c.mp4" "$n" none 5 2>&1 |
              sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p'; done | median)
      printf '| %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f |\n' "$c" "$n" "${pc:-0}" "${po:-0}" "${one:-0}" \
        "$(div "${pc:-0}" "${one:-0}")" "$(div "${po:-0}" "${one:-0}")"
    done
  done
  echo
  fi
  if want batch1080; then
  echo "### vkcu batch --jobs N against bench_multistream at 1080p (issue 27.3)"
  echo
  echo "\`vkcu batch --jobs N --backend gpu --pipeline regression-blake3\` over 3N links to the clip (hashed on the GPU),"
  echo "steady fps as in the batch rows above: 3N x (frames - 30) / (wall of the batch - wall of the same batch with"
  echo "--frames 30); against bench_multistream CLIP N copy 3 (the same frames, copy chain, null sink), median of $reps."
  echo
  echo "With \`--processes\` (issue 37) each stream runs in a worker process; bench_multistream's processes figure is"
  echo "VKCU_BENCH_PROCESSES=1 (N processes of one stream). Issue 37's targets (H200) are on the N processes and"
  echo "the batch's whole fps (docs/performance.md)."
  echo
  echo "| clip | N | batch whole fps | batch steady fps | batch --processes whole fps | batch --processes steady fps | bench_multistream fps | bench_multistream N processes fps | batch steady / bench_multistream | --processes steady / threads steady |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for c in h264-1080p hevc10-1080p; do
    clip=$BIG/$c.mp4
    frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
    for n in 7 14; do
      bdir=$(mktemp -d)
      mkdir -p "$bdir/in"
      for i in $(seq -w 1 $((3 * n))); do ln -s "$clip" "$bdir/in/s$i.mp4"; done
      read -r wf st <<< "$(batch_steady "$bdir" $((3 * n)) "$frames" --jobs "$n" --pipeline regression-blake3)"
      read -r pwf pst <<< "$(batch_steady "$bdir" $((3 * n)) "$frames" --jobs "$n" --pipeline regression-blake3 --processes)"
      ms=$(for _ in $(seq "$reps"); do timeout -s KILL 300 "$TESTBIN/bench_multistream" "$clip" "$n" copy 3 2>&1 |
             sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p'; done | median)
      mp=$(for _ in $(seq "$reps"); do VKCU_BENCH_PROCESSES=1 timeout -s KILL 300 "$TESTBIN/bench_multistream" "$clip" "$n" copy 3 2>&1 |
             sed -n 's/.*aggregate_fps=\([0-9.]*\).*/\1/p'; done | median)
      printf '| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f | %.2f |\n' "$c" "$n" "$wf" "$st" "$pwf" "$pst" \
        "${ms:-0}" "${mp:-0}" "$(div "$st" "${ms:-0}")" "$(div "$pst" "$st")"
      rm -rf "$bdir"
    done
  done
  echo
  fi
  if want deint; then
  echo "### deinterlace 1080i, field mode (issue 17: at least 2,000 output fps), against FFmpeg's bwdif_vulkan"
  echo
  echo "1080i25 H.264 (MBAFF), 300 frames, 600 output frames. Both decode with Vulkan Video and keep frames on the GPU."
  echo "FFmpeg's deinterlacer time per output frame is the difference of the wall times with and without"
  echo "\`bwdif_vulkan=mode=send_field\`; vkcu's is its CUDA time (\`--stats\` cuda_ops: the copy out of the interop"
  echo "slot and the kernel) for \`deinterlace=mode=field\`."
  echo
  echo "| | decode only, s | with the deinterlacer, s | deinterlacer ms/output frame | deinterlacer output fps | whole job output fps |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  clip=$BIG/h264-1080i.mkv
  frames=$("$VKCU" "$clip" --decode-only --backend cpu --stats -q 2>&1 | sed -n 's/.*frames_out=\([0-9]*\).*/\1/p')
  ffd=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -f null -)
  ffb=$(wall "$FFMPEG" -hide_banner -nostdin -threads 1 -hwaccel vulkan -hwaccel_output_format vulkan -i "$clip" -vf bwdif_vulkan=mode=send_field -f null -)
  vkd=$(wall "$VKCU" "$clip" --null --backend gpu --chain copy)
  di=(--null --backend gpu --chain deinterlace=mode=field)
  vkb=$(wall "$VKCU" "$clip" "${di[@]}")
  vko=$("$VKCU" "$clip" "${di[@]}" --stats -q 2>&1 | sed -n 's/.* cuda_ops=\([0-9.]*\).*/\1/p')
  awk -v f="$((2 * ${frames:-0}))" -v fd="$ffd" -v fb="$ffb" -v vd="$vkd" -v vb="$vkb" -v vm="${vko:-0}" 'BEGIN {
    fm = f > 0 ? (fb - fd) * 1000 / f : 0
    printf "| ffmpeg bwdif_vulkan | %.2f | %.2f | %.3f | %.1f | %.1f |\n", fd, fb, fm, (fm > 0 ? 1000 / fm : 0), (fb > 0 ? f / fb : 0)
    printf "| vkcu deinterlace | %.2f | %.2f | %.3f | %.1f | %.1f |\n", vd, vb, vm, (vm > 0 ? 1000 / vm : 0), (vb > 0 ? f / vb : 0)
    printf "| vkcu / ffmpeg | | | | **%.1fx** | %.1fx |\n", (vm > 0 ? fm / vm : 0), (vb > 0 ? fb / vb : 0) }'
  fi
} | tee "$outdir/bench.md"
if want pdecode; then OUT=$outdir bash "$root/tools/bench-decode-parallel.sh"; fi
want kernels || exit 0
"$VKCU" "$BIG/h264-2160p.mp4" --null --chain copy --backend gpu --stats -q 2>&1 | tee "$outdir/bench-stats.txt"
for b in "$TESTBIN"/bench_*; do
  [ -x "$b" ] || continue
  case $b in *bench_multistream) continue ;; esac # above, with arguments
  case $b in *bench_scale) want scale && continue ;; esac # in the scale section
  echo "== $(basename "$b")"
  timeout -s KILL 300 "$b" 2>&1 | tee "$outdir/$(basename "$b").txt"
done

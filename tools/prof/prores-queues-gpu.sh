#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36: why prores_ks_vulkan's instances on compute queues of their own
# (VKCU_ENCODE_INSTANCE_QUEUES=all) did not write one instance's bytes.
# 600 frames of the 1080p clip, chain denoise=tnr,convert=format=yuv422p10,
# one file per run, each against the one-instance file: the whole file,
# each packet (md5 of the stream copied), each decoded frame, and the PSNR
# of the frames that differ, and whether such a packet is the reference's
# packet of another frame (that picture encoded in its place). Runs, named
# MODE-N[-noimport][-copywait][-views][-serial][-prealloc][-host][-asyncD][-devices][-lock]:
#   shared: every instance on compute queue 0 (the default)
#   all:    each instance on its own queue (VKCU_ENCODE_INSTANCE_QUEUES=all)
#   noimport: VKCU_ENCODE_HOST_IMPORT=0, FFmpeg copies each packet out of a
#           host-visible buffer with the CPU, not by a transfer into the
#           imported packet
#   copywait: VKCU_ENCODE_COPY_WAIT=1, a frame goes to the encoder only once
#           the copy into its image has run (a host wait)
#   views[N]: VKCU_ENCODE_VIEWS=defer[:N], an image view destroyed only
#           after N later ones (default: none within the run;
#           src/gpu/vkdev_probe.c; FFmpeg makes and drops views per frame)
#   serial: VKCU_ENCODE_GPU_SERIAL=1, the lanes' submissions run one at a
#           time on the GPU
#   prealloc: VKCU_ENCODE_PREALLOC=64, the encoder's images all made before
#           the first frame
#   host:   VKCU_ENCODE_VIA_HOST=1, the chain's frames read back to the host
#           and uploaded by each instance into images of its own (no output
#           ring, no copy on queue 0, no image shared between instances)
#   asyncD: (with N = 1) one FFmpeg context with async_depth D on a device
#           of D compute queues (VKCU_VK_COMPUTE_QUEUES=D): FFmpeg's
#           execution context i submits on queue i, so D frames of one
#           context would be encoded side by side on D queues; but
#           prores_ks_vulkan in FFmpeg 8.1 makes one execution context and
#           sets async_depth to that (performance.md, "Issue 36, step 6")
#   devices: VKCU_ENCODE_INSTANCE_DEVICES=1, every instance but the first
#           on a VkDevice of its own made by FFmpeg, the frames through the
#           host as with -host (the mode to use: shared)
#   lock:   VKCU_VK_SUBMIT_LOCK=1, one lock over every queue's submissions
#           on the host (the GPU still runs them side by side): NVIDIA's
#           workaround for a driver bug of two queues of one VkDevice
#           submitting at once
# Every run writes its trace (VKCU_ENCODE_TRACE: each image taken, copied
# into, sent to an instance, and the packet back) to $OUT/RUN.I.trace.
# Writes $OUT/prores-queues.md.
#   PRORES_CLIP=h264-1080p PRORES_RUNS="all-1 all-4 all-4-noimport ..."
set -u
source "$(dirname "$0")/../gpu-env.sh"
out=${OUT:-$root/build}
mkdir -p "$out"
clip=${PRORES_CLIP:-h264-1080p}
make_big_clips "$clip.mp4"
FFPROBE=$(dirname "$FFMPEG")/ffprobe
md=$out/prores-queues.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| run | fps | file as N=1 | packets differing (first) | frames decoded differing | lowest PSNR of those |" > "$md"
echo "| --- | ---: | --- | --- | ---: | ---: |" >> "$md"
packets() { "$FFMPEG" -hide_banner -loglevel error -i "$1" -map 0:v -c copy -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}'; }
decoded() { "$FFMPEG" -hide_banner -loglevel error -i "$1" -map 0:v -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}'; }
ref=
for run in ${PRORES_RUNS:-all-1 shared-4 all-4 all-4-copywait all-4-noimport all-4-noimport-copywait}; do
  IFS=- read -r mode n _ <<< "$run"
  env=()
  [ "$mode" = all ] && env+=(VKCU_ENCODE_INSTANCE_QUEUES=all)
  [ "$mode" = shared ] && env+=(VKCU_ENCODE_INSTANCE_QUEUES=one) # (with -lock too)
  [[ $run == *-noimport* ]] && env+=(VKCU_ENCODE_HOST_IMPORT=0)
  [[ $run == *-copywait* ]] && env+=(VKCU_ENCODE_COPY_WAIT=1)
  [[ $run =~ -views([0-9]*) ]] && env+=(VKCU_ENCODE_VIEWS=defer${BASH_REMATCH[1]:+:${BASH_REMATCH[1]}})
  [[ $run == *-serial* ]] && env+=(VKCU_ENCODE_GPU_SERIAL=1)
  [[ $run == *-prealloc* ]] && env+=(VKCU_ENCODE_PREALLOC=64)
  [[ $run == *-host* ]] && env+=(VKCU_ENCODE_VIA_HOST=1)
  [[ $run == *-devices* ]] && env+=(VKCU_ENCODE_INSTANCE_DEVICES=1)
  [[ $run == *-lock* ]] && env+=(VKCU_VK_SUBMIT_LOCK=1)
  opt=()
  [[ $run =~ -async([0-9]+) ]] && env+=(VKCU_VK_COMPUTE_QUEUES=${BASH_REMATCH[1]}) &&
    opt=(--encoder-opt "async_depth=${BASH_REMATCH[1]}")
  i=0
  while [ -e "$tmp/$run.$i.mov" ]; do i=$((i + 1)); done
  rm -f "$out/$run.$i.trace"
  env+=(VKCU_ENCODE_TRACE="$out/$run.$i.trace")
  f=$tmp/$run.$i.mov
  t0=$(date +%s.%N)
  env "${env[@]}" timeout -s KILL 150 "$VKCU" "$BIG/$clip.mp4" -o "$f" -y --log-level verbose --backend gpu \
    --chain "denoise=tnr,convert=format=yuv422p10" --frames 600 --encoder prores_ks_vulkan --encode-workers "$n" "${opt[@]}" \
    > /dev/null 2> "$out/$run.$i.log"
  rc=$?
  t1=$(date +%s.%N)
  fps=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", 600 / (b - a)}')
  [ "$rc" = 0 ] || fps="rc $rc"
  packets "$f" > "$tmp/$run.$i.pk"
  decoded "$f" > "$tmp/$run.$i.dec"
  if [ -z "$ref" ]; then
    ref=$f
    cp "$tmp/$run.$i.pk" "$tmp/ref.pk"
    cp "$tmp/$run.$i.dec" "$tmp/ref.dec"
    echo "| $run | $fps | (the reference) | - | - | - |" >> "$md"
    continue
  fi
  same=NO
  cmp -s "$f" "$ref" && same=yes
  pk=$(paste -d' ' "$tmp/ref.pk" "$tmp/$run.$i.pk" | awk '$1 != $2 {n++; if (n <= 8) l = l (l ? " " : "") NR - 1} END {printf "%d (%s)", n, l}')
  dn=$(paste -d' ' "$tmp/ref.dec" "$tmp/$run.$i.dec" | awk '$1 != $2 {n++} END {print n + 0}')
  low=-
  if [ "$dn" != 0 ]; then
    "$FFMPEG" -hide_banner -loglevel error -i "$f" -i "$ref" -lavfi "[0:v][1:v]psnr=stats_file=$tmp/psnr.txt" -f null - 2> /dev/null
    low=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^psnr_avg:/) {split($i, a, ":"); if (a[2] != "inf") print a[2], $1}}' \
      "$tmp/psnr.txt" | sort -n | head -3 | tr '\n' ' ')
  fi
  echo "| $run | $fps | $same | $pk | $dn | ${low:--} |" >> "$md"
  # each wrong packet against the trace: its instance and image, whether
  # that image was new (first taken for it), the images first taken while it
  # was encoded, and how many images the run made in all
  wrong=$(paste -d' ' "$tmp/ref.pk" "$tmp/$run.$i.pk" | awk '$1 != $2 {printf "%d ", NR - 1}')
  [ -n "$wrong" ] && [ -s "$out/$run.$i.trace" ] && awk -v wrong="$wrong" -v run="$run.$i" '
    $2 == "get" { n = gets++; if (!($4 in seen)) { seen[$4] = n; newt[++nn] = $1; newf[nn] = n }; img[n] = $4 }
    $2 == "send" { ts[$3] = $1; inst[$3] = $5 }
    $2 == "done" { td[$3] = $1 }
    END {
      split(wrong, w, " ")
      for (j in w) {
        k = w[j]; c = ""
        for (m = 1; m <= nn; m++) if (newt[m] >= ts[k] - 0.02 && newt[m] <= td[k]) c = c " " newf[m]
        printf "  - %s frame %d: instance %s, image %s%s, sent %.3f s in, %.1f ms to its packet; images first taken meanwhile (for frames):%s\n",
          run, k, inst[k], img[k], seen[img[k]] == k ? " (new)" : "", ts[k] - first, (td[k] - ts[k]) * 1000, c ? c : " none"
      }
      printf "  - %s: %d images in all, first taken for frames", run, nn
      for (m = 1; m <= nn; m++) printf " %d", newf[m]
      printf "\n"
    }
    NR == 1 { first = $1 }' "$out/$run.$i.trace" >> "$out/prores-packets.md"
  # the first three packets that differ: sizes, and where in the packet
  # (frame header ~150 bytes, then the picture header and the slice sizes,
  # then the slices' data)
  paste -d' ' "$tmp/ref.pk" "$tmp/$run.$i.pk" | awk '$1 != $2 {print NR - 1}' | head -3 | while read -r k; do
    a=$("$FFPROBE" -v error -select_streams v:0 -show_entries packet=pos,size -of csv=p=0 "$ref" | sed -n "$((k + 1))p")
    b=$("$FFPROBE" -v error -select_streams v:0 -show_entries packet=pos,size -of csv=p=0 "$f" | sed -n "$((k + 1))p")
    IFS=, read -r sa pa <<< "$a"
    IFS=, read -r sb pb <<< "$b"
    tail -c +$((pa + 1)) "$ref" | head -c "$sa" > "$tmp/a.bin"
    tail -c +$((pb + 1)) "$f" | head -c "$sb" > "$tmp/b.bin"
    d=$(cmp -l "$tmp/a.bin" "$tmp/b.bin" 2> /dev/null | awk 'NR == 1 {f = $1 - 1} {n++; l = $1 - 1} END {printf "%d bytes differ, from %d to %d", n, f, l}')
    sum=$(sed -n "$((k + 1))p" "$tmp/$run.$i.pk")
    other=$(grep -n -x -- "$sum" "$tmp/ref.pk" | cut -d: -f1 | awk '{printf "%s%d", (NR > 1 ? " " : ""), $1 - 1}')
    echo "  - $run packet $k: size $sa against $sb; $d; the reference's packet of frame(s) ${other:-none}" >> "$out/prores-packets.md"
  done
done
cat "$md"
[ -f "$out/prores-packets.md" ] && cat "$out/prores-packets.md"

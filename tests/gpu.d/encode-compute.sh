#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# FFmpeg 8.1's compute encoders fed from the output ring (issue 25), run by
# tests/gpu.sh on the GPU machine:
# - probe: the device's line names ffv1_vulkan and prores_ks_vulkan as
#   taking ring frames (on its compute queue family);
# - lossless round trips: the ffv1_vulkan output of every chain of
#   media/clips.manifest (its pipelines' chains included), and of 8/10/16-bit
#   4:2:0/4:2:2/4:4:4 chains, odd sizes and 1x1, decodes in software to
#   exactly the CPU backend's chain output, frame for frame; a chain whose
#   frames ffv1 cannot take is refused as the CPU ffv1 refuses it; the
#   statistics say zero-copy: no readback, the only bytes to the host the
#   packets (dtoh_bytes = encoded_bytes = the packets in the file), and the
#   encoder's GPU time measured;
# - FFV1 level 3 on a size it cannot code there: exit 2 before any output,
#   naming level=4 and --encoder ffv1;
# - ProRes: vkcu's prores_ks_vulkan packets equal FFmpeg 8.1's own
#   prores_ks_vulkan on the same frames uploaded (10-bit 4:2:2, 4:4:4, and
#   4:4:4 with alpha), if FFmpeg's own is deterministic (checked: two runs);
# - the archive-ffv1 preset: ffv1_vulkan where level 3 takes the frames,
#   ffv1 elsewhere, saying which (--stats, batch report), decoded frames
#   equal to the CPU backend's either way;
# - 10,000 frames through ffv1_vulkan (test_gpu_leaks encode): imports once
#   per slot, FDs and GPU memory not climbing during the run (the last
#   third against the first) and back where they were after it.
# Every command's output is kept in $OUTDIR/encode-compute/.
set -u
log=${OUTDIR:-$(mktemp -d)}/encode-compute
mkdir -p "$log"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
frames() { grep -v '^#' "$1" | cut -d, -f5-; } # size and hash of each frame: decoded pictures, timestamps aside
stat_of() { sed -n "s/.*[ :]$2=\([^ ;]*\).*/\1/p" "$1" | head -1; }
pkt_bytes() { "$FFMPEG" -hide_banner -nostdin -loglevel error -i "$1" -map 0:v -c copy -f framemd5 - 2>/dev/null |
  awk -F, '!/^#/ { s += $5 } END { print s + 0 }'; }
pkt_times() { "$FFMPEG" -hide_banner -nostdin -loglevel error -i "$1" -map 0:v -c copy -f framemd5 - 2>/dev/null |
  grep -v '^#' | cut -d, -f2-4; }
pkt_hashes() { "$FFMPEG" -hide_banner -nostdin -loglevel error -i "$1" -map 0:v -c copy -f framemd5 - 2>/dev/null |
  grep -v '^#' | cut -d, -f5-; }

run_all() {
"$VKCU" probe > "$log/probe.txt" 2>&1
# The bundled ffmpeg is the FFmpeg build vkcu links: FFmpeg 8.1 has the compute encoders.
if ! "$FFMPEG" -hide_banner -encoders 2>/dev/null | grep -q ' ffv1_vulkan ' ||
  grep -q "ffv1_vulkan prores_ks_vulkan: not in this build" "$log/probe.txt"; then
  for t in probe-compute round-trips level3-refusal prores timestamps instances archive-ffv1 leaks-encode; do
    echo "SKIP encode-compute-$t: this build's FFmpeg has no compute encoders ($("$FFMPEG" -hide_banner -version 2>&1 | head -1))"
  done
  return 0
fi
gpu_line=$(grep -m1 'zero-copy encode:' "$log/probe.txt" | sed 's/^ *//')
if grep -q 'zero-copy encode: ffv1_vulkan prores_ks_vulkan (compute queue family [0-9]*)' "$log/probe.txt"; then
  echo "PASS encode-compute-probe: $gpu_line"
else
  echo "FAIL encode-compute-probe: $gpu_line"
fi

# rt NAME INPUT CHAIN [vkcu args...]: ffv1_vulkan on the GPU, decoded, against the CPU backend's chain.
ok_rt=0 refused_rt=0
rt() {
  local name=$1 in=$2 chain=$3; shift 3
  local c=(); [ -n "$chain" ] && c=(--chain "$chain")
  if ! timeout -s KILL 300 "$VKCU" hash --backend cpu "${c[@]}" "$@" "$in" -o "$out/$name.ref" -y 2> "$log/$name.ref.err"; then
    echo "SKIP encode-compute-rt-$name: the CPU backend refuses the chain: $(tail -1 "$log/$name.ref.err")"; return
  fi
  timeout -s KILL 300 "$VKCU" "$in" --backend gpu "${c[@]}" "$@" --encoder ffv1_vulkan ${RT_OPTS:+--encoder-opt "$RT_OPTS"} \
    -o "$out/$name.mkv" -y -q --stats 2> "$log/$name.err"
  local rc=$?
  if [ "$rc" != 0 ]; then
    # The CPU encoder of the same format must refuse these frames too (same exit code).
    "$VKCU" "$in" --backend cpu "${c[@]}" "$@" --encoder ffv1 -o "$out/$name.cpu.mkv" -y -q 2> "$log/$name.cpu.err"
    local rc_cpu=$?
    if [ "$rc_cpu" = "$rc" ] && [ ! -e "$out/$name.mkv" ]; then
      echo "PASS encode-compute-rt-$name: refused as ffv1 refuses it (exit $rc): $(grep -m1 'error' "$log/$name.err")"
      refused_rt=$((refused_rt + 1))
    elif [ "$rc" = 5 ] && grep -q "makes no .* images it can read" "$log/$name.err"; then
      echo "SKIP encode-compute-rt-$name: this GPU cannot hold these frames for ffv1_vulkan: $(grep -m1 'error' "$log/$name.err")"
    else
      echo "FAIL encode-compute-rt-$name: exit $rc (ffv1 on the CPU: $rc_cpu): $(grep -m1 'error' "$log/$name.err")"
    fi
    return
  fi
  local path enc dtoh bytes rb
  path=$(stat_of "$log/$name.err" path) enc=$(stat_of "$log/$name.err" encoder) dtoh=$(stat_of "$log/$name.err" dtoh_bytes)
  bytes=$(stat_of "$log/$name.err" encoded_bytes) rb=$(stat_of "$log/$name.err" vk_readbacks)
  local infile=$(pkt_bytes "$out/$name.mkv")
  "$VKCU" hash --backend cpu "$out/$name.mkv" -o "$out/$name.out" -y 2> "$log/$name.dec.err"
  if [ "$path" = cpu ] || [ "$enc" != ffv1_vulkan ]; then
    echo "FAIL encode-compute-rt-$name: path $path, encoder $enc (want the GPU path into ffv1_vulkan)"
  elif [ "$rb" != 0 ] || [ "$dtoh" != "$bytes" ] || [ "$bytes" != "$infile" ]; then
    echo "FAIL encode-compute-rt-$name: host copies: vk_readbacks=$rb dtoh_bytes=$dtoh encoded_bytes=$bytes, packets in the file $infile"
  elif ! grep -q 'encoder gpu ms/frame: busy=\|encoders at once: [0-9]*; their summed' "$log/$name.err"; then
    echo "FAIL encode-compute-rt-$name: no encoder GPU time (one encoder) or instances' time in --stats"
  elif cmp -s <(frames "$out/$name.out") <(frames "$out/$name.ref"); then
    echo "PASS encode-compute-rt-$name: $(frames "$out/$name.ref" | wc -l) frames bit-exact ($path, dtoh_bytes=$dtoh = packets)"
    ok_rt=$((ok_rt + 1))
  else
    echo "FAIL encode-compute-rt-$name: decoded frames differ from the CPU backend's: $(diff <(frames "$out/$name.out") <(frames "$out/$name.ref") | head -2 | tr '\n' ' ')"
  fi
}

# ONLY="round-trips level3-refusal prores timestamps instances archive-ffv1 leaks" (any of them): those sections alone.
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
m=$MEDIA

if want round-trips; then
# Every case of the clips manifest: its chain, or its pipeline's chain (level 4: any size).
manifest=$(dirname "$0")/../../media/clips.manifest
# Fields separated by '|' (a tab is blank to read: empty fields would collapse).
awk '/^\[case /{ if (n) print n "|" i "|" c "|" p "|" f; n = substr($2, 1, length($2) - 1); i = c = p = f = "" }
     /^input = /{ i = $3 } /^chain = /{ c = $3 } /^pipeline = /{ p = $3 } /^frames = /{ f = $3 }
     END { if (n) print n "|" i "|" c "|" p "|" f }' "$manifest" > "$out/cases"
while IFS='|' read -r name in chain pipe nf; do
  in=${in//'${VKCU_MEDIA:-gen}'/$MEDIA}
  in=${in//'${CONFORMANCE}'/$CONF}
  if [ -n "$pipe" ]; then
    "$VKCU" pipelines "$pipe" > "$out/pipe.txt" 2>&1
    grep -q '^  output: hash' "$out/pipe.txt" && continue # hashes, no video to encode
    chain=$(sed -n 's/^  chain: //p' "$out/pipe.txt")
    [ "$chain" = "(none)" ] && chain=
  fi
  [ -s "$in" ] || { echo "SKIP encode-compute-rt-$name: $in missing"; continue; }
  RT_OPTS=level=4 rt "$name" "$in" "$chain" ${nf:+--frames "$nf"} < /dev/null
done < "$out/cases"
# Depths, subsamplings and sizes: level 3 where FFV1 has it (4:4:4 at any size,
# 4:2:0 at multiples of 128), level 4 elsewhere.

RT_OPTS=level=4 rt yuv422p "$m/h264-aac.mp4" convert=format=yuv422p
RT_OPTS=level=4 rt yuv422p10 "$m/hevc10.mkv" convert=format=yuv422p10
RT_OPTS= rt yuv444p-level3 "$m/h264-aac.mp4" convert=format=yuv444p
RT_OPTS= rt yuv444p10-level3 "$m/hevc10.mkv" convert=format=yuv444p10
RT_OPTS= rt yuv444p16-level3 "$m/hevc10.mkv" convert=format=yuv444p16
RT_OPTS= rt yuv420p-256x128-level3 "$m/h264-aac.mp4" scale=w=256:h=128
RT_OPTS=level=4 rt yuv420p-odd "$m/h264-aac.mp4" scale=w=101:h=51
RT_OPTS=level=4 rt yuv420p10-odd "$m/hevc10.mkv" scale=w=77:h=45
RT_OPTS= rt yuv444p-odd-level3 "$m/h264-aac.mp4" convert=format=yuv444p,scale=w=101:h=51
RT_OPTS=level=4 rt yuv420p-1x1 "$m/h264-aac.mp4" scale=w=1:h=1
RT_OPTS= rt yuv444p10-1x1-level3 "$m/hevc10.mkv" convert=format=yuv444p10,scale=w=1:h=1
echo "# round trips: $ok_rt bit-exact, $refused_rt refused as ffv1 refuses them" >> "$log/summary.txt"
fi

if want level3-refusal; then
# Level 3 at a size it cannot code: refused before any output, naming the remedies.
"$VKCU" "$m/h264-aac.mp4" --backend gpu --encoder ffv1_vulkan -o "$out/l3.mkv" 2> "$log/l3.err"
rc=$?
if [ "$rc" = 2 ] && [ ! -e "$out/l3.mkv" ] && [ "$(wc -l < "$log/l3.err")" = 1 ] &&
  grep -q 'level=4' "$log/l3.err" && grep -q -- '--encoder ffv1' "$log/l3.err"; then
  echo "PASS encode-compute-level3-refusal: $(cat "$log/l3.err")"
else
  echo "FAIL encode-compute-level3-refusal: exit $rc: $(head -2 "$log/l3.err" | tr '\n' ' ')"
fi
fi

if want prores; then
# ProRes: vkcu's prores_ks_vulkan against FFmpeg's own on the same frames uploaded.
# 10-bit 4:4:4 with alpha, as prores_ks_vulkan takes it: FFV1 (FFmpeg's ProRes decoder gives 4444 as 12-bit).
"$FFMPEG" -hide_banner -loglevel error -nostdin -y -filter_complex testsrc2=size=192x108:rate=25,format=yuva444p10le \
  -frames:v 12 -c:v ffv1 "$out/alpha.mkv" 2> "$log/alpha.err"
pr() { # name input chain
  local name=$1 in=$2 chain=$3
  local c=(); [ -n "$chain" ] && c=(--chain "$chain")
  if ! timeout -s KILL 300 "$VKCU" "$in" --backend gpu "${c[@]}" --encoder prores_ks_vulkan -o "$out/$name.v.mov" -y -q \
    --stats 2> "$log/$name.v.err"; then
    echo "FAIL encode-compute-prores-$name: vkcu: $(tail -2 "$log/$name.v.err" | tr '\n' ' ')"; return
  fi
  # The same frames (the CPU backend's chain is the GPU's, bit for bit) with their colour tags (which ProRes
  # frame headers carry), losslessly in FFV1/Matroska, decoded and uploaded by FFmpeg's CLI.
  "$VKCU" "$in" --backend cpu "${c[@]}" --encoder ffv1 -o "$out/$name.src.mkv" -y -q 2> "$log/$name.src.err"
  local k
  for k in 1 2; do
    "$FFMPEG" -hide_banner -loglevel error -nostdin -y -init_hw_device vulkan=vk -filter_hw_device vk -i "$out/$name.src.mkv" \
      -vf hwupload -c:v prores_ks_vulkan -async_depth 3 "$out/$name.f$k.mov" 2> "$log/$name.f$k.err"
  done
  local dtoh bytes
  dtoh=$(stat_of "$log/$name.v.err" dtoh_bytes) bytes=$(stat_of "$log/$name.v.err" encoded_bytes)
  if [ ! -s "$out/$name.f1.mov" ] || [ ! -s "$out/$name.f2.mov" ]; then
    echo "FAIL encode-compute-prores-$name: FFmpeg's own prores_ks_vulkan on the uploaded frames failed: $(tail -1 "$log/$name.f1.err")"
    return
  fi
  if ! cmp -s <(pkt_hashes "$out/$name.f1.mov") <(pkt_hashes "$out/$name.f2.mov"); then
    # Not deterministic: compare with the CPU prores_ks by PSNR instead.
    "$FFMPEG" -hide_banner -nostdin -i "$out/$name.v.mov" -i "$out/$name.src.mkv" -lavfi psnr -f null - 2> "$log/$name.psnr"
    local psnr; psnr=$(sed -n 's/.*PSNR .* average:\([0-9.inf]*\).*/\1/p' "$log/$name.psnr" | tail -1)
    echo "SKIP encode-compute-prores-$name: FFmpeg's own prores_ks_vulkan gives other packets on a second run (not deterministic); vkcu's output against the uploaded frames: PSNR $psnr dB"
  elif cmp -s <(pkt_hashes "$out/$name.v.mov") <(pkt_hashes "$out/$name.f1.mov"); then
    echo "PASS encode-compute-prores-$name: $(pkt_hashes "$out/$name.v.mov" | wc -l) packets byte-identical to FFmpeg's prores_ks_vulkan on the uploaded frames (dtoh_bytes=$dtoh, packets $bytes)"
  else
    local dec="differ"
    cmp -s <("$FFMPEG" -nostdin -loglevel error -i "$out/$name.v.mov" -f framemd5 - | grep -v '^#' | cut -d, -f5-) \
           <("$FFMPEG" -nostdin -loglevel error -i "$out/$name.f1.mov" -f framemd5 - | grep -v '^#' | cut -d, -f5-) && dec="are equal"
    echo "FAIL encode-compute-prores-$name: packets differ from FFmpeg's prores_ks_vulkan (decoded frames $dec): $(diff <(pkt_hashes "$out/$name.v.mov") <(pkt_hashes "$out/$name.f1.mov") | head -2 | tr '\n' ' ')"
  fi
  [ "$dtoh" = "$bytes" ] || echo "FAIL encode-compute-prores-$name-stats: dtoh_bytes=$dtoh, packets $bytes"
}
pr yuv422p10 "$m/h264-aac.mp4" convert=format=yuv422p10
pr yuv444p10 "$m/hevc10.mkv" convert=format=yuv444p10
if [ -s "$out/alpha.mkv" ]; then pr yuva444p10 "$out/alpha.mkv" ""; else echo "SKIP encode-compute-prores-yuva444p10: no alpha clip: $(tail -1 "$log/alpha.err")"; fi
"$VKCU" "$m/h264-aac.mp4" --backend gpu --encoder prores_ks_vulkan -o "$out/p420.mov" 2> "$log/p420.err"
rc=$?
if [ "$rc" = 2 ] && [ ! -e "$out/p420.mov" ] && grep -q 'convert=format=yuv422p10' "$log/p420.err"; then
  echo "PASS encode-compute-prores-420-refused: $(cat "$log/p420.err")"
else
  echo "FAIL encode-compute-prores-420-refused: exit $rc: $(head -2 "$log/p420.err" | tr '\n' ' ')"
fi
fi

if want timestamps; then
# Every packet keeps its frame's timestamp and duration: ffprobe's packets of
# ffv1_vulkan and prores_ks_vulkan on the GPU equal those of ffv1 and
# prores_ks on the CPU backend (300 frames at a constant rate, and a
# variable-rate file), and the encoder's GPU timer timed every frame.
ffprobe=$(dirname "${FFMPEG:-/nonexistent/ffmpeg}")/ffprobe
pkts() { "$ffprobe" -v error -select_streams v:0 -show_entries packet=pts,duration -of csv=p=0 "$1"; }
ts() { # name input ext gpu-encoder cpu-encoder gpu-encoder-opt [args...]
  local name=$1 in=$2 ext=$3 genc=$4 cenc=$5 gopt=(); shift 5
  [ -n "$1" ] && gopt=(--encoder-opt "$1")
  shift
  # one instance: the encoder's GPU timer times one encoder (instances: the section below)
  timeout -s KILL 300 "$VKCU" "$in" --backend gpu --encoder "$genc" --encode-workers 1 "${gopt[@]}" \
    -o "$out/ts-$name.g.$ext" -y -q --stats "$@" 2> "$log/ts-$name.g.err"
  local grc=$?
  timeout -s KILL 300 "$VKCU" "$in" --backend cpu --encoder "$cenc" -o "$out/ts-$name.c.$ext" -y -q "$@" \
    2> "$log/ts-$name.c.err"
  local crc=$?
  pkts "$out/ts-$name.g.$ext" > "$log/ts-$name.g.pkts" 2>&1
  pkts "$out/ts-$name.c.$ext" > "$log/ts-$name.c.pkts" 2>&1
  local n timed
  n=$(grep -c . "$log/ts-$name.c.pkts")
  timed=$(sed -n 's/.*encoder gpu ms\/frame: busy=[0-9.]* over \([0-9]*\) frames.*/\1/p' "$log/ts-$name.g.err")
  if [ "$grc" != 0 ] || [ "$crc" != 0 ]; then
    echo "FAIL encode-compute-timestamps-$name: exit $grc on the GPU, $crc on the CPU: $(grep -m1 error "$log/ts-$name.g.err")"
  elif [ "$n" -lt 2 ] || grep -q ',$\|^,\|N/A' "$log/ts-$name.g.pkts" ||
    ! cmp -s "$log/ts-$name.g.pkts" "$log/ts-$name.c.pkts"; then
    echo "FAIL encode-compute-timestamps-$name: $genc's packets' pts,duration differ from $cenc's ($n packets): $(diff "$log/ts-$name.g.pkts" "$log/ts-$name.c.pkts" | head -3 | tr '\n' ' ')"
  elif [ "${timed:-0}" != "$n" ]; then
    echo "FAIL encode-compute-timestamps-$name: the encoder's GPU timer timed ${timed:-no} of $n frames"
  else
    echo "PASS encode-compute-timestamps-$name: $n packets with $cenc's pts and durations, all $n timed on the GPU"
  fi
}
# (level 4 for ffv1_vulkan, which needs it for 4:2:0; the CPU's ffv1 keeps
# its default level: level 4 is experimental there)
ts ffv1-cfr "$m/long.mp4" mkv ffv1_vulkan ffv1 level=4 --frames 300
ts ffv1-vfr "$m/vfr.mkv" mkv ffv1_vulkan ffv1 level=4
ts prores-cfr "$m/long.mp4" mov prores_ks_vulkan prores_ks "" --frames 300 --chain convert=format=yuv422p10
fi

if want instances; then
# Several instances of a compute encoder (--encode-workers N): the same file
# for N = 1, 2, 4 and 8 where the encoder is deterministic (two runs of
# N = 1 say whether it is; FFV1 also decodes to the CPU backend's chain
# output, checked by the round trips above), N instances said at --stats.
inst() { # name input ext encoder [args...]
  local name=$1 in=$2 ext=$3 enc=$4; shift 4
  local ok=1 det=1 n
  for n in 1 1b 2 4 8; do
    timeout -s KILL 300 "$VKCU" "$in" --backend gpu --encoder "$enc" --encode-workers "${n%b}" \
      -o "$out/in-$name-$n.$ext" -y -q --stats "$@" 2> "$log/in-$name-$n.err" || ok=0
  done
  cmp -s "$out/in-$name-1.$ext" "$out/in-$name-1b.$ext" || det=0
  local differ=""
  for n in 2 4 8; do
    grep -q "encoders at once: $n;" "$log/in-$name-$n.err" || differ+=" N=$n:not-$n-instances"
    if [ "$det" = 1 ]; then
      cmp -s "$out/in-$name-1.$ext" "$out/in-$name-$n.$ext" || differ+=" N=$n:bytes"
    else
      cmp -s <(pkt_times "$out/in-$name-1.$ext") <(pkt_times "$out/in-$name-$n.$ext") || differ+=" N=$n:timestamps"
    fi
  done
  if [ "$ok" != 1 ]; then
    echo "FAIL encode-compute-instances-$name: a run failed: $(grep -h -m1 error "$log"/in-"$name"-*.err | head -1)"
  elif [ -n "$differ" ]; then
    echo "FAIL encode-compute-instances-$name:$differ (one instance deterministic: $det)"
  elif [ "$det" = 1 ]; then
    echo "PASS encode-compute-instances-$name: N = 1, 2, 4, 8 write the same bytes ($(stat -c %s "$out/in-$name-1.$ext") bytes; one instance gives itself twice)"
  else
    echo "PASS encode-compute-instances-$name: $enc is not deterministic (two runs of one instance differ); N = 2, 4, 8 keep every packet and its timestamps"
  fi
}
inst ffv1 "$m/long.mp4" mkv ffv1_vulkan --frames 120 --encoder-opt level=4
inst prores "$m/long.mp4" mov prores_ks_vulkan --frames 120 --chain convert=format=yuv422p10
# 600 frames at 1080p, where the instances' races showed (0-12 wrong packets
# a run; docs/performance.md, "Issue 36", steps 3-7): N = 4 and 8, twice
# each, against N = 1, on the compute queues the defaults give them (-v).
if [ -s "$BIG/h264-1080p.mp4" ]; then
  differ="" queues=""
  for n in 1 4 8 4 8; do
    k=$n; [ -e "$out/in1080-$n.mov" ] && k=${n}b
    timeout -s KILL 300 "$VKCU" "$BIG/h264-1080p.mp4" --backend gpu --encoder prores_ks_vulkan --encode-workers "$n" \
      --frames 600 --chain convert=format=yuv422p10 -o "$out/in1080-$k.mov" -y --log-level verbose \
      2> "$log/in1080-$k.err" || differ+=" N=$k:exit"
    queues+=" N=$k:$(grep -o 'on compute queues [0-9 ]*' "$log/in1080-$k.err" | sed 's/on compute queues //; s/ *$//; s/ /,/g')"
    [ "$n" = 1 ] || cmp -s "$out/in1080-1.mov" "$out/in1080-$k.mov" || differ+=" N=$k:bytes"
  done
  if [ -z "$differ" ]; then
    echo "PASS encode-compute-instances-prores-1080p: 600 frames, N = 4, 8, 4, 8 write N = 1's bytes (queues$queues)"
  else
    echo "FAIL encode-compute-instances-prores-1080p:$differ (queues$queues)"
  fi
else
  echo "SKIP encode-compute-instances-prores-1080p: the 1080p clip is missing (make_big_clips)"
fi
fi

if want archive-ffv1; then
# archive-ffv1: the GPU encoder where level 3 takes the frames, the CPU one elsewhere; the same decoded frames.
"$FFMPEG" -hide_banner -loglevel error -nostdin -y -filter_complex testsrc2=size=256x128:rate=25 -frames:v 20 \
  -c:v libx264 -pix_fmt yuv420p "$out/a256.mp4" 2> "$log/a256.err"
arch() { # name input expected-encoder
  local name=$1 in=$2 want=$3
  timeout -s KILL 300 "$VKCU" "$in" --backend gpu --pipeline archive-ffv1 -o "$out/$name.g.mkv" -y --log-level verbose --stats 2> "$log/$name.g.err"
  timeout -s KILL 300 "$VKCU" "$in" --backend cpu --pipeline archive-ffv1 -o "$out/$name.c.mkv" -y -q 2> "$log/$name.c.err"
  local enc; enc=$(stat_of "$log/$name.g.err" encoder)
  "$VKCU" hash --backend cpu "$out/$name.g.mkv" -o "$out/$name.g.h" -y 2>/dev/null
  "$VKCU" hash --backend cpu "$out/$name.c.mkv" -o "$out/$name.c.h" -y 2>/dev/null
  if [ "$enc" = "$want" ] && [ -s "$out/$name.c.h" ] && cmp -s <(frames "$out/$name.g.h") <(frames "$out/$name.c.h"); then
    local why=""; [ "$want" = ffv1 ] && why=" ($(grep -m1 'ffv1_vulkan not used' "$log/$name.g.err" | sed 's/^vkcu: //'))"
    echo "PASS encode-compute-archive-ffv1-$name: encoder=$enc on the GPU backend$why, decoded frames equal to the CPU backend's"
  else
    echo "FAIL encode-compute-archive-ffv1-$name: encoder=$enc (want $want), decoded frames $(cmp -s <(frames "$out/$name.g.h") <(frames "$out/$name.c.h") && echo equal || echo differ): $(grep -m1 'error' "$log/$name.g.err")"
  fi
}
arch yuv420p-320x240 "$m/h264-aac.mp4" ffv1
arch yuv420p10-hevc "$m/hevc10.mkv" ffv1
[ -s "$out/a256.mp4" ] && arch yuv420p-256x128 "$out/a256.mp4" ffv1_vulkan
arch yuv444p-odd "$m/crop-h264-444.mkv" ffv1_vulkan
# An --encoder after --pipeline is the encoder: the preset's GPU encoder goes with the rest.
if [ -s "$out/a256.mp4" ]; then
  "$VKCU" "$out/a256.mp4" --backend gpu --pipeline archive-ffv1 --encoder ffv1 -o "$out/a256e.mkv" -y -q --stats 2> "$log/a256e.err"
  [ "$(stat_of "$log/a256e.err" encoder)" = ffv1 ] &&
    echo "PASS encode-compute-archive-ffv1-encoder-named: --encoder ffv1 after the preset: ffv1" ||
    echo "FAIL encode-compute-archive-ffv1-encoder-named: encoder=$(stat_of "$log/a256e.err" encoder)"
fi
# A batch report names each file's encoder.
mkdir -p "$out/bin" "$out/bout"
cp "$m/h264-aac.mp4" "$out/bin/a.mp4"
[ -s "$out/a256.mp4" ] && cp "$out/a256.mp4" "$out/bin/b.mp4"
"$VKCU" batch "$out/bin" "$out/bout" --backend gpu --pipeline archive-ffv1 --report "$out/r.jsonl" -q 2> "$log/batch.err"
cp "$out/r.jsonl" "$log/batch-report.jsonl" 2>/dev/null
if python3 -c '
import json, sys
e = {j["file"]: j.get("encoder") for j in map(json.loads, open(sys.argv[1])) if "file" in j}
sys.exit(0 if e.get("a.mp4") == "ffv1" and e.get("b.mp4") == "ffv1_vulkan" else 1)' "$out/r.jsonl" 2>/dev/null; then
  echo "PASS encode-compute-archive-ffv1-report: the batch report says ffv1 for a.mp4 (320x240 4:2:0) and ffv1_vulkan for b.mp4 (256x128)"
else
  echo "FAIL encode-compute-archive-ffv1-report: $(tr '\n' ' ' < "$out/r.jsonl" | cut -c1-300)"
fi

fi
if want leaks; then
# 10,000 frames through ffv1_vulkan: imports once per slot, FDs and GPU memory not climbing, back after.
if [ -s "$BIG/h264-10k.mp4" ]; then
  timeout -s KILL 600 "$TESTBIN/test_gpu_leaks" "$BIG/h264-10k.mp4" encode > "$log/leaks.txt" 2>&1
  case $? in
    0) echo "PASS encode-compute-leaks: $(tail -1 "$log/leaks.txt")" ;;
    77) echo "SKIP encode-compute-leaks: $(tail -1 "$log/leaks.txt")" ;;
    *) echo "FAIL encode-compute-leaks: $(tail -3 "$log/leaks.txt" | tr '\n' ' ')" ;;
  esac
else
  echo "SKIP encode-compute-leaks: the 10,000-frame clip is missing (make_big_clips)"
fi
fi
}

# The results, and their count last (tools/gpu-run.sh reads it).
run_all | tee "$log/results.txt"
awk '/^PASS/{p++} /^FAIL/{f++} /^SKIP/{k++} END {printf "%d passed, %d failed, %d skipped (encode-compute)\n", p, f, k}' "$log/results.txt"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What limits many 1080p streams in one process (issue 15): for 7 and 14
# streams of 1080p H.264 and HEVC Main10, bench_multistream's aggregate fps
# and CPU time, beside NVDEC's decoder utilisation (nvidia-smi dmon, one
# sample a second, so each run lasts several seconds), and the same for N
# `ffmpeg -hwaccel cuda` processes (NVDEC through CUDA: the engines' own pace),
# and N one-stream bench_multistream processes (vkcu's path, no sharing).
# Usage (GPU machine): bash tools/multistream-profile.sh [STREAMS...]
set -u
source "$(dirname "$0")/gpu-env.sh"
streams=${*:-7 14}
mkdir -p "$BIG"
ff="$FFMPEG -hide_banner -loglevel error -nostdin -y"
[ -s "$BIG/h264-1080p.mp4" ] || $ff -filter_complex "testsrc2=size=1920x1080:rate=30,noise=alls=10:allf=t" -frames:v 600 \
  -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p "$BIG/h264-1080p.mp4" &
[ -s "$BIG/hevc10-1080p.mp4" ] || $ff -filter_complex "testsrc2=size=1920x1080:rate=30,noise=alls=10:allf=t" -frames:v 600 \
  -c:v libx265 -preset ultrafast -crf 28 -pix_fmt yuv420p10le -x265-params log-level=error "$BIG/hevc10-1080p.mp4" &
wait
tmp=$(mktemp -d)
trap 'kill $dmon 2>/dev/null; rm -rf "$tmp"' EXIT
dmon=
# util CMD...: runs CMD with dmon beside it; prints "dec avg/max %" over the busy samples
util() {
  nvidia-smi dmon -s u -d 1 > "$tmp/dmon" 2>/dev/null & dmon=$!
  "$@"
  kill $dmon 2>/dev/null; wait $dmon 2>/dev/null; dmon=
  cp "$tmp/dmon" "${OUT:-$tmp}/dmon-$(date +%s%N).txt" 2>/dev/null
  # the header's first field is "#", the samples' is the GPU index: dec is one column left
  awk '/^#/ && /gpu/ {for (i = 2; i <= NF; i++) if ($i == "dec") c = i - 1; next}
       !/^#/ && c && $c > 0 {n++; s += $c; if ($c > m) m = $c}
       END {if (n) printf "dec %.0f%% avg, %d%% max over %d samples\n", s / n, m, n; else print "dec: no busy sample"}' "$tmp/dmon"
}
for clip in h264-1080p hevc10-1080p; do
  for n in $streams; do
    loops=$(( 4 * 7 / n )); [ $loops -lt 1 ] && loops=1
    echo "== $clip, $n streams x $loops loops (bench_multistream, copy chain, null sink)"
    util "$TESTBIN/bench_multistream" "$BIG/$clip.mp4" "$n" copy "$loops" | sed 's/^/   /'
    # The same streams as N processes (one stream, one Vulkan device and one
    # CUDA context each): if N processes go faster than N streams in one
    # process, the limit is inside the process (the shared device, its queues,
    # FFmpeg's decode submission), not the engines.
    echo "== $clip, $n bench_multistream processes of 1 stream x $loops loops"
    # each process its own file: \$i is the inner shell's, inside double quotes there
    util bash -c "for i in \$(seq $n); do '$TESTBIN/bench_multistream' '$BIG/$clip.mp4' 1 copy $loops > \"$tmp/p\$i.txt\" 2>&1 & done; wait"
    cat "$tmp"/p*.txt | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^aggregate_fps=/) {split($i, a, "="); s += a[2]; n++}}
      END {printf "   processes: %d reported, sum of their fps %.0f\n", n, s}'
    rm -f "$tmp"/p*.txt
    echo "== $clip, $n ffmpeg -hwaccel cuda processes x $loops loops"
    t0=$(date +%s.%N)
    # loops run one after another in each process's shell (-stream_loop makes
    # FFmpeg 7.1 re-create its filter graph, which fails on CUDA frames)
    util bash -c "for i in \$(seq $n); do for l in \$(seq $loops); do $FFMPEG -hide_banner -loglevel error -nostdin \
      -hwaccel cuda -hwaccel_output_format cuda -i '$BIG/$clip.mp4' -f null - || exit 1; done & done; wait" | sed 's/^/   /'
    t1=$(date +%s.%N)
    awk -v n=$n -v l=$loops -v a=$t0 -v b=$t1 'BEGIN {printf "   nvdec aggregate %.0f fps (%.2f s)\n", n * l * 600 / (b - a), b - a}'
  done
done

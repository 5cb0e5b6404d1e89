#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two GPUs in one batch (issue 15.4; run by tests/gpu.sh on a host with two
# or more NVIDIA GPUs, the nvidia-h200-x2 machine): `vkcu batch --devices
# all --jobs 14` over 14 copies of a 4K clip must give every stream the CPU
# backend's hashes, and put work (memory) on both GPUs; `--devices 1` must
# leave GPU 0 untouched: no vkcu process on it (where nvidia-smi shows the
# container's processes) and no memory growth beyond the driver's noise.
# Timings are not asserted here: tools/bench-twogpu.sh measures the ratio.
set -u
ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
if [ "${ngpu:-0}" -lt 2 ]; then
  echo "SKIP twogpu: this machine has ${ngpu:-0} NVIDIA GPU(s); the two-GPU batch needs two (run it on nvidia-h200-x2)"
  exit 0
fi
out=$(mktemp -d)
poll=
trap 'kill $poll 2> /dev/null; rm -rf "$out"' EXIT
frames() { grep -v '^#' "$1"; }
# make_big_clips comes from tools/gpu-env.sh (tests/gpu.sh sources it; a
# direct run of this file sources it here).
declare -F make_big_clips > /dev/null || source "$(dirname "$0")/../../tools/gpu-env.sh"
make_big_clips h264-2160p.mp4
clip=$BIG/h264-2160p.mp4
[ -s "$clip" ] || { echo "FAIL twogpu: $clip could not be made"; exit 0; }

# sample: one line per GPU, "gpu, index, uuid, memory_used_mib"
sample() { nvidia-smi --query-gpu=index,uuid,memory.used --format=csv,noheader,nounits 2> /dev/null | sed 's/^/gpu, /'; }
# poll FILE: every 0.2 s, "gpu_index memory_used_mib" per GPU and the
# compute processes "pid uuid", until killed.
poll() {
  while :; do
    sample
    nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits 2> /dev/null | sed 's/^/app, /'
    sleep 0.2
  done >> "$1"
}
# peak FILE INDEX: the most memory GPU INDEX used while FILE was polled
peak() { awk -F', *' -v i="$2" '$1 == "gpu" && $2 == i && $4 > m {m = $4} END {print m + 0}' "$1"; }
uuid_of() { nvidia-smi --query-gpu=index,uuid --format=csv,noheader | awk -F', *' -v i="$1" '$1 == i {print $2}'; }

timeout -s KILL 300 "$VKCU" hash --backend cpu "$clip" -o "$out/cpu.md5" -y 2> "$out/cpu.err" ||
  { echo "FAIL twogpu: CPU reference failed: $(tail -1 "$out/cpu.err")"; exit 0; }
nref=$(frames "$out/cpu.md5" | wc -l)

mkdir -p "$out/in14"
for i in $(seq -w 1 14); do ln -s "$clip" "$out/in14/s$i.mp4"; done

# All GPUs, 14 streams: the CPU's hashes on every stream, memory on both GPUs.
# The baseline is each GPU's memory before the batch starts.
sample > "$out/all.base"
poll "$out/all.poll" & poll=$!
timeout -s KILL 600 "$VKCU" batch "$out/in14" "$out/all" --pipeline regression-hash --devices all --jobs 14 \
  --backend gpu -q 2> "$out/all.err"
rc=$?
kill $poll; wait $poll 2> /dev/null; poll=
same=0
for i in $(seq -w 1 14); do
  g=$(ls "$out"/all/s$i.* 2> /dev/null | head -1)
  [ -s "$g" ] && cmp -s <(frames "$g") <(frames "$out/cpu.md5") && same=$((same + 1))
done
base0=$(peak "$out/all.base" 0) base1=$(peak "$out/all.base" 1)
p0=$(peak "$out/all.poll" 0) p1=$(peak "$out/all.poll" 1)
if [ $rc = 0 ] && [ $same = 14 ] && [ "$nref" -gt 0 ]; then
  echo "PASS twogpu-hashes: 14 streams over $ngpu GPUs, every one equal to the CPU's $nref frame hashes"
else
  echo "FAIL twogpu-hashes: exit $rc, $same of 14 streams equal to the CPU ($nref frames): $(tail -1 "$out/all.err")"
fi
# Each GPU carries 7 decoders and their ring at 4K: well over 500 MiB each.
if [ $((p0 - base0)) -gt 500 ] && [ $((p1 - base1)) -gt 500 ]; then
  echo "PASS twogpu-both-used: memory peak GPU0 +$((p0 - base0)) MiB, GPU1 +$((p1 - base1)) MiB"
else
  echo "FAIL twogpu-both-used: memory peak GPU0 +$((p0 - base0)) MiB, GPU1 +$((p1 - base1)) MiB (want both over 500)"
fi

# Only GPU 1: GPU 0 gets no process and no memory.
mkdir -p "$out/in7"
for i in 1 2 3 4 5 6 7; do ln -s "$clip" "$out/in7/s$i.mp4"; done
sample > "$out/one.base"
poll "$out/one.poll" & poll=$!
timeout -s KILL 600 "$VKCU" batch "$out/in7" "$out/one" --pipeline regression-hash --devices 1 --jobs 7 \
  --backend gpu -q 2> "$out/one.err" &
pid=$!
wait $pid
rc=$?
kill $poll; wait $poll 2> /dev/null; poll=
base0=$(peak "$out/one.base" 0) base1=$(peak "$out/one.base" 1)
p0=$(peak "$out/one.poll" 0) p1=$(peak "$out/one.poll" 1)
u0=$(uuid_of 0)
apps=$(awk -F', *' '$1 == "app"' "$out/one.poll" | wc -l)
on0=$(awk -F', *' -v p="$pid" -v u="$u0" '$1 == "app" && $2 == p && $3 == u' "$out/one.poll" | wc -l)
same=0
for i in 1 2 3 4 5 6 7; do
  g=$(ls "$out"/one/s$i.* 2> /dev/null | head -1)
  [ -s "$g" ] && cmp -s <(frames "$g") <(frames "$out/cpu.md5") && same=$((same + 1))
done
if [ $rc = 0 ] && [ $same = 7 ] && [ $((p0 - base0)) -lt 64 ] && [ $((p1 - base1)) -gt 500 ] && [ "$on0" = 0 ]; then
  echo "PASS twogpu-device-1-only: 7 streams equal to the CPU; GPU0 +$((p0 - base0)) MiB, GPU1 +$((p1 - base1)) MiB; vkcu on GPU0 in $on0 of $apps process samples"
else
  echo "FAIL twogpu-device-1-only: exit $rc, $same of 7 equal; GPU0 +$((p0 - base0)) MiB (want < 64), GPU1 +$((p1 - base1)) MiB (want > 500), vkcu on GPU0 in $on0 of $apps process samples"
fi

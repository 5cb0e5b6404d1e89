#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu-prof (tools/prof/): a lock one thread holds while another blocks on
# it is reported from the function that waited, with both threads' names;
# a job run under the profiler gives the same hashes as without it, and its
# report holds sampled stacks of the job's threads that symbolize.py names.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
b=${VKCU_BUILD:-$root/build}
prof=$b/libvkcu-prof.so
if [ -n "${VKCU_SANITIZER_REPORTS:-}" ]; then
  skip "prof: a sanitizer build must come first in the process; the profiler preloads itself before it"
  exit 0
fi
[ -f "$prof" ] || { fail "prof: $prof missing (make all builds it)"; exit 0; }

timeout -s KILL 120 env LD_PRELOAD="$prof" VKCU_PROF_OUT="$TMP/contend.txt" "$b/tests/prof_contend" > "$TMP/contend.out" 2>&1
rc=$?
python3 "$root/tools/prof/symbolize.py" --dir "$b/tests" --dir "$b" "$TMP/contend.txt" > "$TMP/contend.md" 2> "$TMP/sym.err"
row=$(sed -n '/^## Contended mutexes/,/^## /p' "$TMP/contend.md" | grep -m1 'contender')
[ $rc = 0 ] && [ -n "$row" ] && grep -q 'prof-waiter' <<< "$row" &&
  pass "prof: the mutex the waiter blocked on is reported from contender(), thread prof-waiter: $(cut -d'|' -f2-3 <<< "$row" | tr -s ' ')" ||
  fail "prof: exit $rc ($(cat "$TMP/contend.out")), lock row '$row' $(head -3 "$TMP/sym.err")"

"$VKCU" hash --backend cpu --chain denoise=tnr "$MEDIA/h264-aac.mp4" -o "$TMP/tnr.md5" 2> /dev/null
# Sampled at 2 kHz, eight times over: a sample that lands while a thread is
# inside the profiler's own table must be dropped, not wait for itself (the
# run then spun for ever at 99% CPU). The bound is for a hang only: a run
# takes about a second.
hung=0 differ=0
for k in $(seq 8); do
  timeout -s KILL 120 env LD_PRELOAD="$prof" VKCU_PROF_OUT="$TMP/job.txt" VKCU_PROF_HZ=2000 "$VKCU" hash --backend cpu \
    --chain denoise=tnr "$MEDIA/h264-aac.mp4" -o "$TMP/prof.md5" -y 2> "$TMP/job.err"
  rc=$?
  [ $rc = 137 ] && hung=$((hung + 1))
  cmp -s <(frames "$TMP/prof.md5") <(frames "$TMP/tnr.md5") || differ=$((differ + 1))
done
[ $hung = 0 ] && [ $differ = 0 ] && pass "prof: 8 jobs sampled at 2 kHz: none hung, each hashes as without the profiler" ||
  fail "prof: of 8 jobs sampled at 2 kHz, $hung hung (killed after 120 s) and $differ hashed otherwise"
timeout -s KILL 120 env LD_PRELOAD="$prof" VKCU_PROF_OUT="$TMP/job.txt" VKCU_PROF_HZ=500 "$VKCU" hash --backend cpu \
  --chain denoise=tnr "$MEDIA/h264-aac.mp4" -o "$TMP/prof.md5" -y 2> "$TMP/job.err"
rc=$?
python3 "$root/tools/prof/symbolize.py" "$TMP/job.txt" > "$TMP/job.md" 2> "$TMP/sym.err"
samples=$(grep -c '^sample ' "$TMP/job.txt")
[ $rc = 0 ] && cmp -s <(frames "$TMP/prof.md5") <(frames "$TMP/tnr.md5") && [ "$samples" -gt 0 ] &&
  grep -q '^### vkcu' "$TMP/job.md" && grep -q 'vkcu_' "$TMP/job.md" &&
  pass "prof: a job under the profiler hashes as without it; $samples stacks sampled, named by symbolize.py" ||
  fail "prof: exit $rc, hashes $(cmp -s <(frames "$TMP/prof.md5") <(frames "$TMP/tnr.md5") && echo equal || echo DIFFER), $samples samples, $(grep -m1 '^###' "$TMP/job.md") $(head -2 "$TMP/sym.err")"

# prof_encoders_gpu (issue 36's FFmpeg-only reproducer): on any Vulkan
# device that runs prores_ks_vulkan (lavapipe here), one context, three on
# queues of their own (one queue on lavapipe: the mapping and the locks
# still run), two on queues of their own under one submission lock, two
# on FFmpeg's device at async_depth 2 and two on devices of their own give
# the same packets for every frame; an input that is not video, and an encoder
# option the encoder lacks, fail with one line.
pe=$b/tests/prof_encoders_gpu
timeout -s KILL 120 "$pe" "$MEDIA/long.mp4" -f 6 -n 1 > "$TMP/pe1" 2> "$TMP/pe1.err"
rc=$?
if [ $rc != 0 ] && grep -q 'no Vulkan device' "$TMP/pe1.err"; then
  skip "prof_encoders_gpu: no Vulkan device here ($(tail -1 "$TMP/pe1.err"))"
else
  timeout -s KILL 120 "$pe" "$MEDIA/long.mp4" -f 6 -n 3 -q own > "$TMP/pe3" 2> "$TMP/pe3.err"
  rc3=$?
  timeout -s KILL 120 "$pe" "$MEDIA/long.mp4" -f 6 -n 2 -q ffmpeg -d 2 > "$TMP/pe2" 2> "$TMP/pe2.err"
  rc2=$?
  timeout -s KILL 120 "$pe" "$MEDIA/long.mp4" -f 6 -n 2 -q devices > "$TMP/ped" 2> "$TMP/ped.err"
  rcd=$?
  timeout -s KILL 120 "$pe" "$MEDIA/long.mp4" -f 6 -n 2 -q locked > "$TMP/pel" 2> "$TMP/pel.err"
  rcl=$?
  [ $rc = 0 ] && [ $rc3 = 0 ] && [ $rc2 = 0 ] && [ $rcd = 0 ] && [ $rcl = 0 ] && cmp -s "$TMP/pe1" "$TMP/ped" &&
    [ "$(awk '$2 > 0' "$TMP/pe1" | wc -l)" = 6 ] && cmp -s "$TMP/pe1" "$TMP/pel" &&
    cmp -s "$TMP/pe1" "$TMP/pe3" && cmp -s "$TMP/pe1" "$TMP/pe2" &&
    grep -q '3 contexts of prores_ks_vulkan on compute queues 0 ' "$TMP/pe3.err" &&
    grep -q 'submissions under one lock' "$TMP/pel.err" &&
    pass "prof_encoders_gpu: 1, 3 (own queues), 2 (one submission lock), 2 (async_depth 2) and 2 (own devices) contexts write the same 6 ProRes packets" ||
    fail "prof_encoders_gpu: exits $rc $rc3 $rcl $rc2 $rcd, $(wc -l < "$TMP/pe1") lines, $(tail -1 "$TMP/pe3.err")"
  "$pe" "$MEDIA/audio-only.mkv" -f 2 > /dev/null 2> "$TMP/pe.err"
  rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$TMP/pe.err")" = 1 ] && grep -q 'audio-only.mkv: no frames decoded' "$TMP/pe.err" &&
    pass "prof_encoders_gpu: an input without video: exit 1, one line" ||
    fail "prof_encoders_gpu: audio-only input: exit $rc, $(head -3 "$TMP/pe.err")"
  "$pe" "$MEDIA/long.mp4" -f 2 -o nosuch=1 > /dev/null 2> "$TMP/pe.err"
  rc=$?
  [ $rc = 2 ] && [ "$(wc -l < "$TMP/pe.err")" = 1 ] && grep -q 'prores_ks_vulkan has no option nosuch' "$TMP/pe.err" &&
    pass "prof_encoders_gpu: -o with an option the encoder lacks: exit 2, one line" ||
    fail "prof_encoders_gpu: -o nosuch=1: exit $rc, $(head -3 "$TMP/pe.err")"
fi

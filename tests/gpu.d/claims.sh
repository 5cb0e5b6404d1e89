#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Cross-process queue claims on the GPU (run by tests/gpu.sh; issue 27.1).
# Other processes hold claims on decode queues 0..K-1 of the GPU (holders:
# `test_qclaim hold`, which claims as vkcu does and keeps its claims until
# its standard input ends); a vkcu job started beside them must then decode
# on queue K, the least-claimed one, with the CPU backend's hashes (its
# device made with the queues up to K). With claims off it decodes on queue
# 0; --decode-queue N decodes on N; a queue the GPU lacks fails with exit 5
# and one line naming decode_queue's option. Nothing is timed: the holders
# say on a line of their own which queues they took.
set -u
out=$(mktemp -d)
writers=
cleanup() { for w in $writers; do eval "exec $w>&-"; done; wait; rm -rf "$out"; }
trap cleanup EXIT
export XDG_RUNTIME_DIR=$out/run # claims of this test only
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset VKCU_QUEUE_CLAIMS
holder=$TESTBIN/test_qclaim
in=$MEDIA/hevc10.mkv
frames() { grep -v '^#' "$1"; }
[ -x "$holder" ] || { echo "SKIP claims: $holder missing (tools/gpu-bundle.sh packs it)"; exit 0; }
[ -s "$in" ] || { echo "FAIL claims: $in missing (make media)"; exit 0; }

# CUDA device 0's Vulkan twin: its UUID and its video decode family (index, queues).
timeout -s KILL 60 "$VKCU" probe > "$out/probe" 2>&1
vk=$(sed -n 's/^  CUDA 0 = Vulkan \([0-9]*\) .*/\1/p' "$out/probe" | head -1)
uuid=$(awk -v v="[$vk]" '$1 == v {for (i = 1; i <= NF; i++) if ($i == "UUID") {gsub("[-,]", "", $(i + 1)); print $(i + 1); exit}}' "$out/probe")
read -r family nq <<< "$(awk -v v="[$vk]" '$1 ~ /^\[/ {on = ($1 == v)} on && /queue family [0-9]+:.*video-decode/ {
  sub(":", "", $3); print $3, $4; exit}' "$out/probe")"
if [ -z "$vk" ] || [ ${#uuid} != 32 ] || [ -z "${nq:-}" ] || [ "$nq" -lt 3 ]; then
  echo "SKIP claims: no video decode family of 3+ queues on CUDA device 0's Vulkan device (vk '$vk', uuid '$uuid', family '${family:-}' ${nq:-?} queues)"
  exit 0
fi

start_holder() { # CLAIMS: a holder of CLAIMS claims on the decode family; its queues in $held (not in a
  local w r line  # subshell: the holder keeps its claims while this shell keeps its standard input open)
  mkfifo "$out/in$1.$$" "$out/out$1.$$" 2> /dev/null || true
  (for f in $writers; do eval "exec $f>&-"; done
   exec "$holder" hold "$uuid" decode "$family" "$nq" "$1" < "$out/in$1.$$" > "$out/out$1.$$") &
  exec {w}> "$out/in$1.$$"
  exec {r}< "$out/out$1.$$"
  read -r line <&"$r"
  exec {r}<&-
  rm -f "$out/in$1.$$" "$out/out$1.$$"
  writers="$writers $w"
  held=$line
}
queue_of() { sed -n 's/.*stream 0 of CUDA device 0 decodes on queues\{0,1\} \([0-9]*\).*/\1/p' "$1" | head -1; }

timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" -o "$out/cpu" -y 2> /dev/null
n=$(frames "$out/cpu" | wc -l)
start_holder 2
held1=$held
start_holder 1
if [ "$held1 $held" != "0 1 2" ]; then
  echo "FAIL claims: the holders took '$held1' and '$held', expected '0 1' and '2'"
else
  timeout -s KILL 300 "$VKCU" hash --backend gpu --log-level verbose "$in" -o "$out/g3" -y 2> "$out/g3.err"
  rc=$? q=$(queue_of "$out/g3.err")
  if [ $rc = 0 ] && [ "$q" = 3 ] && [ "$n" -gt 0 ] && cmp -s <(frames "$out/g3") <(frames "$out/cpu"); then
    echo "PASS claims-least-claimed: beside holders of queues 0-2 a job decoded on queue 3, $n frames = CPU"
  else
    echo "FAIL claims-least-claimed: exit $rc, queue '$q' (expected 3): $(grep -m2 'queue' "$out/g3.err" | tr '\n' ' ')"
  fi
  # With claims off the stream decodes on FFmpeg's queues 0 and 1. Each
  # condition is checked and named on its own, and the run is repeated:
  # a failure says which part failed, and a decode that differs from the
  # CPU's on one run in several (a race between the two queues) shows as
  # such, with the first differing frame, rather than as a flip.
  off_bad= off_runs=5
  for k in $(seq "$off_runs"); do
    VKCU_QUEUE_CLAIMS=off timeout -s KILL 300 "$VKCU" hash --backend gpu --log-level verbose "$in" -o "$out/g0" -y \
      2> "$out/g0.err"
    rc=$? q=$(queue_of "$out/g0.err")
    [ $rc = 0 ] || { off_bad="$off_bad; run $k: exit $rc ($(tail -1 "$out/g0.err"))"; continue; }
    [ "$q" = 0 ] || off_bad="$off_bad; run $k: queue '$q', expected 0 ($(grep -m1 'decodes on' "$out/g0.err"))"
    grep -q 'no decode queue claims (queue claims are off' "$out/g0.err" ||
      off_bad="$off_bad; run $k: no 'no decode queue claims (queue claims are off' line ($(grep -m2 'queue' "$out/g0.err" | tr '\n' ' '))"
    if ! cmp -s <(frames "$out/g0") <(frames "$out/cpu"); then
      off_bad="$off_bad; run $k: frames differ from the CPU's, first: $(diff <(frames "$out/g0") <(frames "$out/cpu") | head -2 | tr '\n' ' ')"
      [ -n "${OUT:-}" ] && cp "$out/g0" "$OUT/claims-off-run$k.gpu" && cp "$out/g0.err" "$OUT/claims-off-run$k.err"
    fi
  done
  if [ -z "$off_bad" ]; then
    echo "PASS claims-off: with claims off the job decoded on queue 0 (as before claims), frames = CPU, $off_runs runs"
  else
    echo "FAIL claims-off:${off_bad#;}"
  fi
  last=$((nq - 1))
  timeout -s KILL 300 "$VKCU" hash --backend gpu --log-level verbose --decode-queue "$last" "$in" -o "$out/gp" -y \
    2> "$out/gp.err"
  rc=$? q=$(queue_of "$out/gp.err")
  if [ $rc = 0 ] && [ "$q" = "$last" ] && cmp -s <(frames "$out/gp") <(frames "$out/cpu"); then
    echo "PASS claims-pin: --decode-queue $last decoded on queue $last, frames = CPU"
  else
    echo "FAIL claims-pin: exit $rc, queue '$q' (expected $last): $(grep -m2 'queue' "$out/gp.err" | tr '\n' ' ')"
  fi
  # compare beside the holders: its figures must be the CPU's. The pair is
  # the 4K bench clip and its transcode where they were made (where a GPU
  # compare with a queue for each input, VKCU_COMPARE_TWO_QUEUES=1, once
  # gave PSNR 18 dB against the CPU's 45.26: B's first GOP decoded wrong),
  # else the media clip against itself; both ways are run.
  ca=$in cb=$in
  if [ -s "${BIG:-}/h264-2160p.mp4" ] && [ -s "${BIG:-}/tnr-h264-2160p.mp4" ]; then ca=$BIG/h264-2160p.mp4 cb=$BIG/tnr-h264-2160p.mp4; fi
  timeout -s KILL 300 "$VKCU" compare --backend cpu "$ca" "$cb" --frames 200 --min-psnr 1 > "$out/cmpc.txt" 2> /dev/null
  for two in 0 1; do
    VKCU_COMPARE_TWO_QUEUES=$two timeout -s KILL 300 "$VKCU" compare --backend gpu --log-level verbose "$ca" "$cb" \
      --frames 200 --min-psnr 1 > "$out/cmp.txt" 2> "$out/cmp.err"
    rc=$?
    qs=$(sed -n 's/.*stream [0-9]* of CUDA device 0 decodes on queues\{0,1\} \([0-9]*\).*/\1/p' "$out/cmp.err" | sort -u | tr '\n' ' ')
    if [ $rc = 0 ] && [ -s "$out/cmpc.txt" ] &&
      cmp -s <(grep -E '^(PSNR|SSIM|max diff)' "$out/cmp.txt") <(grep -E '^(PSNR|SSIM|max diff)' "$out/cmpc.txt"); then
      echo "PASS claims-compare-$two: compare (VKCU_COMPARE_TWO_QUEUES=$two) decoded on queues ${qs% }, figures = CPU ($(basename "$ca"), 200 pairs)"
    else
      echo "FAIL claims-compare-$two: exit $rc, queues '${qs% }'; GPU $(grep -m1 '^PSNR' "$out/cmp.txt"), CPU $(grep -m1 '^PSNR' "$out/cmpc.txt")"
    fi
  done
  timeout -s KILL 300 "$VKCU" hash --backend gpu --decode-queue "$nq" "$in" -o "$out/gx" -y 2> "$out/gx.err"
  rc=$?
  if [ $rc = 5 ] && [ "$(wc -l < "$out/gx.err")" = 1 ] &&
    grep -q -- "--decode-queue $nq: the GPU's video decode family has $nq queues (0..$last)" "$out/gx.err" && [ ! -e "$out/gx" ]; then
    echo "PASS claims-pin-missing: --decode-queue $nq: exit 5, one line, no output"
  else
    echo "FAIL claims-pin-missing: exit $rc: $(head -2 "$out/gx.err" | tr '\n' ' ')"
  fi
fi

# vkcu batch --processes (issue 37): each worker process claims decode queues
# of its own. Beside the holders of queues 0-2 every worker decodes on a
# queue above 2 (which ones depends on when each worker starts and ends, so
# only that is checked), and every output is the CPU's hashes.
if [ "$held1 $held" = "0 1 2" ]; then
  mkdir -p "$out/bin"
  for i in 1 2 3; do ln -s "$in" "$out/bin/c$i.mkv"; done
  timeout -s KILL 300 "$VKCU" batch "$out/bin" "$out/bout" --backend gpu --jobs 3 --processes --pipeline regression-hash \
    --log-level verbose 2> "$out/b.err"
  rc=$?
  qs=$(sed -n 's/.*stream 0 of CUDA device 0 decodes on queues\{0,1\} \([0-9]*\).*/\1/p' "$out/b.err" | sort | tr '\n' ' ')
  same=1
  for i in 1 2 3; do cmp -s <(frames "$out/bout/c$i.framemd5") <(frames "$out/cpu") || same=0; done
  if [ $rc = 0 ] && [ "$same" = 1 ] && [ -n "$qs" ] && ! [[ " $qs" == *" 0 "* || " $qs" == *" 1 "* || " $qs" == *" 2 "* ]] &&
    grep -q "^batch: 3 done, 0 skipped, 0 failed (3 files, .*, 3 worker processes)" "$out/b.err"; then
    echo "PASS claims-batch-processes: 3 worker processes decoded beside holders of queues 0-2 on queues ${qs% }, frames = CPU"
  else
    echo "FAIL claims-batch-processes: exit $rc, queues '${qs% }', outputs = CPU: $same; $(grep '^batch:' "$out/b.err")"
  fi
fi

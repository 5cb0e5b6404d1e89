#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The GPU session's engine after its split (issue 14; run by tests/gpu.sh):
# the handoff thread's input queue (util/queue.c), the one chain driver
# (vkcu_chain_drive) and --ring-size without a clamp. GPU frames equal the
# CPU backend's at both ends of the ring's range and with the timeline
# handoff; a run stopped early (--frames) while frames are queued for the
# handoff thread ends at once, exit 0, with exactly those frames; a chain
# whose first operator gives several outputs per input (fps) and whose
# second holds none back (scale) equals the CPU's; compare runs both inputs
# through the queue of decoded frames on the GPU.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cols() { grep -v '^#' "$1" | awk -F', *' '{print $2, $3, $4, $5, $6}'; }
check() { # name clip [vkcu args]
  local name=$1 in=$MEDIA/$2; shift 2
  [ -s "$in" ] || { echo "FAIL engine $name: $in missing (make media)"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" "$@" -o "$out/cpu" -y 2> "$out/cpu.err" ||
    { echo "FAIL engine $name: CPU backend failed: $(tail -1 "$out/cpu.err")"; return; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" "$@" -o "$out/gpu" -y 2> "$out/gpu.err"
  local rc=$? path n
  [ $rc = 0 ] || { echo "FAIL engine $name: GPU backend exit $rc: $(tail -1 "$out/gpu.err")"; return; }
  path=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' "$out/gpu.err" | head -1)
  n=$(cols "$out/gpu" | wc -l)
  if [ "$path" = cpu ] || [ -z "$path" ]; then
    echo "FAIL engine $name: did not run on the GPU (path '$path')"
  elif [ "$n" = 0 ] || ! cmp -s <(cols "$out/gpu") <(cols "$out/cpu"); then
    echo "FAIL engine $name: GPU frames differ from the CPU's ($n frames): $(diff <(cols "$out/gpu") <(cols "$out/cpu") | sed -n 2p)"
  else
    echo "PASS engine $name: $n frames equal the CPU backend's ($path)"
  fi
}
check "ring-size 16" h264-aac.mp4 --ring-size 16
check "ring-size 3, timeline handoff" hevc10.mkv --ring-size 3 --handoff timeline
check "ring-size 16, timeline handoff" hevc10.mkv --ring-size 16 --handoff timeline
check "fps=50,scale (several outputs per input)" h264-aac.mp4 --chain fps=50,scale=w=320:h=180:filter=bilinear
check "--frames 5 with the ring full" h264-aac.mp4 --ring-size 16 --frames 5
[ "$(cols "$out/gpu" | wc -l)" = 5 ] && echo "PASS engine --frames 5: exactly 5 frames" ||
  echo "FAIL engine --frames 5: $(cols "$out/gpu" | wc -l) frames"
# compare: two jobs on their own threads feed the comparison through the queue.
in=$MEDIA/h264-aac.mp4
if [ -s "$in" ]; then
  timeout -s KILL 300 "$VKCU" compare --backend gpu "$in" "$in" > "$out/cmp" 2> "$out/cmp.err"
  rc=$?
  [ $rc = 0 ] && grep -q IDENTICAL "$out/cmp" && echo "PASS engine compare on the GPU: IDENTICAL, exit 0" ||
    echo "FAIL engine compare on the GPU: exit $rc: $(tail -1 "$out/cmp.err") $(head -1 "$out/cmp")"
  # the comparison stops at the first frame (a difference) while the jobs still queue frames
  timeout -s KILL 300 "$VKCU" compare --backend gpu "$in" "$MEDIA/hevc10.mkv" > "$out/cmp2" 2> "$out/cmp2.err"
  rc=$?
  [ $rc != 0 ] && [ $rc != 137 ] && echo "PASS engine compare on the GPU, different inputs: exit $rc, no hang" ||
    echo "FAIL engine compare on the GPU, different inputs: exit $rc: $(tail -1 "$out/cmp2.err")"
fi

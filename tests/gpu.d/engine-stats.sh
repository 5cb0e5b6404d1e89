#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Engine busy time on the GPU (run by tests/gpu.sh; issue 27.2). With
# VKCU_ENGINE_STATS=1 a GPU job must give the same hashes as without it (the
# timing wraps every decode and handoff submission), and end with an
# "engine:" line per decode queue and a summary: at least one decode
# submission per frame, timestamps on the decode family, a busy time above
# zero and at most the window, and the compute queue's copies timed too.
# bench_multistream prints the same lines for its timed part.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export XDG_RUNTIME_DIR=$out/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
in=$MEDIA/hevc10.mkv
frames() { grep -v '^#' "$1"; }
[ -s "$in" ] || { echo "FAIL engine-stats: $in missing (make media)"; exit 0; }
timeout -s KILL 300 "$VKCU" hash --backend gpu "$in" -o "$out/plain" -y 2> "$out/plain.err" ||
  { echo "FAIL engine-stats: the job without statistics failed: $(tail -1 "$out/plain.err")"; exit 0; }
VKCU_ENGINE_STATS=1 timeout -s KILL 300 "$VKCU" hash --backend gpu "$in" -o "$out/timed" -y 2> "$out/timed.err"
rc=$?
n=$(frames "$out/plain" | wc -l)
if [ $rc = 0 ] && [ "$n" -gt 0 ] && cmp -s <(frames "$out/plain") <(frames "$out/timed"); then
  echo "PASS engine-stats-same-frames: $n frames hash the same with the submissions timed"
else
  echo "FAIL engine-stats-same-frames: exit $rc: $(grep -m1 -v '^vkcu: engine' "$out/timed.err")"
fi
verdict=$(awk -v n="$n" '
  function kv(   i, a) { delete v; for (i = 1; i <= NF; i++) if (split($i, a, "=") == 2) v[a[1]] = a[2] }
  /engine: queue=decode/ { kv(); subs += v["submissions"]; if (v["timestamps"] == "none") nots++
                           if (v["busy_pct"] + 0 <= 0 || v["busy_pct"] + 0 > 100.5) bad = bad " " v["queue"] "=" v["busy_pct"] "%" }
  /engine: queue=compute/ { kv(); csubs += v["submissions"] }
  /engine: summary/ { kv(); sum = 1; win = v["window_s"] + 0 }
  END {
    if (!sum) print "no engine: summary line"
    else if (subs < n) print "only " subs " decode submissions for " n " frames"
    else if (nots) print nots " decode queue(s) without timestamps"
    else if (bad != "") print "busy out of (0, 100]%:" bad
    else if (csubs < n) print "only " csubs " compute submissions for " n " frames (the handoff copies)"
    else printf "ok %d decode and %d compute submissions timed in %.3f s\n", subs, csubs, win }' "$out/timed.err")
case $verdict in
  ok*) echo "PASS engine-stats-lines: ${verdict#ok }" ;;
  *) echo "FAIL engine-stats-lines: $verdict ($(grep -m3 'engine:' "$out/timed.err" | tr '\n' ' '))" ;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Queue claims across processes (issue 27.1), seen from the command line:
# `vkcu probe` lists the claims other processes hold now (held here by
# `test_qclaim hold`, a process that takes claims the way vkcu does and keeps
# them until its standard input ends), a process killed with SIGKILL leaves
# none, and --decode-queue takes 0..63 (refused otherwise with exit 2 and
# one line; a CPU job runs with it unchanged). Nothing is timed: the holders
# say which queues they took on a line of their own, and the test waits
# for that line. The GPU side (processes spread over the decode engines) is
# tests/gpu.d/claims.sh.
source "$(dirname "$0")/lib.sh"
holder=$VKCU_BUILD/tests/test_qclaim
in=$MEDIA/h264-aac.mp4
[ -x "$holder" ] || { skip "queue-claims: $holder missing (make)"; exit 0; }
export XDG_RUNTIME_DIR=$TMP/run
unset VKCU_QUEUE_CLAIMS
mkdir -m 700 "$XDG_RUNTIME_DIR"
gpu=00112233445566778899aabbccddeeff
dashed=00112233-4455-6677-8899-aabbccddeeff

"$VKCU" probe > "$TMP/p0" 2>&1
grep -qx "Queue claims of running vkcu processes ($XDG_RUNTIME_DIR/vkcu-queues):" "$TMP/p0" && grep -qx '  none' "$TMP/p0" &&
  [ ! -e "$XDG_RUNTIME_DIR/vkcu-queues" ] && pass "probe: no claims, and the folder is not made by reading it" ||
  fail "probe without claims: $(grep -A1 'Queue claims' "$TMP/p0" | tr '\n' ' ')"

# Three holders (one, one and two claims on 7 queues), each started after the last said its queues.
start() { # NAME CLAIMS: a holder whose standard input and output are fifos; its queues in queues_NAME
  mkfifo "$TMP/$1.in" "$TMP/$1.out"
  # without the other holders' standard inputs, which would never end while it runs
  (for f in $writers; do eval "exec $f>&-"; done; exec "$holder" hold "$gpu" decode 3 7 "$2" < "$TMP/$1.in" > "$TMP/$1.out") &
  eval "pid_$1=$!"
  local w r line
  exec {w}> "$TMP/$1.in" # its standard input stays open until closed: it holds its claims until then
  exec {r}< "$TMP/$1.out"
  read -r line <&"$r"
  exec {r}<&-
  writers="$writers $w"
  eval "fd_$1=$w queues_$1='$line'"
}
writers=""
start a 1
start b 1
start c 2
# shellcheck disable=SC2154
[ "$queues_a/$queues_b/$queues_c" = "0/1/2 3" ] && pass "holders took the least-claimed queues: 0, 1, then 2 3" ||
  fail "holders took '$queues_a' '$queues_b' '$queues_c'"
"$VKCU" probe > "$TMP/p1" 2>&1
want="  $dashed, decode queue family 3: queue 0: 1 claim, queue 1: 1 claim, queue 2: 1 claim, queue 3: 1 claim"
grep -qxF "$want" "$TMP/p1" && pass "probe lists each queue's claims" ||
  fail "probe: $(grep -A2 'Queue claims' "$TMP/p1" | tr '\n' '|')"

# kill -9 the second holder: its claim is gone, and the next process takes its queue.
kill -9 "$pid_b"
wait "$pid_b" 2> /dev/null
"$VKCU" probe > "$TMP/p2" 2>&1
want="  $dashed, decode queue family 3: queue 0: 1 claim, queue 2: 1 claim, queue 3: 1 claim"
grep -qxF "$want" "$TMP/p2" && pass "probe after kill -9: the dead holder's queue 1 has no claim" ||
  fail "probe after kill -9: $(grep -A2 'Queue claims' "$TMP/p2" | tr '\n' '|')"
start d 1
[ "$queues_d" = 1 ] && pass "after kill -9 the next process took queue 1" || fail "after kill -9 the next took '$queues_d'"
for h in a c d; do
  eval "exec {fd_$h}>&-"
  eval "wait \$pid_$h"
done
"$VKCU" probe > "$TMP/p3" 2>&1
grep -qx '  none' "$TMP/p3" && pass "probe: no claims once every holder ended" ||
  fail "probe after the holders: $(grep -A2 'Queue claims' "$TMP/p3" | tr '\n' '|')"

# Claims off, or no folder: probe says so.
VKCU_QUEUE_CLAIMS=off "$VKCU" probe > "$TMP/p4" 2>&1
grep -q '^Queue claims: none kept (queue claims are off (VKCU_QUEUE_CLAIMS=off))' "$TMP/p4" &&
  pass "probe with VKCU_QUEUE_CLAIMS=off" || fail "probe, claims off: $(grep 'Queue claims' "$TMP/p4")"

# --decode-queue: 0..63, on every verb that runs jobs.
msg() { printf -- "--decode-queue: '%s' is not an integer in \\\\[0, 63\\\\]" "$1"; }
for v in -1 64 x; do
  expect "--decode-queue $v refused (transcode)" 2 "$(msg "$v")" -- "$VKCU" --backend cpu "$in" -o "$TMP/o.mkv" --decode-queue "$v"
  expect "--decode-queue $v refused (batch)" 2 "$(msg "$v")" -- "$VKCU" batch "$MEDIA" "$TMP/batch" --dry-run --decode-queue "$v"
done
[ ! -e "$TMP/o.mkv" ] && [ ! -e "$TMP/batch" ] && pass "no output after a refused --decode-queue" || fail "output written: $(ls "$TMP")"
if [ -s "$in" ]; then
  "$VKCU" hash --backend cpu "$in" > "$TMP/h0" 2> /dev/null
  "$VKCU" hash --backend cpu "$in" --decode-queue 5 > "$TMP/h5" 2> "$TMP/e5"
  rc=$?
  [ $rc = 0 ] && [ -s "$TMP/h5" ] && cmp -s "$TMP/h0" "$TMP/h5" && pass "--decode-queue 5 on the CPU backend: same hashes" ||
    fail "--decode-queue 5 on the CPU backend: exit $rc, $(head -1 "$TMP/e5")"
else
  skip "--decode-queue on the CPU backend: $in missing (make media)"
fi
"$VKCU" --help 2>&1 | grep -q -- '--decode-queue N' && pass "--help lists --decode-queue" || fail "--help lacks --decode-queue"

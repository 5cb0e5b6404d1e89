#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `vkcu batch --processes` on the CPU backend (issue 37): each stream slot
# runs its files in a worker process of its own, and the batch reports as
# one. The same files, outputs and report as threads; a killed worker fails
# its file with one line and leaves nothing behind; a worker that cannot
# start leaves its files to the batch's own process; Ctrl-C and a killed
# batch stop every worker without partial files.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
V=$VKCU

in=$TMP/in; mkdir -p "$in/sub"
cp "$m/h264-aac.mp4" "$m/hevc10.mkv" "$m/empty.mp4" "$m/not-video.mp4" "$m/truncated.mp4" "$in/"
cp "$m/vfr.mkv" "$m/av1.ivf" "$in/sub/"
echo "notes" > "$in/notes.txt"
exact="h264-aac.mp4 hevc10.mkv sub/vfr.mkv sub/av1.ivf"
badf="empty.mp4 not-video.mp4 truncated.mp4"
run() { "$V" batch "$in" "$@" --backend cpu --pipeline regression-hash -r; }
# The report, less what depends on time: file, status, exit code, output, frames.
fates() {
  python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("summary"):
        print("summary", d["files"], d["done"], d["skipped"], d["failed"], d["exit_code"])
    else:
        print(d["file"], d["status"], d["exit_code"], (d.get("output") or "").rsplit("/", 1)[-1], d.get("frames"))
' "$1" | sort
}

# ---- the same batch as threads ----
run "$TMP/thr" --jobs 2 --report "$TMP/thr.jsonl" > /dev/null 2> "$TMP/thr.err"
trc=$?
run "$TMP/pro" --jobs 2 --processes --report "$TMP/pro.jsonl" > "$TMP/pro.out" 2> "$TMP/pro.err"
rc=$?
# (a slot starts its worker with its first file: both slots have one here
# unless one slot took every file before the other's thread ran, so the
# count may be 1 on a loaded machine)
[ "$rc" = 3 ] && [ "$trc" = 3 ] &&
  grep -qE "^batch: 4 done, 1 skipped, 3 failed \(8 files, .*, (2 worker processes|1 worker process)\)$" "$TMP/pro.err" &&
  pass "--processes: good and bad files, exit 3, the summary counts the worker processes" ||
  fail "--processes: exit $rc (threads $trc), $(grep '^batch:' "$TMP/pro.err")"
ok=1
for f in $exact; do
  cmp -s "$TMP/pro/${f%.*}.framemd5" "$TMP/thr/${f%.*}.framemd5" || { ok=0; echo "differs: $f" >&2; }
done
[ "$ok" = 1 ] && [ "$(fates "$TMP/pro.jsonl")" = "$(fates "$TMP/thr.jsonl")" ] &&
  pass "--processes: the outputs and the report's fates equal the threads'" ||
  fail "--processes: outputs or report differ: $(diff <(fates "$TMP/pro.jsonl") <(fates "$TMP/thr.jsonl") | head -4 | tr '\n' ' ')"
ok=1
for f in $badf; do
  [ "$(grep -c "$f: " "$TMP/pro.err")" = 1 ] || { ok=0; echo "not one line for $f" >&2; }
done
[ "$ok" = 1 ] && [ ! -s "$TMP/pro.out" ] && [ "$(grep -c '^batch: ' "$TMP/pro.err")" = "$(grep -c '^batch: ' "$TMP/thr.err")" ] &&
  pass "--processes: one line per bad file, as with threads; the workers print nothing of their own" ||
  fail "--processes: messages: $(head -6 "$TMP/pro.err" | tr '\n' ' ')"
# The workers' messages come through the batch: their jobs' lines (the
# set-up line, at debug, whatever the cores), and one line per file done.
run "$TMP/verbose" --jobs 2 --processes --log-level debug > /dev/null 2> "$TMP/v.err"
[ "$(grep -c '^vkcu: batch: .* -> .*: [0-9]* frames, .* fps, path cpu$' "$TMP/v.err")" = 4 ] &&
  [ "$(grep -c "^vkcu: $in/hevc10.mkv: set-up: " "$TMP/v.err")" = 1 ] &&
  pass "--processes --log-level debug: the workers' job lines, and each file's line once" ||
  fail "--processes verbose: $(grep -c ' frames, ' "$TMP/v.err") file lines: $(head -3 "$TMP/v.err" | tr '\n' ' ')"

# ---- a worker killed in the middle of a file ----
good=$TMP/good; mkdir -p "$good"
cp "$m/h264-aac.mp4" "$m/hevc10.mkv" "$m/vfr.mkv" "$good/"
VKCU_TEST_BATCH_WORKER_KILL=hevc10.mkv "$V" batch "$good" "$TMP/k" --backend cpu --pipeline regression-hash \
  --jobs 2 --processes --report "$TMP/k.jsonl" > /dev/null 2> "$TMP/k.err"
rc=$?
line=$(grep -c "hevc10.mkv: the worker process running it (pid [0-9]*) was killed by signal 9 (Killed); nothing was written in its place" "$TMP/k.err")
[ "$rc" = 1 ] && [ "$line" = 1 ] && grep -q "^batch: 2 done, 0 skipped, 1 failed" "$TMP/k.err" &&
  [ -s "$TMP/k/h264-aac.framemd5" ] && [ -s "$TMP/k/vfr.framemd5" ] && [ ! -e "$TMP/k/hevc10.framemd5" ] &&
  pass "a killed worker: its file fails with one line (exit 1), the other files finish" ||
  fail "killed worker: exit $rc, $line lines, $(grep '^batch:' "$TMP/k.err"), outputs: $(ls "$TMP/k" | tr '\n' ' ')"
[ -z "$(ls -A "$TMP/k" | grep -v -e '^h264-aac.framemd5$' -e '^vfr.framemd5$' -e '^\.vkcu-.*\.settings$')" ] &&
  [ "$(ls -A "$TMP/k" | grep -c '\.settings$')" = 2 ] &&
  grep -q '"file": "hevc10.mkv", .*"status": "failed", .*"exit_code": 1, "error": ".*the worker process running it' "$TMP/k.jsonl" &&
  pass "a killed worker leaves no partial output and no record of it; the report says failed" ||
  fail "killed worker leftovers: $(ls -A "$TMP/k" | tr '\n' ' '); $(grep hevc10 "$TMP/k.jsonl")"
"$V" batch "$good" "$TMP/k" --backend cpu --pipeline regression-hash --jobs 2 --processes --resume 2> "$TMP/k2.err"
rc=$?
[ "$rc" = 0 ] && grep -q "^batch: 1 done, 2 skipped, 0 failed" "$TMP/k2.err" &&
  cmp -s "$TMP/k/hevc10.framemd5" "$TMP/pro/hevc10.framemd5" &&
  pass "--resume after a killed worker redoes only its file" || fail "resume after a kill: exit $rc, $(grep '^batch:' "$TMP/k2.err")"

# ---- a worker that cannot start ----
VKCU_TEST_BATCH_WORKER_EXEC=/bin/true "$V" batch "$good" "$TMP/t" --backend cpu --pipeline regression-hash --jobs 2 \
  --processes 2> "$TMP/t.err"
rc=$?
w=$(grep -c 'could not start (it exited with status 0 before it was ready; program /bin/true): its files run in this process' "$TMP/t.err")
[ "$rc" = 0 ] && grep -q "^batch: 3 done, 0 skipped, 0 failed" "$TMP/t.err" && [ "$w" -ge 1 ] && [ "$w" -le 2 ] &&
  cmp -s "$TMP/t/hevc10.framemd5" "$TMP/pro/hevc10.framemd5" &&
  pass "workers that cannot start: a warning each, their files run in the batch's process" ||
  fail "no worker: exit $rc, $(head -4 "$TMP/t.err" | tr '\n' ' ')"

# ---- a dry run starts no worker ----
run "$TMP/dry" --jobs 2 --processes --dry-run > "$TMP/dry1" 2> /dev/null
run "$TMP/dry" --jobs 2 --dry-run > "$TMP/dry2" 2> /dev/null
cmp -s "$TMP/dry1" "$TMP/dry2" && [ ! -e "$TMP/dry" ] && pass "--processes --dry-run: the same plan, nothing written" ||
  fail "dry run with --processes differs"

# ---- Ctrl-C, and a batch killed outright ----
printf 'description slow\nop denoise=nlm:sigma=8:search=7\nencoder ffv1\n' > "$TMP/slow.pipe"
workers_of() { pgrep -P "$1" | tr '\n' ' '; }
gone() { # pids...: until none of them runs (bounded: a broken worker cannot hang the test)
  for _ in $(seq 1500); do
    local left=0 p
    for p in "$@"; do kill -0 "$p" 2> /dev/null && left=1; done
    [ "$left" = 0 ] && return 0
    sleep 0.02
  done
  return 1
}
"$V" batch "$good" "$TMP/int" --backend cpu --pipeline "$TMP/slow.pipe" --jobs 2 --processes --report "$TMP/int.jsonl" \
  2> "$TMP/int.err" &
pid=$!
mkdir -p "$TMP/int"
await_part "$TMP/int" || fail "Ctrl-C: no temporary output appeared in the batch"
w=$(workers_of "$pid")
kill -INT "$pid"
wait "$pid"
rc=$?
# shellcheck disable=SC2086 # a list of pids
[ "$rc" = 130 ] && [ -n "$w" ] && gone $w && no_leftovers "$TMP/int" && grep -q '"status": "interrupted"' "$TMP/int.jsonl" &&
  tail -1 "$TMP/int.jsonl" | grep -q '"interrupted": [1-9]' &&
  pass "Ctrl-C to the batch stops its workers (exit 130, no partial outputs, report says interrupted)" ||
  fail "Ctrl-C with workers: exit $rc, workers [$w], leftovers $(ls -A "$TMP/int" | tr '\n' ' '), $(grep '^batch:' "$TMP/int.err")"
# (in a subshell whose standard error, where bash says "Killed", is dropped)
( "$V" batch "$good" "$TMP/kill" --backend cpu --pipeline "$TMP/slow.pipe" --jobs 2 --processes &
  echo $! > "$TMP/kill.pid"
  wait ) 2> /dev/null &
sub=$!
mkdir -p "$TMP/kill"
await_part "$TMP/kill" || fail "kill -9: no temporary output appeared in the batch"
pid=$(cat "$TMP/kill.pid")
w=$(workers_of "$pid")
kill -KILL "$pid"
wait "$sub"
# shellcheck disable=SC2086 # a list of pids
[ -n "$w" ] && gone $w && no_leftovers "$TMP/kill" &&
  pass "a batch killed outright: its workers stop and remove their partial outputs" ||
  fail "kill -9 with workers: workers [$w] still running or leftovers: $(ls -A "$TMP/kill" | tr '\n' ' ')"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input and bad usage: one clear line naming the file, a documented exit
# code, and no output file (not even a partial one) left behind.
source "$(dirname "$0")/lib.sh"
out=$TMP/out && mkdir -p "$out"
m=$MEDIA
expect "missing input" 3 "nope.mp4: no such file" -- "$VKCU" --backend cpu "$TMP/nope.mp4" -o "$out/a.mkv"
expect "empty input" 3 "empty.mp4: empty file" -- "$VKCU" --backend cpu "$m/empty.mp4" -o "$out/a.mkv"
expect "not a video" 3 "not-video.mp4: not a media file" -- "$VKCU" --backend cpu "$m/not-video.mp4" -o "$out/a.mkv"
expect "audio only" 3 "audio-only.mkv: has no video stream" -- "$VKCU" --backend cpu "$m/audio-only.mkv" -o "$out/a.mkv"
expect "truncated mp4" 3 "truncated.mp4: " -- "$VKCU" --backend cpu "$m/truncated.mp4" -o "$out/a.mkv"
expect "folder as input" 3 "is a folder" -- "$VKCU" --backend cpu "$m" -o "$out/a.mkv"
expect "corrupt with --strict" 3 "corrupt.h264: frame [0-9]+: damaged picture" -- "$VKCU" --backend cpu --strict "$m/corrupt.h264" -o "$out/a.mkv"
[ ! -e "$out/a.mkv" ] && no_leftovers "$out" && pass "no output after failed jobs" || fail "output left behind: $(ls -A "$out")"

# Damaged frames without --strict: kept (as ffmpeg keeps them), marked, with a warning; the job succeeds
# and writes as many frames as ffmpeg -threads 1 decodes.
if "$VKCU" --backend cpu "$m/corrupt.h264" -o "$out/c.nut" 2> "$TMP/err" &&
   grep -q "1 damaged picture, concealed by the decoder: frame [0-9]* (--log-level verbose lists each); kept and marked" "$TMP/err"; then
  n=$("$FFPROBE" -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$out/c.nut")
  want=$("$FFMPEG" -v quiet -threads 1 -i "$m/corrupt.h264" -f framemd5 - | grep -vc "^#")
  [ "$n" = "$want" ] && pass "damaged frames kept with a warning ($n frames, as ffmpeg)" ||
    fail "damaged frames: $n frames written, ffmpeg decodes $want"
else
  fail "damaged frames: $(tail -1 "$TMP/err")"
fi

expect "unknown option" 2 "unknown option '--frobnicate'" -- "$VKCU" --frobnicate "$m/h264-aac.mp4" -o "$out/b.mkv"
expect "missing output" 2 "no output" -- "$VKCU" "$m/h264-aac.mp4"
expect "bad backend" 2 "--backend: 'fast'" -- "$VKCU" --backend fast "$m/h264-aac.mp4" -o "$out/b.mkv"
expect "bad chain operator" 2 "column 1: unknown operator 'blur'" -- "$VKCU" --chain blur "$m/h264-aac.mp4" -o "$out/b.mkv"
expect "bad chain key" 2 "column 9: convert has no key 'colour'" -- "$VKCU" --chain 'convert=colour=red' "$m/h264-aac.mp4" -o "$out/b.mkv"
expect "bad chain value" 2 "column 16: convert: format=purple" -- "$VKCU" --chain 'convert=format=purple' "$m/h264-aac.mp4" -o "$out/b.mkv"
expect "unwritable folder" 4 "b.mkv: output folder .* does not exist" -- "$VKCU" --backend cpu "$m/h264-aac.mp4" -o "$TMP/no/such/dir/b.mkv"
chmod 555 "$out"
if [ "$(id -u)" != 0 ]; then
  expect "read-only folder" 4 "not writable" -- "$VKCU" --backend cpu "$m/h264-aac.mp4" -o "$out/b.mkv"
fi
chmod 755 "$out"
: > "$out/exists.mkv"
expect "existing output refused" 4 "exists.mkv: already exists \\(use -y" -- "$VKCU" --backend cpu "$m/h264-aac.mp4" -o "$out/exists.mkv"
[ ! -s "$out/exists.mkv" ] && pass "existing output untouched" || fail "existing output was modified"
expect "--backend gpu without a GPU" 5 "--backend gpu: " -- "$VKCU" --backend gpu "$m/h264-aac.mp4" -o "$out/g.mkv"
[ ! -e "$out/b.mkv" ] && [ ! -e "$out/g.mkv" ] && no_leftovers "$out" && pass "no partial outputs" || fail "leftovers: $(ls -A "$out")"

# Full disk: /dev/full refuses every write.
if [ -w /dev/full ]; then
  expect "disk full (hash output)" 4 "" -- "$VKCU" hash --backend cpu "$m/h264-aac.mp4" -o /dev/full
fi
# Interrupt: SIGINT mid-job stops cleanly, exit 130, no output.
"$VKCU" --backend cpu --chain 'denoise=nlm:sigma=8:search=7' "$m/h264-aac.mp4" -o "$out/int.mkv" 2> "$TMP/err" &
pid=$!
await_part "$out" || fail "Ctrl-C: no temporary output appeared"
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" = 130 ] && [ ! -e "$out/int.mkv" ] && no_leftovers "$out" && grep -q "interrupted" "$TMP/err"; then
  pass "Ctrl-C stops cleanly (exit 130, no output)"
else
  fail "Ctrl-C: exit $rc, files: $(ls -A "$out" | tr '\n' ' '), stderr: $(tail -1 "$TMP/err")"
fi

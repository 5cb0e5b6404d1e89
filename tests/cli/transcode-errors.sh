#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Transcode CLI behaviour (issue 5): the progress line, --keep-partial,
# --help and exit codes, and bad inputs/outputs: frames over an encoder's
# size limit, a full disk, a read-only folder. Each failure: one line, a
# documented exit code, no output left behind.
source "$(dirname "$0")/lib.sh"
m=$MEDIA
in=$m/h264-aac.mp4
out=$TMP/out && mkdir -p "$out"

# Progress on a terminal: frames of the total, fps, speed (x realtime), ETA.
if script -q -e -c "true" /dev/null > /dev/null 2>&1; then
  script -q -e -c "'$VKCU' --backend cpu '$in' -o '$out/p.mkv'" /dev/null > "$TMP/tty" 2>&1
  tr '\r' '\n' < "$TMP/tty" | grep -E "h264-aac.mp4: frame 50/50  [0-9.]+ fps  [0-9.]+x  ETA 0:00" > /dev/null &&
    pass "progress line on a terminal (frame N/total, fps, speed, ETA)" || fail "progress line: $(tr '\r' '\n' < "$TMP/tty" | grep frame | tail -1)"
  rm -f "$out/p.mkv"
else
  skip "progress line: 'script' cannot allocate a terminal here"
fi
"$VKCU" --backend cpu "$in" -o "$out/p.mkv" 2> "$TMP/err"
! grep -q "ETA" "$TMP/err" && pass "no progress line when stderr is not a terminal" || fail "progress written to a non-terminal"
rm -f "$out/p.mkv"

# --help: the tool and each verb, exit codes matching README's table.
"$VKCU" --help > "$TMP/help" && grep -q "^Usage: vkcu \[options\] INPUT -o OUTPUT" "$TMP/help" && pass "vkcu --help" || fail "vkcu --help"
for v in hash probe; do
  "$VKCU" $v --help > "$TMP/vh" && grep -q "^Usage: vkcu $v" "$TMP/vh" && pass "vkcu $v --help" || fail "vkcu $v --help"
done
readme=$(dirname "$0")/../../README.md
codes_readme=$(sed -n '/^### Exit codes/,/^###* [^E]/p' "$readme" | grep -oE '^\| [0-9]+ ' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
codes_help=$(sed -n '/^Exit codes:/,$p' "$TMP/help" | grep -oE '(^| )[0-9]+ [a-zA-Z]' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
[ -n "$codes_help" ] && [ "$codes_readme" = "$codes_help" ] && pass "exit codes in --help match README ($codes_help)" ||
  fail "exit codes: README '$codes_readme', --help '$codes_help'"

# --keep-partial: a job failing mid-way (corrupt frame with --strict) keeps what was written.
"$VKCU" --backend cpu --strict --keep-partial "$m/corrupt.h264" -o "$out/k.nut" 2> "$TMP/err"
rc=$?
n=$("$VKCU" hash --backend cpu "$out/k.nut" 2>/dev/null | grep -vc '^#')
[ "$rc" = 3 ] && [ "${n:-0}" -gt 0 ] && grep -q "partial output kept" "$TMP/err" && no_leftovers "$out" &&
  pass "--keep-partial keeps the partial output of a failed job ($n frames, exit 3)" || fail "--keep-partial on failure: exit $rc, $n frames, $(ls -A "$out")"
"$VKCU" --backend cpu --strict "$m/corrupt.h264" -o "$out/k2.nut" 2> /dev/null
[ ! -e "$out/k2.nut" ] && no_leftovers "$out" && pass "without --keep-partial a failed job leaves nothing" || fail "failed job left $(ls -A "$out")"
# ... and an interrupted one.
# FFV1 in NUT: each frame reaches the file as it is encoded (no encoder
# delay, no cluster held back), so 16 KiB in the temporary output means
# frames were written; the interrupt comes then, whatever the machine's load.
"$VKCU" --backend cpu --keep-partial --chain 'denoise=nlm:sigma=8:search=7' --encoder ffv1 "$in" -o "$out/int.nut" 2> "$TMP/err" &
pid=$!
await_part "$out" 16384 || fail "Ctrl-C with --keep-partial: no frames reached the temporary output"
kill -INT "$pid"
wait "$pid"
rc=$?
n=$("$FFPROBE" -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out/int.nut" 2>/dev/null)
[ "$rc" = 130 ] && [ "${n:-0}" -gt 0 ] && grep -q "interrupted; partial output kept" "$TMP/err" &&
  pass "Ctrl-C with --keep-partial keeps a readable partial output ($n frames, exit 130)" ||
  fail "Ctrl-C with --keep-partial: exit $rc, frames '$n', $(tail -1 "$TMP/err")"
rm -f "$out"/*

# Frames over the encoder's size limit: a y4m header with huge dimensions and two small frames.
{ printf 'YUV4MPEG2 W16400 H16 F25:1 Ip A1:1 C420jpeg\n'; for i in 1 2; do printf 'FRAME\n'; head -c $((16400 * 16 * 3 / 2)) /dev/zero; done; } > "$TMP/huge.y4m"
expect "frames over libx264's size limit" 3 "huge.mkv: encoder libx264 cannot take 16400x16 frames .*use --encoder ffv1" -- \
  "$VKCU" --backend cpu -q "$TMP/huge.y4m" -o "$out/huge.mkv"
[ "$(wc -l < "$TMP/.stderr")" = 1 ] && [ -z "$(ls -A "$out")" ] && pass "size limit: one line, no output" || fail "size limit: $(wc -l < "$TMP/.stderr") lines, files: $(ls -A "$out")"

# A full disk: a 64 KiB tmpfs (root), and /dev/full through a symlink (written in place).
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2> /dev/null; then
  expect "disk full (tmpfs)" 4 "small/o.mkv: write error: .*\\(disk full\\)" -- "$VKCU" --backend cpu -q "$in" -o "$TMP/small/o.mkv" --encoder ffv1
  [ -z "$(ls -A "$TMP/small")" ] && pass "disk full: nothing left on the full disk" || fail "disk full left: $(ls -A "$TMP/small")"
  umount "$TMP/small"
  # A read-only folder (as root, permissions do not stop writes: a read-only mount does).
  mount -t tmpfs -o ro,size=64k tmpfs "$TMP/small"
  expect "read-only output folder" 4 "o.mkv: output folder .* is not writable" -- "$VKCU" --backend cpu -q "$in" -o "$TMP/small/o.mkv"
  umount "$TMP/small"
else
  skip "disk full (tmpfs): cannot mount here (not root)"
fi
if [ -w /dev/full ]; then
  ln -s /dev/full "$out/full.mkv"
  expect "disk full (/dev/full)" 4 "full.mkv: .*No space left on device \\(disk full\\)" -- "$VKCU" --backend cpu -q "$in" -o "$out/full.mkv"
  [ -L "$out/full.mkv" ] && [ "$(ls -A "$out")" = full.mkv ] && pass "/dev/full: device untouched, no temporary file" || fail "/dev/full: $(ls -A "$out")"
fi

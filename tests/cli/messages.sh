#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Messages (issue 13, defect 8): what vkcu says, and its exit code, when a
# trim range holds no frame, a frame number is huge, Ctrl-C comes while a
# FIFO input waits for a writer, a manifest has no case, an operator has no
# keys, a preset checks but would not start, a file name starts with '-',
# a batch dry run lists odd names, a report holds names that are not UTF-8,
# and the output name is a folder.
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4 # 50 frames at 25 fps
V=$VKCU

# ---- trimming ----
expect "a range between two frames holds no frame (exit 2, not corrupt)" 2 \
  "h264-aac.mp4: the --start/--duration range holds no frame" -- "$V" --backend cpu "$in" --start 0.5 --duration 0.01 -o "$TMP/t.mkv"
expect "--duration 0 holds no frame" 2 "holds no frame" -- "$V" hash --backend cpu "$in" --duration 0
expect "--duration 0f holds no frame" 2 "holds no frame" -- "$V" hash --backend cpu "$in" --start 10f --duration 0f
[ ! -e "$TMP/t.mkv" ] && pass "no output for an empty range" || fail "an empty range wrote $TMP/t.mkv"
expect "--start 9223372036854775807f counts the frames" 2 \
  "--start 9223372036854775807f is past the end \\(the input has 50 frames\\)" -- "$V" hash --backend cpu "$in" --start 9223372036854775807f
expect "--start 49f --duration 9223372036854775807f keeps the last frame" 0 "" -- "$V" hash --backend cpu "$in" --start 49f --duration 9223372036854775807f
[ "$(frames "$TMP/.stdout" | wc -l)" = 1 ] && pass "--start 49f with a huge --duration: one frame" || fail "huge --duration: $(frames "$TMP/.stdout" | wc -l) frames"

# ---- Ctrl-C while opening a FIFO: open() blocks until a writer comes ----
mkfifo "$TMP/fifo"
"$V" --backend cpu "$TMP/fifo" -o "$TMP/fifo.mkv" 2> "$TMP/fifo.err" &
pid=$!
# Wait until it sits in open() (x86-64 openat is 257; seen twice, so not a
# passing open of the loader) rather than for a time.
seen=0
for _ in $(seq 400); do
  call=; read -r call _ < "/proc/$pid/syscall" 2>/dev/null
  [ "$call" = 257 ] && seen=$((seen + 1)) || seen=0
  [ "$seen" = 2 ] && break
  sleep 0.05
done
kill -INT "$pid"
for _ in $(seq 400); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
# Still there: release it (a read-write open of a FIFO never blocks), so the test cannot hang.
kill -0 "$pid" 2>/dev/null && { exec 3<> "$TMP/fifo"; exec 3>&-; }
wait "$pid"
rc=$?
[ "$rc" = 130 ] && grep -q "fifo: interrupted" "$TMP/fifo.err" && [ ! -e "$TMP/fifo.mkv" ] &&
  pass "Ctrl-C while opening a FIFO: exit 130" || fail "Ctrl-C on a FIFO: exit $rc, $(tail -1 "$TMP/fifo.err")"

# ---- manifests, operators, presets ----
printf 'vkcu-manifest 1\n# cases to come\n' > "$TMP/none.manifest"
expect "a manifest with no cases says so" 3 "none.manifest: no cases" -- "$V" verify "$TMP/none.manifest"
expect "copy=x=1: copy has no keys" 2 "column 6: copy has no keys \\(write just 'copy'\\)" -- "$V" hash --backend cpu "$in" --chain copy=x=1
expect "copy=x: copy has no keys" 2 "copy has no keys" -- "$V" hash --backend cpu "$in" --chain copy=x
printf 'description x\nop denoise=mode=nlm:search=15:tradius=3\n' > "$TMP/nlm.pipe"
expect "a preset beyond an operator's limits fails its check" 2 \
  "nlm.pipe:2:4: op: denoise: search=15 with tradius=3 compares 6727 candidates per sample, more than the 4096" -- "$V" pipelines "$TMP/nlm.pipe"
# Encoder options without an encoder, and a container that cannot hold the
# encoder, passed the check and failed at the start.
printf 'description x\nencoder-opt crf=3\n' > "$TMP/noenc.pipe"
# (FFmpeg 8 writes FFV1 into MP4; WebM holds VP8, VP9 and AV1 only.)
printf 'description x\nencoder libx264\ncontainer webm\n' > "$TMP/x264webm.pipe"
expect "a preset's encoder-opt without an encoder fails its check" 2 "noenc.pipe:2:13: 'encoder-opt' needs an 'encoder' line" -- "$V" pipelines "$TMP/noenc.pipe"
expect "a preset's container that cannot hold its encoder fails its check" 2 "x264webm.pipe:3:11: container: webm files cannot hold libx264" -- "$V" pipelines "$TMP/x264webm.pipe"
printf 'description x\nop denoise=mode=nlm:search=10:tradius=3\n' > "$TMP/nlm-ok.pipe"
if "$V" pipelines "$TMP/nlm-ok.pipe" > /dev/null 2>&1; then
  expect "a preset that passes its check also starts" 0 "" -- "$V" hash --backend cpu "$in" --frames 2 --pipeline "$TMP/nlm-ok.pipe"
else
  fail "nlm preset within the limits does not pass its check"
fi

# ---- '--' ends options ----
mkdir -p "$TMP/dash"
cp "$in" "$TMP/dash/-y"; cp "$in" "$TMP/dash/--help"
if (cd "$TMP/dash" && "$V" --backend cpu -q -o out.mkv -- -y) && [ -s "$TMP/dash/out.mkv" ]; then
  pass "vkcu -o out.mkv -- -y: '-y' is the input"
else
  fail "'--' then '-y': no output"
fi
(cd "$TMP/dash" && "$V" hash --backend cpu -- --help) > "$TMP/h" 2>&1
[ "$(frames "$TMP/h" | wc -l)" = 50 ] && pass "vkcu hash -- --help hashes the file '--help'" || fail "hash -- --help: $(head -2 "$TMP/h")"
expect "compare -- A B" 0 "" -- sh -c "cd '$TMP/dash' && '$V' compare --backend cpu -- -y --help"
expect "an option after -- is a file" 3 "--frames: no such file" -- "$V" hash --backend cpu -- --frames

# ---- batch: odd file names ----
b=$TMP/odd; mkdir -p "$b"
names=("a b.mp4" "it's.mp4" $'new\nline.mp4' 'dollar$HOME.mp4' "plain.mp4" $'tab\there.mp4' '"quoted".mp4')
for n in "${names[@]}"; do cp "$in" "$b/$n"; done
"$V" batch "$b" "$TMP/odd-out" --dry-run --pipeline regression-hash > "$TMP/plan" 2> /dev/null
listed=()
while IFS= read -r line; do
  eval "w=($line)" 2> /dev/null || { fail "dry run: a line is not shell words: $line"; continue; }
  [ "${w[0]}" = process ] && [ "${w[2]}" = to ] && [ "${w[3]}" = "$TMP/odd-out/${w[1]%.mp4}.framemd5" ] && listed+=("${w[1]}")
done < "$TMP/plan"
want=$(printf '%s\0' "${names[@]}" | sort -z | od -c)
got=$(printf '%s\0' "${listed[@]}" | sort -z | od -c)
[ "$(wc -l < "$TMP/plan")" = "${#names[@]}" ] && [ "$want" = "$got" ] &&
  pass "--dry-run quotes odd names: one line each, read back as shell words" ||
  fail "--dry-run listing: $(wc -l < "$TMP/plan") lines, ${#listed[@]} names read back: $(head -3 "$TMP/plan" | tr '\n' '|')"

# ---- batch report: names that are not UTF-8 come back byte for byte ----
u=$TMP/utf; mkdir -p "$u"
cp "$in" "$u/$(printf 'caf\xe9.mp4')"    # Latin-1, not UTF-8
cp "$in" "$u/café.mp4"                   # UTF-8
cp "$in" "$u/$(printf 'x\xed\xa0\x80.mp4')" # an encoded surrogate: not UTF-8 either
"$V" batch "$u" "$TMP/utf-out" --pipeline regression-hash --frames 2 --report "$TMP/r.jsonl" > /dev/null 2>&1
if python3 - "$u" "$TMP/r.jsonl" <<'EOF'
import json, os, sys
names = sorted(os.listdir(os.fsencode(sys.argv[1])))
files = sorted(os.fsencode(r["file"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8")) if "file" in r)
sys.exit(0 if len(names) == 3 and files == names else 1)
EOF
then
  pass "report: file names that are not UTF-8 round-trip (\\udcXX, docs/batch.md)"
else
  fail "report names do not round-trip: $(grep -o '"file": "[^"]*"' "$TMP/r.jsonl" | tr '\n' ' ')"
fi

# ---- the output name is a folder ----
mkdir -p "$TMP/dir.mkv"
expect "-o DIR.mkv -y fails before decoding" 4 "dir.mkv: is a folder" -- "$V" --backend cpu "$MEDIA/truncated.mp4" -o "$TMP/dir.mkv" -y
[ -d "$TMP/dir.mkv" ] && [ -z "$(ls -A "$TMP/dir.mkv")" ] && pass "the folder is left as it was" || fail "the folder changed"

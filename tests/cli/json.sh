#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# JSON output with odd file names (quotes, backslashes, newlines, stray
# non-UTF-8 bytes): `hash --format json` and the batch report are valid
# JSON that python3's json module reads back to the exact bytes on disk.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
"$FFMPEG" -v error -nostdin -i "$root/media/demo.mp4" -an -frames:v 5 -vf scale=64:48 -c:v ffv1 -threads 1 "$TMP/clip.mkv" ||
  { fail "json: cannot make the test clip"; exit 0; }
odd=$(printf 'we"ird\\na\nme\t\001caf\351 \303\251.mkv')
mkdir -p "$TMP/in"
cp "$TMP/clip.mkv" "$TMP/in/$odd"

# hash: header names the input, frames carry the same hashes as framemd5
if "$VKCU" hash --backend cpu --format json "$TMP/in/$odd" > "$TMP/h.jsonl" 2> "$TMP/err" &&
   "$VKCU" hash --backend cpu "$TMP/in/$odd" > "$TMP/h.framemd5" 2>> "$TMP/err"; then
  msg=$(python3 - "$TMP/h.jsonl" "$TMP/h.framemd5" "$TMP/in/$odd" <<'PY' 2>&1
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1], 'rb').read().decode('utf-8').splitlines()]
head, frames, summary = lines[0], lines[1:-1], lines[-1]
assert head["type"] == "header", head
assert summary["type"] == "summary" and summary["frames"] == len(frames) == summary["decoded"], summary
assert (summary["dropped"], summary["rescaled"], summary["concealed"]) == (0, 0, 0), summary
assert os.fsencode(head["input"]) == os.fsencode(sys.argv[3]), (head["input"], sys.argv[3])
ref = [l.split(", ")[-1].strip() for l in open(sys.argv[2]) if not l.startswith("#")]
assert [f["hash"] for f in frames] == ref, "hashes differ from framemd5"
assert [f["frame"] for f in frames] == list(range(len(ref))) and len(ref) == 5, len(ref)
print("ok")
PY
)
  [ "$msg" = ok ] && pass "json: hash --format json with an odd name reads back with python3 json (name bytes exact, 5 frames = framemd5)" ||
    fail "json: hash --format json: $msg"
else
  fail "json: hash failed: $(tail -1 "$TMP/err")"
fi

# batch report: every name field gives back the bytes on disk
if "$VKCU" batch "$TMP/in" "$TMP/out" --backend cpu --pipeline regression-hash --report "$TMP/rep.jsonl" > /dev/null 2> "$TMP/err"; then
  msg=$(python3 - "$TMP/rep.jsonl" "$TMP/in" "$odd" <<'PY' 2>&1
import json, os, sys
raw = open(sys.argv[1], 'rb').read()
lines = [json.loads(l) for l in raw.decode('utf-8').splitlines()]
assert len(lines) == 2 and lines[1]["summary"] is True, lines
f = lines[0]
assert os.fsencode(f["file"]) == os.fsencode(sys.argv[3]), f["file"]
assert os.fsencode(f["input"]) == os.fsencode(os.path.join(sys.argv[2], sys.argv[3])), f["input"]
assert f["status"] == "done" and f["frames"] == 5 and f["error"] is None, f
assert b"\\udce9" in raw and b'we\\"ird\\\\na\\nme\\t\\u0001caf' in raw, raw
print("ok")
PY
)
  [ "$msg" = ok ] && pass "json: batch report with an odd name reads back with python3 json (stray byte as \\udce9)" ||
    fail "json: batch report: $msg"
else
  fail "json: batch failed: $(tail -1 "$TMP/err")"
fi

# the marker jansson's output is rewritten from is no real name's text
mark=$(printf '\001vkcu-bytes\001e9')
cp "$TMP/clip.mkv" "$TMP/$mark"
if "$VKCU" hash --backend cpu --format json "$TMP/$mark" > "$TMP/m.jsonl" 2> "$TMP/err"; then
  python3 -c 'import json,os,sys; h=json.loads(open(sys.argv[1]).readline()); assert os.fsencode(h["input"])==os.fsencode(sys.argv[2])' \
    "$TMP/m.jsonl" "$TMP/$mark" 2> "$TMP/py" &&
    pass "json: a name that looks like the internal marker stays itself" || fail "json: marker-like name: $(tail -1 "$TMP/py")"
else
  fail "json: hash of a marker-like name failed: $(tail -1 "$TMP/err")"
fi

# compare --json: the input names as in every other JSON vkcu writes
if "$VKCU" compare --backend cpu "$TMP/in/$odd" "$TMP/clip.mkv" --json "$TMP/rows.json" > /dev/null 2> "$TMP/err"; then
  python3 -c 'import json,os,sys; r=json.load(open(sys.argv[1],"rb")); assert os.fsencode(r["a"])==os.fsencode(sys.argv[2]), r["a"]; assert len(r["frames"])==5' \
    "$TMP/rows.json" "$TMP/in/$odd" 2> "$TMP/py" &&
    pass "json: compare --json with an odd name reads back with python3 json (name bytes exact, 5 rows)" ||
    fail "json: compare --json odd name: $(tail -1 "$TMP/py")"
else
  fail "json: compare --json failed: $(tail -1 "$TMP/err")"
fi

# compare and verify read JSON hash lists with a JSON parser: a header
# holding an odd name (\udcXX), and lines another tool rewrote (keys in
# another order, spaces, a member whose text holds '"pts":' and '"hash":')
if python3 - "$TMP/h.jsonl" "$TMP/re.jsonl" <<'PY' 2> "$TMP/py"
import json, sys
out = open(sys.argv[2], 'w')
for i, l in enumerate(open(sys.argv[1], encoding='utf-8', errors='surrogatepass')):
    o = json.loads(l)
    if o.get('type') != 'header':
        o = dict([('note', '"pts":99,"hash":"%s"' % ('0' * 32))] + list(reversed(list(o.items()))))
    out.write(json.dumps(o, separators=(', ', ' : ')) + '\n')
PY
then
  "$VKCU" compare --backend cpu "$TMP/re.jsonl" "$TMP/in/$odd" > "$TMP/cmp" 2> "$TMP/err"
  rc=$?
  [ $rc = 0 ] && grep -qx 'result: IDENTICAL: 5 frames' "$TMP/cmp" && grep -q '"pts" : 4' "$TMP/re.jsonl" &&
    pass "json: compare reads a rewritten JSON hash list (odd name in the header, keys reordered, '\"pts\":' inside a string)" ||
    fail "json: compare of a rewritten JSON list: exit $rc, $(tail -1 "$TMP/cmp") $(tail -1 "$TMP/err")"
else
  fail "json: cannot rewrite the JSON list: $(tail -1 "$TMP/py")"
fi
{ head -2 "$TMP/h.jsonl"; echo '{"frame":1,"pts":1,"duration":1,"size":'; } > "$TMP/trunc.jsonl"
expect "json: a truncated JSON hash line is an input error naming file:line" 3 "trunc.jsonl:3: not a frame hash line" -- \
  "$VKCU" compare --backend cpu "$TMP/trunc.jsonl" "$TMP/clip.mkv"

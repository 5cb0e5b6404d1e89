#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The option table (issue 14.4): each verb's --help, its man page, its bash
# completion and its parser come from one table (src/cli/table.c). The
# hidden `--dump-options` prints a verb's table rows; this test holds
# --help, the man page, the completion and the parser to them, and checks
# the getopt_long syntax (--opt=value, -j2, -yq, --) and the hints for
# typos and ffmpeg habits.
source "$(dirname "$0")/lib.sh"
V=$VKCU
in=$MEDIA/h264-aac.mp4
printf 'description encodes\nencoder ffv1\n' > "$TMP/enc.pipe"

verbs=$("$V" --generate verbs)
[ "$(echo $verbs)" = "probe formats hash compare verify batch pipelines" ] &&
  pass "options: --generate verbs lists the verbs" || fail "options: --generate verbs: $(echo $verbs)"

# A value each option type takes (what --dump-options says about it).
value_for() { # type lo choices long
  case $1 in
    int|number|pick) echo "$2" ;;
    choice) echo "${3%%,*}" | sed 's/ or .*//' ;;
    time) echo 0 ;;
    bitrate) echo 1M ;;
    preset) echo "$TMP/enc.pipe" ;;
    *) case $4 in --shard) echo 0/1 ;; *) echo x ;; esac ;;
  esac
}

for verb in vkcu $verbs; do
  args=(); [ "$verb" = vkcu ] || args=("$verb")
  page=vkcu; [ "$verb" = vkcu ] || page=vkcu-$verb
  "$V" "${args[@]}" --dump-options > "$TMP/dump" 2> "$TMP/err"
  "$V" "${args[@]}" --help > "$TMP/help" 2>> "$TMP/err"
  "$V" --generate "man${args[0]:+:$verb}" > "$TMP/$page.1" 2>> "$TMP/err"
  if [ ! -s "$TMP/dump" ] || [ ! -s "$TMP/help" ] || [ ! -s "$TMP/$page.1" ]; then
    fail "options $verb: --dump-options, --help or the man page is empty ($(head -1 "$TMP/err"))"
    continue
  fi
  # The man page renders without a warning from man or groff.
  warn=$(MANWIDTH=80 man --warnings -l "$TMP/$page.1" 2>&1 > "$TMP/$page.txt"; groff -ww -z -man "$TMP/$page.1" 2>&1)
  [ -z "$warn" ] && [ "$(wc -l < "$TMP/$page.txt")" -gt 20 ] && pass "options $verb: man -l renders $page.1 without warnings" ||
    fail "options $verb: $page.1: $(echo "$warn" | head -3 | tr '\n' ' ') ($(wc -l < "$TMP/$page.txt") lines)"
  if [ -f "${VKCU_BUILD:-}/man/$page.1" ]; then
    cmp -s "$VKCU_BUILD/man/$page.1" "$TMP/$page.1" && pass "options $verb: make man's $page.1 is the binary's" ||
      fail "options $verb: $VKCU_BUILD/man/$page.1 differs from 'vkcu --generate' (stale make man?)"
  fi
  # --help and the man page name every option of the table, and --help no
  # other: the option column of --help is the table.
  missing_help= missing_man= bad_parse=
  sed 's/\\-/-/g' "$TMP/$page.txt" > "$TMP/$page.plain"
  while IFS=$'\t' read -r long short type metavar lo hi choices def; do
    for o in $long $short; do
      [ "$o" = - ] && continue
      grep -qE -- "^  (-[a-z], )?$o( |,|$)|^  -[a-z], $o( |$)" "$TMP/help" || missing_help="$missing_help $o"
      grep -qE -- "(^|[ ,])$o( |,|$)" "$TMP/$page.plain" || missing_man="$missing_man $o"
    done
    # The parser takes each option, in each spelling, with a value of its
    # type: `--help` after it then answers (exit 0) with the usage.
    val=$(value_for "$type" "$lo" "$choices" "$long")
    forms=()
    if [ "$type" = flag ]; then
      [ "$long" != - ] && forms+=("$long")
      [ "$short" != - ] && forms+=("$short")
    else
      [ "$long" != - ] && forms+=("$long $val" "$long=$val")
      [ "$short" != - ] && forms+=("$short $val" "$short$val")
    fi
    for f in "${forms[@]}"; do
      case $f in --version) continue ;; esac # prints the versions, not the usage
      read -r -a w <<< "$f"
      if ! "$V" "${args[@]}" "${w[@]}" --help > "$TMP/out" 2> "$TMP/err" || ! grep -q '^Usage: ' "$TMP/out"; then
        bad_parse="$bad_parse [$f: $(head -1 "$TMP/err")]"
      fi
    done
  done < "$TMP/dump"
  n=$(wc -l < "$TMP/dump")
  [ -z "$missing_help" ] && pass "options $verb: --help shows all $n options of the table" ||
    fail "options $verb: --help lacks$missing_help"
  [ -z "$missing_man" ] && pass "options $verb: $page.1 shows all $n options of the table" ||
    fail "options $verb: $page.1 lacks$missing_man"
  [ -z "$bad_parse" ] && pass "options $verb: the parser takes every option of the table, in every spelling" ||
    fail "options $verb: the parser refuses$bad_parse"
  # No option in --help that the table lacks.
  extra=
  for o in $(grep -oE -- '^  -[a-z]( |,|$)|^  (-[a-z], )?--[a-z0-9-]+' "$TMP/help" | grep -oE -- '-[-a-z0-9]+'); do
    [ "$o" = -- ] && continue
    cut -f1,2 "$TMP/dump" | tr '\t' '\n' | grep -qxe "$o" || extra="$extra $o"
  done
  [ -z "$extra" ] && pass "options $verb: every option in --help is in the table" || fail "options $verb: --help has$extra, not in the table"
done

# Syntax as getopt_long: --opt=value, --opt value, attached and grouped
# short options, options after operands, and -- ending the options.
"$V" hash --backend=cpu --frames=3 "$in" > "$TMP/a" 2> "$TMP/err"
"$V" hash "$in" --backend cpu --frames 3 > "$TMP/b" 2>> "$TMP/err"
[ "$(frames "$TMP/a" | wc -l)" = 3 ] && cmp -s "$TMP/a" "$TMP/b" &&
  pass "options: --frames=3 and --frames 3 (after the input) give the same 3 hashes" || fail "options: --opt=value: $(frames "$TMP/a" | wc -l) lines; $(head -1 "$TMP/err")"
"$V" hash --backend cpu --frames 3 -qo"$TMP/c" "$in" 2> "$TMP/err" && "$V" hash --backend cpu --frames 3 -yqo "$TMP/c" "$in" 2>> "$TMP/err"
cmp -s "$TMP/a" "$TMP/c" && pass "options: grouped short options -qo FILE, -yqo FILE and -oFILE" || fail "options: -qoFILE: $(head -1 "$TMP/err")"
expect "options: -j0 names -j and its range" 2 "^vkcu: error: -j: '0' is not an integer in \\[1, 256\\]" -- "$V" batch "$MEDIA" "$TMP/o" --dry-run -j0
# (media/gen's plan holds failures, two inputs for one output: the dry run exits 2 as the run would)
"$V" batch "$MEDIA" "$TMP/o" --dry-run -j2 > "$TMP/j2" 2>&1; "$V" batch "$MEDIA" "$TMP/o" --dry-run --jobs 2 > "$TMP/jobs2" 2>&1
[ -s "$TMP/j2" ] && cmp -s "$TMP/j2" "$TMP/jobs2" && [ ! -e "$TMP/o" ] && pass "options: batch -j2 as --jobs 2" || fail "options: -j2: $(head -1 "$TMP/j2")"
mkdir -p "$TMP/dash" && cp "$in" "$TMP/dash/--frames=3"
(cd "$TMP/dash" && "$V" hash --backend cpu --frames 3 -- --frames=3) > "$TMP/d" 2> "$TMP/err"
cmp -s "$TMP/a" "$TMP/d" && pass "options: after --, '--frames=3' is a file" || fail "options: -- then --frames=3: $(head -1 "$TMP/err")"
expect "options: a flag takes no value" 2 "^vkcu: error: --strict takes no value \\('--strict=1'\\)" -- "$V" hash --strict=1 "$in"
expect "options: a missing value" 2 "^vkcu: error: --crf needs a value \\(--crf N\\)" -- "$V" "$in" -o "$TMP/x.mkv" --crf
expect "options: a choice names the choices" 2 "^vkcu: error: --handoff: 'fast' is not binary or timeline \\(see" -- "$V" hash --handoff fast "$in"
expect "hint: a misspelt choice" 2 "^vkcu: error: --backend: 'gpuu' is not cpu, gpu or auto: did you mean gpu\\?" -- "$V" hash --backend gpuu "$in"
expect "hint: a choice cut short" 2 "--log-level: 'warn' is not error, warning, info, verbose or debug: did you mean warning\\?" -- "$V" hash --log-level warn "$in"

# Typos and other verbs' options: one line, exit 2, what to type instead.
expect "hint: misspelt long option" 2 "^vkcu: error: hash: unknown option '--algp': did you mean --algo\\? \\(see vkcu hash --help\\)$" -- "$V" hash --algp md5 "$in"
expect "hint: transposed letters" 2 "unknown option '--chian': did you mean --chain\\?" -- "$V" --chian copy "$in" -o "$TMP/x.mkv"
expect "hint: cut short" 2 "unknown option '--dur': did you mean --duration\\?" -- "$V" hash --dur 3 "$in"
expect "hint: another verb's option" 2 "hash: unknown option '--jobs': it is an option of 'vkcu verify', 'vkcu batch'" -- "$V" hash --jobs 2 "$in"
expect "hint: another verb's short option" 2 "hash: unknown option '-n': it is an option of 'vkcu INPUT -o OUTPUT'" -- "$V" hash -n "$in"
expect "hint: long option with one dash" 2 "unknown option '-crf': did you mean --crf\\?" -- "$V" "$in" -o "$TMP/x.mkv" -crf 20
expect "hint: a verb misspelt" 2 "'hsah' is neither a file nor a verb: did you mean 'vkcu hash'\\?" -- "$V" hsah "$in"
expect "hint: a word that is no verb and no file (issue 38.10)" 2 "^vkcu: error: 'nope' is neither a file nor a verb: 'vkcu help' lists the verbs" -- "$V" nope
expect "hint: a missing input with -o stays a bad input" 3 "nope: no such file" -- "$V" nope -o "$TMP/x.mkv"
expect "hint: nothing near stays plain" 2 "unknown option '--frobnicate' \\(a file whose name starts with '-' goes after '--'\\)" -- "$V" hash --frobnicate "$in"
# ffmpeg habits answered with vkcu's spelling.
ff() { # ffmpeg-option expected-hint args...
  local o=$1 hint=$2; shift 2
  expect "hint: ffmpeg's $o" 2 "unknown option '$(printf '%s' "$o" | sed 's/[.*^$]/\\&/g')': $hint" -- "$V" "$@"
}
ff -i "the input is an operand, without -i" -i "$in" -o "$TMP/x.mkv"
ff -ss "did you mean --start T\\? \\(ffmpeg's -ss\\)" "$in" -ss 2 -o "$TMP/x.mkv"
ff -t "did you mean --duration T\\?" "$in" -t 2 -o "$TMP/x.mkv"
ff -c:v "did you mean --encoder NAME\\?" "$in" -c:v libx264 -o "$TMP/x.mkv"
ff -b:v "did you mean --bitrate B\\?" "$in" -b:v 2M -o "$TMP/x.mkv"
ff -vf "did you mean --chain TEXT" "$in" -vf scale=640:-2 -o "$TMP/x.mkv"
ff -hwaccel "did you mean --backend gpu\\?" -hwaccel vulkan "$in" -o "$TMP/x.mkv"
ff -c:v "ffmpeg's -c:v is vkcu's --encoder NAME, an option of 'vkcu INPUT -o OUTPUT', 'vkcu batch'" hash -c:v ffv1 "$in"
# -y is vkcu's too, and means what it means in ffmpeg: replace the output.
echo keep > "$TMP/y.mkv"
"$V" --backend cpu -q "$in" --frames 2 -o "$TMP/y.mkv" 2> /dev/null
[ "$(cat "$TMP/y.mkv")" = keep ] && "$V" --backend cpu -q -y "$in" --frames 2 -o "$TMP/y.mkv" && [ "$(stat -c %s "$TMP/y.mkv")" -gt 100 ] &&
  pass "options: -y replaces the output, as in ffmpeg; without it the file stays" || fail "options: -y"
[ ! -e "$TMP/x.mkv" ] && pass "options: no output after refused options" || fail "options: $TMP/x.mkv written"

# Bash completion, generated from the same table.
"$V" --generate completion > "$TMP/completion"
if [ -f "${VKCU_BUILD:-}/completion/vkcu" ]; then
  cmp -s "$VKCU_BUILD/completion/vkcu" "$TMP/completion" && pass "options: make completion's script is the binary's" ||
    fail "options: $VKCU_BUILD/completion/vkcu differs from 'vkcu --generate completion'"
fi
complete_words() { # words... (the last one is completed)
  (cd "$TMP/dash" && bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vkcu; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$TMP/completion" "$@" | sort | tr '\n' ' ' | sed 's/ $//')
}
check() { # name expected words...
  local name=$1 want=$2; shift 2
  local got; got=$(complete_words "$@")
  [ "$got" = "$want" ] && pass "completion: $name" || fail "completion: $name: '$got', expected '$want'"
}
check "verbs" "batch" "$V" bat
check "an option of hash" "--algo" "$V" hash --al
check "batch's options" "--shard --shard-count" "$V" batch --sh
check "hash --algo's choices" "blake3 crc32 md5 sha256 xxh64" "$V" hash --algo ''
check "--opt=value (bash splits at =)" "json" "$V" hash --format = js
check "-o completes files" "--frames=3" "$V" hash -o --fr
check "after --, files only" "--frames=3" "$V" hash -- --fr
check "no --algo in batch" "" "$V" batch --alg
ops=$(complete_words "$V" --chain '')
case " $ops " in *" crop "*" scale "*) pass "completion: --chain offers the operators ($ops)" ;; *) fail "completion: --chain: '$ops'" ;; esac
check "--chain after a comma" "crop,scale" "$V" hash --chain crop,sc
presets=$(complete_words "$V" --pipeline web)
[ "$presets" = "web-720p web-h264" ] && pass "completion: --pipeline offers preset names" || fail "completion: --pipeline web: '$presets'"
for verb in vkcu $verbs; do
  args=(); [ "$verb" = vkcu ] || args=("$verb")
  want=$("$V" "${args[@]}" --dump-options | cut -f1 | grep -v '^-$' | sort | tr '\n' ' ' | sed 's/ $//')
  check "$verb: every long option" "$want" "$V" "${args[@]}" --
done

# The command line's files call each other in one direction only (issue
# 14.3: cli.c and cli_batch.c called each other): an edge A -> B for each
# symbol A uses that B defines, and tsort finds no loop.
objs=$(ls "${VKCU_BUILD:-}"/obj/src/cli/*.o 2> /dev/null)
if [ -z "$objs" ]; then
  skip "options: no CLI objects under \$VKCU_BUILD/obj to check for call cycles"
else
  : > "$TMP/edges"
  for a in $objs; do
    nm -u "$a" | awk '{print $2}' | sort -u > "$TMP/uses"
    for b in $objs; do
      [ "$a" = "$b" ] && continue
      nm --defined-only "$b" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sort -u | comm -12 - "$TMP/uses" | grep -q . &&
        echo "$(basename "$a" .o) $(basename "$b" .o)" >> "$TMP/edges"
    done
  done
  if [ "$(wc -l < "$TMP/edges")" -ge 5 ] && tsort "$TMP/edges" > /dev/null 2> "$TMP/loop"; then
    pass "options: no call cycle among the CLI files ($(wc -l < "$TMP/edges") edges)"
  else
    fail "options: CLI files call each other: $(head -3 "$TMP/loop" | tr '\n' ' ') edges: $(tr '\n' ';' < "$TMP/edges")"
  fi
fi

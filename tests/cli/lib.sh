# Helpers for tests/cli/*.sh: each test prints one PASS/FAIL/SKIP line.
# Sourced with VKCU, FFMPEG_BIN, MEDIA and VKCU_CONFORMANCE set by tests/run.sh.
: "${VKCU:?run through tests/run.sh}"
FFPROBE="$FFMPEG_BIN/ffprobe"
FFMPEG="$FFMPEG_BIN/ffmpeg"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
skip() { echo "SKIP $*"; }
# expect NAME EXIT-CODE PATTERN -- command...: exit code and one stderr line matching PATTERN
expect() {
  local name=$1 code=$2 pat=$3; shift 4
  "$@" > "$TMP/.stdout" 2> "$TMP/.stderr"
  local rc=$?
  if [ "$rc" != "$code" ]; then fail "$name: exit $rc, expected $code ($(tail -1 "$TMP/.stderr"))"; return 1; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" "$TMP/.stderr"; then fail "$name: stderr lacks /$pat/: $(head -2 "$TMP/.stderr" | tr '\n' ' ')"; return 1; fi
  pass "$name"
}
frames() { grep -v '^#' "$1"; }
# no_leftovers DIR: no temporary or partial files left behind
no_leftovers() { ! ls -A "$1" | grep -q '\.part'; }
probe_val() { # file stream entry
  "$FFPROBE" -v error -select_streams "$2" -show_entries "$3" -of default=nw=1:nk=1 "$1" | head -1
}

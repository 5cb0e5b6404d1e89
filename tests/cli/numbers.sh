#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Numbers (issue 13, defect 7): every numeric option of every verb, chain
# operator key, preset key, manifest key and environment variable goes
# through one parser per kind. NaN, infinities, overflow, fractions where a
# whole number is needed, blanks and values outside the range are refused
# with exit 2 (3 for a manifest, like any manifest mistake) and a message
# that names the option and the accepted range; nothing is written. Values
# inside the range still take effect.
source "$(dirname "$0")/lib.sh"
in=$MEDIA/h264-aac.mp4
o=$TMP/o.mkv
V=$VKCU
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; } # a literal as an ERE

# --bitrate: a double cast to an integer was undefined behaviour and the value ignored.
for b in nan inf -inf 1e999 0.1 1e30 0 -4M 4X 1k5 "" " 4M" 99999M; do
  expect "--bitrate '$b' refused" 2 "--bitrate: '$(re "$b")' is not a bitrate in \\[1k, 10000M\\] bit/s" -- \
    "$V" --backend cpu "$in" -o "$o" --bitrate "$b"
  expect "batch --bitrate '$b' refused" 2 "--bitrate: '$(re "$b")' is not a bitrate in \\[1k, 10000M\\]" -- \
    "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run --bitrate "$b"
done
[ ! -e "$o" ] && [ ! -e "$TMP/batch-out" ] && pass "no output after refused numbers" || fail "output written: $(ls "$TMP")"

# A bitrate in range is honoured: 40 kbit/s makes a much smaller file than 2 Mbit/s.
"$V" --backend cpu -q "$in" -o "$TMP/low.mkv" --encoder libx264 --bitrate 40k &&
  "$V" --backend cpu -q "$in" -o "$TMP/high.mkv" --encoder libx264 --bitrate 2M
low=$(stat -c %s "$TMP/low.mkv" 2>/dev/null || echo 0) high=$(stat -c %s "$TMP/high.mkv" 2>/dev/null || echo 0)
[ "$low" -gt 0 ] && [ $((low * 4)) -lt "$high" ] && pass "--bitrate 40k vs 2M: $low vs $high bytes" ||
  fail "--bitrate not honoured: 40k gives $low bytes, 2M gives $high"

# Integer options of every verb: range in the message; no fractions, blanks, overflow.
int_opt() { # name lo hi value verb-args...
  local name=$1 lo=$2 hi=$3 val=$4; shift 4
  expect "$name '$val' refused" 2 "$(re "$name"): '$(re "$val")' is not an integer in \\[$lo, $hi\\]" -- "$@" "$name" "$val"
}
for v in 64 -1 1.5 nan " 5" 99999999999999999999; do int_opt --crf 0 63 "$v" "$V" --backend cpu "$in" -o "$o"; done
int_opt --crf 0 63 1e1 "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run
int_opt --gop 0 100000 -1 "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run
int_opt --gop 0 100000 100001 "$V" --backend cpu "$in" -o "$o"
int_opt --encode-workers 1 64 0 "$V" --backend cpu "$in" -o "$o"
int_opt --frames 1 2147483647 2147483648 "$V" hash --backend cpu "$in"
int_opt --ring-size 3 16 2 "$V" hash --backend cpu "$in"
int_opt --device 0 63 99999999999999999999 "$V" hash --backend cpu "$in"
int_opt --decode-threads 1 256 0x10 "$V" hash --backend cpu "$in"
int_opt --stall-timeout 0 3600 inf "$V" hash --backend cpu "$in"
int_opt --jobs 1 256 +2 "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run
int_opt --shard-count 1 1000000 1e3 "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run
int_opt --max-diff 0 65535 1.5 "$V" compare "$in" "$in"
expect "compare --min-psnr nan refused" 2 "--min-psnr: 'nan' is not a number in \\[0, 1000\\]" -- "$V" compare "$in" "$in" --min-psnr nan
expect "compare --min-psnr inf refused" 2 "--min-psnr: 'inf' is not a number in \\[0, 1000\\]" -- "$V" compare "$in" "$in" --min-psnr inf
expect "--shard 4/4 refused" 2 "--shard: '4/4' is not i/N with N in \\[1, 1000000\\]" -- "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run --shard 4/4
expect "--shard 0/99999999999999999999 refused" 2 "--shard: .* is not i/N" -- "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run --shard 0/99999999999999999999
expect "--devices 64 refused" 2 "--devices: '64' is not 'all' or a list of CUDA ordinals in \\[0, 63\\]" -- "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run --devices 64
expect "--devices ' 1' refused" 2 "--devices: '0, 1' is not" -- "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run --devices "0, 1"
expect "SLURM_ARRAY_TASK_ID overflow refused" 2 "SLURM_ARRAY_TASK_ID='99999999999' is not an integer in \\[0, 2147483647\\]" -- \
  env SLURM_ARRAY_TASK_ID=99999999999 SLURM_ARRAY_TASK_COUNT=4 "$V" batch "$MEDIA" "$TMP/batch-out" --dry-run

# Times: NaN, infinities, overflowing frame numbers.
for t in nan inf 1e999 -1 1:nan 1e10 1::2 99999999999999999999f -1f 1.5f; do
  expect "--start '$t' refused" 2 "--start: '$(re "$t")' is not a (time in \\[0, 1000000000\\] s|frame number in \\[0, 9223372036854775807\\])" -- \
    "$V" --backend cpu "$in" -o "$o" --start "$t"
done
expect "--duration nan refused" 2 "--duration: 'nan' is not a time in \\[0, 1000000000\\] s" -- "$V" hash --backend cpu "$in" --duration nan

# Operator keys: the key's range in the message.
for c in denoise=sigma=nan denoise=sigma=inf denoise=sigma=1e999 "denoise=sigma= 5" denoise=patch=2.0 \
         denoise=patch=99999999999999999999 tonemap=peak=1e5; do
  expect "--chain $c refused" 2 "column [0-9]+: (denoise|tonemap): [a-z]+='.*' is not (an integer|a number) in \\[" -- \
    "$V" --backend cpu "$in" -o "$o" --chain "$c"
done

# Preset keys: file:line:column and the range.
printf 'description x\nbitrate nan\n' > "$TMP/br.pipe"
printf 'description x\nencoder libx264\ngop 1e3\n' > "$TMP/gop.pipe"
printf 'description x\nop denoise=sigma=inf\n' > "$TMP/op.pipe"
expect "preset bitrate nan" 2 "br.pipe:2:9: bitrate: 'nan' is not a bitrate in \\[1k, 10000M\\]" -- "$V" pipelines "$TMP/br.pipe"
expect "preset gop 1e3" 2 "gop.pipe:3:5: gop: '1e3' is not an integer in \\[0, 100000\\]" -- "$V" pipelines "$TMP/gop.pipe"
expect "preset op sigma=inf" 2 "op.pipe:2:18: op: denoise: sigma='inf' is not a number in \\[0.5, 50\\]" -- "$V" pipelines "$TMP/op.pipe"

# Manifest keys: file:line and the range.
mkdir -p "$TMP/m"
man() { printf 'vkcu-manifest 1\n[case a]\ninput = x.mp4\nreference = x.mp4\n%s\n' "$2" > "$TMP/m/$1.manifest"; }
man frames 'frames = 1e3'
man diff 'max-diff = nan'
man psnr 'min-psnr = inf'
expect "manifest frames 1e3" 3 "frames.manifest:5: frames '1e3' is not an integer in \\[1, 2147483647\\]" -- "$V" verify "$TMP/m/frames.manifest"
expect "manifest max-diff nan" 3 "diff.manifest:5: max-diff 'nan' is not an integer in \\[0, 65535\\]" -- "$V" verify "$TMP/m/diff.manifest"
expect "manifest min-psnr inf" 3 "psnr.manifest:5: min-psnr 'inf' is not a number in \\[0, 1000\\]" -- "$V" verify "$TMP/m/psnr.manifest"
printf 'vkcu-manifest 99999999999999999999\n' > "$TMP/m/version.manifest"
expect "manifest format number overflow" 3 "version.manifest:1: not a vkcu manifest" -- "$V" verify "$TMP/m/version.manifest"
printf 'vkcu-manifest 2\n' > "$TMP/m/v2.manifest"
expect "manifest format 2 named" 3 "v2.manifest:1: manifest format 2; this vkcu reads format 1" -- "$V" verify "$TMP/m/v2.manifest"

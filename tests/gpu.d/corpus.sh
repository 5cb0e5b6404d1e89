#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU suite (run by tests/gpu.sh, which sets VKCU, FFMPEG, MEDIA and OUTDIR):
# every clip of the generated corpus (tools/make-corpus.sh) hashed on the GPU
# backend equals the CPU backend, every frame (all framemd5 columns), whether
# the clip decodes through Vulkan Video or through software decode + upload.
# When one backend refuses a clip, the other must refuse it too, with the
# same exit code. Also: the corpus generated on this machine is byte-identical
# to media/corpus.sha256 (a second CPU model proving the corpus portable).
# One PASS/FAIL/SKIP line per clip.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUTDIR:-$(mktemp -d)}/corpus
mkdir -p "$out"
if ! [ -x "${VKCU:-}" ]; then echo "SKIP corpus-gpu: \$VKCU not set (run through tests/gpu.sh)"; exit 0; fi
if ! timeout -s KILL 60 "$VKCU" probe > "$out/probe.txt" 2>&1; then
  echo "SKIP corpus-gpu: no Vulkan/CUDA GPU pair on this machine"; exit 0
fi
sums=$root/media/corpus.sha256
corpus=${MEDIA:-$root/media/gen}/corpus
ffbin=$(dirname "${FFMPEG:-/nonexistent/ffmpeg}")

# Made here from scratch: the bytes must match those recorded on the build machine.
if [ -x "$ffbin/ffmpeg" ] && FFMPEG_BIN=$ffbin bash "$root/tools/make-corpus.sh" "$out/regen" 2> "$out/regen.err"; then
  if (cd "$out/regen" && sha256sum --quiet -c "$sums" > "$out/regen.txt" 2>&1); then
    echo "PASS corpus-gpu regenerated: $(wc -l < "$sums") clips made on this machine byte-identical to media/corpus.sha256"
  else
    echo "FAIL corpus-gpu regenerated: clips differ from media/corpus.sha256: $(grep -c FAILED "$out/regen.txt") ($(grep FAILED "$out/regen.txt" | cut -d: -f1 | tr '\n' ' '))"
  fi
  [ -d "$corpus" ] || corpus=$out/regen
else
  echo "SKIP corpus-gpu regenerated: could not run tools/make-corpus.sh with $ffbin/ffmpeg ($(tail -1 "$out/regen.err" 2>/dev/null))"
fi
if [ ! -d "$corpus" ]; then echo "SKIP corpus-gpu: no corpus at $corpus (make media)"; exit 0; fi

frames() { grep -v '^#' "$1"; }
# Codecs this GPU decodes on compute queues (FFmpeg 8.1's FFV1 and DPX
# hwaccels), as `vkcu formats` marks them: their clips must take that path,
# except where FFmpeg's or vkcu's rules send them to software decode
# (sw_expected: the clip, why).
compute_codecs=" $("$VKCU" formats 2>/dev/null | awk '/^  GPU / && /\(compute\)$/ {print $2}' | tr '\n' ' ') "
ffprobe=$(dirname "${FFMPEG:-/nonexistent/ffmpeg}")/ffprobe
sw_expected() {
  case $1 in
    ffv1-v1.avi) echo "FFmpeg's Vulkan FFV1 decoder takes version 3 and later" ;;
    dpx.nut) echo "FFmpeg's Vulkan decoders give 10-bit planar RGB as packed X2BGR10" ;;
  esac
}
while read -r _ file; do
  clip=$corpus/$file name="corpus-gpu $file"
  [ -f "$clip" ] || { echo "FAIL $name: clip missing from $corpus"; continue; }
  timeout -s KILL 300 "$VKCU" hash "$clip" --backend cpu -o "$out/$file.cpu" -y 2> "$out/$file.cpu.err"
  crc=$?
  timeout -s KILL 300 "$VKCU" hash "$clip" --backend gpu --stats -o "$out/$file.gpu" -y 2> "$out/$file.gpu.err"
  grc=$?
  path=$(sed -n 's/.*[ :]path=\([^ ;]*\).*/\1/p' "$out/$file.gpu.err" | head -1)
  if [ $crc != 0 ] || [ $grc != 0 ]; then
    if [ $crc = $grc ]; then
      echo "PASS $name (both backends refuse it, exit $crc: $(tail -1 "$out/$file.gpu.err"))"
    else
      echo "FAIL $name: CPU backend exit $crc ($(tail -1 "$out/$file.cpu.err")), GPU backend exit $grc ($(tail -1 "$out/$file.gpu.err"))"
    fi
    continue
  fi
  n=$(frames "$out/$file.cpu" | wc -l)
  codec=$("$ffprobe" -v error -select_streams v:0 -show_entries stream=codec_name -of csv=p=0 "$clip" 2>/dev/null)
  if [[ $path != *cuda* ]]; then
    echo "FAIL $name: --backend gpu took path '$path', not through CUDA"
  elif [[ $compute_codecs == *" $codec "* ]] && [ -z "$(sw_expected "$file")" ] && [ "$path" != vulkan-compute-decode+cuda ]; then
    echo "FAIL $name: $codec decodes on this GPU's compute queues (vkcu formats), but the job took path '$path'"
  elif [ -n "$(sw_expected "$file")" ] && [ "$path" != sw-decode+upload+cuda ]; then
    echo "FAIL $name: expected software decode + upload ($(sw_expected "$file")), took path '$path'"
  elif [ "$n" -gt 0 ] && cmp -s <(frames "$out/$file.cpu") <(frames "$out/$file.gpu"); then
    echo "PASS $name ($n frames, GPU = CPU, $path)"
  else
    echo "FAIL $name: GPU ($path) differs from CPU: $(diff <(frames "$out/$file.cpu") <(frames "$out/$file.gpu") | sed -n '2p;4p' | tr '\n' ' ')"
  fi
done < "$sums"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu's own Vulkan device (run by tests/gpu.sh; issue 15.1). The device
# vkcu makes (the decode family's queues and one compute queue) must give the
# same frames as FFmpeg's device creation (VKCU_VULKAN_DEVICE=ffmpeg) and the
# CPU backend; --stats must say whose device it was; a device of ours that
# cannot be made (an extension the driver does not have, asked for through
# VKCU_VK_EXTRA_EXTS) must fall back to FFmpeg's with a warning, or fail with
# exit 5 under VKCU_VULKAN_DEVICE=vkcu; 7 streams in one process (batch
# --jobs 7, every decode queue in use) must hash as the CPU does.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
frames() { grep -v '^#' "$1"; }
dev_of() { sed -n 's/.*Vulkan device: \(.*\)$/\1/p' "$1" | head -1; }
path_of() { sed -n 's/.*path=\([^ ]*\).*/\1/p' "$1" | head -1; }

for clip in hevc10.mkv h264-aac.mp4 crop-h264.mkv; do
  in=$MEDIA/$clip
  [ -s "$in" ] || { echo "FAIL setup-own-device $clip: $in missing (make media)"; continue; }
  timeout -s KILL 300 "$VKCU" hash --backend cpu "$in" -o "$out/cpu-$clip" -y 2> "$out/cpu-$clip.err" ||
    { echo "FAIL setup-own-device $clip: CPU backend failed: $(tail -1 "$out/cpu-$clip.err")"; continue; }
  timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" -o "$out/own" -y 2> "$out/own.err" ||
    { echo "FAIL setup-own-device $clip: $(tail -1 "$out/own.err")"; continue; }
  VKCU_VULKAN_DEVICE=ffmpeg timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" -o "$out/ff" -y \
    2> "$out/ff.err" || { echo "FAIL setup-own-device $clip: FFmpeg's device: $(tail -1 "$out/ff.err")"; continue; }
  own=$(dev_of "$out/own.err") ff=$(dev_of "$out/ff.err")
  n=$(frames "$out/cpu-$clip" | wc -l)
  if [ "$(path_of "$out/own.err")" != vulkan-decode+cuda ] || [ "$(path_of "$out/ff.err")" != vulkan-decode+cuda ]; then
    echo "FAIL setup-own-device $clip: paths $(path_of "$out/own.err") (ours) and $(path_of "$out/ff.err") (FFmpeg's), want vulkan-decode+cuda"
  elif [[ $own != "vkcu ("*" decode + 1 compute queues"* ]] || [ "$ff" != ffmpeg ]; then
    echo "FAIL setup-own-device $clip: --stats says the devices were '$own' and '$ff'"
  elif [ "$n" = 0 ] || ! cmp -s <(frames "$out/own") <(frames "$out/cpu-$clip") || ! cmp -s <(frames "$out/ff") <(frames "$out/cpu-$clip"); then
    echo "FAIL setup-own-device $clip: hashes differ ($n CPU frames): ours $(frames "$out/own" | wc -l) lines, FFmpeg's device $(frames "$out/ff" | wc -l)"
  else
    echo "PASS setup-own-device $clip: $n frames equal on '$own', FFmpeg's device and the CPU ($(grep -o 'setup=[0-9.]*s' "$out/own.err") vs $(grep -o 'setup=[0-9.]*s' "$out/ff.err"))"
  fi
done

# Our device cannot be made: FFmpeg's takes over, saying so; or exit 5 when only ours is allowed.
in=$MEDIA/hevc10.mkv
VKCU_VK_EXTRA_EXTS=VK_VKCU_no_such_extension timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" \
  -o "$out/fb" -y 2> "$out/fb.err"
rc=$?
if [ $rc = 0 ] && grep -q "own Vulkan device failed (vkCreateDevice failed: VK_ERROR_EXTENSION_NOT_PRESENT); using FFmpeg's" "$out/fb.err" &&
  [ "$(dev_of "$out/fb.err")" = ffmpeg ] && cmp -s <(frames "$out/fb") <(frames "$out/cpu-hevc10.mkv"); then
  echo "PASS setup-fallback: FFmpeg's device took over with a warning, same hashes"
else
  echo "FAIL setup-fallback: exit $rc, device '$(dev_of "$out/fb.err")': $(grep -m1 -i 'vulkan' "$out/fb.err")"
fi
VKCU_VULKAN_DEVICE=vkcu VKCU_VK_EXTRA_EXTS=VK_VKCU_no_such_extension timeout -s KILL 300 "$VKCU" hash --backend gpu \
  "$in" -o "$out/strict" -y 2> "$out/strict.err"
rc=$?
if [ $rc = 5 ] && grep -q "VK_ERROR_EXTENSION_NOT_PRESENT" "$out/strict.err" && [ ! -e "$out/strict" ]; then
  echo "PASS setup-own-only: exit 5: $(tail -1 "$out/strict.err" | cut -c1-120)"
else
  echo "FAIL setup-own-only: exit $rc (want 5), output $([ -e "$out/strict" ] && echo written || echo none): $(tail -1 "$out/strict.err")"
fi

# Seven streams at once on our device: every decode queue in use, every hash as the CPU's.
mkdir -p "$out/in7" "$out/gpu7" "$out/cpu7"
for i in 1 2 3 4 5 6 7; do ln -s "$MEDIA/h264-aac.mp4" "$out/in7/s$i.mp4"; done
timeout -s KILL 600 "$VKCU" batch "$out/in7" "$out/gpu7" --pipeline regression-hash --jobs 7 --backend gpu -q \
  2> "$out/gpu7.err"
rc=$?
timeout -s KILL 600 "$VKCU" batch "$out/in7" "$out/cpu7" --pipeline regression-hash --jobs 2 --backend cpu -q \
  2> "$out/cpu7.err"
same=0
for i in 1 2 3 4 5 6 7; do
  g=$(ls "$out"/gpu7/s$i.* 2>/dev/null | head -1) c=$(ls "$out"/cpu7/s$i.* 2>/dev/null | head -1)
  [ -s "$g" ] && [ -s "$c" ] && cmp -s <(frames "$g") <(frames "$c") && same=$((same + 1))
done
if [ $rc = 0 ] && [ $same = 7 ]; then
  echo "PASS setup-7-streams: 7 concurrent GPU streams hash as the CPU does"
else
  echo "FAIL setup-7-streams: exit $rc, $same of 7 equal to the CPU: $(tail -1 "$out/gpu7.err")"
fi

# --stats' set-up timeline (tools/setup-profile.sh reads it): every step of
# the shared device and of the job, each ending after it starts, in the
# order the threads run them, and the job's last step ending at setup=.
span() { sed -n "s/^stats: setup timeline .* $2=\(-\{0,1\}[0-9]*\)-\(-\{0,1\}[0-9]*\).*/\1 \2/p" "$1"; }
in=$MEDIA/hevc10.mkv
timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" -o "$out/tl" -y 2> "$out/tl.err"
rc=$?
bad=
for s in vk_instance vk_enumerate vk_caps vk_device vk_hwctx cuda_init cuda_context demux gpu_open decoder first_frame; do
  read -r a b <<< "$(span "$out/tl.err" $s)"
  [ -n "${a:-}" ] && [ "$b" -ge "$a" ] || bad+=" $s(${a:-none}-${b:-})"
  eval "s_$s=\${a:-0} e_$s=\${b:-0}"
done
su=$(sed -n 's/^stats: setup=\([0-9.]*\)s.*/\1/p' "$out/tl.err" | awk '{printf "%d", $1 * 1000 + 0.5}')
if [ $rc != 0 ] || [ -n "$bad" ]; then
  echo "FAIL setup-timeline: exit $rc, steps missing or ending before they start:$bad"
elif [ "$e_vk_instance" -gt "$s_vk_enumerate" ] || [ "$e_vk_enumerate" -gt "$s_vk_caps" ] ||
  [ "$e_vk_caps" -gt "$s_vk_device" ] || [ "$e_vk_device" -gt "$s_vk_hwctx" ] || [ "$e_cuda_init" -gt "$s_cuda_context" ] ||
  [ "$e_demux" -gt "$s_gpu_open" ] || [ "$e_gpu_open" -gt "$s_decoder" ] || [ "$e_decoder" -gt "$s_first_frame" ] ||
  [ $((e_first_frame - su)) -gt 1 ] || [ $((su - e_first_frame)) -gt 1 ]; then
  echo "FAIL setup-timeline: steps out of order or the last one not at setup=${su}ms: $(grep 'setup timeline' "$out/tl.err")"
elif ! grep -qE "Vulkan device: vkcu \([12] decode \+ 1 compute queues" "$out/tl.err"; then
  echo "FAIL setup-timeline: one stream should get its claimed decode queue (1, or 2 without claims) and one compute queue: $(grep -o 'Vulkan device: .*' "$out/tl.err")"
else
  echo "PASS setup-timeline: $(grep -o 'setup timeline.*' "$out/tl.err")"
fi

# One decode queue (both of FFmpeg's execution contexts on it), and CUDA's
# start before the Vulkan steps (VKCU_SETUP_SERIAL=1): the same frames.
for v in VKCU_VK_DECODE_QUEUES=1 VKCU_SETUP_SERIAL=1; do
  env "$v" timeout -s KILL 300 "$VKCU" hash --backend gpu --stats "$in" -o "$out/v" -y 2> "$out/v.err"
  rc=$?
  want="vkcu (1 decode"
  [ "$v" = VKCU_SETUP_SERIAL=1 ] && want="vkcu ("
  read -r ca cb <<< "$(span "$out/v.err" cuda_context)"
  read -r ia ib <<< "$(span "$out/v.err" vk_instance)"
  if [ $rc != 0 ] || ! cmp -s <(frames "$out/v") <(frames "$out/cpu-hevc10.mkv"); then
    echo "FAIL setup-variant $v: exit $rc, hashes $(cmp -s <(frames "$out/v") <(frames "$out/cpu-hevc10.mkv")  && echo equal || echo differ): $(tail -1 "$out/v.err")"
  elif ! grep -qF "Vulkan device: $want" "$out/v.err"; then
    echo "FAIL setup-variant $v: $(grep -o 'Vulkan device: .*' "$out/v.err")"
  elif [ "$v" = VKCU_SETUP_SERIAL=1 ] && [ "${cb:-999999}" -gt "${ia:-0}" ]; then
    echo "FAIL setup-variant $v: CUDA's context (ends ${cb:-?}) not before the Vulkan instance (starts ${ia:-?})"
  else
    echo "PASS setup-variant $v: hashes as the CPU's ($(grep -o 'setup=[0-9.]*s' "$out/v.err"))"
  fi
done

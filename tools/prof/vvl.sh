# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tools/prof/*-validate-gpu.sh scripts: Khronos' validation
# layer (core checks, image layouts, thread safety and synchronization
# validation, which reports a hazard whether or not the race strikes in
# that run), from the Debian package in .vvl/ (apt-get download
# vulkan-validationlayers from Debian 13: 1.4.309 runs on Ubuntu 24.04's
# glibc), unpacked into /tmp (not over /: other packages there can break
# the system).
#   vvl_setup CLIP                 unpacks it (exits when there is none); sets
#                                  out (${OUT:-build}, made) and clip
#                                  (${VALIDATE_CLIP:-CLIP}, made if missing)
#   under_vvl LOG TIMEOUT CMD...   runs CMD under the layer, messages to LOG
#                                  (vvl: where vvl_setup unpacked it)
#   vvl_counts LOG                 each message id with its count
vvl_setup() {
  local deb
  deb=$(ls "$root"/.vvl/vulkan-validationlayers_*.deb 2>/dev/null | tail -1)
  [ -n "$deb" ] || { echo "no .vvl/vulkan-validationlayers_*.deb: nothing to run"; exit 1; }
  vvl=/tmp/vkcu-vvl
  export vvl
  rm -rf "$vvl" && mkdir -p "$vvl" && dpkg -x "$deb" "$vvl" || exit 1
  out=${OUT:-$root/build}
  mkdir -p "$out"
  clip=${VALIDATE_CLIP:-$1}
  make_big_clips "$clip"
}
under_vvl() {
  local log=$1 limit=$2
  shift 2
  env VK_LAYER_PATH="$vvl/usr/share/vulkan/explicit_layer.d" \
    LD_LIBRARY_PATH="$vvl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_LOG_FILENAME="$log" \
    VK_LAYER_REPORT_FLAGS=error,warn VK_LAYER_DEBUG_ACTION=VK_DBG_LAYER_ACTION_LOG_MSG \
    VK_LAYER_DUPLICATE_MESSAGE_LIMIT=5 VK_LAYER_VALIDATE_SYNC=true VK_LAYER_THREAD_SAFETY=true \
    VK_LAYER_CHECK_SHADERS=false VK_LAYER_DISABLES=VK_VALIDATION_FEATURE_DISABLE_SHADER_VALIDATION_EXT \
    VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
    timeout -s KILL "$limit" "$@"
}
vvl_counts() {
  grep -o 'MessageID = 0x[0-9a-f]*\|\[ [A-Za-z0-9_-]* \]' "$1" 2>/dev/null | sort | uniq -c | sort -rn | head -30 |
    sed 's/^/    /'
}

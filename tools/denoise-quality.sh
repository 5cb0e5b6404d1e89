#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Denoise quality table: vkcu's tnr and nlm against FFmpeg's hqdn3d and
# nlmeans on the same noisy frames (conformance clips + seeded Gaussian noise
# of sigma 5, 10, 20), each FFmpeg filter at the best point of its grid.
# Runs the test program tests/unit/test_denoise_quality.c with --table.
#   tools/denoise-quality.sh [BUILD_DIR] [extra args: --frames N, --tnr KEYS, --nlm KEYS]
# e.g. tools/denoise-quality.sh build --nlm patch=3:search=7:tradius=0
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ $# -gt 0 && $1 != --* ]]; then
    build=$1
    shift
fi
bin="$build/tests/test_denoise_quality"
if [[ ! -x $bin ]]; then
    make --no-print-directory BUILD="$build" "$bin" >&2
fi
exec "$bin" --table "$@"

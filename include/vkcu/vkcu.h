/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API, everything at once: GPU video post-processing (Vulkan
 * Video decode, CUDA operators, FFmpeg encode) and its regression toolkit.
 *
 *   common.h   error convention, log levels and callback, stop request
 *   version.h  version macros, vkcu_version(), vkcu_version_api()
 *   chain.h    operator chains, the frame callback
 *   job.h      the context (settings, callbacks) and the jobs run through it
 *   hash.h     hash algorithms and hash list formats, their names
 *   regress.h  compare, verify, VMAF
 *   batch.h    a job over every file of a folder
 *   preset.h   pipeline presets (*.pipe files)
 *   probe.h    the machine's Vulkan and CUDA devices
 *   formats.h  what this build writes: video encoders, containers, presets
 *   reader.h   frames pulled one by one, random access, DLPack tensors
 *   number.h   numbers read from text as vkcu reads them (bitrates ...)
 *
 * Link with `pkg-config --cflags --libs vkcu`. Frames handed to callbacks
 * are FFmpeg AVFrames: include <libavutil/frame.h> to read them.
 */
#ifndef VKCU_VKCU_H
#define VKCU_VKCU_H

#include "common.h"
#include "version.h"
#include "chain.h"
#include "hash.h"
#include "job.h"
#include "regress.h"
#include "batch.h"
#include "preset.h"
#include "probe.h"
#include "formats.h"
#include "reader.h"
#include "number.h"

#endif

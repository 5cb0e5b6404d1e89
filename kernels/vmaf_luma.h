/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The luma plane libvmaf's CUDA features read (src/regress/vmaf_cuda.c),
 * from frames whose samples sit in the high bits of 16-bit words (P010,
 * P012, as the GPU decodes 10- and 12-bit video): shifted down to the low
 * bits libvmaf takes (bpc 10, 12). The CPU path converts such frames to
 * planar YUV with swscale, which gives the same samples:
 * tests/unit/test_vmaf.c checks swscale against vkcu_msb_to_lsb16 for
 * every code value.
 */
#ifndef VKCU_VMAF_LUMA_H
#define VKCU_VMAF_LUMA_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

VKCU_HD uint16_t vkcu_msb_to_lsb16(uint16_t v, int shift) { return (uint16_t)(v >> shift); }

/* Enqueues dst = vkcu_msb_to_lsb16(src) for a w x h plane of 16-bit
 * samples (pitches in bytes) on `stream` (a cudaStream_t). Returns a
 * cudaError_t (0: queued). */
int vkcu_cuda_luma_to_lsb(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, int w, int h, int shift,
                          void *stream);

#ifdef __cplusplus
}
#endif

#endif

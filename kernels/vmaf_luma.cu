/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CUDA side of kernels/vmaf_luma.h: one thread per sample.
 */
#include <cuda_runtime.h>

#include "vmaf_luma.h"

static __global__ void luma_to_lsb_kernel(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch, int w, int h,
                                   int shift)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    uint16_t v = ((const uint16_t *)(src + (size_t)y * src_pitch))[x];
    ((uint16_t *)(dst + (size_t)y * dst_pitch))[x] = vkcu_msb_to_lsb16(v, shift);
}

extern "C" int vkcu_cuda_luma_to_lsb(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, int w, int h,
                                     int shift, void *stream)
{
    if (w <= 0 || h <= 0)
        return 0;
    dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    luma_to_lsb_kernel<<<grid, block, 0, (cudaStream_t)stream>>>((const uint8_t *)src, src_pitch, (uint8_t *)dst,
                                                                  dst_pitch, w, h, shift);
    return cudaGetLastError();
}

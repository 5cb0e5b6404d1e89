/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CUDA side of `crop` and `pad` (kernels/croppad.h): one thread per
 * output element, which either copies the input element that
 * vkcu_place_source names or writes the fill colour. Inputs are read
 * through plane_load (interop arrays through their texture objects, or
 * pitch-linear memory), so the element type must be the texture's channel
 * type: uint8/uint16 for one sample, uchar2/ushort2 for Cb/Cr pairs.
 */
#include <cuda_runtime.h>
#include <string.h>

#include "croppad.h"
#include "plane.cuh"

template <typename E>
__global__ void place_kernel(vkcu_gpu_plane in, vkcu_gpu_plane out, vkcu_place_plane g, E fill)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= g.out_w || y >= g.out_h)
        return;
    int sx, sy;
    E v = vkcu_place_source(&g, x, y, &sx, &sy) ? plane_load<E>(in, sx, sy) : fill;
    plane_store<E>(out, x, y, v);
}

template <typename E>
static int launch(const vkcu_gpu_plane *in, const vkcu_gpu_plane *out, const vkcu_place_plane *g, cudaStream_t st)
{
    E fill;
    memcpy(&fill, g->fill, sizeof(fill));
    dim3 block(32, 8), grid((g->out_w + 31) / 32, (g->out_h + 7) / 8);
    place_kernel<E><<<grid, block, 0, st>>>(*in, *out, *g, fill);
    return cudaGetLastError();
}

extern "C" int vkcu_cuda_place(const vkcu_gpu_plane *in, const vkcu_gpu_plane *out, const vkcu_place_plane *g,
                               void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (g->out_w <= 0 || g->out_h <= 0)
        return 0;
    switch (g->sample_bytes * 8 + g->comps) {
    case 9: return launch<uint8_t>(in, out, g, st);
    case 10: return launch<uchar2>(in, out, g, st);
    case 17: return launch<uint16_t>(in, out, g, st);
    case 18: return launch<ushort2>(in, out, g, st);
    default: return cudaErrorInvalidValue;
    }
}

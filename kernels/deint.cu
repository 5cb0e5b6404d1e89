/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUDA kernels of the `deinterlace` operator and their C-callable launchers
 * (kernels/deint_gpu.h). The per-sample math is kernels/deint_math.h, shared
 * with the CPU reference, so both give the same bytes.
 *
 * One thread per output sample. A block covers 64 samples of 4 rows; the
 * row plan (kept line, or which filter and which lines it reads) is the same
 * for the whole row, so warps never diverge on it. The taps are plain
 * cached loads: each input line is read by a handful of output lines, and
 * L1/L2 serve the repeats (the kernel is bound by DRAM traffic, about one
 * read of the three frames' lines and one write per output).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <libavutil/error.h>

#include "deint_gpu.h"
#include "deint_math.h"
#include "plane.cuh"

static int cuda_err(cudaError_t e)
{
    return e == cudaSuccess ? 0 : e == cudaErrorMemoryAllocation ? AVERROR(ENOMEM) : AVERROR_EXTERNAL;
}

extern "C" int vkcu_di_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height)
{
    *ptr = NULL;
    return cuda_err(cudaMallocPitch(ptr, pitch, width_bytes, (size_t)height));
}

extern "C" void vkcu_di_gpu_free(void **ptr)
{
    if (*ptr)
        cudaFree(*ptr);
    *ptr = NULL;
}

extern "C" int vkcu_di_gpu_copy(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, size_t width_bytes,
                           int height, void *stream)
{
    return cuda_err(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width_bytes, (size_t)height,
                                      cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
}

template <typename E>
__global__ void ingest_kernel(vkcu_gpu_plane in, uint8_t *dst, size_t pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= in.width || y >= in.height)
        return;
    ((E *)(dst + (size_t)y * pitch))[x] = plane_load<E>(in, x, y);
}

extern "C" int vkcu_di_gpu_ingest(const vkcu_gpu_plane *in, int comps, int bytes, void *dst, size_t dst_pitch,
                             void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (in->ptr && !in->tex)
        return cuda_err(cudaMemcpy2DAsync(dst, dst_pitch, in->ptr, in->pitch, (size_t)in->width * comps * bytes,
                                          (size_t)in->height, cudaMemcpyDeviceToDevice, s));
    dim3 block(64, 4);
    dim3 grid((in->width + 63) / 64, (in->height + 3) / 4);
    uint8_t *d = (uint8_t *)dst;
    if (bytes == 1 && comps == 1)
        ingest_kernel<uint8_t><<<grid, block, 0, s>>>(*in, d, dst_pitch);
    else if (bytes == 1 && comps == 2)
        ingest_kernel<uchar2><<<grid, block, 0, s>>>(*in, d, dst_pitch);
    else if (bytes == 2 && comps == 1)
        ingest_kernel<uint16_t><<<grid, block, 0, s>>>(*in, d, dst_pitch);
    else if (bytes == 2 && comps == 2)
        ingest_kernel<ushort2><<<grid, block, 0, s>>>(*in, d, dst_pitch);
    else
        return AVERROR(EINVAL);
    return cuda_err(cudaGetLastError());
}

template <typename T>
__device__ __forceinline__ int ld(const void *plane, size_t pitch, int line, int x, int shift)
{
    return (int)((const T *)((const uint8_t *)plane + (size_t)line * pitch))[x] >> shift;
}

template <typename T>
__global__ void deint_kernel(di_gpu_args a)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= a.samples || y >= a.height)
        return;
    T *out = (T *)((uint8_t *)a.dst + (size_t)y * a.dst_pitch);
    di_row r = di_row_plan(y, a.height, a.keep, a.boundary, a.bytes == 2);
    if (r.kind == DI_ROW_COPY) {
        out[x] = ((const T *)((const uint8_t *)a.cur + (size_t)y * a.pitch))[x];
        return;
    }
    const void *fa = a.second ? a.cur : a.prev, *fb = a.second ? a.next : a.cur;
    size_t p = a.pitch;
    int s = a.shift;
    di_taps t = {};
    t.c = ld<T>(a.cur, p, r.m1, x, s);
    t.e = ld<T>(a.cur, p, r.p1, x, s);
    if (r.kind == DI_ROW_INTRA) {
        t.c3m = ld<T>(a.cur, p, r.m3, x, s);
        t.c3p = ld<T>(a.cur, p, r.p3, x, s);
    } else {
        t.pm = ld<T>(a.prev, p, r.m1, x, s);
        t.pp = ld<T>(a.prev, p, r.p1, x, s);
        t.nm = ld<T>(a.next, p, r.m1, x, s);
        t.np = ld<T>(a.next, p, r.p1, x, s);
        t.a0 = ld<T>(fa, p, y, x, s);
        t.b0 = ld<T>(fb, p, y, x, s);
        if (r.kind == DI_ROW_LINE || r.spat) {
            t.a2m = ld<T>(fa, p, r.m2, x, s);
            t.b2m = ld<T>(fb, p, r.m2, x, s);
            t.a2p = ld<T>(fa, p, r.p2, x, s);
            t.b2p = ld<T>(fb, p, r.p2, x, s);
        }
        if (r.kind == DI_ROW_LINE) {
            t.c3m = ld<T>(a.cur, p, r.m3, x, s);
            t.c3p = ld<T>(a.cur, p, r.p3, x, s);
            t.a4m = ld<T>(fa, p, r.m4, x, s);
            t.b4m = ld<T>(fb, p, r.m4, x, s);
            t.a4p = ld<T>(fa, p, r.p4, x, s);
            t.b4p = ld<T>(fb, p, r.p4, x, s);
        }
    }
    out[x] = (T)(di_sample(&r, &t, a.maxval) << s);
}

extern "C" int vkcu_di_gpu_filter(const di_gpu_args *a, void *stream)
{
    dim3 block(64, 4);
    dim3 grid((a->samples + 63) / 64, (a->height + 3) / 4);
    cudaStream_t s = (cudaStream_t)stream;
    if (a->bytes == 1)
        deint_kernel<uint8_t><<<grid, block, 0, s>>>(*a);
    else if (a->bytes == 2)
        deint_kernel<uint16_t><<<grid, block, 0, s>>>(*a);
    else
        return AVERROR(EINVAL);
    return cuda_err(cudaGetLastError());
}

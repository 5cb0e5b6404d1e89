/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUDA kernels of the `scale` operator and their launchers (kernels/scale_gpu.h).
 * The two passes of the CPU reference, with the same tap tables (the host's),
 * the same rounding (kernels/scale_math.h) and exact integer sums, so the
 * bytes equal the CPU's.
 *
 * tile_kernel (the usual path): one block per 32 x SC_TILE_H output tile.
 * Pass 1 computes the intermediate rows the tile's outputs read (their
 * vertical taps' union) for its 32 columns into shared memory, pass 2 reads
 * them from there: the intermediate never goes to memory, at the cost of
 * recomputing the few rows where vertical tiles' windows overlap.
 * hpass_kernel + vpass_kernel: the same passes through an int16 plane in
 * device memory, for planes whose tile windows do not fit in shared memory
 * (downscaling by ten or more).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <libavutil/error.h>

#include "plane.cuh"
#include "scale_gpu.h"

static int cuda_err(cudaError_t e)
{
    return e == cudaSuccess ? 0 : e == cudaErrorMemoryAllocation ? AVERROR(ENOMEM) : AVERROR_EXTERNAL;
}

extern "C" int vkcu_sc_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height)
{
    *ptr = NULL;
    return cuda_err(cudaMallocPitch(ptr, pitch, width_bytes, (size_t)height));
}

extern "C" void vkcu_sc_gpu_free(void **ptr)
{
    if (*ptr)
        cudaFree(*ptr);
    *ptr = NULL;
}

extern "C" void vkcu_sc_gpu_taps_free(sc_gpu_taps *g)
{
    if (g->start)
        cudaFree(g->start);
    if (g->w)
        cudaFree(g->w);
    g->start = NULL;
    g->w = NULL;
}

extern "C" int vkcu_sc_gpu_taps_upload(sc_gpu_taps *g, const sc_taps *t)
{
    size_t ns = sizeof(int32_t) * (size_t)t->n_out, nw = sizeof(int16_t) * (size_t)t->n_out * t->taps;
    cudaError_t e = cudaMalloc((void **)&g->start, ns);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&g->w, nw);
    /* synchronous: done once, before the first frame */
    if (e == cudaSuccess)
        e = cudaMemcpy(g->start, t->start, ns, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(g->w, t->w, nw, cudaMemcpyHostToDevice);
    g->taps = t->taps;
    g->span = 0;
    for (int y0 = 0; y0 < t->n_out; y0 += SC_TILE_H) {
        int lo = t->start[y0], hi = t->start[y0];
        for (int y = y0; y < y0 + SC_TILE_H && y < t->n_out; y++) {
            lo = t->start[y] < lo ? t->start[y] : lo;
            hi = t->start[y] > hi ? t->start[y] : hi;
        }
        g->span = hi + t->taps - lo > g->span ? hi + t->taps - lo : g->span;
    }
    if (e != cudaSuccess)
        vkcu_sc_gpu_taps_free(g);
    return cuda_err(e);
}

/* ---- element access: one sample type per plane layout ---- */

template <typename T> struct elem;
template <> struct elem<uint8_t> {
    static __device__ __forceinline__ int get(uint8_t v, int) { return v; }
};
template <> struct elem<uint16_t> {
    static __device__ __forceinline__ int get(uint16_t v, int) { return v; }
};
template <> struct elem<uchar2> {
    static __device__ __forceinline__ int get(uchar2 v, int c) { return c ? v.y : v.x; }
};
template <> struct elem<ushort2> {
    static __device__ __forceinline__ int get(ushort2 v, int c) { return c ? v.y : v.x; }
};

__device__ __forceinline__ uint8_t make_elem(uint8_t *, const int *v) { return (uint8_t)v[0]; }
__device__ __forceinline__ uint16_t make_elem(uint16_t *, const int *v) { return (uint16_t)v[0]; }
__device__ __forceinline__ uchar2 make_elem(uchar2 *, const int *v)
{
    return make_uchar2((unsigned char)v[0], (unsigned char)v[1]);
}
__device__ __forceinline__ ushort2 make_elem(ushort2 *, const int *v)
{
    return make_ushort2((unsigned short)v[0], (unsigned short)v[1]);
}

template <typename T, int NC>
__global__ void hpass_kernel(vkcu_gpu_plane in, int16_t *mid, size_t mid_pitch, int out_w, int in_h,
                             const int32_t *__restrict__ start, const int16_t *__restrict__ w, int taps, int shift,
                             int depth)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= in_h)
        return;
    int s = __ldg(start + x);
    const int16_t *wx = w + (size_t)x * taps;
    int32_t acc[NC];
    for (int c = 0; c < NC; c++)
        acc[c] = 0;
    for (int k = 0; k < taps; k++) {
        T v = plane_load<T>(in, s + k, y);
        int32_t wk = __ldg(wx + k);
        for (int c = 0; c < NC; c++)
            acc[c] += wk * (elem<T>::get(v, c) >> shift);
    }
    int16_t *m = (int16_t *)((uint8_t *)mid + (size_t)y * mid_pitch) + (size_t)x * NC;
    for (int c = 0; c < NC; c++)
        m[c] = (int16_t)sc_pass1(acc[c], depth);
}

template <typename T, int NC>
__global__ void vpass_kernel(const int16_t *mid, size_t mid_pitch, vkcu_gpu_plane out, int out_w, int out_h,
                             const int32_t *__restrict__ start, const int16_t *__restrict__ w, int taps, int shift,
                             int depth)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h)
        return;
    ptrdiff_t stride = (ptrdiff_t)(mid_pitch / sizeof(int16_t));
    const int16_t *col = mid + (ptrdiff_t)__ldg(start + y) * stride + (ptrdiff_t)x * NC;
    const int16_t *wy = w + (size_t)y * taps;
    int v[NC];
    for (int c = 0; c < NC; c++)
        v[c] = sc_pass2(sc_vsum(col + c, stride, wy, taps), depth) << shift;
    plane_store<T>(out, x, y, make_elem((T *)0, v));
}

/* Block (32, 8): thread column tx owns output column x0 + tx. Pass 1 fills
 * the rows the tile's outputs read, r0 = the least start row to the largest
 * start row + taps (rows ty, ty + 8, ...); pass 2 writes output rows
 * y0 + ty, y0 + ty + 8, ... (start rows mostly rise with the output row, but
 * not always at a mirrored bottom edge, hence the min/max). */
template <typename T, int NC>
__global__ void tile_kernel(vkcu_gpu_plane in, vkcu_gpu_plane out, int out_w, int out_h,
                            const int32_t *__restrict__ hstart, const int16_t *__restrict__ hw, int htaps,
                            const int32_t *__restrict__ vstart, const int16_t *__restrict__ vw, int vtaps, int shift,
                            int depth)
{
    extern __shared__ int16_t tile[]; /* [row][32][NC] */
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx;
    int y0 = blockIdx.y * SC_TILE_H;
    int y_end = y0 + SC_TILE_H < out_h ? y0 + SC_TILE_H : out_h;
    int r0 = __ldg(vstart + y0), r1 = r0;
    for (int y = y0 + 1; y < y_end; y++) {
        int sy = __ldg(vstart + y);
        r0 = sy < r0 ? sy : r0;
        r1 = sy > r1 ? sy : r1;
    }
    int rows = r1 + vtaps - r0;
    if (x < out_w) {
        int s = __ldg(hstart + x);
        const int16_t *wx = hw + (size_t)x * htaps;
        for (int r = ty; r < rows; r += 8) {
            int32_t acc[NC];
            for (int c = 0; c < NC; c++)
                acc[c] = 0;
            for (int k = 0; k < htaps; k++) {
                T v = plane_load<T>(in, s + k, r0 + r);
                int32_t wk = __ldg(wx + k);
                for (int c = 0; c < NC; c++)
                    acc[c] += wk * (elem<T>::get(v, c) >> shift);
            }
            for (int c = 0; c < NC; c++)
                tile[((size_t)r * 32 + tx) * NC + c] = (int16_t)sc_pass1(acc[c], depth);
        }
    }
    __syncthreads();
    if (x >= out_w)
        return;
    for (int y = y0 + ty; y < y_end; y += 8) {
        const int16_t *col = tile + ((size_t)(__ldg(vstart + y) - r0) * 32 + tx) * NC;
        const int16_t *wy = vw + (size_t)y * vtaps;
        int v[NC];
        for (int c = 0; c < NC; c++)
            v[c] = sc_pass2(sc_vsum(col + c, 32 * NC, wy, vtaps), depth) << shift;
        plane_store<T>(out, x, y, make_elem((T *)0, v));
    }
}

static dim3 grid_for(int w, int h, dim3 b)
{
    return dim3((unsigned)((w + b.x - 1) / b.x), (unsigned)((h + b.y - 1) / b.y));
}

template <typename T, int NC>
static cudaError_t launch(const sc_gpu_pass *a, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out, cudaStream_t s)
{
    dim3 block(32, 8);
    size_t shmem = (size_t)a->v.span * 32 * NC * sizeof(int16_t);
    if (shmem <= SC_TILE_SHMEM) {
        dim3 grid((unsigned)((a->out_w + 31) / 32), (unsigned)((a->out_h + SC_TILE_H - 1) / SC_TILE_H));
        tile_kernel<T, NC><<<grid, block, shmem, s>>>(*in, *out, a->out_w, a->out_h, a->h.start, a->h.w, a->h.taps,
                                                      a->v.start, a->v.w, a->v.taps, a->shift, a->depth);
        return cudaGetLastError();
    }
    hpass_kernel<T, NC><<<grid_for(a->out_w, a->in_h, block), block, 0, s>>>(
        *in, (int16_t *)a->mid, a->mid_pitch, a->out_w, a->in_h, a->h.start, a->h.w, a->h.taps, a->shift, a->depth);
    vpass_kernel<T, NC><<<grid_for(a->out_w, a->out_h, block), block, 0, s>>>(
        (const int16_t *)a->mid, a->mid_pitch, *out, a->out_w, a->out_h, a->v.start, a->v.w, a->v.taps, a->shift,
        a->depth);
    return cudaGetLastError();
}

extern "C" int vkcu_sc_gpu_scale_plane(const sc_gpu_pass *a, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out,
                                  void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    if (a->bytes == 1)
        e = a->ncomp == 2 ? launch<uchar2, 2>(a, in, out, s) : launch<uint8_t, 1>(a, in, out, s);
    else
        e = a->ncomp == 2 ? launch<ushort2, 2>(a, in, out, s) : launch<uint16_t, 1>(a, in, out, s);
    return cuda_err(e);
}

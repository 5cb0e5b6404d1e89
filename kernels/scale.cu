/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUDA kernels of the `scale` operator and their launchers (kernels/scale_gpu.h).
 * The two passes of the CPU reference, with the same tap tables (the host's),
 * the same rounding (kernels/scale_math.h) and exact integer sums, so the
 * bytes equal the CPU's.
 *
 * frame_kernel (the usual path): one launch for all planes of a frame, one
 * block per 32 x SC_TILE_H output tile. The block first copies the input
 * window its outputs read (their horizontal and vertical taps' union) into
 * shared memory, so each input sample is fetched from the frame about once
 * (plus the windows' overlap) instead of once per horizontal tap: the
 * per-tap texture fetches were what bounded the older kernel. Pass 1 then
 * reads that window and writes the intermediate rows to shared memory too,
 * pass 2 reads those. One launch per frame also fills the GPU with the
 * small chroma plane's blocks beside the luma's.
 * tile_kernel: the same without the staged input window, for planes whose
 * window does not fit shared memory (downscaling by three or more at 16
 * bits); hpass_kernel + vpass_kernel: the same passes through an int16
 * plane in device memory, for planes whose intermediate rows do not fit
 * either (downscaling by ten or more).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
    if (g->tile)
        cudaFree(g->tile);
    g->start = NULL;
    g->w = NULL;
    g->tile = NULL;
}

static_assert(SC_TILE_W == SC_TILE_H, "one tile table serves both directions");

extern "C" int vkcu_sc_gpu_taps_upload(sc_gpu_taps *g, const sc_taps *t)
{
    int groups = (t->n_out + SC_TILE_H - 1) / SC_TILE_H;
    size_t ns = sizeof(int32_t) * (size_t)t->n_out, nw = sizeof(int16_t) * (size_t)t->n_out * t->taps;
    size_t nt = sizeof(int32_t) * 2 * (size_t)groups;
    int32_t *tile = (int32_t *)malloc(nt ? nt : 1);
    g->start = NULL;
    g->w = NULL;
    g->tile = NULL;
    g->taps = t->taps;
    g->span = 0;
    if (!tile)
        return AVERROR(ENOMEM);
    for (int i = 0; i < groups; i++) {
        int y0 = i * SC_TILE_H;
        int lo = t->start[y0], hi = t->start[y0];
        for (int y = y0; y < y0 + SC_TILE_H && y < t->n_out; y++) {
            lo = t->start[y] < lo ? t->start[y] : lo;
            hi = t->start[y] > hi ? t->start[y] : hi;
        }
        tile[2 * i] = lo;
        tile[2 * i + 1] = hi + t->taps - lo;
        g->span = hi + t->taps - lo > g->span ? hi + t->taps - lo : g->span;
    }
    cudaError_t e = cudaMalloc((void **)&g->start, ns);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&g->w, nw);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&g->tile, nt);
    /* synchronous: done once, before the first frame */
    if (e == cudaSuccess)
        e = cudaMemcpy(g->start, t->start, ns, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(g->w, t->w, nw, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(g->tile, tile, nt, cudaMemcpyHostToDevice);
    free(tile);
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

/* ---- frame_kernel ---- */

/* One plane as frame_kernel sees it: blocks [block0, block0 + tiles_x *
 * tiles_y) of the launch are its tiles, row by row. */
typedef struct sc_kplane {
    vkcu_gpu_plane in, out;
    int out_w, out_h, tiles_x, block0;
    const int32_t *hstart, *htile, *vstart, *vtile;
    const int16_t *hw, *vw;
    int htaps, vtaps;
} sc_kplane;

typedef struct sc_kframe {
    sc_kplane p[4];
    int nb, shift, depth;
} sc_kframe;

/* Pass 1 over the staged window keeps a column's horizontal weights in
 * registers when there are at most this many (lanczos and spline36 at 2:1
 * take 12 or 13); more take the loop reading them from memory. */
#define SC_REG_TAPS 16

static __host__ __device__ size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* Bytes of shared memory one tile of a plane needs: its input window
 * (hspan x vspan samples) and its intermediate rows (vspan x 32 x ncomp). */
static __host__ __device__ size_t frame_shmem(int hspan, int vspan, int elem_bytes, int ncomp)
{
    return align16((size_t)hspan * vspan * elem_bytes) + (size_t)vspan * SC_TILE_W * ncomp * sizeof(int16_t);
}

template <typename T, int NC>
__device__ __forceinline__ void frame_tile(const sc_kplane &p, int b, int shift, int depth, unsigned char *smem)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    int bx = b % p.tiles_x, by = b / p.tiles_x;
    int c0 = __ldg(p.htile + 2 * bx), cols = __ldg(p.htile + 2 * bx + 1);
    int r0 = __ldg(p.vtile + 2 * by), rows = __ldg(p.vtile + 2 * by + 1);
    T *win = (T *)smem;                                                    /* [rows][cols] */
    int16_t *mid = (int16_t *)(smem + align16((size_t)rows * cols * sizeof(T))); /* [rows][32][NC] */
    for (int r = ty; r < rows; r += blockDim.y)
        for (int c = tx; c < cols; c += SC_TILE_W)
            win[r * cols + c] = plane_load<T>(p.in, c0 + c, r0 + r);
    __syncthreads();
    int x = bx * SC_TILE_W + tx;
    if (x < p.out_w) {
        const T *src = win + (__ldg(p.hstart + x) - c0);
        const int16_t *wx = p.hw + (size_t)x * p.htaps;
        int htaps = p.htaps;
        if (htaps <= SC_REG_TAPS) {
            int32_t wr[SC_REG_TAPS];
#pragma unroll
            for (int k = 0; k < SC_REG_TAPS; k++)
                wr[k] = k < htaps ? __ldg(wx + k) : 0;
            for (int r = ty; r < rows; r += blockDim.y) {
                const T *row = src + r * cols;
                int32_t acc[NC];
#pragma unroll
                for (int c = 0; c < NC; c++)
                    acc[c] = 0;
#pragma unroll
                for (int k = 0; k < SC_REG_TAPS; k++)
                    if (k < htaps) {
                        T v = row[k];
#pragma unroll
                        for (int c = 0; c < NC; c++)
                            acc[c] += wr[k] * (elem<T>::get(v, c) >> shift);
                    }
#pragma unroll
                for (int c = 0; c < NC; c++)
                    mid[(r * SC_TILE_W + tx) * NC + c] = (int16_t)sc_pass1(acc[c], depth);
            }
        } else {
            for (int r = ty; r < rows; r += blockDim.y) {
                const T *row = src + r * cols;
                int32_t acc[NC];
                for (int c = 0; c < NC; c++)
                    acc[c] = 0;
                for (int k = 0; k < htaps; k++) {
                    T v = row[k];
                    int32_t wk = __ldg(wx + k);
                    for (int c = 0; c < NC; c++)
                        acc[c] += wk * (elem<T>::get(v, c) >> shift);
                }
                for (int c = 0; c < NC; c++)
                    mid[(r * SC_TILE_W + tx) * NC + c] = (int16_t)sc_pass1(acc[c], depth);
            }
        }
    }
    __syncthreads();
    if (x >= p.out_w)
        return;
    int y_end = (by + 1) * SC_TILE_H < p.out_h ? (by + 1) * SC_TILE_H : p.out_h;
    for (int y = by * SC_TILE_H + ty; y < y_end; y += blockDim.y) {
        const int16_t *col = mid + ((size_t)(__ldg(p.vstart + y) - r0) * SC_TILE_W + tx) * NC;
        const int16_t *wy = p.vw + (size_t)y * p.vtaps;
        int v[NC];
        for (int c = 0; c < NC; c++)
            v[c] = sc_pass2(sc_vsum(col + c, SC_TILE_W * NC, wy, p.vtaps), depth) << shift;
        plane_store<T>(p.out, x, y, make_elem((T *)0, v));
    }
}

/* Plane 0 has samples TA with NCA components, planes 1.. TB with NCB. */
template <typename TA, int NCA, typename TB, int NCB>
__global__ void __launch_bounds__(256, 4) frame_kernel(const __grid_constant__ sc_kframe f)
{
    extern __shared__ __align__(16) unsigned char smem[];
    int b = blockIdx.x, i = 0;
    while (i + 1 < f.nb && b >= f.p[i + 1].block0)
        i++;
    if (i == 0)
        frame_tile<TA, NCA>(f.p[0], b, f.shift, f.depth, smem);
    else
        frame_tile<TB, NCB>(f.p[i], b - f.p[i].block0, f.shift, f.depth, smem);
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

template <typename TA, int NCA, typename TB, int NCB>
static cudaError_t launch_frame(const sc_gpu_pass *a, int n, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out,
                                cudaStream_t s, int *done)
{
    sc_kframe f;
    size_t shmem = 0;
    int blocks = 0;
    memset(&f, 0, sizeof(f));
    *done = 0;
    for (int i = 0; i < n; i++) {
        size_t need = i ? frame_shmem(a[i].h.span, a[i].v.span, sizeof(TB), NCB)
                        : frame_shmem(a[i].h.span, a[i].v.span, sizeof(TA), NCA);
        if (need > SC_TILE_SHMEM)
            return cudaSuccess;
        shmem = need > shmem ? need : shmem;
        sc_kplane *k = &f.p[i];
        k->in = in[i];
        k->out = out[i];
        k->out_w = a[i].out_w;
        k->out_h = a[i].out_h;
        k->tiles_x = (a[i].out_w + SC_TILE_W - 1) / SC_TILE_W;
        k->block0 = blocks;
        k->hstart = a[i].h.start;
        k->htile = a[i].h.tile;
        k->hw = a[i].h.w;
        k->htaps = a[i].h.taps;
        k->vstart = a[i].v.start;
        k->vtile = a[i].v.tile;
        k->vw = a[i].v.w;
        k->vtaps = a[i].v.taps;
        blocks += k->tiles_x * ((a[i].out_h + SC_TILE_H - 1) / SC_TILE_H);
    }
    f.nb = n;
    f.shift = a[0].shift;
    f.depth = a[0].depth;
    frame_kernel<TA, NCA, TB, NCB><<<blocks, dim3(SC_TILE_W, 8), shmem, s>>>(f);
    *done = 1;
    return cudaGetLastError();
}

extern "C" int vkcu_sc_gpu_scale_frame(const sc_gpu_pass *a, int n, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out,
                                  void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    int done = 0;
    if (n < 1 || n > 4)
        return AVERROR(EINVAL);
    for (int i = 2; i < n; i++)
        if (a[i].ncomp != a[1].ncomp)
            return AVERROR(EINVAL);
    int nc1 = n > 1 ? a[1].ncomp : 1;
    if (a[0].ncomp != 1 || nc1 > 2)
        return AVERROR(EINVAL);
    if (a[0].bytes == 1)
        e = nc1 == 2 ? launch_frame<uint8_t, 1, uchar2, 2>(a, n, in, out, s, &done)
                     : launch_frame<uint8_t, 1, uint8_t, 1>(a, n, in, out, s, &done);
    else
        e = nc1 == 2 ? launch_frame<uint16_t, 1, ushort2, 2>(a, n, in, out, s, &done)
                     : launch_frame<uint16_t, 1, uint16_t, 1>(a, n, in, out, s, &done);
    if (e != cudaSuccess || done)
        return cuda_err(e);
    for (int i = 0; i < n; i++) {
        int ret = vkcu_sc_gpu_scale_plane(&a[i], &in[i], &out[i], stream);
        if (ret < 0)
            return ret;
    }
    return 0;
}

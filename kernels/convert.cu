/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUDA backend of the convert and tonemap operators, writing operator-owned
 * pitch-linear planes. The arithmetic is the shared fixed-point and table
 * math of convert_math.h / tonemap_math.h, so the bytes equal the CPU
 * reference's.
 *
 * Two kernels:
 *  - fast_kernel: 4:2:0 input (NV12, P010, yuv420p, yuv420p10) converted to
 *    packed RGB / RGBA (8, 16 bit, half float) or 4:2:0 YUV, the cases
 *    decoded video takes; several quads per thread, hoisted chroma weights
 *    (convert_fast.h), vector reads and stores;
 *  - convert_kernel: everything else (4:2:2 / 4:4:4 input or output,
 *    tonemap, unaligned pitch-linear input): one thread per 2x2 luma quad,
 *    per-pixel taps, reads through plane_load.
 * Both read texture objects of imported arrays or pitch-linear memory.
 * VKCU_CONVERT_FAST=0 in the environment forces the generic kernel.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "convert_fast.h"
#include "check.h"
#include "convert_gpu.h"
#include "plane.cuh"

struct cv_gpu {
    cv_desc desc;
    int nb_planes;
    vkcu_gpu_plane plane[4];
    float *tm_block; /* device copy of the tonemap tables */
    tm_tables tm;    /* with device pointers */
    int fast;        /* the description has a fast path (cvf_supported) */
    cvf_f64 f64;     /* fast path, integer outputs: its affine in double precision */
    cvf_taps taps;   /* its hoisted chroma weights */
};

/* Output kinds the kernel is specialised for. */
enum { OUT_PLANAR8, OUT_PLANAR16, OUT_SEMI8, OUT_SEMI16, OUT_PACKED8, OUT_PACKED16, OUT_HALF };

/* ---- input access ---- */

template <typename T, bool SEMI>
struct reader {
    const vkcu_gpu_plane *pl;
    int w, h, cw, ch, shift;

    __device__ int luma(int x, int y) const
    {
        x = vkcu_clampi(x, 0, w - 1);
        y = vkcu_clampi(y, 0, h - 1);
        return (int)plane_load<T>(pl[0], x, y) >> shift;
    }
    /* Accumulates w * (Cb, Cr) at chroma coordinates (clamped). */
    __device__ void chroma(int x, int y, int wt, int32_t &u, int32_t &v) const
    {
        x = vkcu_clampi(x, 0, cw - 1);
        y = vkcu_clampi(y, 0, ch - 1);
        if (SEMI) {
            typedef typename std::conditional<sizeof(T) == 1, uchar2, ushort2>::type T2;
            T2 p = plane_load<T2>(pl[1], x, y);
            u += wt * ((int)p.x >> shift);
            v += wt * ((int)p.y >> shift);
        } else {
            u += wt * ((int)plane_load<T>(pl[1], x, y) >> shift);
            v += wt * ((int)plane_load<T>(pl[2], x, y) >> shift);
        }
    }
    __device__ void gather(const cv_taps &tx, const cv_taps &ty, int32_t &u, int32_t &v) const
    {
        u = v = 0;
        for (int j = 0; j < ty.n; j++)
            for (int i = 0; i < tx.n; i++)
                chroma(tx.i0 + i, ty.i0 + j, tx.w[i] * ty.w[j], u, v);
    }
};

/* ---- output access ---- */

template <int OUT>
__device__ __forceinline__ void put_plane(const vkcu_gpu_plane *pl, int comp, int x, int y, int v, int shift)
{
    if (OUT == OUT_PLANAR8) {
        *(pl[comp].ptr + (size_t)y * pl[comp].pitch + x) = (uint8_t)v;
    } else if (OUT == OUT_PLANAR16) {
        *(uint16_t *)(pl[comp].ptr + (size_t)y * pl[comp].pitch + 2 * (size_t)x) = (uint16_t)(v << shift);
    } else if (OUT == OUT_SEMI8) {
        uint8_t *p = comp ? pl[1].ptr + (size_t)y * pl[1].pitch + 2 * (size_t)x + comp - 1
                          : pl[0].ptr + (size_t)y * pl[0].pitch + x;
        *p = (uint8_t)v;
    } else if (OUT == OUT_SEMI16) {
        uint16_t *p = comp ? (uint16_t *)(pl[1].ptr + (size_t)y * pl[1].pitch) + 2 * (size_t)x + comp - 1
                           : (uint16_t *)(pl[0].ptr + (size_t)y * pl[0].pitch) + x;
        *p = (uint16_t)(v << shift);
    }
}

/* Two horizontally adjacent packed pixels (x, x+1) of one row, as one
 * vector store when both are inside the picture. s: samples with CV_FRAC. */
template <int OUT>
__device__ __forceinline__ void put_packed2(const cv_desc &d, const cv_affine &a, const vkcu_gpu_plane &pl, int x, int y,
                                            const int32_t s[2][3], int both)
{
    uint8_t *row = pl.ptr + (size_t)y * pl.pitch;
    int n = d.out.ncomp;
    if (OUT == OUT_PACKED8) {
        int c[2][3];
        for (int p = 0; p < 2; p++)
            for (int k = 0; k < 3; k++)
                c[p][k] = cv_apply(&a, k, s[p][0], s[p][1], s[p][2]);
        if (n == 4 && both) {
            uint2 v;
            v.x = (uint32_t)c[0][0] | (uint32_t)c[0][1] << 8 | (uint32_t)c[0][2] << 16 | 0xff000000u;
            v.y = (uint32_t)c[1][0] | (uint32_t)c[1][1] << 8 | (uint32_t)c[1][2] << 16 | 0xff000000u;
            *(uint2 *)(row + 4 * (size_t)x) = v;
            return;
        }
        for (int p = 0; p < 1 + both; p++) {
            uint8_t *o = row + (size_t)(x + p) * n;
            o[0] = (uint8_t)c[p][0];
            o[1] = (uint8_t)c[p][1];
            o[2] = (uint8_t)c[p][2];
            if (n == 4)
                o[3] = 255;
        }
    } else if (OUT == OUT_PACKED16) {
        for (int p = 0; p < 1 + both; p++) {
            uint16_t c[3];
            for (int k = 0; k < 3; k++)
                c[k] = (uint16_t)cv_apply(&a, k, s[p][0], s[p][1], s[p][2]);
            if (n == 4) {
                ushort4 v = make_ushort4(c[0], c[1], c[2], 65535);
                *(ushort4 *)(row + 8 * (size_t)(x + p)) = v;
            } else {
                uint16_t *o = (uint16_t *)row + 3 * (size_t)(x + p);
                o[0] = c[0], o[1] = c[1], o[2] = c[2];
            }
        }
    } else if (OUT == OUT_HALF) {
        ushort4 v[2];
        for (int p = 0; p < 2; p++)
            v[p] = make_ushort4(cv_apply_half(&a, 0, s[p][0], s[p][1], s[p][2]), cv_apply_half(&a, 1, s[p][0], s[p][1], s[p][2]),
                                cv_apply_half(&a, 2, s[p][0], s[p][1], s[p][2]), 0x3c00);
        if (both) {
            uint4 q;
            q.x = v[0].x | (uint32_t)v[0].y << 16;
            q.y = v[0].z | (uint32_t)v[0].w << 16;
            q.z = v[1].x | (uint32_t)v[1].y << 16;
            q.w = v[1].z | (uint32_t)v[1].w << 16;
            *(uint4 *)(row + 8 * (size_t)x) = q;
        } else {
            *(ushort4 *)(row + 8 * (size_t)x) = v[0];
        }
    }
}

/* ---- per-position math ---- */

/* Tonemapped SDR 16-bit R'G'B' at luma position (x, y). */
template <typename T, bool SEMI>
__device__ void tm_at(const cv_desc &d, const tm_tables &tm, const reader<T, SEMI> &rd, int x, int y, int rgb[3])
{
    x = vkcu_clampi(x, 0, d.width - 1);
    y = vkcu_clampi(y, 0, d.height - 1);
    cv_taps tx, ty;
    cv_taps_chroma(x, d.in.ssx, 0, d.off_in_x, 0, &tx);
    cv_taps_chroma(y, d.in.ssy, 0, d.off_in_y, 0, &ty);
    int32_t u, v;
    rd.gather(tx, ty, u, v);
    int32_t yv = rd.luma(x, y) << CV_FRAC;
    int hdr[3];
    for (int c = 0; c < 3; c++)
        hdr[c] = cv_apply(&d.aff, c, yv, u, v);
    tm_pixel(&tm, hdr, rgb);
}

template <typename T, bool SEMI, int OUT, bool TM>
__global__ void __launch_bounds__(256) convert_kernel(cv_desc d, tm_tables tm, vkcu_gpu_frame in, vkcu_gpu_frame out)
{
    int qx = blockIdx.x * blockDim.x + threadIdx.x;
    int qy = blockIdx.y * blockDim.y + threadIdx.y;
    int x0 = 2 * qx, y0 = 2 * qy;
    if (x0 >= d.width || y0 >= d.height)
        return;
    reader<T, SEMI> rd;
    rd.pl = in.plane;
    rd.w = d.width;
    rd.h = d.height;
    rd.cw = (d.width + d.in.ssx) >> d.in.ssx;
    rd.ch = (d.height + d.in.ssy) >> d.in.ssy;
    rd.shift = d.in.shift;
    const cv_affine &a = TM ? d.aff_out : d.aff;
    const bool packed = OUT == OUT_PACKED8 || OUT == OUT_PACKED16 || OUT == OUT_HALF;
    const int sub = d.out.ssx || d.out.ssy;
    const bool need_chroma = !sub || a.c[0][1] || a.c[0][2];
    const int both = x0 + 1 < d.width;

    /* luma positions of the quad */
    for (int dy = 0; dy < 2; dy++) {
        int y = y0 + dy;
        if (y >= d.height)
            break;
        cv_taps ty;
        cv_taps_chroma(y, d.in.ssy, 0, d.off_in_y, 0, &ty);
        int32_t s[2][3];
        for (int dx = 0; dx < 2; dx++) {
            int x = vkcu_mini(x0 + dx, d.width - 1);
            if (TM) {
                int rgb[3];
                tm_at(d, tm, rd, x, y, rgb);
                for (int c = 0; c < 3; c++)
                    s[dx][c] = rgb[c] << CV_FRAC;
            } else {
                s[dx][0] = rd.luma(x, y) << CV_FRAC;
                s[dx][1] = s[dx][2] = 0;
                if (need_chroma) {
                    cv_taps tx;
                    cv_taps_chroma(x, d.in.ssx, 0, d.off_in_x, 0, &tx);
                    rd.gather(tx, ty, s[dx][1], s[dx][2]);
                }
            }
        }
        if (packed) {
            put_packed2<OUT>(d, a, out.plane[0], x0, y, s, both);
        } else {
            for (int dx = 0; dx < 1 + both; dx++) {
                put_plane<OUT>(out.plane, 0, x0 + dx, y, cv_apply(&a, 0, s[dx][0], s[dx][1], s[dx][2]), d.out.shift);
                if (!sub) {
                    put_plane<OUT>(out.plane, 1, x0 + dx, y, cv_apply(&a, 1, s[dx][0], s[dx][1], s[dx][2]), d.out.shift);
                    put_plane<OUT>(out.plane, 2, x0 + dx, y, cv_apply(&a, 2, s[dx][0], s[dx][1], s[dx][2]), d.out.shift);
                }
            }
        }
    }
    if (packed || !sub)
        return;

    /* chroma sites of the subsampled output inside the quad */
    int ncx = 2 >> d.out.ssx, ncy = 2 >> d.out.ssy;
    int cw = (d.width + d.out.ssx) >> d.out.ssx, ch = (d.height + d.out.ssy) >> d.out.ssy;
    for (int oy = 0; oy < ncy; oy++) {
        int cy = (y0 >> d.out.ssy) + oy;
        if (cy >= ch)
            break;
        cv_taps lty, cty;
        cv_taps_luma(cy, d.out.ssy, d.off_out_y, &lty);
        cv_taps_chroma(cy, d.in.ssy, d.out.ssy, d.off_in_y, d.off_out_y, &cty);
        for (int ox = 0; ox < ncx; ox++) {
            int cx = (x0 >> d.out.ssx) + ox;
            if (cx >= cw)
                break;
            cv_taps ltx, ctap;
            cv_taps_luma(cx, d.out.ssx, d.off_out_x, &ltx);
            int32_t s[3] = { 0, 0, 0 };
            if (TM) {
                for (int jy = 0; jy < lty.n; jy++)
                    for (int ix = 0; ix < ltx.n; ix++) {
                        int rgb[3], w = ltx.w[ix] * lty.w[jy];
                        tm_at(d, tm, rd, ltx.i0 + ix, lty.i0 + jy, rgb);
                        for (int c = 0; c < 3; c++)
                            s[c] += w * rgb[c];
                    }
            } else {
                cv_taps_chroma(cx, d.in.ssx, d.out.ssx, d.off_in_x, d.off_out_x, &ctap);
                if (a.c[1][0] || a.c[2][0]) {
                    for (int jy = 0; jy < lty.n; jy++) {
                        int32_t r = 0;
                        for (int ix = 0; ix < ltx.n; ix++)
                            r += ltx.w[ix] * rd.luma(ltx.i0 + ix, lty.i0 + jy);
                        s[0] += lty.w[jy] * r;
                    }
                }
                rd.gather(ctap, cty, s[1], s[2]);
            }
            put_plane<OUT>(out.plane, 1, cx, cy, cv_apply(&a, 1, s[0], s[1], s[2]), d.out.shift);
            put_plane<OUT>(out.plane, 2, cx, cy, cv_apply(&a, 2, s[0], s[1], s[2]), d.out.shift);
        }
    }
}

/* ---- fast path: 4:2:0 input to packed RGB or 4:2:0 YUV ----
 *
 * One thread per block of Q horizontally adjacent 2x2 luma quads (Q = 2
 * for packed outputs: 16-byte stores of RGBA8, two of RGBA64 / half; Q = 4
 * for planar and semi-planar outputs: 8- or 16-byte luma stores). The
 * thread loads the 3 x (Q+2) chroma neighbourhood of its block once (the
 * middle Q columns as one vector read from pitch-linear memory) and its
 * 2 x 2Q luma as two vector reads, then forms every resampled value from
 * registers with the hoisted weights of convert_fast.h (proven equal to the
 * reference by test_convert_fastpath), and the output codes with the same
 * cv_apply / cv_apply_half as the reference. Texture inputs (imported
 * interop arrays) are read with tex2D at clamped coordinates. */

struct fast_params {
    cv_affine a;
    cvf_taps t;
    int w, h, cw, ch;   /* luma size; 4:2:0 chroma size (input and output) */
    int in_shift, out_shift, ncomp;
    cvf_f64 f;          /* integer outputs: the affine in double precision (exact; see convert_fast.h) */
    int luma_chroma;    /* output luma depends on chroma (a.c[0][1], a.c[0][2]) */
    int site_luma;      /* output chroma depends on luma (a.c[1][0], a.c[2][0]) */
    const uint8_t *in[3];
    size_t ipitch[3];
    unsigned long long tex[3];
    uint8_t *out[3];
    size_t opitch[3];
};

/* N consecutive samples of type T from p (aligned to N * sizeof(T)), one load. */
template <typename T, int N>
__device__ __forceinline__ void ld_vec(const uint8_t *p, int32_t *o)
{
    constexpr int B = N * (int)sizeof(T);
    static_assert(B == 2 || B == 4 || B == 8 || B == 16, "vector width");
    uint32_t wd[B >= 4 ? B / 4 : 1];
    if constexpr (B == 16) {
        uint4 v = __ldg((const uint4 *)p);
        wd[0] = v.x, wd[1] = v.y, wd[2] = v.z, wd[3] = v.w;
    } else if constexpr (B == 8) {
        uint2 v = __ldg((const uint2 *)p);
        wd[0] = v.x, wd[1] = v.y;
    } else if constexpr (B == 4) {
        wd[0] = __ldg((const unsigned int *)p);
    } else {
        wd[0] = __ldg((const unsigned short *)p);
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        if constexpr (sizeof(T) == 1)
            o[i] = (int32_t)((wd[i / 4] >> (8 * (i % 4))) & 0xffu);
        else
            o[i] = (int32_t)((wd[i / 2] >> (16 * (i % 2))) & 0xffffu);
    }
}

template <typename T, bool SEMI, bool TEX>
struct fast_in {
    typedef typename std::conditional<sizeof(T) == 1, uchar2, ushort2>::type T2;

    /* Raw sample (x, y) of a single-component plane; coordinates in the plane. */
    static __device__ __forceinline__ int32_t one(const fast_params &p, int plane, int x, int y)
    {
        if (TEX)
            return (int32_t)tex2D<T>((cudaTextureObject_t)p.tex[plane], x, y);
        return (int32_t)__ldg((const T *)(p.in[plane] + (size_t)y * p.ipitch[plane]) + x);
    }
    /* Raw Cb, Cr at chroma (x, y). */
    static __device__ __forceinline__ void pair(const fast_params &p, int x, int y, int32_t &u, int32_t &v)
    {
        if (SEMI) {
            T2 c;
            if (TEX)
                c = tex2D<T2>((cudaTextureObject_t)p.tex[1], x, y);
            else
                c = __ldg((const T2 *)(p.in[1] + (size_t)y * p.ipitch[1]) + x);
            u = (int32_t)c.x, v = (int32_t)c.y;
        } else {
            u = one(p, 1, x, y);
            v = one(p, 2, x, y);
        }
    }
    /* N luma samples of row y from column x0 >= 0 (clamped on the right);
     * one vector read when `vec` (all inside, aligned). */
    template <int N>
    static __device__ __forceinline__ void luma(const fast_params &p, int x0, int y, bool vec, int32_t *o)
    {
        if (!TEX && vec) {
            ld_vec<T, N>(p.in[0] + (size_t)y * p.ipitch[0] + (size_t)x0 * sizeof(T), o);
        } else {
#pragma unroll
            for (int i = 0; i < N; i++)
                o[i] = one(p, 0, vkcu_mini(x0 + i, p.w - 1), y);
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            o[i] >>= p.in_shift;
    }
    /* Chroma row yc (already clamped), columns q0-1 .. q0+Q clamped. */
    template <int Q>
    static __device__ __forceinline__ void chroma(const fast_params &p, int q0, int yc, bool vec, int32_t *u, int32_t *v)
    {
        pair(p, vkcu_maxi(q0 - 1, 0), yc, u[0], v[0]);
        pair(p, vkcu_mini(q0 + Q, p.cw - 1), yc, u[Q + 1], v[Q + 1]);
        if (!TEX && vec) {
            if (SEMI) {
                int32_t m[2 * Q];
                ld_vec<T, 2 * Q>(p.in[1] + (size_t)yc * p.ipitch[1] + (size_t)q0 * 2 * sizeof(T), m);
#pragma unroll
                for (int i = 0; i < Q; i++)
                    u[1 + i] = m[2 * i], v[1 + i] = m[2 * i + 1];
            } else {
                ld_vec<T, Q>(p.in[1] + (size_t)yc * p.ipitch[1] + (size_t)q0 * sizeof(T), u + 1);
                ld_vec<T, Q>(p.in[2] + (size_t)yc * p.ipitch[2] + (size_t)q0 * sizeof(T), v + 1);
            }
        } else {
#pragma unroll
            for (int i = 0; i < Q; i++)
                pair(p, vkcu_mini(q0 + i, p.cw - 1), yc, u[1 + i], v[1 + i]);
        }
#pragma unroll
        for (int i = 0; i < Q + 2; i++)
            u[i] >>= p.in_shift, v[i] >>= p.in_shift;
    }
};

/* One integer output code: cv_apply, computed in double precision. */
__device__ __forceinline__ int fast_code(const fast_params &p, int comp, int32_t x0, int32_t x1, int32_t x2)
{
    return cvf_apply_f64(&p.f, comp, cvf_i2d(x0), cvf_i2d(x1), cvf_i2d(x2));
}

/* Packed output: one row of 2Q pixels from x0, s[i] the samples of pixel
 * x0 + i; vector stores when the whole row piece is inside. */
template <int OUT, int Q>
__device__ __forceinline__ void fast_put_packed(const fast_params &p, int x0, int y, bool vec, const int32_t (*s)[3])
{
    constexpr int N = 2 * Q;
    const cv_affine &a = p.a;
    uint8_t *row = p.out[0] + (size_t)y * p.opitch[0];
    if (OUT == OUT_PACKED8) {
        uint32_t px[N]; /* r | g << 8 | b << 16 | a << 24 */
#pragma unroll
        for (int i = 0; i < N; i++)
            px[i] = (uint32_t)fast_code(p, 0, s[i][0], s[i][1], s[i][2]) | (uint32_t)fast_code(p, 1, s[i][0], s[i][1], s[i][2]) << 8 |
                    (uint32_t)fast_code(p, 2, s[i][0], s[i][1], s[i][2]) << 16 | 0xff000000u;
        if (p.ncomp == 4) {
            if (vec) {
#pragma unroll
                for (int i = 0; i < N; i += 4)
                    *(uint4 *)(row + 4 * (size_t)(x0 + i)) = make_uint4(px[i], px[i + 1], px[i + 2], px[i + 3]);
            } else {
#pragma unroll
                for (int i = 0; i < N; i++)
                    if (x0 + i < p.w)
                        *(uint32_t *)(row + 4 * (size_t)(x0 + i)) = px[i];
            }
        } else if (vec) { /* 3N bytes as 3N/4 words, 4-byte aligned (x0 % 4 == 0) */
            uint32_t wd[3 * N / 4];
#pragma unroll
            for (int k = 0; k < 3 * N / 4; k++) {
                uint32_t v = 0;
#pragma unroll
                for (int b = 0; b < 4; b++)
                    v |= ((px[(4 * k + b) / 3] >> (8 * ((4 * k + b) % 3))) & 0xffu) << (8 * b);
                wd[k] = v;
            }
#pragma unroll
            for (int k = 0; k < 3 * N / 4; k++)
                *(uint32_t *)(row + 3 * (size_t)x0 + 4 * k) = wd[k];
        } else {
#pragma unroll
            for (int i = 0; i < N; i++)
                if (x0 + i < p.w) {
                    uint8_t *o = row + 3 * (size_t)(x0 + i);
                    o[0] = (uint8_t)px[i], o[1] = (uint8_t)(px[i] >> 8), o[2] = (uint8_t)(px[i] >> 16);
                }
        }
    } else {
        uint32_t c[N][3]; /* 16-bit codes */
#pragma unroll
        for (int i = 0; i < N; i++)
#pragma unroll
            for (int k = 0; k < 3; k++)
                c[i][k] = OUT == OUT_HALF ? (uint32_t)cv_apply_half(&a, k, s[i][0], s[i][1], s[i][2])
                                          : (uint32_t)fast_code(p, k, s[i][0], s[i][1], s[i][2]);
        const uint32_t alpha = OUT == OUT_HALF ? 0x3c00u : 0xffffu;
        if (OUT == OUT_HALF || p.ncomp == 4) {
            if (vec) {
#pragma unroll
                for (int i = 0; i < N; i += 2)
                    *(uint4 *)(row + 8 * (size_t)(x0 + i)) = make_uint4(c[i][0] | c[i][1] << 16, c[i][2] | alpha << 16,
                                                                         c[i + 1][0] | c[i + 1][1] << 16, c[i + 1][2] | alpha << 16);
            } else {
#pragma unroll
                for (int i = 0; i < N; i++)
                    if (x0 + i < p.w)
                        *(uint2 *)(row + 8 * (size_t)(x0 + i)) = make_uint2(c[i][0] | c[i][1] << 16, c[i][2] | alpha << 16);
            }
        } else if (vec) { /* 3N halves as 3N/4 uint2, 8-byte aligned (x0 % 4 == 0) */
#pragma unroll
            for (int k = 0; k < 3 * N / 4; k++) {
                const int e = 4 * k; /* first 16-bit element of this uint2 */
                *(uint2 *)(row + 6 * (size_t)x0 + 8 * k) =
                    make_uint2(c[e / 3][e % 3] | c[(e + 1) / 3][(e + 1) % 3] << 16,
                               c[(e + 2) / 3][(e + 2) % 3] | c[(e + 3) / 3][(e + 3) % 3] << 16);
            }
        } else {
#pragma unroll
            for (int i = 0; i < N; i++)
                if (x0 + i < p.w) {
                    uint16_t *o = (uint16_t *)(row + 6 * (size_t)(x0 + i));
                    o[0] = (uint16_t)c[i][0], o[1] = (uint16_t)c[i][1], o[2] = (uint16_t)c[i][2];
                }
        }
    }
}

/* N samples of 8- or 16-bit codes v from x0 of a plane row (element step
 * `step`, offset `idx`, for semi-planar chroma): one vector store of the
 * N-element run when `vec`, else element by element up to `lim`. Only
 * used with step 1 (planes) or a full Cb/Cr interleave (see callers). */
template <int BYTES, int N>
__device__ __forceinline__ void st_run(uint8_t *row, int x0, bool vec, int lim, const uint32_t *v)
{
    constexpr int B = N * BYTES;
    static_assert(B == 4 || B == 8 || B == 16, "store width");
    if (vec) {
        uint32_t wd[B / 4];
#pragma unroll
        for (int k = 0; k < B / 4; k++) {
            if (BYTES == 1)
                wd[k] = v[4 * k] | v[4 * k + 1] << 8 | v[4 * k + 2] << 16 | v[4 * k + 3] << 24;
            else
                wd[k] = v[2 * k] | v[2 * k + 1] << 16;
        }
        uint8_t *o = row + (size_t)x0 * BYTES;
        if constexpr (B == 16)
            *(uint4 *)o = make_uint4(wd[0], wd[1], wd[2], wd[3]);
        else if constexpr (B == 8)
            *(uint2 *)o = make_uint2(wd[0], wd[1]);
        else
            *(uint32_t *)o = wd[0];
    } else {
#pragma unroll
        for (int i = 0; i < N; i++)
            if (x0 + i < lim) {
                if (BYTES == 1)
                    row[x0 + i] = (uint8_t)v[i];
                else
                    ((uint16_t *)row)[x0 + i] = (uint16_t)v[i];
            }
    }
}

template <typename T, bool SEMI, bool TEX, int OUT, int Q>
__global__ void __launch_bounds__(256, Q == 2 ? 4 : 2) fast_kernel(const __grid_constant__ fast_params p)
{
    typedef fast_in<T, SEMI, TEX> IN;
    constexpr bool PACKED = OUT == OUT_PACKED8 || OUT == OUT_PACKED16 || OUT == OUT_HALF;
    constexpr int OB = OUT == OUT_PLANAR8 || OUT == OUT_SEMI8 ? 1 : 2; /* planar output bytes per sample */
    const int q0 = (int)(blockIdx.x * blockDim.x + threadIdx.x) * Q;
    const int qy = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (2 * q0 >= p.w || qy >= p.ch)
        return;
    const bool vec = 2 * q0 + 2 * Q <= p.w; /* block inside the picture: vector reads and stores */
    const cvf_taps &t = p.t;

    /* all loads first: chroma rows qy-1 .. qy+1 and the two luma rows */
    int32_t cu[3][Q + 2], cv[3][Q + 2], yl[2][2 * Q];
#pragma unroll
    for (int j = 0; j < 3; j++)
        IN::template chroma<Q>(p, q0, vkcu_clampi(qy - 1 + j, 0, p.ch - 1), vec, cu[j], cv[j]);
#pragma unroll
    for (int dy = 0; dy < 2; dy++)
        IN::template luma<2 * Q>(p, 2 * q0, vkcu_mini(2 * qy + dy, p.h - 1), vec, yl[dy]);

    /* luma positions */
    const bool need_c = PACKED || p.luma_chroma;
#pragma unroll
    for (int dy = 0; dy < 2; dy++) {
        const int y = 2 * qy + dy;
        if (y >= p.h)
            break;
        int32_t su[Q + 2] = {}, sv[Q + 2] = {};
        if (need_c) {
            cvf_vsum3(t.uy[dy], cu[0], cu[1], cu[2], Q + 2, su);
            cvf_vsum3(t.uy[dy], cv[0], cv[1], cv[2], Q + 2, sv);
        }
        int32_t s[2 * Q][3];
#pragma unroll
        for (int q = 0; q < Q; q++)
#pragma unroll
            for (int d = 0; d < 2; d++) {
                s[2 * q + d][0] = yl[dy][2 * q + d] << CV_FRAC;
                s[2 * q + d][1] = need_c ? cvf_up(&t, su, q, d) : 0;
                s[2 * q + d][2] = need_c ? cvf_up(&t, sv, q, d) : 0;
            }
        if constexpr (PACKED) {
            fast_put_packed<OUT, Q>(p, 2 * q0, y, vec, s);
        } else {
            uint32_t v[2 * Q];
#pragma unroll
            for (int i = 0; i < 2 * Q; i++)
                v[i] = (uint32_t)fast_code(p, 0, s[i][0], s[i][1], s[i][2]) << p.out_shift;
            st_run<OB, 2 * Q>(p.out[0] + (size_t)y * p.opitch[0], 2 * q0, vec, p.w, v);
        }
    }
    if constexpr (!PACKED) {
        /* the Q 4:2:0 output chroma sites of the block, row qy */
        int32_t sc[Q][3];
        int32_t su[Q + 2], sv[Q + 2];
        cvf_vsum3(t.cy, cu[0], cu[1], cu[2], Q + 2, su);
        cvf_vsum3(t.cy, cv[0], cv[1], cv[2], Q + 2, sv);
#pragma unroll
        for (int q = 0; q < Q; q++) {
            sc[q][0] = 0;
            sc[q][1] = cvf_site_chroma(&t, su, q);
            sc[q][2] = cvf_site_chroma(&t, sv, q);
        }
        if (p.site_luma) { /* luma rows 2qy-1 .. 2qy+2, columns 2q0-1 .. 2q0+2Q, clamped */
            int32_t l[4][2 * Q + 2], sl[2 * Q + 2];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int yy = vkcu_clampi(2 * qy - 1 + j, 0, p.h - 1);
#pragma unroll
                for (int i = 0; i < 2 * Q + 2; i++)
                    l[j][i] = IN::one(p, 0, vkcu_clampi(2 * q0 - 1 + i, 0, p.w - 1), yy) >> p.in_shift;
            }
            cvf_vsum4(t.ly, l[0], l[1], l[2], l[3], 2 * Q + 2, sl);
#pragma unroll
            for (int q = 0; q < Q; q++)
                sc[q][0] = cvf_site_luma(&t, sl, q);
        }
        uint32_t cb[Q], cr[Q];
#pragma unroll
        for (int q = 0; q < Q; q++) {
            cb[q] = (uint32_t)fast_code(p, 1, sc[q][0], sc[q][1], sc[q][2]) << p.out_shift;
            cr[q] = (uint32_t)fast_code(p, 2, sc[q][0], sc[q][1], sc[q][2]) << p.out_shift;
        }
        if (OUT == OUT_SEMI8 || OUT == OUT_SEMI16) {
            uint32_t i2[2 * Q];
#pragma unroll
            for (int q = 0; q < Q; q++)
                i2[2 * q] = cb[q], i2[2 * q + 1] = cr[q];
            /* Cb, Cr pairs: element index 2q, limit 2 * cw */
            st_run<OB, 2 * Q>(p.out[1] + (size_t)qy * p.opitch[1], 2 * q0, vec, 2 * p.cw, i2);
        } else {
            st_run<OB, Q>(p.out[1] + (size_t)qy * p.opitch[1], q0, vec, p.cw, cb);
            st_run<OB, Q>(p.out[2] + (size_t)qy * p.opitch[2], q0, vec, p.cw, cr);
        }
    }
}

template <typename T, bool SEMI, bool TEX, int OUT, int Q>
static void launch_fast_q(const fast_params &fp, cudaStream_t st)
{
    dim3 block(32, 8);
    int nbx = (fp.cw + Q - 1) / Q; /* quad blocks per row (fp.cw quads) */
    dim3 grid((unsigned)((nbx + block.x - 1) / block.x), (unsigned)((fp.ch + block.y - 1) / block.y));
    fast_kernel<T, SEMI, TEX, OUT, Q><<<grid, block, 0, st>>>(fp);
}

template <typename T, bool SEMI, bool TEX>
static void launch_fast(int out, const fast_params &fp, cudaStream_t st)
{
    switch (out) {
    case OUT_PLANAR8: launch_fast_q<T, SEMI, TEX, OUT_PLANAR8, 4>(fp, st); break;
    case OUT_PLANAR16: launch_fast_q<T, SEMI, TEX, OUT_PLANAR16, 4>(fp, st); break;
    case OUT_SEMI8: launch_fast_q<T, SEMI, TEX, OUT_SEMI8, 4>(fp, st); break;
    case OUT_SEMI16: launch_fast_q<T, SEMI, TEX, OUT_SEMI16, 4>(fp, st); break;
    case OUT_PACKED8: launch_fast_q<T, SEMI, TEX, OUT_PACKED8, 2>(fp, st); break;
    case OUT_PACKED16: launch_fast_q<T, SEMI, TEX, OUT_PACKED16, 2>(fp, st); break;
    default: launch_fast_q<T, SEMI, TEX, OUT_HALF, 2>(fp, st); break;
    }
}

/* ---- host side ---- */

static int out_kind(const cv_layout &l)
{
    if (l.kind == CV_PACKED)
        return l.is_half ? OUT_HALF : l.bytes == 1 ? OUT_PACKED8 : OUT_PACKED16;
    if (l.kind == CV_SEMIPLANAR)
        return l.bytes == 1 ? OUT_SEMI8 : OUT_SEMI16;
    return l.bytes == 1 ? OUT_PLANAR8 : OUT_PLANAR16;
}

template <typename T, bool SEMI, int OUT>
static void launch_out(const cv_gpu *g, const vkcu_gpu_frame &in, const vkcu_gpu_frame &out, cudaStream_t st)
{
    const cv_desc &d = g->desc;
    dim3 block(32, 8);
    dim3 grid((unsigned)(((d.width + 1) / 2 + block.x - 1) / block.x), (unsigned)(((d.height + 1) / 2 + block.y - 1) / block.y));
    if (d.tonemap)
        convert_kernel<T, SEMI, OUT, true><<<grid, block, 0, st>>>(d, g->tm, in, out);
    else
        convert_kernel<T, SEMI, OUT, false><<<grid, block, 0, st>>>(d, g->tm, in, out);
}

template <typename T, bool SEMI>
static void launch_in(const cv_gpu *g, const vkcu_gpu_frame &in, const vkcu_gpu_frame &out, cudaStream_t st)
{
    switch (out_kind(g->desc.out)) {
    case OUT_PLANAR8: launch_out<T, SEMI, OUT_PLANAR8>(g, in, out, st); break;
    case OUT_PLANAR16: launch_out<T, SEMI, OUT_PLANAR16>(g, in, out, st); break;
    case OUT_SEMI8: launch_out<T, SEMI, OUT_SEMI8>(g, in, out, st); break;
    case OUT_SEMI16: launch_out<T, SEMI, OUT_SEMI16>(g, in, out, st); break;
    case OUT_PACKED8: launch_out<T, SEMI, OUT_PACKED8>(g, in, out, st); break;
    case OUT_PACKED16: launch_out<T, SEMI, OUT_PACKED16>(g, in, out, st); break;
    default: launch_out<T, SEMI, OUT_HALF>(g, in, out, st); break;
    }
}

extern "C" int vkcu_cv_gpu_create(cv_gpu **pg, const cv_desc *desc, const float *tm_block, const tm_tables *tm,
                                  char *err, size_t errlen)
{
    int ret = 0;
    cv_gpu *g = (cv_gpu *)calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, errlen, "out of host memory");
        return -12; /* ENOMEM */
    }
    g->desc = *desc;
    {
        const char *e = getenv("VKCU_CONVERT_FAST"); /* 0: always the generic kernel (diagnostics) */
        /* Integer outputs need the double-precision affine to be exact (it is
         * for every 8/10-bit input; test_convert_f64); half float keeps int64. */
        g->fast = cvf_supported(desc) && cvf_taps_init(&g->taps, desc) == 0 && !(e && e[0] == '0') &&
                  (desc->out.is_half || cvf_f64_init(&g->f64, &desc->aff, desc->in.depth));
    }
    {
        const cv_layout &l = desc->out;
        int w = desc->width, h = desc->height;
        int cw = (w + l.ssx) >> l.ssx, ch = (h + l.ssy) >> l.ssy;
        if (l.kind == CV_PACKED) {
            g->nb_planes = 1;
            g->plane[0].width = w, g->plane[0].height = h;
        } else {
            g->nb_planes = l.kind == CV_SEMIPLANAR ? 2 : 3;
            g->plane[0].width = w, g->plane[0].height = h;
            for (int i = 1; i < g->nb_planes; i++)
                g->plane[i].width = cw, g->plane[i].height = ch;
        }
        for (int i = 0; i < g->nb_planes; i++) {
            size_t elem = (size_t)l.bytes * (l.kind == CV_PACKED ? l.ncomp : l.kind == CV_SEMIPLANAR && i ? 2 : 1);
            void *p = NULL;
            CU_CHECK(cudaMallocPitch(&p, &g->plane[i].pitch, elem * g->plane[i].width, g->plane[i].height));
            g->plane[i].ptr = (uint8_t *)p;
        }
    }
    if (desc->tonemap) {
        size_t bytes = TM_TABLE_FLOATS * sizeof(float);
        CU_CHECK(cudaMalloc((void **)&g->tm_block, bytes));
        CU_CHECK(cudaMemcpy(g->tm_block, tm_block, bytes, cudaMemcpyHostToDevice));
        g->tm = *tm;
        g->tm.eotf = g->tm_block + (tm->eotf - tm_block);
        g->tm.ootf = g->tm_block + (tm->ootf - tm_block);
        g->tm.gain = g->tm_block + (tm->gain - tm_block);
        g->tm.oetf = g->tm_block + (tm->oetf - tm_block);
    }
    *pg = g;
    return 0;
fail:
    vkcu_cv_gpu_destroy(&g);
    return ret;
}

/* Launches the fast kernel when the description has one and the input
 * planes are all textures, or all pitch-linear memory aligned for 16-byte
 * vector reads; returns whether it did. */
static bool run_fast(const cv_gpu *g, const vkcu_gpu_frame *in, cudaStream_t st)
{
    const cv_desc &d = g->desc;
    if (!g->fast)
        return false;
    const int np = d.in.kind == CV_SEMIPLANAR ? 2 : 3;
    const bool tex = in->plane[0].tex != 0;
    for (int i = 0; i < np; i++) {
        const vkcu_gpu_plane &pl = in->plane[i];
        if ((pl.tex != 0) != tex)
            return false;
        if (!tex && (!pl.ptr || (uintptr_t)pl.ptr % 16 || pl.pitch % 16))
            return false;
    }
    fast_params fp;
    memset(&fp, 0, sizeof(fp));
    fp.a = d.aff;
    fp.f = g->f64;
    fp.t = g->taps;
    fp.w = d.width, fp.h = d.height;
    fp.cw = (d.width + 1) >> 1, fp.ch = (d.height + 1) >> 1;
    fp.in_shift = d.in.shift, fp.out_shift = d.out.shift, fp.ncomp = d.out.ncomp;
    fp.luma_chroma = d.aff.c[0][1] || d.aff.c[0][2];
    fp.site_luma = d.aff.c[1][0] || d.aff.c[2][0];
    for (int i = 0; i < np; i++) {
        fp.in[i] = in->plane[i].ptr;
        fp.ipitch[i] = in->plane[i].pitch;
        fp.tex[i] = in->plane[i].tex;
    }
    for (int i = 0; i < g->nb_planes && i < 3; i++) {
        fp.out[i] = g->plane[i].ptr;
        fp.opitch[i] = g->plane[i].pitch;
    }
    const int out = out_kind(d.out);
    const bool semi = d.in.kind == CV_SEMIPLANAR, b8 = d.in.bytes == 1;
    if (tex) {
        if (semi)
            b8 ? launch_fast<uint8_t, true, true>(out, fp, st) : launch_fast<uint16_t, true, true>(out, fp, st);
        else
            b8 ? launch_fast<uint8_t, false, true>(out, fp, st) : launch_fast<uint16_t, false, true>(out, fp, st);
    } else {
        if (semi)
            b8 ? launch_fast<uint8_t, true, false>(out, fp, st) : launch_fast<uint16_t, true, false>(out, fp, st);
        else
            b8 ? launch_fast<uint8_t, false, false>(out, fp, st) : launch_fast<uint16_t, false, false>(out, fp, st);
    }
    return true;
}

extern "C" int vkcu_cv_gpu_run(cv_gpu *g, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream, char *err,
                               size_t errlen)
{
    int ret = 0;
    cudaStream_t st = (cudaStream_t)stream;
    const cv_layout &l = g->desc.in;
    int need = l.kind == CV_SEMIPLANAR ? 2 : 3;
    if (in->nb_planes < need) {
        snprintf(err, errlen, "GPU frame has %d planes, its layout needs %d", in->nb_planes, need);
        return CV_GPU_ERR_INPUT;
    }
    memset(out->plane, 0, sizeof(out->plane));
    out->nb_planes = g->nb_planes;
    for (int i = 0; i < g->nb_planes; i++)
        out->plane[i] = g->plane[i];
    if (run_fast(g, in, st)) {
        /* launched */
    } else if (l.kind == CV_SEMIPLANAR) {
        if (l.bytes == 1)
            launch_in<uint8_t, true>(g, *in, *out, st);
        else
            launch_in<uint16_t, true>(g, *in, *out, st);
    } else {
        if (l.bytes == 1)
            launch_in<uint8_t, false>(g, *in, *out, st);
        else
            launch_in<uint16_t, false>(g, *in, *out, st);
    }
    CU_CHECK(cudaGetLastError());
    return 0;
fail:
    return ret;
}

extern "C" void vkcu_cv_gpu_destroy(cv_gpu **pg)
{
    cv_gpu *g = *pg;
    if (!g)
        return;
    for (int i = 0; i < 4; i++)
        if (g->plane[i].ptr)
            cudaFree(g->plane[i].ptr);
    if (g->tm_block)
        cudaFree(g->tm_block);
    free(g);
    *pg = NULL;
}

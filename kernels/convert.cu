/*
 * CUDA backend of the convert and tonemap operators: one thread per 2x2
 * luma quad (one 4:2:0 chroma site), reading input planes through
 * plane_load (texture objects of imported arrays, or pitch-linear memory)
 * and writing operator-owned pitch-linear planes. The arithmetic is the
 * shared fixed-point and table math of convert_math.h / tonemap_math.h, so
 * the bytes equal the CPU reference's.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "convert_gpu.h"
extern "C" {
#include "log.h" /* C declarations without their own extern "C" */
}
#include "plane.cuh"

struct cv_gpu {
    cv_desc desc;
    int nb_planes;
    vkcu_gpu_plane plane[4];
    float *tm_block; /* device copy of the tonemap tables */
    tm_tables tm;    /* with device pointers */
};

#define CUDA_TRY(call)                                                                                      \
    do {                                                                                                    \
        cudaError_t e_ = (call);                                                                            \
        if (e_ != cudaSuccess) {                                                                            \
            LOGE("convert: %s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            ret = VKCU_ERR_DEVICE;                                                                          \
            goto fail;                                                                                      \
        }                                                                                                   \
    } while (0)

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

extern "C" int cv_gpu_create(cv_gpu **pg, const cv_desc *desc, const float *tm_block, const tm_tables *tm)
{
    int ret = 0;
    cv_gpu *g = (cv_gpu *)calloc(1, sizeof(*g));
    if (!g)
        return -12; /* ENOMEM */
    g->desc = *desc;
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
            CUDA_TRY(cudaMallocPitch(&p, &g->plane[i].pitch, elem * g->plane[i].width, g->plane[i].height));
            g->plane[i].ptr = (uint8_t *)p;
        }
    }
    if (desc->tonemap) {
        size_t bytes = TM_TABLE_FLOATS * sizeof(float);
        CUDA_TRY(cudaMalloc((void **)&g->tm_block, bytes));
        CUDA_TRY(cudaMemcpy(g->tm_block, tm_block, bytes, cudaMemcpyHostToDevice));
        g->tm = *tm;
        g->tm.eotf = g->tm_block + (tm->eotf - tm_block);
        g->tm.ootf = g->tm_block + (tm->ootf - tm_block);
        g->tm.gain = g->tm_block + (tm->gain - tm_block);
        g->tm.oetf = g->tm_block + (tm->oetf - tm_block);
    }
    *pg = g;
    return 0;
fail:
    cv_gpu_destroy(&g);
    return ret;
}

extern "C" int cv_gpu_run(cv_gpu *g, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    int ret = 0;
    cudaStream_t st = (cudaStream_t)stream;
    const cv_layout &l = g->desc.in;
    int need = l.kind == CV_SEMIPLANAR ? 2 : 3;
    if (in->nb_planes < need) {
        LOGE("convert: GPU frame has %d planes, its layout needs %d", in->nb_planes, need);
        return VKCU_ERR_INPUT;
    }
    memset(out->plane, 0, sizeof(out->plane));
    out->nb_planes = g->nb_planes;
    for (int i = 0; i < g->nb_planes; i++)
        out->plane[i] = g->plane[i];
    if (l.kind == CV_SEMIPLANAR) {
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
    CUDA_TRY(cudaGetLastError());
    return 0;
fail:
    return ret;
}

extern "C" void cv_gpu_destroy(cv_gpu **pg)
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

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUDA kernels of the `denoise` operator and their C-callable launchers
 * (declared in kernels/denoise_gpu.h). The per-sample math comes from
 * kernels/denoise_math.h, shared with the CPU reference, and every sum is an
 * exact integer, so GPU and CPU outputs are identical bytes.
 *
 * tnr: one thread per plane element (all its interleaved components), one
 * pass reading the current frame and the previous output, writing the new
 * output: memory-bound.
 *
 * nlm: one warp per tile of (32 - 2P) columns x NLM_TH rows. The reference
 * tile and the candidate frame's tile (extended by the search and patch
 * radii) are staged in shared memory from padded uint16 copies of the
 * channel. For each offset, lane i keeps the vertical running sum over the
 * patch height of the squared differences in its column; the horizontal
 * part of the patch sum is 2P warp shuffles. Weights come from a shared
 * copy of the host-built table; per-row accumulators stay in registers.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <libavutil/error.h>

#include "denoise_gpu.h"
#include "plane.cuh"

#define NLM_TH 16

static int cuda_err(cudaError_t e)
{
    return e == cudaSuccess ? 0 : e == cudaErrorMemoryAllocation ? AVERROR(ENOMEM) : AVERROR_EXTERNAL;
}

extern "C" int vkcu_dn_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height)
{
    *ptr = NULL;
    return cuda_err(cudaMallocPitch(ptr, pitch, width_bytes, (size_t)height));
}

extern "C" void vkcu_dn_gpu_free(void **ptr)
{
    if (*ptr)
        cudaFree(*ptr);
    *ptr = NULL;
}

extern "C" int vkcu_dn_gpu_memset(void *ptr, size_t pitch, size_t width_bytes, int height, void *stream)
{
    return cuda_err(cudaMemset2DAsync(ptr, pitch, 0, width_bytes, (size_t)height, (cudaStream_t)stream));
}

extern "C" int vkcu_dn_gpu_upload(void *dst, const void *src, size_t size, void *stream)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, size, cudaMemcpyHostToDevice, (cudaStream_t)stream);
    if (e == cudaSuccess && !stream)
        e = cudaStreamSynchronize(0);
    return cuda_err(e);
}

/* ---- element access: one sample type per plane layout ---- */

__device__ __forceinline__ int comp_get(uint8_t v, int) { return v; }
__device__ __forceinline__ int comp_get(uint16_t v, int) { return v; }
__device__ __forceinline__ int comp_get(uchar2 v, int c) { return c ? v.y : v.x; }
__device__ __forceinline__ int comp_get(ushort2 v, int c) { return c ? v.y : v.x; }
__device__ __forceinline__ void comp_set(uint8_t &v, int, int x) { v = (uint8_t)x; }
__device__ __forceinline__ void comp_set(uint16_t &v, int, int x) { v = (uint16_t)x; }
__device__ __forceinline__ void comp_set(uchar2 &v, int c, int x)
{
    if (c)
        v.y = (unsigned char)x;
    else
        v.x = (unsigned char)x;
}
__device__ __forceinline__ void comp_set(ushort2 &v, int c, int x)
{
    if (c)
        v.y = (unsigned short)x;
    else
        v.x = (unsigned short)x;
}

/* ---- tnr ---- */

template <typename E, int NC>
__global__ void tnr_kernel(vkcu_gpu_plane in, vkcu_gpu_plane prev, vkcu_gpu_plane out, int has_prev, int shift,
                           dn_tnr_params tp)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out.width || y >= out.height)
        return;
    E ce[9], pe[9];
    for (int r = 0; r < 3; r++) {
        int yy = vkcu_clampi(y + r - 1, 0, out.height - 1);
        for (int c = 0; c < 3; c++) {
            int xx = vkcu_clampi(x + c - 1, 0, out.width - 1);
            ce[r * 3 + c] = plane_load<E>(in, xx, yy);
            pe[r * 3 + c] = has_prev ? plane_load<E>(prev, xx, yy) : ce[r * 3 + c];
        }
    }
    E o = ce[4];
    for (int k = 0; k < NC; k++) {
        int cur[9], pv[9];
        for (int i = 0; i < 9; i++) {
            cur[i] = comp_get(ce[i], k) >> shift;
            pv[i] = has_prev ? comp_get(pe[i], k) >> shift : 0;
        }
        comp_set(o, k, dn_tnr_sample(cur, pv, has_prev, &tp) << shift);
    }
    plane_store<E>(out, x, y, o);
}

extern "C" int vkcu_dn_gpu_tnr(const vkcu_gpu_plane *in, const vkcu_gpu_plane *prev, const vkcu_gpu_plane *out,
                          int ncomp, int bytes, int shift, const dn_tnr_params *tp, void *stream)
{
    dim3 block(32, 8);
    dim3 grid((out->width + 31) / 32, (out->height + 7) / 8);
    cudaStream_t s = (cudaStream_t)stream;
    vkcu_gpu_plane pv = prev ? *prev : *out; /* unread when !prev */
    int hp = prev != NULL;
    if (bytes == 1 && ncomp == 1)
        tnr_kernel<uint8_t, 1><<<grid, block, 0, s>>>(*in, pv, *out, hp, shift, *tp);
    else if (bytes == 1 && ncomp == 2)
        tnr_kernel<uchar2, 2><<<grid, block, 0, s>>>(*in, pv, *out, hp, shift, *tp);
    else if (bytes == 2 && ncomp == 1)
        tnr_kernel<uint16_t, 1><<<grid, block, 0, s>>>(*in, pv, *out, hp, shift, *tp);
    else if (bytes == 2 && ncomp == 2)
        tnr_kernel<ushort2, 2><<<grid, block, 0, s>>>(*in, pv, *out, hp, shift, *tp);
    else
        return AVERROR(EINVAL);
    return cuda_err(cudaGetLastError());
}

/* ---- nlm ---- */

template <typename E>
__global__ void ingest_kernel(vkcu_gpu_plane in, int comp, int shift, uint16_t *dst, size_t pitch, int pad)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= in.width + 2 * pad || y >= in.height + 2 * pad)
        return;
    int xx = vkcu_clampi(x - pad, 0, in.width - 1);
    int yy = vkcu_clampi(y - pad, 0, in.height - 1);
    E v = plane_load<E>(in, xx, yy);
    ((uint16_t *)((uint8_t *)dst + (size_t)y * pitch))[x] = (uint16_t)(comp_get(v, comp) >> shift);
}

extern "C" int vkcu_dn_gpu_nlm_ingest(const vkcu_gpu_plane *in, int ncomp, int comp, int bytes, int shift,
                                 uint16_t *dst, size_t dst_pitch, int pad, void *stream)
{
    dim3 block(32, 8);
    dim3 grid((in->width + 2 * pad + 31) / 32, (in->height + 2 * pad + 7) / 8);
    cudaStream_t s = (cudaStream_t)stream;
    if (bytes == 1 && ncomp == 1)
        ingest_kernel<uint8_t><<<grid, block, 0, s>>>(*in, comp, shift, dst, dst_pitch, pad);
    else if (bytes == 1 && ncomp == 2)
        ingest_kernel<uchar2><<<grid, block, 0, s>>>(*in, comp, shift, dst, dst_pitch, pad);
    else if (bytes == 2 && ncomp == 1)
        ingest_kernel<uint16_t><<<grid, block, 0, s>>>(*in, comp, shift, dst, dst_pitch, pad);
    else if (bytes == 2 && ncomp == 2)
        ingest_kernel<ushort2><<<grid, block, 0, s>>>(*in, comp, shift, dst, dst_pitch, pad);
    else
        return AVERROR(EINVAL);
    return cuda_err(cudaGetLastError());
}

struct nlm_kargs {
    const uint16_t *frame[16];
    int nb_frames, cur;
    size_t pitch;
    int width, height, pad, search, shift;
    const uint16_t *lut;
    uint8_t *out;
    size_t out_pitch;
    int ncomp, comp, bytes, oshift, maxval;
};

__device__ __forceinline__ const uint16_t *row_of(const uint16_t *base, size_t pitch, int y)
{
    return (const uint16_t *)((const uint8_t *)base + (size_t)y * pitch);
}

/*
 * Shared memory layout: lut[DN_NLM_LUT], ref[(TH + 2P) x 32], cand[(TH + 2P +
 * 2R) x (32 + 2R)]. Lane i covers column ox - P + i of the frame; lanes
 * 0 .. 31 - 2P produce outputs (columns ox .. ox + 31 - 2P).
 */
template <int P>
__global__ void __launch_bounds__(32) nlm_kernel(nlm_kargs a)
{
    extern __shared__ uint16_t smem[];
    const int OW = 32 - 2 * P;
    const int R = a.search;
    const int RH = NLM_TH + 2 * P;      /* reference rows */
    const int CW = 32 + 2 * R;          /* candidate columns */
    const int CH = NLM_TH + 2 * P + 2 * R;
    uint16_t *lut = smem;
    uint16_t *ref = lut + DN_NLM_LUT;
    uint16_t *cand = ref + RH * 32;
    const int lane = threadIdx.x;
    const int ox = blockIdx.x * OW, oy = blockIdx.y * NLM_TH;
    /* padded coordinates of the tiles' top-left corners */
    const int pw = a.width + 2 * a.pad, ph = a.height + 2 * a.pad;
    const int rx0 = ox + a.pad - P, ry0 = oy + a.pad - P;

    for (int i = lane; i < DN_NLM_LUT; i += 32)
        lut[i] = a.lut[i];
    const uint16_t *I = a.frame[a.cur];
    for (int r = 0; r < RH; r++) {
        int yy = min(ry0 + r, ph - 1);
        ref[r * 32 + lane] = row_of(I, a.pitch, yy)[min(rx0 + lane, pw - 1)];
    }

    uint32_t wsum[NLM_TH], vsum[NLM_TH];
#pragma unroll
    for (int t = 0; t < NLM_TH; t++)
        wsum[t] = vsum[t] = 0;

    for (int f = 0; f < a.nb_frames; f++) {
        __syncwarp();
        const uint16_t *J = a.frame[f];
        for (int r = 0; r < CH; r++) {
            int yy = min(ry0 - R + r, ph - 1);
            const uint16_t *row = row_of(J, a.pitch, yy);
            for (int c = lane; c < CW; c += 32)
                cand[r * CW + c] = row[min(rx0 - R + c, pw - 1)];
        }
        __syncwarp();
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++) {
                /* cand index of this lane's column at ref row 0 */
                const uint16_t *cb = cand + (R + dy) * CW + (R + dx) + lane;
                const uint16_t *rb = ref + lane;
                uint32_t cs = 0;
#pragma unroll
                for (int r = 0; r < 2 * P + 1; r++) {
                    int d = (int)rb[r * 32] - (int)cb[r * CW];
                    cs += (uint32_t)(d * d);
                }
#pragma unroll
                for (int t = 0; t < NLM_TH; t++) {
                    uint32_t s = cs;
#pragma unroll
                    for (int i = 1; i <= 2 * P; i++)
                        s += __shfl_down_sync(0xffffffffu, cs, i);
                    uint32_t w = (uint32_t)dn_nlm_weight(lut, a.shift, s);
                    /* candidate sample: centre of the patch, column lane + P */
                    uint32_t v = cb[(t + P) * CW + P];
                    wsum[t] += w;
                    vsum[t] += w * v;
                    if (t + 1 < NLM_TH) {
                        int da = (int)rb[(t + 2 * P + 1) * 32] - (int)cb[(t + 2 * P + 1) * CW];
                        int dr = (int)rb[t * 32] - (int)cb[t * CW];
                        cs += (uint32_t)(da * da) - (uint32_t)(dr * dr);
                    }
                }
            }
    }
    int x = ox + lane;
    if (lane >= OW || x >= a.width)
        return;
#pragma unroll
    for (int t = 0; t < NLM_TH; t++) {
        int y = oy + t;
        if (y < a.height) {
            int v = vkcu_clampi(dn_nlm_finish(vsum[t], wsum[t]), 0, a.maxval);
            uint8_t *row = a.out + (size_t)y * a.out_pitch;
            if (a.bytes == 1)
                row[x * a.ncomp + a.comp] = (uint8_t)v;
            else
                ((uint16_t *)row)[x * a.ncomp + a.comp] = (uint16_t)(v << a.oshift);
        }
    }
}

/* Pass-through of one channel (planes=... leaves it unfiltered). */
static __global__ void nlm_copy_kernel(nlm_kargs a)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= a.width || y >= a.height)
        return;
    int v = row_of(a.frame[a.cur], a.pitch, y + a.pad)[x + a.pad];
    uint8_t *row = a.out + (size_t)y * a.out_pitch;
    if (a.bytes == 1)
        row[x * a.ncomp + a.comp] = (uint8_t)v;
    else
        ((uint16_t *)row)[x * a.ncomp + a.comp] = (uint16_t)(v << a.oshift);
}

template <int P>
static int launch_nlm(const nlm_kargs &k, cudaStream_t s)
{
    const int OW = 32 - 2 * P;
    int R = k.search;
    size_t shmem = sizeof(uint16_t) * (DN_NLM_LUT + (NLM_TH + 2 * P) * 32 +
                                       (size_t)(NLM_TH + 2 * P + 2 * R) * (32 + 2 * R));
    dim3 grid((k.width + OW - 1) / OW, (k.height + NLM_TH - 1) / NLM_TH);
    nlm_kernel<P><<<grid, 32, shmem, s>>>(k);
    return cuda_err(cudaGetLastError());
}

extern "C" int vkcu_dn_gpu_nlm(const dn_nlm_gpu_args *a, const vkcu_gpu_plane *out, int ncomp, int comp, int bytes,
                          int shift, void *stream)
{
    if (a->nb_frames < 1 || a->nb_frames > 16 || a->search > 15 || !out->ptr)
        return AVERROR(EINVAL);
    nlm_kargs k;
    for (int i = 0; i < 16; i++)
        k.frame[i] = i < a->nb_frames ? a->frame[i] : a->frame[0];
    k.nb_frames = a->nb_frames;
    k.cur = a->cur;
    k.pitch = a->pitch;
    k.width = a->width;
    k.height = a->height;
    k.pad = a->pad;
    k.search = a->search;
    k.shift = a->shift;
    k.lut = a->lut;
    k.out = out->ptr;
    k.out_pitch = out->pitch;
    k.ncomp = ncomp;
    k.comp = comp;
    k.bytes = bytes;
    k.oshift = shift;
    k.maxval = bytes == 1 ? 255 : 1023;
    cudaStream_t s = (cudaStream_t)stream;
    switch (a->patch) {
    case 0: {
        dim3 block(32, 8);
        dim3 grid((a->width + 31) / 32, (a->height + 7) / 8);
        nlm_copy_kernel<<<grid, block, 0, s>>>(k);
        return cuda_err(cudaGetLastError());
    }
    case 1: return launch_nlm<1>(k, s);
    case 2: return launch_nlm<2>(k, s);
    case 3: return launch_nlm<3>(k, s);
    case 4: return launch_nlm<4>(k, s);
    }
    return AVERROR(EINVAL);
}

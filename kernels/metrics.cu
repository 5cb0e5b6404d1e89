/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare's frame metrics on the GPU: per plane of two pictures in device
 * memory, the sum of squared differences, the largest difference and its
 * first place, and the SSIM sum, in the arithmetic and order of
 * kernels/metrics_math.h (which the CPU's src/regress/metrics.c uses too).
 *
 * Four kernels per plane, queued on the caller's stream:
 *  1. sse_max: a block per sample row; integer sums (exact in any order)
 *     and the largest difference under vkcu_diff_key, so one atomicMax per
 *     block finds the largest value at its first place in raster order.
 *  2. ssim_windows: a thread per 8x8 window, its four integer sums read
 *     straight from the samples (the sum of vf_ssim.c's four 4x4 blocks)
 *     and its float SSIM stored.
 *  3. ssim_rows: a thread per window row adds its windows left to right in
 *     double.
 *  4. ssim_total: one thread adds the rows top to bottom.
 * Only the three numbers per plane leave the GPU.
 */
#include <cuda_runtime.h>

#include "metrics_kernels.h"
#include "metrics_math.h"

#define SSE_THREADS 256

__device__ static inline int sample(const uint8_t *p, size_t pitch, int wide, int x, int y)
{
    const uint8_t *row = p + (size_t)y * pitch;
    return wide ? (int)((const uint16_t *)row)[x] : (int)row[x];
}

static __global__ void __launch_bounds__(SSE_THREADS) sse_max_kernel(vkcu_metrics_plane p, vkcu_metrics_result *out)
{
    int y = blockIdx.x;
    unsigned long long sse = 0, key = 0;
    for (int x = threadIdx.x; x < p.w; x += SSE_THREADS) {
        int d = abs(sample(p.a, p.pitch_a, p.wide, x, y) - sample(p.b, p.pitch_b, p.wide, x, y));
        sse += (unsigned long long)d * d;
        unsigned long long k = vkcu_diff_key(d, (int64_t)y * p.w + x);
        key = k > key ? k : key;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sse += __shfl_down_sync(0xffffffffu, sse, o);
        unsigned long long k = __shfl_down_sync(0xffffffffu, key, o);
        key = k > key ? k : key;
    }
    __shared__ unsigned long long warp_sse[SSE_THREADS / 32], warp_key[SSE_THREADS / 32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (!lane) {
        warp_sse[warp] = sse;
        warp_key[warp] = key;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < SSE_THREADS / 32; i++) {
            sse += warp_sse[i];
            key = warp_key[i] > key ? warp_key[i] : key;
        }
        atomicAdd(&out->sse, sse);
        atomicMax(&out->diff_key, key);
    }
}

static __global__ void ssim_windows_kernel(vkcu_metrics_plane p, int wx, int wy, float *win)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= wx || j >= wy)
        return;
    int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
    for (int y = 4 * j; y < 4 * j + 8; y++)
        for (int x = 4 * i; x < 4 * i + 8; x++) {
            int64_t va = sample(p.a, p.pitch_a, p.wide, x, y), vb = sample(p.b, p.pitch_b, p.wide, x, y);
            s1 += va;
            s2 += vb;
            ss += va * va + vb * vb;
            s12 += va * vb;
        }
    win[(size_t)j * wx + i] = vkcu_ssim_window(s1, s2, ss, s12, p.c1, p.c2);
}

static __global__ void ssim_rows_kernel(const float *win, int wx, int wy, double *rows)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= wy)
        return;
    const float *w = win + (size_t)j * wx;
    double row = 0;
    for (int i = 0; i < wx; i++)
        row = __dadd_rn(row, (double)w[i]);
    rows[j] = row;
}

static __global__ void ssim_total_kernel(const double *rows, int wy, vkcu_metrics_result *out)
{
    double total = 0;
    for (int j = 0; j < wy; j++)
        total = __dadd_rn(total, rows[j]);
    out->ssim_sum = total;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

extern "C" size_t vkcu_cuda_metrics_scratch(int w, int h)
{
    int wx = vkcu_ssim_windows_x(w), wy = vkcu_ssim_windows_y(h);
    if (wx < 1 || wy < 1)
        return 8;
    return align8((size_t)wx * wy * sizeof(float)) + (size_t)wy * sizeof(double);
}

extern "C" int vkcu_cuda_plane_metrics(const vkcu_metrics_plane *p, void *scratch, vkcu_metrics_result *out,
                                       void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(out, 0, sizeof(*out), s);
    if (e != cudaSuccess)
        return e;
    if (p->w < 1 || p->h < 1)
        return cudaSuccess;
    sse_max_kernel<<<p->h, SSE_THREADS, 0, s>>>(*p, out);
    int wx = vkcu_ssim_windows_x(p->w), wy = vkcu_ssim_windows_y(p->h);
    if (wx >= 1 && wy >= 1) {
        float *win = (float *)scratch;
        double *rows = (double *)((uint8_t *)scratch + align8((size_t)wx * wy * sizeof(float)));
        dim3 block(32, 8), grid((wx + 31) / 32, (wy + 7) / 8);
        ssim_windows_kernel<<<grid, block, 0, s>>>(*p, wx, wy, win);
        ssim_rows_kernel<<<(wy + 127) / 128, 128, 0, s>>>(win, wx, wy, rows);
        ssim_total_kernel<<<1, 1, 0, s>>>(rows, wy, out);
    }
    return cudaGetLastError();
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The arithmetic of compare's frame metrics (FFmpeg's psnr and ssim filters,
 * libavfilter/vf_psnr.c and vf_ssim.c), shared by the CPU
 * (src/regress/metrics.c) and the GPU (kernels/metrics.cu) so that both give
 * the same bits, and the order in which both reduce:
 *
 * - PSNR: the sum of squared differences of a plane is an integer, exact in
 *   any order; so is the largest difference, whose place is the first in
 *   raster order (the smallest y, then the smallest x) where it occurs.
 * - SSIM: one 8x8 window every 4 samples, its four sums integers and its
 *   value one float computed as vf_ssim.c's ssim_end1x, each operation
 *   rounded on its own (no fused multiply-add: the GPU uses the _rn
 *   intrinsics). A plane's SSIM is then the sum, in double, of each window
 *   row's windows from left to right, those row sums added from top to
 *   bottom, divided by the number of windows. The two-level order lets the
 *   GPU sum its rows in parallel and the CPU its bands of rows, and both
 *   still add the same doubles in the same order.
 *
 * The per-plane results (vkcu_plane_stats) are turned into a frame's
 * figures by one host function for both backends (vkcu_frame_metrics_finish
 * in src/regress/metrics.c).
 */
#ifndef VKCU_METRICS_MATH_H
#define VKCU_METRICS_MATH_H

#include <stdint.h>

#include "common.h"

/* What a plane's comparison gives, on either backend. */
typedef struct vkcu_plane_stats {
    uint64_t sse;       /* sum of squared differences */
    int max_diff;       /* largest absolute difference (0 for equal planes) */
    int max_x, max_y;   /* its first place in raster order ((0,0) for equal planes) */
    double ssim_sum;    /* the windows' SSIM summed in the order above */
    int64_t ssim_windows; /* how many; 0 when the plane is under 8x8 (no SSIM) */
} vkcu_plane_stats;

/* SSIM windows of a w x h plane along each axis: 8x8, 4 apart (vf_ssim.c:
 * 4x4 blocks, each window four of them). <1: none. */
VKCU_HD int vkcu_ssim_windows_x(int w) { return (w >> 2) - 1; }
VKCU_HD int vkcu_ssim_windows_y(int h) { return (h >> 2) - 1; }

/* vf_ssim.c's constants for an 8x8 window of samples at most `peak`.
 * Computed on the host only: nvcc would be free to fuse the double
 * multiply-add, which changes c2's rounding. */
static inline int64_t vkcu_ssim_c1(int peak) { return (int64_t)(.01 * .01 * peak * peak * 64 + .5); }
static inline int64_t vkcu_ssim_c2(int peak) { return (int64_t)(.03 * .03 * peak * peak * 64 * 63 + .5); }

/* One window's SSIM from its sums: s1 and s2 of each picture's samples, ss
 * of both pictures' squares, s12 of their products. */
VKCU_HD float vkcu_ssim_window(int64_t s1, int64_t s2, int64_t ss, int64_t s12, int64_t c1, int64_t c2)
{
    int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
    int64_t covar = s12 * 64 - s1 * s2;
    float n0 = (float)(2 * s1 * s2 + c1), n1 = (float)(2 * covar + c2);
    float d0 = (float)(s1 * s1 + s2 * s2 + c1), d1 = (float)(vars + c2);
#ifdef __CUDA_ARCH__
    return __fdiv_rn(__fmul_rn(n0, n1), __fmul_rn(d0, d1));
#else
    return n0 * n1 / (d0 * d1);
#endif
}

/* The key under which the largest difference is kept: larger differences
 * first, then earlier places (y * w + x below 2^40). */
VKCU_HD uint64_t vkcu_diff_key(int d, int64_t place)
{
    return ((uint64_t)d << 40) | ((((uint64_t)1 << 40) - 1) - (uint64_t)place);
}
VKCU_HD int vkcu_diff_key_value(uint64_t key) { return (int)(key >> 40); }
VKCU_HD int64_t vkcu_diff_key_place(uint64_t key) { return (int64_t)((((uint64_t)1 << 40) - 1) - (key & ((((uint64_t)1 << 40)) - 1))); }

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Denoise per-sample math shared by the CPU reference (src/ops/op_denoise.c) and
 * the CUDA kernels (kernels/denoise.cu). Everything here is integer so that
 * both backends produce the same bytes; the float work (turning sigma into
 * slopes and the NLM weight table) happens once on the host and the results
 * are handed to both backends unchanged.
 *
 * Samples are plain integers at the stream's bit depth (8 or 10 bits), i.e.
 * already shifted down for MSB-aligned layouts such as P010.
 */
#ifndef VKCU_KERNELS_DENOISE_MATH_H
#define VKCU_KERNELS_DENOISE_MATH_H

#include "common.h"

/* ---- tnr: motion-adaptive temporal recursion with a light spatial term ---- */

/* Fixed-point unit of every weight below. */
#define DN_ONE 256

typedef struct dn_tnr_params {
    int maxval;   /* (1 << depth) - 1 */
    int sp_slope; /* spatial range weight: 256 - |d| * sp_slope / 256, >= 0 */
    int sp_amount;/* 0..256: how much of the spatial average is used */
    int mo_slope; /* temporal weight vs local motion |sum(cur - prev)| over 3x3 */
    int px_slope; /* temporal weight vs |spatial - prev| at the sample */
    int k_max;    /* 0..256: temporal weight for a perfectly static sample */
} dn_tnr_params;

VKCU_HD int dn_absi(int v) { return v < 0 ? -v : v; }

/* Linear fall-off from DN_ONE at 0 to 0 at 65536 / slope. */
VKCU_HD int dn_falloff(int d, int slope)
{
    int w = DN_ONE - ((d * slope) >> 8);
    return w > 0 ? w : 0;
}

/* Spatial weights of the 3x3 neighbourhood (a binomial kernel), in row order. */
VKCU_HD int dn_tnr_base(int i) { return (i == 4) ? 4 : (i & 1) ? 2 : 1; }

/*
 * One output sample of tnr. cur: the 3x3 neighbourhood of the current frame,
 * prev: the same neighbourhood of the previous output (ignored when
 * !has_prev), both in row order with the sample itself at index 4.
 */
VKCU_HD int dn_tnr_sample(const int cur[9], const int prev[9], int has_prev, const dn_tnr_params *tp)
{
    int c = cur[4];
    /* edge-preserving 3x3 average: neighbours far from the centre in value
     * count less, so edges and texture survive */
    int sw = 0, sv = 0;
    for (int i = 0; i < 9; i++) {
        int w = dn_tnr_base(i) * dn_falloff(dn_absi(cur[i] - c), tp->sp_slope);
        sw += w;
        sv += w * cur[i];
    }
    int avg = (sv + (sw >> 1)) / sw; /* sw >= 4 * DN_ONE: the centre always counts */
    int s = c + (((avg - c) * tp->sp_amount + (avg >= c ? 128 : -128)) / 256);
    if (!has_prev)
        return vkcu_clampi(s, 0, tp->maxval);
    /* motion: the 3x3 sum of differences averages the noise away, so a real
     * change of the local mean stands out at a few sigma */
    int msum = 0;
    for (int i = 0; i < 9; i++)
        msum += cur[i] - prev[i];
    int k = (tp->k_max * dn_falloff(dn_absi(msum), tp->mo_slope)) >> 8;
    k = (k * dn_falloff(dn_absi(s - prev[4]), tp->px_slope)) >> 8;
    int out = (s * (DN_ONE - k) + prev[4] * k + (DN_ONE >> 1)) >> 8;
    return vkcu_clampi(out, 0, tp->maxval);
}

/* ---- nlm: spatio-temporal non-local means ---- */

/* Entries of the weight table; weights are 0..DN_NLM_WMAX. */
#define DN_NLM_LUT  1024
#define DN_NLM_WMAX 1023

/* Weight of a candidate whose patch SSD (sum over the patch of squared
 * sample differences) is ssd: a table look-up on the quantised distance. */
VKCU_HD int dn_nlm_weight(const uint16_t *lut, int shift, uint32_t ssd)
{
    uint32_t q = ssd >> shift;
    return q < DN_NLM_LUT ? lut[q] : 0;
}

/* The weighted mean, rounded to nearest. wsum > 0 always: the sample's own
 * patch (distance 0) is always a candidate. */
VKCU_HD int dn_nlm_finish(uint32_t vsum, uint32_t wsum)
{
    return (int)(((uint64_t)vsum + (wsum >> 1)) / wsum);
}

/* Largest number of candidates (offsets times frames) for which the u32
 * accumulators of a 10-bit stream cannot overflow. */
#define DN_NLM_MAX_CANDIDATES 4096

#endif

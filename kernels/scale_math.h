/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Resampling arithmetic of the `scale` operator, shared by the CPU reference
 * (src/ops/op_scale.c) and the CUDA kernels (kernels/scale.cu).
 *
 * The float work (filter kernels, sample positions, chroma siting, edge
 * mirroring, normalisation) happens once on the host in src/ops/scale_taps.c and
 * yields integer tap tables; both backends get the same tables and only add
 * integer products, so they give the same bytes whatever order they sum in.
 *
 * Fixed point:
 *   - weights: Q14 (SC_WBITS), each output's taps summing to exactly 1 << 14;
 *   - pass 1 (horizontal) keeps 14 significant bits whatever the depth: an
 *     intermediate of I = x * 2^(14 - depth) (x: sample at `depth` bits),
 *     rounded to nearest, not clamped (lanczos and spline ring below 0 and
 *     above the maximum), stored as int16;
 *   - pass 2 (vertical) rounds to nearest at the stream's depth and clamps to
 *     [0, 2^depth - 1].
 * Bounds: the host refuses tables whose positive taps of one output sum to
 * more than 1.5 (lanczos, the worst of the four, stays under 1.3), so
 * |I| < 1.5 * 2^14 and |pass-2 sums| < 2^30.
 * Right shifts of negative sums are arithmetic (gcc and nvcc both define
 * them so), which with the added half makes round-half-up.
 * Depths 8 to 14 fit this scheme; the operator accepts 8 and 10.
 */
#ifndef VKCU_KERNELS_SCALE_MATH_H
#define VKCU_KERNELS_SCALE_MATH_H

#include <stddef.h>
#include "common.h"

#define SC_WBITS 14
#define SC_IBITS 14

/* One direction's taps: output i reads inputs start[i] .. start[i] + taps - 1,
 * all inside [0, n_in) (the host folded mirrored edge taps back in), with
 * weights w[i * taps + k] (unused taps are 0). */
typedef struct sc_taps {
    int n_in, n_out, taps;
    int32_t *start;
    int16_t *w;
} sc_taps;

/* Pass 1: sum of taps * samples (scale 2^14 * x) to the 14-bit intermediate. */
VKCU_HD int sc_pass1(int32_t acc, int depth)
{
    int v = (acc + (1 << (depth - 1))) >> depth;
    return vkcu_clampi(v, -32768, 32767);
}

/* Pass 2: sum of taps * intermediates (scale 2^(28 - depth) * x) to a sample. */
VKCU_HD int sc_pass2(int32_t acc, int depth)
{
    int sh = SC_WBITS + SC_IBITS - depth;
    return vkcu_clampi((acc + (1 << (sh - 1))) >> sh, 0, (1 << depth) - 1);
}

/* Pass 2's sum over one column of intermediates (stride in elements). */
VKCU_HD int32_t sc_vsum(const int16_t *col, ptrdiff_t stride, const int16_t *w, int taps)
{
    int32_t acc = 0;
    for (int k = 0; k < taps; k++)
        acc += (int32_t)w[k] * col[(ptrdiff_t)k * stride];
    return acc;
}

/* Pass 1's sum over a row of samples held as ints. */
VKCU_HD int32_t sc_hsum(const int *row, const int16_t *w, int taps)
{
    int32_t acc = 0;
    for (int k = 0; k < taps; k++)
        acc += (int32_t)w[k] * row[k];
    return acc;
}

#endif

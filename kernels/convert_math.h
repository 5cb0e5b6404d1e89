/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Colour conversion math shared by the CPU reference (gcc, C11) and the CUDA
 * kernels (nvcc, C++17): chroma resampling taps and the fixed-point affine
 * that maps input sample codes to output codes.
 *
 * The pipeline, designed once so that both backends produce the same bytes:
 *
 *  1. Every input sample the affine sees carries CV_FRAC = 8 fractional bits.
 *     Luma at its own position is Y << 8. Chroma is resampled separably with
 *     integer weights that sum to 16 per dimension (bilinear upsampling is in
 *     quarter steps, downsampling is [1 2 1]/4 for co-sited and [1 1]/2 for
 *     centred output siting), so a resampled value is exact: no rounding
 *     happens before the final step.
 *  2. One 3x3 affine with int32 coefficients and an int64 constant maps the
 *     three inputs to an output component: acc = k + sum c_i * x_i, computed
 *     in int64 (one IMAD.WIDE per term on the GPU). The constant holds the
 *     offsets of both ranges and 2^(shift-1), so `acc >> shift` (arithmetic
 *     shift) is round-half-up of the exact-coefficient result.
 *  3. Clamp to the output code range. Half-float output converts acc to float
 *     (one correctly rounded int64->float conversion, then an exact power of
 *     two scale) and then to half with round-to-nearest-even in integer code.
 *
 * Coefficients are built on the host in double precision (src/ops/op_convert.c,
 * vkcu_cv_affine_build) with the largest shift that keeps every |c| < 2^30, which
 * keeps the error of the fixed-point result below 2^-13 output LSB even for
 * 16-bit outputs: far below the rounding step, so results match a double
 * reference (and zimg) except where the exact value sits within that
 * distance of a .5 boundary.
 */
#ifndef VKCU_CONVERT_MATH_H
#define VKCU_CONVERT_MATH_H

#include "common.h"

#define CV_FRAC 8 /* fractional bits of resampled samples: 4 per dimension */

/* Chroma sample offset along one dimension, in half luma samples: 0 =
 * co-sited with the even luma sample, 1 = centred between two, 2 = co-sited
 * with the odd one (bottom siting). */
enum { CV_OFF_COSITED = 0, CV_OFF_CENTER = 1, CV_OFF_ODD = 2 };

/* Taps along one dimension: consecutive source indices i0 .. i0+n-1 (to be
 * clamped into the plane) with integer weights summing to 16. */
typedef struct cv_taps {
    int i0, n;
    int w[3];
} cv_taps;

typedef struct cv_affine {
    int32_t c[3][3]; /* [output component][input component] */
    int64_t k[3];    /* offsets and the rounding term, in 2^-shift output units */
    int shift;
    int32_t maxv[3]; /* clamp to [0, maxv] */
    float fscale;    /* half-float output: 2^-shift, exact */
} cv_affine;

VKCU_HD void cv_taps_direct(int i, cv_taps *t)
{
    t->i0 = i;
    t->n = 1;
    t->w[0] = 16;
    t->w[1] = t->w[2] = 0;
}

/* Bilinear upsampling: the chroma taps for luma position x of a dimension
 * subsampled by 2 with chroma offset `off`. Chroma sample k sits at luma
 * coordinate 2k + off/2, so x is at chroma coordinate (2x - off)/4. */
VKCU_HD void cv_taps_up(int x, int off, cv_taps *t)
{
    int q = 2 * x - off;           /* position in quarter chroma samples */
    int k0 = q >= 0 ? q / 4 : -((-q + 3) / 4);
    int f = q - 4 * k0;            /* 0..3 */
    t->i0 = k0;
    t->n = f ? 2 : 1;
    t->w[0] = 16 - 4 * f;
    t->w[1] = 4 * f;
    t->w[2] = 0;
}

/* Downsampling by 2: the luma-grid taps for output chroma sample k with
 * offset `off`. Co-sited outputs use [1 2 1]/4 around their luma sample,
 * centred outputs average the two luma samples they sit between. */
VKCU_HD void cv_taps_down(int k, int off, cv_taps *t)
{
    if (off & 1) {
        t->i0 = 2 * k + (off >> 1);
        t->n = 2;
        t->w[0] = 8;
        t->w[1] = 8;
        t->w[2] = 0;
    } else {
        t->i0 = 2 * k + (off >> 1) - 1;
        t->n = 3;
        t->w[0] = 4;
        t->w[1] = 8;
        t->w[2] = 4;
    }
}

/* Output chroma site k (subsampled grid, offset off_out) from input chroma
 * on a subsampled grid with another offset: downsampling of the bilinear
 * upsampled signal, composed into at most three taps. Weights of the two
 * stages multiply to multiples of 16, so the composition stays exact. */
VKCU_HD void cv_taps_resite(int k, int off_out, int off_in, cv_taps *t)
{
    cv_taps d, u;
    int w[4] = { 0, 0, 0, 0 };
    int base = 0;
    cv_taps_down(k, off_out, &d);
    for (int i = 0; i < d.n; i++) {
        cv_taps_up(d.i0 + i, off_in, &u);
        if (i == 0)
            base = u.i0;
        for (int j = 0; j < u.n; j++)
            w[u.i0 + j - base] += d.w[i] * u.w[j];
    }
    t->i0 = base;
    t->n = w[3] ? 4 : w[2] ? 3 : w[1] ? 2 : 1;
    /* at most three taps occur (checked by test_convert_chroma) */
    t->w[0] = w[0] / 16;
    t->w[1] = w[1] / 16;
    t->w[2] = w[2] / 16;
    if (t->n > 3)
        t->n = 3;
}

/* Chroma taps along one dimension for output position `pos`: a luma
 * coordinate when the output is not subsampled there, else an output
 * chroma index. in_ss/out_ss: 1 when subsampled by 2 in this dimension. */
VKCU_HD void cv_taps_chroma(int pos, int in_ss, int out_ss, int off_in, int off_out, cv_taps *t)
{
    if (in_ss == out_ss) {
        if (in_ss && off_in != off_out)
            cv_taps_resite(pos, off_out, off_in, t);
        else
            cv_taps_direct(pos, t);
    } else if (in_ss) {
        cv_taps_up(pos, off_in, t);
    } else {
        cv_taps_down(pos, off_out, t);
    }
}

/* Luma taps along one dimension for output chroma position `pos`. */
VKCU_HD void cv_taps_luma(int pos, int out_ss, int off_out, cv_taps *t)
{
    if (out_ss)
        cv_taps_down(pos, off_out, t);
    else
        cv_taps_direct(pos, t);
}

VKCU_HD int64_t cv_acc(const cv_affine *a, int comp, int32_t x0, int32_t x1, int32_t x2)
{
    return a->k[comp] + (int64_t)a->c[comp][0] * x0 + (int64_t)a->c[comp][1] * x1 +
           (int64_t)a->c[comp][2] * x2;
}

/* One integer output component from samples with CV_FRAC fractional bits. */
VKCU_HD int cv_apply(const cv_affine *a, int comp, int32_t x0, int32_t x1, int32_t x2)
{
    int64_t v = cv_acc(a, comp, x0, x1, x2) >> a->shift;
    return v < 0 ? 0 : v > a->maxv[comp] ? a->maxv[comp] : (int)v;
}

VKCU_HD uint32_t cv_float_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    union { float f; uint32_t u; } v;
    v.f = f;
    return v.u;
#endif
}

VKCU_HD float cv_bits_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
#endif
}

/* IEEE half from float, round to nearest even, in integer code so that both
 * backends agree (NaN is not produced by this pipeline). */
VKCU_HD uint16_t cv_float_to_half(float f)
{
    uint32_t x = cv_float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mag = x & 0x7fffffffu;
    if (mag >= 0x47800000u) /* >= 65536: overflow to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (mag < 0x38800000u) { /* below 2^-14: subnormal half or zero */
        if (mag < 0x33000000u) /* < 2^-25: rounds to zero */
            return (uint16_t)sign;
        uint32_t e = mag >> 23;
        uint32_t m = (mag & 0x7fffffu) | 0x800000u;
        uint32_t sh = 126 - e; /* 14..24 */
        uint32_t h = m >> sh;
        uint32_t rem = m & ((1u << sh) - 1);
        uint32_t half = 1u << (sh - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((mag - 0x38000000u) >> 13); /* rebias exponent 127 -> 15 */
    uint32_t rem = mag & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

/* Half-float output component: unclamped, so out-of-range values survive. */
VKCU_HD uint16_t cv_apply_half(const cv_affine *a, int comp, int32_t x0, int32_t x1, int32_t x2)
{
    float v = (float)cv_acc(a, comp, x0, x1, x2);
#ifdef __CUDA_ARCH__
    v = __fmul_rn(v, a->fscale);
#else
    v = v * a->fscale;
#endif
    return cv_float_to_half(v);
}

/* Sample layout of a frame. Sample values are `raw >> shift` on input and
 * `value << shift` on output (P010 keeps 10 bits in the high bits). */
enum { CV_PLANAR = 0, CV_SEMIPLANAR, CV_PACKED };
typedef struct cv_layout {
    int kind;       /* CV_PLANAR: Y, U, V planes; CV_SEMIPLANAR: Y, UV; CV_PACKED: RGB(A) */
    int depth;      /* significant bits; 0 for half float */
    int bytes;      /* bytes per sample: 1 or 2 */
    int shift;
    int ssx, ssy;   /* chroma subsampling (log2) */
    int ncomp;      /* CV_PACKED: 3 or 4 */
    int is_half;    /* CV_PACKED RGBA half float */
    int is_rgb;
} cv_layout;

/* Everything a backend needs to run a convert or tonemap operator. */
typedef struct cv_desc {
    cv_layout in, out;
    int width, height;
    int off_in_x, off_in_y;   /* input chroma offsets (CV_OFF_*) */
    int off_out_x, off_out_y; /* output chroma offsets */
    cv_affine aff;            /* convert: input -> output; tonemap: input -> 16-bit BT.2020 R'G'B' */
    int tonemap;
    cv_affine aff_out;        /* tonemap: 16-bit BT.709 R'G'B' -> output */
} cv_desc;

#ifndef __CUDACC__
/* Host-side set-up (src/ops/op_convert.c). */

/* Colour model of one side of a conversion. */
enum cv_matrix { CV_MATRIX_BT601 = 0, CV_MATRIX_BT709, CV_MATRIX_BT2020, CV_MATRIX_RGB };

typedef struct cv_side {
    enum cv_matrix matrix;
    int full_range;  /* YUV only; RGB is always full range */
    int depth;       /* bits per sample (8, 10, 16); for half float: 0 */
} cv_side;

/* Real-valued affine (codes to codes) from input to output description:
 * out[i] = m[i][j] * in[j] + off[i]. */
void vkcu_cv_affine_real(const cv_side *in, const cv_side *out, double m[3][3], double off[3]);
/* Fixed-point form of vkcu_cv_affine_real (inputs with CV_FRAC fractional bits). */
void vkcu_cv_affine_build(cv_affine *a, const cv_side *in, const cv_side *out);
/* Kr/Kb of a matrix. */
void vkcu_cv_matrix_kr_kb(enum cv_matrix m, double *kr, double *kb);
#endif

#endif

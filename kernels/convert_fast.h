/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hoisted chroma math of the convert fast path (4:2:0 input, no tonemap,
 * packed or 4:2:0 output), compiled by nvcc for the CUDA kernels and by gcc
 * for test_convert_fastpath, which proves it equal to the generic reference
 * (cv_taps_chroma / cv_taps_luma and clamped gathers, as in run_cpu).
 *
 * For 4:2:0 input the taps of a 2x2 luma quad q (luma columns 2q, 2q+1)
 * depend only on the parity inside the quad and on the siting: they always
 * fall on chroma columns q-1, q, q+1 (and the same for rows). So the
 * weights are computed once per frame, as 3-wide vectors over the quad's
 * 3x3 chroma neighbourhood, by calling the reference tap functions at
 * quad 0 (they are translation invariant: quad q's taps are quad 0's moved
 * by q chroma samples, 2q luma samples). Likewise a 4:2:0 output chroma
 * site q reads input chroma q-1 .. q+1 and luma 2q-1 .. 2q+2.
 *
 * Resampling is exact integer arithmetic (weights sum to 16 per dimension,
 * samples < 2^16, sums < 2^24), so the order of summation does not change
 * the result: the fast path sums vertically first, sharing the column sums
 * between the two luma columns of a quad and between neighbouring quads,
 * and then horizontally; the reference sums rows first. Clamping is the
 * same: the neighbourhood is loaded at clamped indices, exactly the samples
 * the reference's clamped taps read (taps of weight 0 add nothing).
 */
#ifndef VKCU_CONVERT_FAST_H
#define VKCU_CONVERT_FAST_H

#include <math.h>
#include <string.h>

#include "convert_math.h"

typedef struct cvf_taps {
    int ux[2][3]; /* luma column 2q+d: weights of chroma columns q-1, q, q+1 */
    int uy[2][3]; /* luma row 2r+d: weights of chroma rows r-1, r, r+1 */
    int cx[3];    /* 4:2:0 output site column q: input chroma columns q-1 .. q+1 */
    int cy[3];
    int lx[4];    /* 4:2:0 output site column q: luma columns 2q-1 .. 2q+2 */
    int ly[4];
} cvf_taps;

/* Whether the fast path handles a description: 4:2:0 planar or semi-planar
 * input, convert (not tonemap), output packed RGB or 4:2:0 YUV. */
VKCU_HD int cvf_supported(const cv_desc *d)
{
    return !d->tonemap && d->in.kind != CV_PACKED && d->in.ssx == 1 && d->in.ssy == 1 &&
           (d->out.kind == CV_PACKED || (d->out.ssx == 1 && d->out.ssy == 1));
}

/* Spreads reference taps onto n weights starting at index `base`. */
VKCU_HD int cvf_place(const cv_taps *s, int base, int *w, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        w[i] = 0;
    for (int i = 0; i < s->n; i++) {
        int k = s->i0 - base + i;
        if (k < 0 || k >= n)
            bad = 1;
        else
            w[k] += s->w[i];
    }
    return bad ? -1 : 0;
}

/* Weights of quad 0 from the reference tap functions; 0 on success. */
VKCU_HD int cvf_taps_init(cvf_taps *t, const cv_desc *d)
{
    cv_taps s;
    int r = 0;
    for (int p = 0; p < 2; p++) {
        cv_taps_chroma(p, 1, 0, d->off_in_x, 0, &s);
        r |= cvf_place(&s, -1, t->ux[p], 3);
        cv_taps_chroma(p, 1, 0, d->off_in_y, 0, &s);
        r |= cvf_place(&s, -1, t->uy[p], 3);
    }
    cv_taps_chroma(0, 1, 1, d->off_in_x, d->off_out_x, &s);
    r |= cvf_place(&s, -1, t->cx, 3);
    cv_taps_chroma(0, 1, 1, d->off_in_y, d->off_out_y, &s);
    r |= cvf_place(&s, -1, t->cy, 3);
    cv_taps_luma(0, 1, d->off_out_x, &s);
    r |= cvf_place(&s, -1, t->lx, 4);
    cv_taps_luma(0, 1, d->off_out_y, &s);
    r |= cvf_place(&s, -1, t->ly, 4);
    return r;
}

VKCU_HD int32_t cvf_dot3(const int w[3], int32_t a, int32_t b, int32_t c)
{
    return w[0] * a + w[1] * b + w[2] * c;
}

VKCU_HD int32_t cvf_dot4(const int w[4], int32_t a, int32_t b, int32_t c, int32_t d)
{
    return w[0] * a + w[1] * b + w[2] * c + w[3] * d;
}

/* Vertical pass over n columns of three neighbourhood rows. */
VKCU_HD void cvf_vsum3(const int w[3], const int32_t *r0, const int32_t *r1, const int32_t *r2, int n, int32_t *col)
{
    for (int i = 0; i < n; i++)
        col[i] = cvf_dot3(w, r0[i], r1[i], r2[i]);
}

VKCU_HD void cvf_vsum4(const int w[4], const int32_t *r0, const int32_t *r1, const int32_t *r2, const int32_t *r3, int n,
                       int32_t *col)
{
    for (int i = 0; i < n; i++)
        col[i] = cvf_dot4(w, r0[i], r1[i], r2[i], r3[i]);
}

/* Upsampled chroma (CV_FRAC fractional bits) at luma column 2q+d of a block
 * of quads, from the column sums `col` of chroma columns q0-1 .. q0+Q
 * (made with uy of the luma row); q is relative to q0. */
VKCU_HD int32_t cvf_up(const cvf_taps *t, const int32_t *col, int q, int d)
{
    return cvf_dot3(t->ux[d], col[q], col[q + 1], col[q + 2]);
}

/* Chroma of 4:2:0 output site q (relative to q0) from the column sums of
 * chroma columns q0-1 .. q0+Q made with t->cy. */
VKCU_HD int32_t cvf_site_chroma(const cvf_taps *t, const int32_t *col, int q)
{
    return cvf_dot3(t->cx, col[q], col[q + 1], col[q + 2]);
}

/* Luma (CV_FRAC fractional bits) of 4:2:0 output site q from the column
 * sums of luma columns 2q0-1 .. 2q0+2Q made with t->ly. */
VKCU_HD int32_t cvf_site_luma(const cvf_taps *t, const int32_t *col, int q)
{
    return cvf_dot4(t->lx, col[2 * q], col[2 * q + 1], col[2 * q + 2], col[2 * q + 3]);
}

/* ---- the affine in double precision ----
 *
 * cv_apply computes floor(acc / 2^shift), acc = k + sum c_i x_i, in int64:
 * on the GPU that is three IMAD.WIDE, a 64-bit shift and 64-bit compares per
 * component, which made the 8-bit packed conversions compute-bound. The
 * fast path evaluates the same integer in double precision instead, where
 * every step is exact:
 *  - x_i are integers in [0, xmax], xmax = (2^depth - 1) << CV_FRAC (the
 *    resampling weights are non-negative and sum to 2^CV_FRAC);
 *  - kd = k - 2^(shift-1) + 1/2, and every partial sum kd + c_0 x_0 + ... is
 *    a multiple of 1/2 below 2^51 in magnitude (cvf_f64_init checks the
 *    bound), so each FMA is exact;
 *  - with acc = n 2^shift + r, 0 <= r < 2^shift, the sum is
 *    (n + f) 2^shift with |f| < 1/2, so fma(sum, 2^-shift, 1.5 * 2^52) rounds
 *    (once, to nearest) to exactly 1.5 * 2^52 + n, |n| < 2^30: the low 32
 *    bits of its encoding are n, the int64 path's acc >> shift.
 * tests/unit/test_convert_f64 checks it against cv_apply for every affine
 * the fast path can meet. */
typedef struct cvf_f64 {
    double c[3][3];
    double k[3];     /* k - 2^(shift-1) + 1/2 */
    double scale;    /* 2^-shift */
    int32_t maxv[3];
} cvf_f64;

#define CVF_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */

/* Whether the double form is exact for inputs of in_depth bits; fills f. */
static inline int cvf_f64_init(cvf_f64 *f, const cv_affine *a, int in_depth)
{
    const double xmax = ldexp((double)((1 << in_depth) - 1), CV_FRAC);
    if (a->shift < 1 || a->shift > 60 || in_depth < 1 || in_depth > 16)
        return 0;
    const int64_t half = (int64_t)1 << (a->shift - 1);
    for (int r = 0; r < 3; r++) {
        const int64_t k = a->k[r] - half; /* |k| < 2^62: no overflow for built affines */
        double bound = fabs((double)k) + 1.0;
        for (int c = 0; c < 3; c++) {
            f->c[r][c] = (double)a->c[r][c];
            bound += fabs(f->c[r][c]) * xmax;
        }
        /* margins of 2x for the rounding of `bound` itself */
        if (!(bound < 2251799813685248.0) || !(ldexp(bound, -a->shift) < 536870912.0)) /* 2^51, 2^29 */
            return 0;
        f->k[r] = (double)k + 0.5;
        f->maxv[r] = a->maxv[r];
    }
    f->scale = ldexp(1.0, -a->shift);
    return 1;
}

/* An int32 as a double: exact (on the GPU with one DADD instead of a
 * conversion-unit instruction). */
VKCU_HD double cvf_i2d(int32_t x)
{
#ifdef __CUDA_ARCH__
    return __hiloint2double(0x43300000, (int)((uint32_t)x ^ 0x80000000u)) - 4503601774854144.0; /* 2^52 + 2^31 */
#else
    return (double)x;
#endif
}

/* cv_apply(a, comp, x0, x1, x2) for the x_i as doubles (cvf_i2d). */
VKCU_HD int cvf_apply_f64(const cvf_f64 *f, int comp, double x0, double x1, double x2)
{
    const double acc = fma(f->c[comp][2], x2, fma(f->c[comp][1], x1, fma(f->c[comp][0], x0, f->k[comp])));
    const double z = fma(acc, f->scale, CVF_MAGIC);
#ifdef __CUDA_ARCH__
    const int32_t n = __double2loint(z);
#else
    uint64_t bits;
    memcpy(&bits, &z, sizeof(bits));
    const int32_t n = (int32_t)(uint32_t)bits;
#endif
    return n < 0 ? 0 : n > f->maxv[comp] ? f->maxv[comp] : n;
}

#endif

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

#endif

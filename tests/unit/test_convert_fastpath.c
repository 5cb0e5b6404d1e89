/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The convert fast path's hoisted chroma math (kernels/convert_fast.h, the
 * functions fast_kernel in kernels/convert.cu calls) against the generic
 * reference (cv_taps_chroma / cv_taps_luma with clamped gathers, as run_cpu
 * does it), on the CPU. The whole frame is walked the way the kernel walks
 * it: blocks of Q quads, the 3 x (Q+2) chroma neighbourhood loaded at the
 * kernel's clamped columns, luma at its clamped columns, vertical then
 * horizontal sums, for every one of the 6 x 6 input/output sitings, block
 * widths Q = 1, 2, 4, 8, even/odd/tiny picture sizes, and random and
 * extreme sample values up to 16 bits. Every resampled value (CV_FRAC
 * fractional bits) must equal the reference's, and so must the output codes
 * of real affines (integer and half float) made from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/convert_fast.h"

#define QMAX 8

static const char *sitings[] = { "left", "center", "topleft", "top", "bottomleft", "bottom" };
static const int site_off[6][2] = { { CV_OFF_COSITED, CV_OFF_CENTER }, { CV_OFF_CENTER, CV_OFF_CENTER },
                                    { CV_OFF_COSITED, CV_OFF_COSITED }, { CV_OFF_CENTER, CV_OFF_COSITED },
                                    { CV_OFF_COSITED, CV_OFF_ODD },     { CV_OFF_CENTER, CV_OFF_ODD } };

static long long checks, failures;

typedef struct plane {
    int w, h;
    int32_t *v;
} plane;

static int32_t at(const plane *p, int x, int y)
{
    x = vkcu_clampi(x, 0, p->w - 1);
    y = vkcu_clampi(y, 0, p->h - 1);
    return p->v[(size_t)y * p->w + x];
}

/* The fast path's loads: the kernel clamps its coordinates itself, so an
 * index outside the plane is a failure here (it would read out of bounds). */
static int oob;
static int32_t ld(const plane *p, int x, int y)
{
    if (x < 0 || x >= p->w || y < 0 || y >= p->h) {
        oob++;
        return 0;
    }
    return p->v[(size_t)y * p->w + x];
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* run_cpu's gather_chroma: rows, then columns, clamped */
static int32_t ref_gather(const plane *c, const cv_taps *tx, const cv_taps *ty)
{
    int32_t s = 0;
    for (int j = 0; j < ty->n; j++) {
        int32_t r = 0;
        for (int i = 0; i < tx->n; i++)
            r += tx->w[i] * at(c, tx->i0 + i, ty->i0 + j);
        s += ty->w[j] * r;
    }
    return s;
}

/* run_cpu's luma of an output chroma site */
static int32_t ref_site_luma(const plane *y, const cv_taps *ltx, const cv_taps *lty)
{
    int32_t s = 0;
    for (int jy = 0; jy < lty->n; jy++) {
        int32_t r = 0;
        for (int ix = 0; ix < ltx->n; ix++)
            r += ltx->w[ix] * at(y, ltx->i0 + ix, lty->i0 + jy);
        s += lty->w[jy] * r;
    }
    return s;
}

static cv_affine affs[4];
static int naffs;

static void fail(const char *what, int w, int h, int si, int so, int q, const char *kind, int x, int y, long long fast,
                 long long ref)
{
    if (failures++ < 20)
        printf("FAIL %s %dx%d in=%s out=%s Q=%d: %s at (%d,%d): fast %lld, reference %lld\n", what, w, h, sitings[si],
               sitings[so], q, kind, x, y, fast, ref);
}

static void cmp(long long fast, long long ref, const char *what, int w, int h, int si, int so, int q, const char *kind, int x,
                int y)
{
    checks++;
    if (fast != ref)
        fail(what, w, h, si, so, q, kind, x, y, fast, ref);
}

/* Output codes from fast and reference samples under each affine. */
static void cmp_codes(const int32_t f[3], const int32_t r[3], const char *what, int w, int h, int si, int so, int q, int x,
                      int y)
{
    for (int k = 0; k < naffs; k++)
        for (int c = 0; c < 3; c++) {
            cmp(cv_apply(&affs[k], c, f[0], f[1], f[2]), cv_apply(&affs[k], c, r[0], r[1], r[2]), what, w, h, si, so, q,
                "code", x, y);
            cmp(cv_apply_half(&affs[k], c, f[0], f[1], f[2]), cv_apply_half(&affs[k], c, r[0], r[1], r[2]), what, w, h, si,
                so, q, "half", x, y);
        }
}

static void check_frame(const char *what, const plane *Y, const plane *U, const plane *V, int si, int so, int Q)
{
    const int w = Y->w, h = Y->h, cw = (w + 1) >> 1, ch = (h + 1) >> 1;
    cv_desc d;
    memset(&d, 0, sizeof(d));
    d.in = (cv_layout){ CV_SEMIPLANAR, 8, 1, 0, 1, 1, 3, 0, 0 };
    d.out = (cv_layout){ CV_PLANAR, 8, 1, 0, 1, 1, 3, 0, 0 };
    d.width = w, d.height = h;
    d.off_in_x = site_off[si][0], d.off_in_y = site_off[si][1];
    d.off_out_x = site_off[so][0], d.off_out_y = site_off[so][1];
    cvf_taps t;
    checks++;
    if (!cvf_supported(&d) || cvf_taps_init(&t, &d) != 0) {
        fail(what, w, h, si, so, Q, "cvf_taps_init", 0, 0, 1, 0);
        return;
    }
    for (int qy = 0; qy < ch; qy++)
        for (int q0 = 0; 2 * q0 < w; q0 += Q) {
            /* the kernel's loads: edges clamped, the middle unclamped (one
             * vector read) when the block is inside the picture */
            const int vec = 2 * q0 + 2 * Q <= w;
            int32_t cu[3][QMAX + 2], cv[3][QMAX + 2], yl[2][2 * QMAX];
            for (int j = 0; j < 3; j++) {
                int yc = vkcu_clampi(qy - 1 + j, 0, ch - 1);
                for (int i = 0; i < Q + 2; i++) {
                    int xc = i == 0       ? vkcu_maxi(q0 - 1, 0)
                             : i == Q + 1 ? vkcu_mini(q0 + Q, cw - 1)
                             : vec        ? q0 - 1 + i
                                          : vkcu_mini(q0 - 1 + i, cw - 1);
                    cu[j][i] = ld(U, xc, yc);
                    cv[j][i] = ld(V, xc, yc);
                }
            }
            for (int dy = 0; dy < 2; dy++)
                for (int i = 0; i < 2 * Q; i++)
                    yl[dy][i] = ld(Y, vec ? 2 * q0 + i : vkcu_mini(2 * q0 + i, w - 1), vkcu_mini(2 * qy + dy, h - 1));

            /* luma positions (packed outputs, and output luma that depends on chroma) */
            for (int dy = 0; dy < 2; dy++) {
                const int y = 2 * qy + dy;
                if (y >= h)
                    break;
                int32_t su[QMAX + 2], sv[QMAX + 2];
                cvf_vsum3(t.uy[dy], cu[0], cu[1], cu[2], Q + 2, su);
                cvf_vsum3(t.uy[dy], cv[0], cv[1], cv[2], Q + 2, sv);
                cv_taps ty;
                cv_taps_chroma(y, 1, 0, d.off_in_y, 0, &ty);
                for (int q = 0; q < Q; q++)
                    for (int dx = 0; dx < 2; dx++) {
                        const int x = 2 * q0 + 2 * q + dx;
                        if (x >= w)
                            continue;
                        cv_taps tx;
                        cv_taps_chroma(x, 1, 0, d.off_in_x, 0, &tx);
                        int32_t f[3] = { yl[dy][2 * q + dx] << CV_FRAC, cvf_up(&t, su, q, dx), cvf_up(&t, sv, q, dx) };
                        int32_t r[3] = { at(Y, x, y) << CV_FRAC, ref_gather(U, &tx, &ty), ref_gather(V, &tx, &ty) };
                        cmp(f[0], r[0], what, w, h, si, so, Q, "luma", x, y);
                        cmp(f[1], r[1], what, w, h, si, so, Q, "Cb at luma", x, y);
                        cmp(f[2], r[2], what, w, h, si, so, Q, "Cr at luma", x, y);
                        cmp_codes(f, r, what, w, h, si, so, Q, x, y);
                    }
            }

            /* 4:2:0 output chroma sites of the block */
            int32_t su[QMAX + 2], sv[QMAX + 2], l[4][2 * QMAX + 2], sl[2 * QMAX + 2];
            cvf_vsum3(t.cy, cu[0], cu[1], cu[2], Q + 2, su);
            cvf_vsum3(t.cy, cv[0], cv[1], cv[2], Q + 2, sv);
            for (int j = 0; j < 4; j++)
                for (int i = 0; i < 2 * Q + 2; i++)
                    l[j][i] = ld(Y, vkcu_clampi(2 * q0 - 1 + i, 0, w - 1), vkcu_clampi(2 * qy - 1 + j, 0, h - 1));
            cvf_vsum4(t.ly, l[0], l[1], l[2], l[3], 2 * Q + 2, sl);
            cv_taps cty, lty;
            cv_taps_chroma(qy, 1, 1, d.off_in_y, d.off_out_y, &cty);
            cv_taps_luma(qy, 1, d.off_out_y, &lty);
            for (int q = 0; q < Q; q++) {
                const int cx = q0 + q;
                if (cx >= cw)
                    continue;
                cv_taps ctx, ltx;
                cv_taps_chroma(cx, 1, 1, d.off_in_x, d.off_out_x, &ctx);
                cv_taps_luma(cx, 1, d.off_out_x, &ltx);
                int32_t f[3] = { cvf_site_luma(&t, sl, q), cvf_site_chroma(&t, su, q), cvf_site_chroma(&t, sv, q) };
                int32_t r[3] = { ref_site_luma(Y, &ltx, &lty), ref_gather(U, &ctx, &cty), ref_gather(V, &ctx, &cty) };
                cmp(f[0], r[0], what, w, h, si, so, Q, "luma at site", cx, qy);
                cmp(f[1], r[1], what, w, h, si, so, Q, "Cb at site", cx, qy);
                cmp(f[2], r[2], what, w, h, si, so, Q, "Cr at site", cx, qy);
                cmp_codes(f, r, what, w, h, si, so, Q, cx, qy);
            }
        }
}

enum { PAT_RANDOM, PAT_ZERO, PAT_MAX, PAT_EXTREME, PAT_CHECKER, NB_PAT };
static const char *pat_names[] = { "random", "zero", "max", "random 0/max", "checkerboard" };

static void fill(plane *p, int pat, int maxv, uint64_t *s)
{
    for (int y = 0; y < p->h; y++)
        for (int x = 0; x < p->w; x++) {
            int32_t v = 0;
            switch (pat) {
            case PAT_RANDOM: v = (int32_t)(rng(s) % (uint64_t)(maxv + 1)); break;
            case PAT_ZERO: v = 0; break;
            case PAT_MAX: v = maxv; break;
            case PAT_EXTREME: v = rng(s) & 1 ? maxv : 0; break;
            default: v = (x + y) & 1 ? maxv : 0; break;
            }
            p->v[(size_t)y * p->w + x] = v;
        }
}

int main(void)
{
    const int sizes[][2] = { { 1, 1 }, { 2, 2 }, { 1, 5 }, { 5, 1 }, { 3, 3 }, { 4, 2 }, { 5, 7 },
                             { 8, 8 }, { 17, 9 }, { 33, 35 }, { 64, 6 }, { 67, 13 }, { 30, 31 } };
    const int maxvs[] = { 255, 1023, 65535 };
    const int qs[] = { 1, 2, 4, 8 };
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));

    /* affines of the common conversions: YUV -> RGB 8/16 bit and half, YUV -> YUV across matrices */
    const cv_side yuv709l8 = { CV_MATRIX_BT709, 0, 8 }, yuv2020l10 = { CV_MATRIX_BT2020, 0, 10 },
                  yuv601f16 = { CV_MATRIX_BT601, 1, 16 }, rgb8 = { CV_MATRIX_RGB, 1, 8 }, rgb16 = { CV_MATRIX_RGB, 1, 16 },
                  rgbh = { CV_MATRIX_RGB, 1, 0 }, yuv2020f8 = { CV_MATRIX_BT2020, 1, 8 };
    vkcu_cv_affine_build(&affs[naffs++], &yuv709l8, &rgb8);
    vkcu_cv_affine_build(&affs[naffs++], &yuv2020l10, &rgb16);
    vkcu_cv_affine_build(&affs[naffs++], &yuv2020l10, &rgbh);
    vkcu_cv_affine_build(&affs[naffs++], &yuv601f16, &yuv2020f8);

    /* the fast path is taken for exactly the descriptions it claims */
    {
        cv_desc d;
        memset(&d, 0, sizeof(d));
        d.in = (cv_layout){ CV_SEMIPLANAR, 8, 1, 0, 1, 1, 3, 0, 0 };
        d.out = (cv_layout){ CV_PACKED, 8, 1, 0, 0, 0, 4, 0, 1 };
        checks += 4;
        if (!cvf_supported(&d))
            failures++, printf("FAIL cvf_supported: nv12 -> rgba\n");
        d.out = (cv_layout){ CV_PLANAR, 8, 1, 0, 1, 0, 3, 0, 0 };
        if (cvf_supported(&d))
            failures++, printf("FAIL cvf_supported: 4:2:2 output claimed\n");
        d.out = (cv_layout){ CV_PLANAR, 8, 1, 0, 1, 1, 3, 0, 0 };
        d.tonemap = 1;
        if (cvf_supported(&d))
            failures++, printf("FAIL cvf_supported: tonemap claimed\n");
        d.tonemap = 0;
        d.in.ssy = 0;
        if (cvf_supported(&d))
            failures++, printf("FAIL cvf_supported: 4:2:2 input claimed\n");
    }

    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int zi = 0; zi < nsizes; zi++) {
        const int w = sizes[zi][0], h = sizes[zi][1];
        plane Y = { w, h, malloc(sizeof(int32_t) * (size_t)w * h) };
        plane U = { (w + 1) >> 1, (h + 1) >> 1, malloc(sizeof(int32_t) * (size_t)((w + 1) >> 1) * ((h + 1) >> 1)) };
        plane V = { U.w, U.h, malloc(sizeof(int32_t) * (size_t)U.w * U.h) };
        if (!Y.v || !U.v || !V.v)
            return 2;
        for (int mi = 0; mi < 3; mi++)
            for (int pat = 0; pat < NB_PAT; pat++) {
                fill(&Y, pat, maxvs[mi], &seed);
                fill(&U, pat == PAT_CHECKER ? PAT_RANDOM : pat, maxvs[mi], &seed);
                fill(&V, pat == PAT_CHECKER ? PAT_EXTREME : pat, maxvs[mi], &seed);
                for (int si = 0; si < 6; si++)
                    for (int so = 0; so < 6; so++)
                        for (int qi = 0; qi < 4; qi++)
                            check_frame(pat_names[pat], &Y, &U, &V, si, so, qs[qi]);
            }
        free(Y.v);
        free(U.v);
        free(V.v);
    }
    checks++;
    if (oob)
        failures++, printf("FAIL the fast path's loads left the planes %d times\n", oob);
    printf("test_convert_fastpath: %lld checks (6x6 sitings, Q=1/2/4/8, %d sizes, 8/10/16-bit random and extreme "
           "samples): %s\n",
           checks, nsizes, failures ? "FAIL" : "fast path equals the reference");
    return failures ? 1 : 0;
}

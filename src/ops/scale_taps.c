/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tap tables of the `scale` operator: the filter kernels, from their published
 * definitions, and the weights of each output sample, computed in double and
 * quantised to Q14 once, so that both backends add the same integers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale_taps.h"

static double sinc(double x)
{
    if (x == 0)
        return 1;
    x *= M_PI;
    return sin(x) / x;
}

/* Mitchell-Netravali family with B = 0, C = 1/2 (Catmull-Rom), as zimg and
 * ffmpeg's zscale take "bicubic" without parameters. */
static double bicubic(double x)
{
    const double B = 0, C = 0.5;
    x = fabs(x);
    if (x < 1)
        return ((12 - 9 * B - 6 * C) * x * x * x + (-18 + 12 * B + 6 * C) * x * x + (6 - 2 * B)) / 6;
    if (x < 2)
        return ((-B - 6 * C) * x * x * x + (6 * B + 30 * C) * x * x + (-12 * B - 48 * C) * x + (8 * B + 24 * C)) / 6;
    return 0;
}

/* Spline36: the 6-tap cubic spline interpolating a unit impulse (Panorama
 * Tools' definition), piecewise on [0,1), [1,2), [2,3). */
static double spline36(double x)
{
    x = fabs(x);
    if (x < 1)
        return ((13.0 / 11 * x - 453.0 / 209) * x - 3.0 / 209) * x + 1;
    if (x < 2) {
        x -= 1;
        return ((-6.0 / 11 * x + 270.0 / 209) * x - 156.0 / 209) * x;
    }
    if (x < 3) {
        x -= 2;
        return ((1.0 / 11 * x - 45.0 / 209) * x + 26.0 / 209) * x;
    }
    return 0;
}

double vkcu_sc_kernel(enum sc_filter f, double x)
{
    switch (f) {
    case SC_BILINEAR:
        return fabs(x) < 1 ? 1 - fabs(x) : 0;
    case SC_BICUBIC:
        return bicubic(x);
    case SC_LANCZOS:
        return fabs(x) < 3 ? sinc(x) * sinc(x / 3) : 0;
    case SC_SPLINE36:
        return spline36(x);
    }
    return 0;
}

double vkcu_sc_support(enum sc_filter f)
{
    static const double support[] = { 1, 2, 3, 3 };
    return support[f];
}

/* Half-sample mirror: -1 -> 0, -2 -> 1, n -> n - 1, repeating for filters
 * wider than the plane. */
static int mirror(long k, int n)
{
    long p = 2L * n;
    k %= p;
    if (k < 0)
        k += p;
    return (int)(k < n ? k : p - 1 - k);
}

void vkcu_sc_taps_free(sc_taps *t)
{
    free(t->start);
    free(t->w);
    memset(t, 0, sizeof(*t));
}

int vkcu_sc_taps_build(sc_taps *t, enum sc_filter f, int n_in, int n_out, int luma_in, int luma_out, int sub,
                  double off_in, double off_out, char *why, size_t whylen)
{
    memset(t, 0, sizeof(*t));
    double ratio = (double)luma_in / luma_out;
    double stretch = ratio > 1 ? ratio : 1;
    double radius = vkcu_sc_support(f) * stretch;
    double *fold = calloc((size_t)n_in, sizeof(*fold));
    int *lo = malloc(sizeof(int) * (size_t)n_out), *hi = malloc(sizeof(int) * (size_t)n_out);
    int ret = -1;
    if (!fold || !lo || !hi)
        goto nomem;
    if (luma_in == luma_out && n_in == n_out) {
        /* the same grid: a copy (zimg also skips the filter; Mitchell's
         * bicubic would otherwise blur at 1:1) */
        t->n_in = t->n_out = n_in;
        t->taps = 1;
        t->start = malloc(sizeof(*t->start) * (size_t)n_out);
        t->w = malloc(sizeof(*t->w) * (size_t)n_out);
        if (!t->start || !t->w)
            goto nomem;
        for (int i = 0; i < n_out; i++) {
            t->start[i] = i;
            t->w[i] = 1 << SC_WBITS;
        }
        ret = 0;
        goto done;
    }
    /* First pass: the folded window of each output, for the table's width. */
    int taps = 1;
    for (int i = 0; i < n_out; i++) {
        double x = ((i * sub + off_out) * ratio - off_in) / sub;
        long k0 = (long)ceil(x - radius), k1 = (long)floor(x + radius);
        int l = n_in, h = -1;
        for (long k = k0; k <= k1; k++) {
            if (vkcu_sc_kernel(f, (k - x) / stretch) == 0)
                continue;
            int m = mirror(k, n_in);
            l = m < l ? m : l;
            h = m > h ? m : h;
        }
        if (h < 0) /* a filter with no tap here cannot happen: the centre counts */
            l = h = mirror(lrint(x), n_in);
        lo[i] = l;
        hi[i] = h;
        if (h - l + 1 > taps)
            taps = h - l + 1;
    }
    t->n_in = n_in;
    t->n_out = n_out;
    t->taps = taps;
    t->start = malloc(sizeof(*t->start) * (size_t)n_out);
    t->w = calloc((size_t)n_out * taps, sizeof(*t->w));
    if (!t->start || !t->w)
        goto nomem;
    for (int i = 0; i < n_out; i++) {
        double x = ((i * sub + off_out) * ratio - off_in) / sub;
        long k0 = (long)ceil(x - radius), k1 = (long)floor(x + radius);
        double sum = 0;
        for (int m = lo[i]; m <= hi[i]; m++)
            fold[m] = 0;
        for (long k = k0; k <= k1; k++) {
            double w = vkcu_sc_kernel(f, (k - x) / stretch);
            fold[mirror(k, n_in)] += w;
            sum += w;
        }
        if (sum == 0) { /* unreachable, see above; keep the table defined */
            fold[lo[i]] = 1;
            sum = 1;
        }
        int start = lo[i] + taps > n_in ? n_in - taps : lo[i];
        t->start[i] = start;
        int16_t *q = t->w + (size_t)i * taps;
        int qsum = 0, big = lo[i] - start, pos = 0;
        for (int m = lo[i]; m <= hi[i]; m++) {
            int v = (int)lrint(fold[m] / sum * (1 << SC_WBITS));
            q[m - start] = (int16_t)v;
            qsum += v;
            if (abs(v) > abs(q[big]))
                big = m - start;
        }
        /* the rounding left over goes to the largest tap: each output's
         * weights sum to exactly one, so flat areas stay exact */
        q[big] = (int16_t)(q[big] + (1 << SC_WBITS) - qsum);
        for (int k = 0; k < taps; k++)
            pos += q[k] > 0 ? q[k] : 0;
        if (pos * 2 > 3 << SC_WBITS) {
            snprintf(why, whylen, "internal: filter taps sum to %.3f, past the fixed-point bound",
                     pos / (double)(1 << SC_WBITS));
            goto fail;
        }
    }
    ret = 0;
    goto done;
nomem:
    snprintf(why, whylen, "out of memory for the filter taps");
fail:
    vkcu_sc_taps_free(t);
done:
    free(fold);
    free(lo);
    free(hi);
    return ret;
}

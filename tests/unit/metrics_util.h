/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare's frame metrics, checked from outside (test_compare on the CPU,
 * test_metrics_gpu on the GPU): pairs of pictures in many layouts and
 * sizes, and a plain reference written from the definitions rather than
 * from src/regress/metrics.c or kernels/metrics_math.h:
 *  - squared differences summed over the plane; the largest difference at
 *    its first place in raster order;
 *  - SSIM: FFmpeg's vf_ssim.c windows (8x8, every 4 samples, sums of the
 *    samples, of both pictures' squares and of their products), each
 *    window's value in float as ssim_end1x computes it, summed in double
 *    along each window row, the rows then summed top to bottom (the order
 *    vkcu documents), divided by the number of windows;
 *  - PSNR per plane and averaged as vf_psnr.c does.
 */
#ifndef VKCU_METRICS_UTIL_H
#define VKCU_METRICS_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
#include <vkcu/regress.h>

#include "test_util.h"

typedef struct mu_case {
    enum AVPixelFormat fmt;
    int w, h;
} mu_case;

/* Layouts with each component in a plane of its own (what the GPU's device
 * pool holds), 8 to 16 bits, subsampled or not, with alpha, RGB. */
static const mu_case mu_cases[] = {
    { AV_PIX_FMT_YUV420P, 1, 1 },       { AV_PIX_FMT_YUV420P, 2, 2 },       { AV_PIX_FMT_YUV420P, 7, 5 },
    { AV_PIX_FMT_YUV420P, 8, 8 },       { AV_PIX_FMT_YUV420P, 9, 9 },       { AV_PIX_FMT_YUV420P, 33, 17 },
    { AV_PIX_FMT_YUV420P, 641, 361 },   { AV_PIX_FMT_YUV422P, 66, 38 },     { AV_PIX_FMT_YUV444P, 35, 21 },
    { AV_PIX_FMT_GRAY8, 64, 48 },       { AV_PIX_FMT_YUVA420P, 40, 24 },    { AV_PIX_FMT_GBRP, 30, 20 },
    { AV_PIX_FMT_YUV420P10LE, 1, 1 },   { AV_PIX_FMT_YUV420P10LE, 67, 39 }, { AV_PIX_FMT_YUV422P10LE, 48, 16 },
    { AV_PIX_FMT_YUV444P12LE, 23, 45 }, { AV_PIX_FMT_YUV420P16LE, 37, 29 }, { AV_PIX_FMT_GRAY16LE, 16, 16 },
    { AV_PIX_FMT_YUV444P16LE, 100, 60 },
};
#define MU_NB_CASES ((int)(sizeof(mu_cases) / sizeof(mu_cases[0])))

/* How b relates to a. */
/* MU_SATURATED: A at the peak but for a sample in 16 at 0, B equal in the
 * top half and each sample at 0 or the peak below it: the windows' sums at
 * their largest, where 8-bit arithmetic in 32 bits (metrics.c) has the
 * least room. */
enum mu_pattern { MU_IDENTICAL, MU_OPPOSITE, MU_NOISE, MU_RANDOM, MU_SATURATED, MU_NB_PATTERNS };
static const char *const mu_pattern_names[] = { "identical", "opposite", "noise", "random", "saturated" };

static inline int mu_comp_w(const AVPixFmtDescriptor *d, const AVFrame *f, int i)
{
    int sub = d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
    return sub ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
}

static inline int mu_comp_h(const AVPixFmtDescriptor *d, const AVFrame *f, int i)
{
    int sub = d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
    return sub ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
}

static inline int mu_get(const AVFrame *f, int i, int x, int y)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    const uint8_t *row = f->data[d->comp[i].plane] + (ptrdiff_t)y * f->linesize[d->comp[i].plane];
    return d->comp[i].depth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

static inline void mu_set(AVFrame *f, int i, int x, int y, int v)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    uint8_t *row = f->data[d->comp[i].plane] + (ptrdiff_t)y * f->linesize[d->comp[i].plane];
    if (d->comp[i].depth > 8)
        ((uint16_t *)row)[x] = (uint16_t)v;
    else
        row[x] = (uint8_t)v;
}

/* A textured picture (smooth gradients with noise, so SSIM is neither 0
 * nor 1) and its partner by `pattern`. */
static inline void mu_fill(AVFrame *a, AVFrame *b, enum mu_pattern pattern, uint64_t seed)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    int max = (1 << d->comp[0].depth) - 1;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < d->nb_components; i++)
        for (int y = 0; y < mu_comp_h(d, a, i); y++)
            for (int x = 0; x < mu_comp_w(d, a, i); x++) {
                int64_t v = ((int64_t)(x * 5 + y * 3 + i * 40) * max) / 300 + (int64_t)(tu_rand(&s) % (max / 16 + 1));
                v %= max + 1;
                if (pattern == MU_SATURATED)
                    v = tu_rand(&s) % 16 ? max : 0;
                int w;
                switch (pattern) {
                case MU_SATURATED: w = 2 * y < mu_comp_h(d, a, i) ? (int)v : tu_rand(&s) % 2 ? max : 0; break;
                case MU_IDENTICAL: w = (int)v; break;
                case MU_OPPOSITE: w = max - (int)v; break;
                case MU_NOISE: w = (int)v + (int)(tu_rand(&s) % 9) - 4; break;
                default: w = (int)(tu_rand(&s) % (uint64_t)(max + 1)); break;
                }
                mu_set(a, i, x, y, (int)v);
                mu_set(b, i, x, y, w < 0 ? 0 : w > max ? max : w);
            }
}

/* The reference described above. */
static inline void mu_reference(const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    int peak = (1 << d->comp[0].depth) - 1;
    int64_t c1 = (int64_t)(.01 * .01 * peak * peak * 64 + .5), c2 = (int64_t)(.03 * .03 * peak * peak * 64 * 63 + .5);
    memset(m, 0, sizeof(*m));
    m->nb_comps = d->nb_components;
    m->peak = peak;
    double total_px = 0, avg_peak = 0;
    for (int i = 0; i < d->nb_components; i++)
        total_px += (double)mu_comp_w(d, a, i) * mu_comp_h(d, a, i);
    for (int i = 0; i < d->nb_components; i++) {
        int w = mu_comp_w(d, a, i), h = mu_comp_h(d, a, i), best = -1, bx = 0, by = 0;
        uint64_t sse = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int diff = abs(mu_get(a, i, x, y) - mu_get(b, i, x, y));
                sse += (uint64_t)diff * diff;
                if (diff > best)
                    best = diff, bx = x, by = y;
            }
        int wx = w / 4 - 1, wy = h / 4 - 1;
        double ssim = 0;
        for (int j = 0; j < wy; j++) {
            double row = 0;
            for (int k = 0; k < wx; k++) {
                int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
                for (int y = 4 * j; y < 4 * j + 8; y++)
                    for (int x = 4 * k; x < 4 * k + 8; x++) {
                        int64_t va = mu_get(a, i, x, y), vb = mu_get(b, i, x, y);
                        s1 += va, s2 += vb, ss += va * va + vb * vb, s12 += va * vb;
                    }
                int64_t vars = ss * 64 - s1 * s1 - s2 * s2, covar = s12 * 64 - s1 * s2;
                float num = (float)(2 * s1 * s2 + c1) * (float)(2 * covar + c2);
                float den = (float)(s1 * s1 + s2 * s2 + c1) * (float)(vars + c2);
                row += num / den;
            }
            ssim += row;
        }
        double px = (double)w * h;
        m->mse[i] = (double)sse / px;
        m->psnr[i] = 10.0 * log10((double)peak * peak / m->mse[i]);
        m->ssim[i] = wx >= 1 && wy >= 1 ? ssim / ((double)wx * wy) : NAN;
        m->mse_avg += m->mse[i] * (px / total_px);
        avg_peak += peak * (px / total_px);
        m->ssim_all += m->ssim[i] * (px / total_px);
        if (best > m->max_diff || i == 0)
            m->max_diff = best, m->max_diff_comp = i, m->max_diff_x = bx, m->max_diff_y = by;
    }
    m->psnr_avg = 10.0 * log10((double)lrint(avg_peak) * lrint(avg_peak) / m->mse_avg);
}

/* Bit for bit, NAN equal to NAN. 1 when the same, else 0 with the first
 * difference in `why`. */
static inline int mu_same_bits(double x, double y)
{
    return memcmp(&x, &y, sizeof(x)) == 0 || (isnan(x) && isnan(y));
}

static inline int mu_same(const vkcu_frame_metrics *x, const vkcu_frame_metrics *y, char *why, size_t n)
{
    if (x->nb_comps != y->nb_comps || x->max_diff != y->max_diff || x->max_diff_comp != y->max_diff_comp ||
        x->max_diff_x != y->max_diff_x || x->max_diff_y != y->max_diff_y || x->peak != y->peak) {
        snprintf(why, n, "max diff %d in %d at (%d,%d) against %d in %d at (%d,%d)", x->max_diff, x->max_diff_comp,
                 x->max_diff_x, x->max_diff_y, y->max_diff, y->max_diff_comp, y->max_diff_x, y->max_diff_y);
        return 0;
    }
    for (int i = 0; i < x->nb_comps; i++)
        if (!mu_same_bits(x->mse[i], y->mse[i]) || !mu_same_bits(x->psnr[i], y->psnr[i]) ||
            !mu_same_bits(x->ssim[i], y->ssim[i])) {
            snprintf(why, n, "component %d: mse %.17g/%.17g psnr %.17g/%.17g ssim %.17g/%.17g", i, x->mse[i], y->mse[i],
                     x->psnr[i], y->psnr[i], x->ssim[i], y->ssim[i]);
            return 0;
        }
    if (!mu_same_bits(x->mse_avg, y->mse_avg) || !mu_same_bits(x->psnr_avg, y->psnr_avg) ||
        !mu_same_bits(x->ssim_all, y->ssim_all)) {
        snprintf(why, n, "averages: mse %.17g/%.17g psnr %.17g/%.17g ssim %.17g/%.17g", x->mse_avg, y->mse_avg,
                 x->psnr_avg, y->psnr_avg, x->ssim_all, y->ssim_all);
        return 0;
    }
    return 1;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame metrics: per-component PSNR, SSIM and largest absolute sample
 * difference of two pictures of the same format, with the definitions of
 * FFmpeg's psnr and ssim filters (libavfilter/vf_psnr.c, vf_ssim.c;
 * docs/regression.md), over views that give every layout one array of
 * samples per component.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "compare_priv.h"

void vkcu_frame_view_free(frame_view *v)
{
    av_freep(&v->buf);
}

int vkcu_comp_subsampled(const AVPixFmtDescriptor *d, int i)
{
    return d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
}

/* One view per component: planar layouts in place, every other layout
 * (NV12, P010, packed RGB) unpacked into 16-bit samples. */
static int frame_view_init(frame_view *v, const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    memset(v, 0, sizeof(*v));
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                           AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE)) || d->comp[0].depth > 16)
        return VKCU_ERR_USAGE;
    v->nb = d->nb_components;
    v->depth = d->comp[0].depth;
    int planar = 1;
    size_t total = 0;
    for (int i = 0; i < v->nb; i++) {
        const AVComponentDescriptor *c = &d->comp[i];
        int bytes = c->depth > 8 ? 2 : 1;
        if (c->depth != v->depth)
            return VKCU_ERR_USAGE;
        if (c->plane != i || c->step != bytes || c->shift || c->offset)
            planar = 0;
        v->c[i].w = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        v->c[i].h = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        total += (size_t)v->c[i].w * v->c[i].h;
    }
    if (planar) {
        for (int i = 0; i < v->nb; i++) {
            v->c[i].data = f->data[i];
            v->c[i].stride = f->linesize[i];
            v->c[i].wide = v->depth > 8;
        }
        return 0;
    }
    v->buf = av_malloc(total * sizeof(uint16_t));
    if (!v->buf)
        return AVERROR(ENOMEM);
    uint16_t *p = v->buf;
    for (int i = 0; i < v->nb; i++) {
        comp_view *c = &v->c[i];
        for (int y = 0; y < c->h; y++)
            av_read_image_line2(p + (size_t)y * c->w, (const uint8_t **)f->data, f->linesize, d, 0, y, i, c->w, 0, 2);
        c->data = (const uint8_t *)p;
        c->stride = (ptrdiff_t)c->w * 2;
        c->wide = 1;
        p += (size_t)c->w * c->h;
    }
    return 0;
}

/* Views of both frames, or neither (an error). */
int vkcu_frame_views_init(frame_view *va, frame_view *vb, const AVFrame *a, const AVFrame *b)
{
    int ret = frame_view_init(va, a);
    if (ret >= 0)
        ret = frame_view_init(vb, b);
    if (ret < 0)
        vkcu_frame_view_free(va);
    return ret;
}

/* Sum of squared differences and the largest difference with its place. */
static uint64_t plane_sse(const comp_view *a, const comp_view *b, int *maxd, int *mx, int *my)
{
    uint64_t sse = 0;
    int best = -1;
    for (int y = 0; y < a->h; y++) {
        const uint8_t *ra = a->data + (ptrdiff_t)y * a->stride, *rb = b->data + (ptrdiff_t)y * b->stride;
        uint64_t line = 0;
        int line_max = 0, line_x = 0;
        if (a->wide) {
            const uint16_t *pa = (const uint16_t *)ra, *pb = (const uint16_t *)rb;
            for (int x = 0; x < a->w; x++) {
                int d = abs((int)pa[x] - (int)pb[x]);
                line += (uint64_t)d * d;
                if (d > line_max)
                    line_max = d, line_x = x;
            }
        } else {
            for (int x = 0; x < a->w; x++) {
                int d = abs((int)ra[x] - (int)rb[x]);
                line += (unsigned)(d * d);
                if (d > line_max)
                    line_max = d, line_x = x;
            }
        }
        sse += line;
        if (line_max > best) {
            best = line_max;
            *mx = line_x;
            *my = y;
        }
    }
    *maxd = best < 0 ? 0 : best;
    return sse;
}

/* vf_ssim.c's ssim_4x4xn: sums over 4x4 blocks of one block row. */
static void ssim_4x4_row(const comp_view *a, const comp_view *b, int by, int64_t (*sums)[4], int blocks)
{
    for (int z = 0; z < blocks; z++) {
        int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) {
                int64_t va = sample_at(a, 4 * z + x, 4 * by + y), vb = sample_at(b, 4 * z + x, 4 * by + y);
                s1 += va;
                s2 += vb;
                ss += va * va + vb * vb;
                s12 += va * vb;
            }
        sums[z][0] = s1;
        sums[z][1] = s2;
        sums[z][2] = ss;
        sums[z][3] = s12;
    }
}

/* vf_ssim.c's ssim_end1x: SSIM of one 8x8 window from its four 4x4 sums. */
static float ssim_end1(int64_t s1, int64_t s2, int64_t ss, int64_t s12, int max)
{
    int64_t c1 = (int64_t)(.01 * .01 * max * max * 64 + .5);
    int64_t c2 = (int64_t)(.03 * .03 * max * max * 64 * 63 + .5);
    int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
    int64_t covar = s12 * 64 - s1 * s2;
    return (float)(2 * s1 * s2 + c1) * (float)(2 * covar + c2) / ((float)(s1 * s1 + s2 * s2 + c1) * (float)(vars + c2));
}

/* Mean SSIM of 8x8 windows stepped by 4 samples, as FFmpeg's ssim filter. */
static double plane_ssim(const comp_view *a, const comp_view *b, int max)
{
    int bw = a->w >> 2, bh = a->h >> 2;
    if (bw < 2 || bh < 2)
        return NAN;
    int64_t (*sum0)[4] = av_malloc_array(2 * (size_t)(bw + 3), sizeof(*sum0));
    if (!sum0)
        return NAN;
    int64_t (*sum1)[4] = sum0 + bw + 3, (*base)[4] = sum0;
    double total = 0;
    ssim_4x4_row(a, b, 0, sum0, bw);
    for (int y = 1; y < bh; y++) {
        int64_t (*t)[4] = sum0;
        sum0 = sum1;
        sum1 = t;
        ssim_4x4_row(a, b, y, sum0, bw);
        for (int i = 0; i < bw - 1; i++)
            total += ssim_end1(sum0[i][0] + sum0[i + 1][0] + sum1[i][0] + sum1[i + 1][0],
                               sum0[i][1] + sum0[i + 1][1] + sum1[i][1] + sum1[i + 1][1],
                               sum0[i][2] + sum0[i + 1][2] + sum1[i][2] + sum1[i + 1][2],
                               sum0[i][3] + sum0[i + 1][3] + sum1[i][3] + sum1[i + 1][3], max);
    }
    av_free(base);
    return total / ((double)(bw - 1) * (bh - 1));
}

double vkcu_psnr_of(double mse, int peak)
{
    return 10.0 * log10((double)peak * peak / mse); /* +inf for mse 0, as FFmpeg prints it */
}

static void comp_labels(const AVPixFmtDescriptor *d, char *names)
{
    const char *set = (d->flags & AV_PIX_FMT_FLAG_RGB) ? "rgb" : "yuv";
    int n = d->nb_components;
    for (int i = 0; i < n; i++)
        names[i] = (i == n - 1 && (d->flags & AV_PIX_FMT_FLAG_ALPHA)) ? 'a' : set[i];
    names[n] = 0;
}

int vkcu_frame_metrics_compute(const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->vmaf = NAN;
    if (a->format != b->format || a->width != b->width || a->height != b->height) {
        snprintf(err, errlen, "%dx%d %s against %dx%d %s", a->width, a->height, av_get_pix_fmt_name(a->format),
                 b->width, b->height, av_get_pix_fmt_name(b->format));
        return VKCU_ERR_MISMATCH;
    }
    frame_view va, vb;
    int ret = vkcu_frame_views_init(&va, &vb, a, b);
    if (ret < 0) {
        snprintf(err, errlen, "%s has no sample metrics (float or bitstream layout); compare hashes instead",
                 av_get_pix_fmt_name(a->format));
        return ret;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    m->nb_comps = va.nb;
    m->peak = (1 << va.depth) - 1;
    comp_labels(d, m->comp_names);
    double total_px = 0, avg_peak = 0, ssim_all = 0;
    for (int i = 0; i < va.nb; i++)
        total_px += (double)va.c[i].w * va.c[i].h;
    m->max_diff = 0;
    for (int i = 0; i < va.nb; i++) {
        int maxd, mx = 0, my = 0;
        double px = (double)va.c[i].w * va.c[i].h, weight = px / total_px;
        uint64_t sse = plane_sse(&va.c[i], &vb.c[i], &maxd, &mx, &my);
        m->mse[i] = sse / px;
        m->psnr[i] = vkcu_psnr_of(m->mse[i], m->peak);
        m->ssim[i] = plane_ssim(&va.c[i], &vb.c[i], m->peak);
        m->mse_avg += m->mse[i] * weight;
        avg_peak += m->peak * weight;
        ssim_all += m->ssim[i] * weight;
        if (maxd > m->max_diff || i == 0) {
            m->max_diff = maxd;
            m->max_diff_comp = i;
            m->max_diff_x = mx;
            m->max_diff_y = my;
        }
    }
    m->psnr_avg = vkcu_psnr_of(m->mse_avg, (int)lrint(avg_peak));
    m->ssim_all = ssim_all;
    vkcu_frame_view_free(&va);
    vkcu_frame_view_free(&vb);
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pictures for the VMAF tests (test_vmaf.c, test_vmaf_gpu.c): a textured
 * picture that moves from frame to frame (so libvmaf's motion feature has
 * something to measure) and a distorted copy of it (blurred and noisy, so
 * VMAF lands well inside 0..100), in planar YUV 4:2:0 of 8 or 10 bits or
 * their semi-planar forms (NV12, P010), and the scoring of a run of them.
 */
#ifndef VKCU_TEST_VMAF_UTIL_H
#define VKCU_TEST_VMAF_UTIL_H

#include <math.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "regress/vmaf.h"
#include "test_util.h"

/* Luma or chroma sample of picture t at (x, y), 8-bit scale, distorted or not. */
static inline int tv_sample(int comp, int x, int y, int t, int distorted)
{
    double v = 128 + 70 * sin((x + 3.0 * t) / 11.0) * cos((y + 2.0 * t) / 17.0) + (comp ? 25 * comp : 0) * sin(x / 23.0);
    uint64_t s = (uint64_t)(x * 73856093u ^ y * 19349663u ^ comp * 83492791u) + 1;
    v += (int)(tu_rand(&s) % 41) - 20; /* texture: fixed, so it moves with nothing */
    if (distorted) {
        /* a softer, noisier copy */
        v = 0.5 * v + 0.25 * (128 + 70 * sin((x + 1 + 3.0 * t) / 11.0) * cos((y + 2.0 * t) / 17.0)) + 0.25 * 128;
        uint64_t n = (uint64_t)(x * 2654435761u ^ y * 40503u ^ t * 97u) + 7;
        v += (int)(tu_rand(&n) % 13) - 6;
    }
    return v < 0 ? 0 : v > 255 ? 255 : (int)v;
}

/* Picture t of the run in `fmt` (yuv420p, yuv420p10le, nv12, p010le): the
 * same samples whatever the layout (10 bits: the 8-bit value x 4 + 1). */
static inline AVFrame *tv_picture(enum AVPixelFormat fmt, int w, int h, int t, int distorted)
{
    AVFrame *f = tu_frame(fmt, w, h);
    if (!f)
        return NULL;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int deep = d->comp[0].depth > 8;
    for (int c = 0; c < 3; c++) {
        int cw = c ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w, ch = c ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                int v = tv_sample(c, x, y, t, distorted);
                tu_set(f, c, x, y, deep ? v * 4 + 1 : v);
            }
    }
    return f;
}

/* Scores n pairs of w x h `fmt` pictures with a scorer opened with p;
 * scores[n] and the mean out. 0, or the failing call's code (err says). */
static inline int tv_score(const vkcu_vmaf_params *p, enum AVPixelFormat fmt, int w, int h, int n, double *scores,
                           double *mean, char *engine, size_t engine_len, char *err, size_t errlen)
{
    vkcu_vmaf *v = NULL;
    int ret = vkcu_vmaf_open(&v, p, err, errlen);
    if (ret < 0)
        return ret;
    if (engine)
        snprintf(engine, engine_len, "%s", vkcu_vmaf_engine(v));
    for (int t = 0; t < n && ret >= 0; t++) {
        AVFrame *r = tv_picture(fmt, w, h, t, 0), *d = tv_picture(fmt, w, h, t, 1);
        ret = r && d ? vkcu_vmaf_add(v, r, d, err, errlen) : -12;
        av_frame_free(&r);
        av_frame_free(&d);
    }
    double *s = NULL;
    int64_t got = 0;
    if (ret >= 0 && (ret = vkcu_vmaf_finish(v, &s, &got, mean, err, errlen)) >= 0) {
        if (got != n) {
            snprintf(err, errlen, "%lld scores for %d pairs", (long long)got, n);
            ret = -1;
        } else {
            memcpy(scores, s, (size_t)n * sizeof(*s));
        }
    }
    free(s);
    vkcu_vmaf_close(&v);
    return ret;
}

#endif

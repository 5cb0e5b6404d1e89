/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the denoise tests: building a denoise operator from chain
 * text, running it over a frame sequence through the EAGAIN/flush contract,
 * synthetic frames, seeded Gaussian noise and PSNR.
 */
#ifndef VKCU_TEST_DENOISE_UTIL_H
#define VKCU_TEST_DENOISE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "ops/op.h"
#include "test_util.h"
#include "core/vkcu.h"

static inline double dt_gauss(uint64_t *s)
{
    double u1 = ((tu_rand(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (tu_rand(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static inline void dt_comp_size(const AVFrame *f, int c, int *w, int *h)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    *w = c ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
    *h = c ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
}

static inline int dt_equal(const AVFrame *a, const AVFrame *b)
{
    for (int c = 0; c < 3; c++) {
        int w, h;
        dt_comp_size(a, c, &w, &h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (tu_get(a, c, x, y) != tu_get(b, c, x, y))
                    return 0;
    }
    return 1;
}

/* Parses and initialises a one-operator chain for frames of `fmt`. */
static inline int dt_make(vkcu_chain *chain, const char *text, enum AVPixelFormat fmt, int w, int h, int threads)
{
    char err[512];
    vkcu_video_format in = { .pix_fmt = fmt, .width = w, .height = h }, out;
    int ret = vkcu_chain_parse(text, chain, err, sizeof(err));
    if (ret < 0) {
        fprintf(stderr, "%s\n", err);
        return ret;
    }
    chain->ops[0]->threads = threads;
    ret = vkcu_chain_init(chain, &in, &out, err, sizeof(err));
    if (ret < 0) {
        fprintf(stderr, "%s\n", err);
        vkcu_chain_free(chain);
    }
    return ret;
}

/* Runs op over in[0..n) through run_cpu, outputs into out[] (allocated
 * here). Returns the number of outputs or a negative error. */
static inline int dt_run(vkcu_op *op, AVFrame *const *in, int n, AVFrame **out)
{
    int nout = 0;
    for (int i = 0; i <= n; i++) {
        for (;;) {
            AVFrame *o = tu_frame(op->in.pix_fmt, op->in.width, op->in.height);
            if (!o)
                return AVERROR(ENOMEM);
            int ret = op->cls->run_cpu(op, i < n ? in[i] : NULL, o);
            if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) {
                av_frame_free(&o);
                break;
            }
            if (ret < 0) {
                av_frame_free(&o);
                return ret;
            }
            if (nout >= n) {
                av_frame_free(&o);
                return -1; /* more outputs than inputs */
            }
            out[nout++] = o;
            if (i < n)
                break; /* one output per input at most */
        }
    }
    return nout;
}

/* Sum of squared errors and sample count over all components. */
static inline void dt_sse(const AVFrame *a, const AVFrame *b, double *sse, double *count)
{
    for (int c = 0; c < 3; c++) {
        int w, h;
        dt_comp_size(a, c, &w, &h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double d = tu_get(a, c, x, y) - tu_get(b, c, x, y);
                *sse += d * d;
            }
        *count += (double)w * h;
    }
}

static inline double dt_psnr(double sse, double count, int maxval)
{
    return sse <= 0 ? 99.0 : 10.0 * log10((double)maxval * maxval * count / sse);
}

#endif

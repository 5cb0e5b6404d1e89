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

#include "op.h"
#include "vkcu.h"

static inline uint64_t dt_rand(uint64_t *s)
{
    /* xorshift64*: fixed, portable, seeded */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline double dt_gauss(uint64_t *s)
{
    double u1 = ((dt_rand(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (dt_rand(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static inline AVFrame *dt_frame(enum AVPixelFormat fmt, int w, int h)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        return NULL;
    f->format = fmt;
    f->width = w;
    f->height = h;
    if (av_frame_get_buffer(f, 0) < 0)
        av_frame_free(&f);
    return f;
}

/* Component c of a frame at (x, y) in the component's own grid, as a value
 * at the format's depth (shift removed). */
static inline int dt_get(const AVFrame *f, int c, int x, int y)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    const AVComponentDescriptor *cd = &d->comp[c];
    const uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] + x * cd->step + cd->offset;
    if (cd->depth > 8)
        return (p[0] | p[1] << 8) >> cd->shift;
    return p[0];
}

static inline void dt_set(AVFrame *f, int c, int x, int y, int v)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    const AVComponentDescriptor *cd = &d->comp[c];
    uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] + x * cd->step + cd->offset;
    if (cd->depth > 8) {
        int s = v << cd->shift;
        p[0] = s & 0xff;
        p[1] = s >> 8;
    } else {
        p[0] = (uint8_t)v;
    }
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
                if (dt_get(a, c, x, y) != dt_get(b, c, x, y))
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
            AVFrame *o = dt_frame(op->in.pix_fmt, op->in.width, op->in.height);
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
                double d = dt_get(a, c, x, y) - dt_get(b, c, x, y);
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

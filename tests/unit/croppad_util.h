/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the crop/pad tests (test_croppad, test_croppad_gpu): one
 * operator from chain text on a given input format, seeded frames with
 * every component in its range, and byte comparison of visible rows.
 */
#ifndef VKCU_TEST_CROPPAD_UTIL_H
#define VKCU_TEST_CROPPAD_UTIL_H

#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "ops/op.h"
#include "test_util.h"

/* Parses and initialises a chain for an input of fmt, w x h; *out is its
 * output format. 0, or negative (the reason already logged). */
static inline int cp_make(vkcu_chain *chain, const char *text, enum AVPixelFormat fmt, int w, int h,
                          vkcu_video_format *out)
{
    char err[512];
    vkcu_video_format in = { .pix_fmt = fmt, .width = w, .height = h, .matrix = AVCOL_SPC_BT709,
                             .range = AVCOL_RANGE_MPEG };
    if (av_pix_fmt_desc_get(fmt)->flags & AV_PIX_FMT_FLAG_RGB) { /* as decoders tag RGB */
        in.matrix = AVCOL_SPC_RGB;
        in.range = AVCOL_RANGE_JPEG;
    }
    int ret = vkcu_chain_parse(text, chain, err, sizeof(err));
    if (ret >= 0 && (ret = vkcu_chain_init(chain, &in, out, err, sizeof(err))) < 0)
        vkcu_chain_free(chain);
    if (ret < 0)
        fprintf(stderr, "%s: %s\n", text, err);
    return ret;
}

static inline AVFrame *cp_random_frame(enum AVPixelFormat fmt, int w, int h, uint64_t seed)
{
    AVFrame *f = tu_frame(fmt, w, h);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!f)
        return NULL;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int c = 0; c < d->nb_components; c++) {
        int sub = c == 1 || c == 2;
        int cw = sub ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w, ch = sub ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                tu_set(f, c, x, y, (int)(tu_rand(&s) >> 40) & ((1 << d->comp[c].depth) - 1));
    }
    f->pts = (int64_t)seed * 1001;
    f->duration = 1001;
    return f;
}

/* Runs op (one input, one output) on the CPU. */
static inline AVFrame *cp_run_cpu(vkcu_op *op, const AVFrame *in)
{
    AVFrame *o = tu_frame(op->out.pix_fmt, op->out.width, op->out.height);
    if (o && op->cls->run_cpu(op, in, o) < 0)
        av_frame_free(&o);
    return o;
}

/* Number of visible bytes that differ (every plane, every row). */
static inline long cp_diff(const AVFrame *a, const AVFrame *b)
{
    if (a->format != b->format || a->width != b->width || a->height != b->height)
        return -1;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    long n = 0;
    for (int p = 0; p < av_pix_fmt_count_planes(a->format); p++) {
        int rows = p == 1 || p == 2 ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        int bytes = av_image_get_linesize(a->format, a->width, p);
        for (int y = 0; y < rows; y++)
            for (int x = 0; x < bytes; x++)
                n += a->data[p][(ptrdiff_t)y * a->linesize[p] + x] != b->data[p][(ptrdiff_t)y * b->linesize[p] + x];
    }
    return n;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the convert/tonemap tests: building an operator from
 * chain text for a given input format, frames, sample access, a seeded
 * generator, and an exact/off-by-one tally.
 */
#ifndef VKCU_TEST_CONVERT_UTIL_H
#define VKCU_TEST_CONVERT_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "ops/op.h"
#include "test_util.h"
#include "core/vkcu.h"

/* Fills every sample of a YUV frame with seeded random values of its depth. */
static inline void ct_fill_random(AVFrame *f, uint64_t seed)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    uint64_t s = seed | 1;
    for (int c = 0; c < d->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        int h = c ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                tu_set(f, c, x, y, (int)(tu_rand(&s) >> 40) & ((1 << d->comp[c].depth) - 1));
    }
}

/* A parsed and initialised one-operator chain. Returns 0, or prints why. */
static inline int ct_op(vkcu_chain *ch, const char *text, const vkcu_video_format *in, vkcu_video_format *out, int threads)
{
    char err[512];
    if (vkcu_chain_parse(text, ch, err, sizeof(err)) < 0) {
        printf("parse '%s': %s\n", text, err);
        return -1;
    }
    ch->ops[0]->threads = threads;
    if (vkcu_chain_init(ch, in, out, err, sizeof(err)) < 0) {
        printf("init '%s': %s\n", text, err);
        vkcu_chain_free(ch);
        return -1;
    }
    return 0;
}

static inline vkcu_video_format ct_format(enum AVPixelFormat pf, int w, int h, enum AVColorSpace spc, enum AVColorRange range)
{
    vkcu_video_format f;
    memset(&f, 0, sizeof(f));
    f.pix_fmt = pf;
    f.width = w;
    f.height = h;
    f.matrix = spc;
    f.range = range;
    f.primaries = AVCOL_PRI_BT709;
    f.transfer = AVCOL_TRC_BT709;
    f.chroma_loc = AVCHROMA_LOC_LEFT;
    return f;
}

/* Runs op 0 of ch on one frame into a new frame of out's layout. */
static inline AVFrame *ct_run(vkcu_chain *ch, const AVFrame *in, const vkcu_video_format *out)
{
    AVFrame *o = tu_frame(out->pix_fmt, out->width, out->height);
    if (!o)
        return NULL;
    if (ch->ops[0]->cls->run_cpu(ch->ops[0], in, o) < 0)
        av_frame_free(&o);
    return o;
}

typedef struct ct_tally {
    long long n, exact, off1, worse;
    int maxerr;
} ct_tally;

static inline void ct_count(ct_tally *t, int a, int b)
{
    int e = abs(a - b);
    t->n++;
    if (e == 0)
        t->exact++;
    else if (e == 1)
        t->off1++;
    else
        t->worse++;
    if (e > t->maxerr)
        t->maxerr = e;
}

/* max error <= 1 and >= 99.9% exact */
static inline int ct_ok(const ct_tally *t)
{
    return t->n > 0 && t->maxerr <= 1 && t->exact * 1000 >= t->n * 999;
}

#endif

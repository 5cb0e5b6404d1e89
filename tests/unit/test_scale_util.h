/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the scale tests (CPU oracle and GPU): a test picture and the
 * filter names.
 */
#ifndef VKCU_TEST_SCALE_UTIL_H
#define VKCU_TEST_SCALE_UTIL_H

#include "test_convert_util.h"

/* A picture with edges, gradients and texture, inside the video range. */
static void fill_picture(AVFrame *f, uint64_t seed)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    uint64_t s = seed | 1;
    int depth = d->comp[0].depth;
    for (int c = 0; c < d->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        int h = c ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        double fx = 0.07 + 0.05 * c, fy = 0.11 - 0.03 * c;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double v = 128 + 60 * sin(x * fx + y * fy) + 30 * cos(x * x * 0.002 + y * 0.3);
                if (((x / 9) + (y / 7)) % 5 == 0) /* hard-edged blocks: ringing */
                    v = c ? 200 : 230;
                v += (double)((tu_rand(&s) >> 40) % 17) - 8;
                v = v < 16 ? 16 : v > 235 ? 235 : v;
                tu_set(f, c, x, y, (int)lrint(v * (1 << (depth - 8))));
            }
    }
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The difference picture (--diff-image): the worst pair's differences on a
 * heat scale over A's dimmed luma, with a labelled scale bar, written as a
 * PNG under the output file rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/pixdesc.h>

#include "compare_priv.h"
#include "core/outfile.h"
#include "util/log.h"
#include "report.h"

/* 3x5 glyphs for the scale labels: digits, then 'x', '.', '-'. */
static const uint16_t glyphs[13] = {
    0x7B6F, 0x2C97, 0x73E7, 0x73CF, 0x5BC9, 0x79CF, 0x79EF, 0x7249, 0x7BEF, 0x7BCF, 0x0AA8, 0x0002, 0x01C0,
};

static void put_text(uint8_t *rgb, int stride, int w, int h, int x0, int y0, int scale, const char *text)
{
    for (const char *c = text; *c; c++, x0 += 4 * scale) {
        int g = *c >= '0' && *c <= '9' ? *c - '0' : *c == 'x' ? 10 : *c == '.' ? 11 : *c == '-' ? 12 : -1;
        if (g < 0)
            continue;
        for (int gy = 0; gy < 5; gy++)
            for (int gx = 0; gx < 3; gx++) {
                if (!(glyphs[g] >> (14 - (gy * 3 + gx)) & 1))
                    continue;
                for (int sy = 0; sy < scale; sy++)
                    for (int sx = 0; sx < scale; sx++) {
                        int x = x0 + gx * scale + sx, y = y0 + gy * scale + sy;
                        if (x >= 0 && x < w && y >= 0 && y < h)
                            memset(rgb + (ptrdiff_t)y * stride + 3 * x, 255, 3);
                    }
            }
    }
}

static int write_png(const char *path, int overwrite, const char *const *inputs, AVFrame *rgb, char *err,
                     size_t errlen)
{
    char tmp[4200], buf[128];
    uint8_t *png = NULL;
    int size = 0;
    int ret = vkcu_outfile_begin(path, overwrite, inputs, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return VKCU_ERR_OUTPUT;
    ret = vkcu_png_encode(rgb, &png, &size);
    if (ret < 0) {
        if (ret == AVERROR_ENCODER_NOT_FOUND)
            snprintf(err, errlen, "%s: this FFmpeg build has no PNG encoder", path);
        else
            snprintf(err, errlen, "%s: PNG encoding failed: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
        ret = VKCU_ERR_OUTPUT;
        goto fail;
    }
    FILE *f = vkcu_outfile_fopen(tmp, "wb");
    if (f)
        fwrite(png, 1, size, f); /* a short write leaves the stream's error flag for the close */
    int ok = f && vkcu_outfile_fclose(f, tmp) == 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
        goto fail;
    }
    ret = vkcu_outfile_commit(tmp, path, err, errlen);
    if (ret < 0)
        ret = VKCU_ERR_OUTPUT;
fail:
    if (ret < 0)
        vkcu_outfile_abort(tmp);
    av_free(png);
    return ret;
}

/* Per pixel of the luma grid: the largest difference of any component
 * sampled there (chroma at its subsampled position). Returns the largest. */
int vkcu_diff_map(const frame_view *va, const frame_view *vb, const AVPixFmtDescriptor *d, int w, int h, int *diff)
{
    int maxd = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int m = 0;
            for (int c = 0; c < va->nb; c++) {
                int sx = vkcu_comp_subsampled(d, c) ? x >> d->log2_chroma_w : x;
                int sy = vkcu_comp_subsampled(d, c) ? y >> d->log2_chroma_h : y;
                int dd = abs(sample_at(&va->c[c], sx, sy) - sample_at(&vb->c[c], sx, sy));
                m = dd > m ? dd : m;
            }
            diff[(size_t)y * w + x] = m;
            maxd = m > maxd ? m : maxd;
        }
    return maxd;
}

/* The worst frame: A's luma dimmed as a backdrop, every sample whose
 * largest per-component difference is non-zero coloured on a heat scale
 * reaching white at the frame's largest difference, and a labelled scale
 * bar underneath ("0", the largest difference, and the amplification). */
int vkcu_draw_difference(const vkcu_compare_params *p, const AVFrame *a, const AVFrame *b, char *err,
                         size_t errlen)
{
    frame_view va, vb;
    int ret = vkcu_frame_views_init(&va, &vb, a, b);
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot draw the difference of %s frames", p->diff_image, av_get_pix_fmt_name(a->format));
        return ret;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    int w = a->width, h = a->height, bar = h >= 96 ? 28 : 20, scale = h >= 96 ? 2 : 1;
    int total_h = h + bar;
    AVFrame *rgb = av_frame_alloc();
    int *diff = av_malloc_array((size_t)w * h, sizeof(int));
    if (!rgb || !diff) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    rgb->format = AV_PIX_FMT_RGB24;
    rgb->width = w;
    rgb->height = total_h;
    if ((ret = av_frame_get_buffer(rgb, 0)) < 0)
        goto done;
    int peak = (1 << va.depth) - 1;
    int maxd = vkcu_diff_map(&va, &vb, d, w, h, diff);
    for (int y = 0; y < h; y++) {
        uint8_t *row = rgb->data[0] + (ptrdiff_t)y * rgb->linesize[0];
        for (int x = 0; x < w; x++) {
            int m = diff[(size_t)y * w + x];
            if (m) {
                vkcu_heat_colour((double)m / maxd, row + 3 * x);
            } else {
                int luma = (d->flags & AV_PIX_FMT_FLAG_RGB) ? sample_at(&va.c[1], x, y) : sample_at(&va.c[0], x, y);
                memset(row + 3 * x, (luma * 64) / (peak ? peak : 1), 3);
            }
        }
    }
    /* The scale bar: the colour ramp over the width, labels on it. */
    for (int y = h; y < total_h; y++) {
        uint8_t *row = rgb->data[0] + (ptrdiff_t)y * rgb->linesize[0];
        for (int x = 0; x < w; x++) {
            if (y < h + bar / 2)
                vkcu_heat_colour(w > 1 ? (double)x / (w - 1) : 1, row + 3 * x);
            else
                memset(row + 3 * x, 0, 3);
        }
    }
    char label[64];
    int ty = h + bar / 2 + 1;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, 1, ty, scale, "0");
    snprintf(label, sizeof(label), "%d", maxd);
    int lw = (int)strlen(label) * 4 * scale;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, w - lw, ty, scale, label);
    snprintf(label, sizeof(label), "x%d", maxd ? (255 + maxd - 1) / maxd : 1);
    lw = (int)strlen(label) * 4 * scale;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, (w - lw) / 2, ty, scale, label);
    const char *inputs[] = { p->a, p->b, p->job->job.pipeline_file, NULL };
    ret = write_png(p->diff_image, p->overwrite, inputs, rgb, err, errlen);
done:
    av_frame_free(&rgb);
    av_free(diff);
    vkcu_frame_view_free(&va);
    vkcu_frame_view_free(&vb);
    return ret;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A comparison's HTML report (--report, verify --html): thumbnails of the
 * worst frames, made as the pairs are measured so that no frame is held,
 * and the page, written whole under a temporary name (report.c draws it).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "compare_priv.h"
#include "core/outfile.h"
#include "util/log.h"
#include "report.h"

/* A, B and their difference downscaled into the thumbnail box (area
 * averaging for the pictures; the difference takes the largest value under
 * each thumbnail pixel, so that one changed sample still shows). */
static int make_thumbs(compare_run *x, const AVFrame *a, const AVFrame *b, vkcu_plot_thumb *t)
{
    int w = a->width, h = a->height;
    double s = fmin(1.0, fmin((double)VKCU_THUMB_W / w, (double)VKCU_THUMB_H / h));
    int tw = (int)fmax(1, lrint(w * s)), th = (int)fmax(1, lrint(h * s));
    frame_view va, vb;
    int *diff = NULL, ret = vkcu_frame_views_init(&va, &vb, a, b);
    if (ret < 0)
        return ret;
    x->thumb_sws = sws_getCachedContext(x->thumb_sws, w, h, a->format, tw, th, AV_PIX_FMT_RGB24,
                                        SWS_AREA | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    diff = av_malloc_array((size_t)w * h, sizeof(int));
    ret = x->thumb_sws && diff ? 0 : AVERROR(ENOMEM);
    for (int k = 0; k < 3 && ret >= 0; k++) {
        t->rgb[k] = av_frame_alloc();
        if (!t->rgb[k]) {
            ret = AVERROR(ENOMEM);
            break;
        }
        t->rgb[k]->format = AV_PIX_FMT_RGB24;
        t->rgb[k]->width = tw;
        t->rgb[k]->height = th;
        ret = av_frame_get_buffer(t->rgb[k], 0);
    }
    for (int k = 0; k < 2 && ret >= 0; k++) {
        const AVFrame *in = k ? b : a;
        ret = sws_scale(x->thumb_sws, (const uint8_t *const *)in->data, in->linesize, 0, h, t->rgb[k]->data,
                        t->rgb[k]->linesize);
    }
    if (ret < 0)
        goto done;
    int maxd = vkcu_diff_map(&va, &vb, av_pix_fmt_desc_get(a->format), w, h, diff);
    for (int ty = 0; ty < th; ty++) {
        int y0 = (int)((int64_t)ty * h / th), y1 = (int)fmax(y0 + 1, (int64_t)(ty + 1) * h / th);
        const uint8_t *src = t->rgb[0]->data[0] + (ptrdiff_t)ty * t->rgb[0]->linesize[0];
        uint8_t *dst = t->rgb[2]->data[0] + (ptrdiff_t)ty * t->rgb[2]->linesize[0];
        for (int tx = 0; tx < tw; tx++) {
            int x0 = (int)((int64_t)tx * w / tw), x1 = (int)fmax(x0 + 1, (int64_t)(tx + 1) * w / tw), m = 0;
            for (int y = y0; y < y1; y++)
                for (int xx = x0; xx < x1; xx++)
                    m = diff[(size_t)y * w + xx] > m ? diff[(size_t)y * w + xx] : m;
            if (m) {
                vkcu_heat_colour((double)m / maxd, dst + 3 * tx);
            } else {
                /* A's luma, dimmed as in --diff-image */
                int luma = (77 * src[3 * tx] + 150 * src[3 * tx + 1] + 29 * src[3 * tx + 2]) >> 8;
                memset(dst + 3 * tx, luma / 4, 3);
            }
        }
    }
    ret = 0;
done:
    av_free(diff);
    vkcu_frame_view_free(&va);
    vkcu_frame_view_free(&vb);
    if (ret < 0)
        for (int k = 0; k < 3; k++)
            av_frame_free(&t->rgb[k]);
    return ret;
}

/* Keeps the VKCU_PLOT_WORST differing frames of lowest PSNR (the earlier
 * frame on a tie), as thumbnails made now: no frame is held. */
static int plot_place(const vkcu_compare_plot *p, const vkcu_frame_metrics *m)
{
    if (!p || !m->max_diff)
        return VKCU_PLOT_WORST;
    int pos = p->nb_worst;
    while (pos > 0 && m->psnr_avg < p->worst[pos - 1].psnr_avg)
        pos--;
    return pos;
}

int vkcu_compare_plot_wants(const compare_run *x, const vkcu_frame_metrics *m)
{
    return plot_place(x->plot, m) < VKCU_PLOT_WORST;
}

int vkcu_compare_plot_offer(compare_run *x, const AVFrame *a, const AVFrame *b, const vkcu_frame_metrics *m)
{
    vkcu_compare_plot *p = x->plot;
    int pos = plot_place(p, m);
    if (pos >= VKCU_PLOT_WORST)
        return 0;
    vkcu_plot_thumb t = { .frame = x->a.index, .secs = x->a.secs, .psnr_avg = m->psnr_avg, .ssim_all = m->ssim_all,
                          .max_diff = m->max_diff };
    int ret = make_thumbs(x, a, b, &t);
    if (ret < 0)
        return ret;
    if (p->nb_worst == VKCU_PLOT_WORST) {
        for (int k = 0; k < 3; k++)
            av_frame_free(&p->worst[VKCU_PLOT_WORST - 1].rgb[k]);
        p->nb_worst--;
    }
    memmove(&p->worst[pos + 1], &p->worst[pos], (size_t)(p->nb_worst - pos) * sizeof(t));
    p->worst[pos] = t;
    p->nb_worst++;
    return 0;
}

/* The --report page, written whole under a temporary name. */
int vkcu_compare_report_write(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    const char *inputs[] = { p->a, p->b, p->job->job.pipeline_file, NULL };
    char tmp[4200], buf[128];
    if (vkcu_outfile_begin(p->report_html, p->overwrite, inputs, tmp, sizeof(tmp), r->error, sizeof(r->error)) < 0)
        return VKCU_ERR_OUTPUT;
    FILE *f = vkcu_outfile_fopen(tmp, "w");
    int ret = f ? vkcu_html_compare_page(f, p, r, x->plot) : AVERROR(errno);
    int bad = !f || vkcu_outfile_fclose(f, tmp) != 0;
    if (ret < 0 || bad) {
        snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->report_html,
                 ret < 0 ? vkcu_err_str(ret, buf, sizeof(buf)) : strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    if (vkcu_outfile_commit(tmp, p->report_html, r->error, sizeof(r->error)) < 0)
        return VKCU_ERR_OUTPUT;
    if (p->report)
        fprintf(p->report, "report: %s (%" PRId64 " frames plotted, %d worst frames)\n", p->report_html,
                x->plot->nb_rows, x->plot->nb_worst);
    return 0;
}

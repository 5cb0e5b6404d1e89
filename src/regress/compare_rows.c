/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A comparison's per-frame rows (--csv, --json; and the report's plot): one
 * row per measured pair, written under temporary names and published after
 * the summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_priv.h"
#include "core/outfile.h"
#include "util/json.h"
#include "report.h"

/* JSON has no infinity: identical planes (PSNR +inf) are null. */
static json_t *json_metric(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A side's picture in a row: {"width", "height", "pix_fmt"}. */
static json_t *picture(int width, int height, enum AVPixelFormat format)
{
    const char *name = av_get_pix_fmt_name(format);
    return json_pack("{sisiss}", "width", width, "height", height, "pix_fmt", name ? name : "none");
}

int vkcu_compare_rows_open(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    const char *files[2] = { p->csv, p->json };
    const char *inputs[] = { p->a, p->b, p->job->job.pipeline_file, NULL };
    for (int k = 0; k < 2; k++) {
        if (!files[k])
            continue;
        if (x->a.is_list || x->b.is_list) {
            snprintf(x->r->error, sizeof(x->r->error), "%s: per-frame rows need pictures, and %s is a hash list",
                     files[k], x->a.is_list ? p->a : p->b);
            return VKCU_ERR_USAGE;
        }
        /* Refuse an existing file or an input now, not after decoding both inputs. */
        if (vkcu_outfile_check(files[k], p->overwrite, inputs, x->r->error, sizeof(x->r->error)) < 0)
            return VKCU_ERR_OUTPUT;
    }
    if (p->csv) {
        if (vkcu_outfile_begin(p->csv, p->overwrite, inputs, x->csv_tmp, sizeof(x->csv_tmp), x->r->error,
                               sizeof(x->r->error)) < 0)
            return VKCU_ERR_OUTPUT;
        x->csv = vkcu_outfile_fopen(x->csv_tmp, "w");
        if (!x->csv) {
            snprintf(x->r->error, sizeof(x->r->error), "%s: cannot write: %s", p->csv, strerror(errno));
            vkcu_outfile_abort(x->csv_tmp);
            x->csv_tmp[0] = 0;
            return VKCU_ERR_OUTPUT;
        }
    }
    if (p->json) {
        x->rows = json_array();
        if (!x->rows)
            return AVERROR(ENOMEM);
    }
    return 0;
}

int vkcu_compare_rows_add(compare_run *x, const frame_row *row_data)
{
    const vkcu_frame_metrics *m = &row_data->m;
    int vmaf = x->vmaf != NULL;
    if (row_data->unmeasured) {
        /* Pictures of two sizes or formats: only the JSON rows list the pair, with its pictures and no figures. */
        if (!x->rows)
            return 0;
        json_t *row = json_pack("{sIsIsfsfsososb}", "frame_a", (json_int_t)row_data->frame_a, "frame_b",
                                (json_int_t)row_data->frame_b, "pts_a", row_data->pts_a, "pts_b", row_data->pts_b,
                                "picture_a", picture(row_data->width_a, row_data->height_a, row_data->format_a),
                                "picture_b", picture(row_data->width_b, row_data->height_b, row_data->format_b),
                                "measured", 0);
        if (!row || json_array_append_new(x->rows, row) < 0)
            return AVERROR(ENOMEM);
        return 0;
    }
    if (x->plot) {
        vkcu_plot_row row = { .frame = row_data->frame_a, .secs = row_data->pts_a, .psnr_avg = m->psnr_avg,
                              .ssim_all = m->ssim_all, .vmaf = vmaf ? m->vmaf : NAN, .max_diff = m->max_diff };
        memcpy(row.psnr, m->psnr, sizeof(row.psnr));
        if (!x->plot->nb_rows) {
            x->plot->nb_comps = m->nb_comps;
            memcpy(x->plot->comp_names, m->comp_names, sizeof(x->plot->comp_names));
        }
        if (vkcu_compare_plot_add(x->plot, &row) < 0)
            return AVERROR(ENOMEM);
    }
    if (x->csv) {
        FILE *f = x->csv;
        if (ftell(f) == 0) {
            fprintf(f, "frame_a,frame_b,pts_a,pts_b");
            for (int i = 0; i < m->nb_comps; i++)
                fprintf(f, ",psnr_%c", m->comp_names[i]);
            fprintf(f, ",psnr_avg");
            for (int i = 0; i < m->nb_comps; i++)
                fprintf(f, ",ssim_%c", m->comp_names[i]);
            fprintf(f, ",ssim_all,max_diff%s\n", vmaf ? ",vmaf" : "");
        }
        fprintf(f, "%" PRId64 ",%" PRId64 ",%.6f,%.6f", row_data->frame_a, row_data->frame_b, row_data->pts_a,
                row_data->pts_b);
        for (int i = 0; i < m->nb_comps; i++)
            fprintf(f, ",%.6f", m->psnr[i]);
        fprintf(f, ",%.6f", m->psnr_avg);
        for (int i = 0; i < m->nb_comps; i++)
            fprintf(f, ",%.6f", m->ssim[i]);
        fprintf(f, ",%.6f,%d", m->ssim_all, m->max_diff);
        if (vmaf)
            fprintf(f, ",%.6f", m->vmaf);
        fputc('\n', f);
    }
    if (x->rows) {
        json_t *row = json_object(), *psnr = json_object(), *ssim = json_object();
        int bad = !row || !psnr || !ssim;
        char key[2] = { 0, 0 };
        for (int i = 0; i < m->nb_comps && !bad; i++) {
            key[0] = m->comp_names[i];
            bad |= json_object_set_new(psnr, key, json_metric(m->psnr[i])) < 0;
            bad |= json_object_set_new(ssim, key, json_metric(m->ssim[i])) < 0;
        }
        if (!bad)
            bad = json_object_set_new(psnr, "avg", json_metric(m->psnr_avg)) < 0 ||
                  json_object_set_new(ssim, "all", json_metric(m->ssim_all)) < 0 ||
                  json_object_set_new(row, "frame_a", json_integer(row_data->frame_a)) < 0 ||
                  json_object_set_new(row, "frame_b", json_integer(row_data->frame_b)) < 0 ||
                  json_object_set_new(row, "pts_a", json_real(row_data->pts_a)) < 0 ||
                  json_object_set_new(row, "pts_b", json_real(row_data->pts_b)) < 0 ||
                  json_object_set_new(row, "picture_a", picture(row_data->width_a, row_data->height_a,
                                                                row_data->format_a)) < 0 ||
                  json_object_set_new(row, "picture_b", picture(row_data->width_b, row_data->height_b,
                                                                row_data->format_b)) < 0 ||
                  json_object_set(row, "psnr", psnr) < 0 || json_object_set(row, "ssim", ssim) < 0 ||
                  json_object_set_new(row, "max_diff", json_integer(m->max_diff)) < 0 ||
                  (vmaf && json_object_set_new(row, "vmaf", json_metric(m->vmaf)) < 0) ||
                  json_array_append(x->rows, row) < 0;
        json_decref(psnr);
        json_decref(ssim);
        json_decref(row);
        if (bad)
            return AVERROR(ENOMEM);
    }
    return 0;
}

/* What became of a media side's decoded frames (null for a hash list). */
static json_t *side_counts(const side *s)
{
    if (s->is_list || !s->src)
        return json_null();
    const vkcu_job_result *r = &s->src->r;
    return json_pack("{sIsIsIsIsI}", "decoded", (json_int_t)r->frames_in, "dropped", (json_int_t)r->frames_dropped,
                     "duplicated", (json_int_t)r->frames_duplicated, "rescaled", (json_int_t)r->frames_rescaled,
                     "concealed", (json_int_t)r->frames_concealed);
}

static const char *align_name(enum vkcu_compare_align a)
{
    return a == VKCU_ALIGN_PTS ? "pts" : a == VKCU_ALIGN_INDEX ? "index" : "start";
}

/* Publishes the row files (after the summary): 0 or VKCU_ERR_OUTPUT. */
int vkcu_compare_rows_finish(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    if (x->csv) {
        int bad = vkcu_outfile_fclose(x->csv, x->csv_tmp) != 0;
        x->csv = NULL;
        if (bad) {
            snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->csv, strerror(errno));
            return VKCU_ERR_OUTPUT;
        }
        int ret = vkcu_outfile_commit(x->csv_tmp, p->csv, r->error, sizeof(r->error));
        x->csv_tmp[0] = 0;
        if (ret < 0)
            return VKCU_ERR_OUTPUT;
    }
    if (x->rows) {
        char tmp[4200];
        json_t *root = json_object();
        if (!root)
            return AVERROR(ENOMEM);
        if (vkcu_json_set_bytes(root, "a", p->a) < 0 || vkcu_json_set_bytes(root, "b", p->b) < 0 ||
            json_object_set_new(root, "align", json_string(align_name(p->align))) < 0 ||
            vkcu_json_set_bytes(root, "result", r->verdict) < 0 ||
            json_object_set_new(root, "counts", json_pack("{soso}", "a", side_counts(&x->a), "b", side_counts(&x->b))) < 0 ||
            json_object_set_new(root, "concealed", json_integer((json_int_t)r->concealed)) < 0 ||
            json_object_set(root, "frames", x->rows) < 0) {
            json_decref(root);
            return AVERROR(ENOMEM);
        }
        const char *inputs[] = { p->a, p->b, p->job->job.pipeline_file, NULL };
        int ret = vkcu_outfile_begin(p->json, p->overwrite, inputs, tmp, sizeof(tmp), r->error, sizeof(r->error));
        if (ret >= 0) {
            char *text = vkcu_json_text(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
            FILE *f = text ? vkcu_outfile_fopen(tmp, "w") : NULL;
            if (f) {
                fputs(text, f);
                fputc('\n', f);
            }
            int bad = !f || vkcu_outfile_fclose(f, tmp) != 0;
            free(text);
            if (bad) {
                snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->json, strerror(errno));
                vkcu_outfile_abort(tmp);
                ret = VKCU_ERR_OUTPUT;
            } else if (vkcu_outfile_commit(tmp, p->json, r->error, sizeof(r->error)) < 0) {
                ret = VKCU_ERR_OUTPUT;
            }
        } else {
            ret = VKCU_ERR_OUTPUT;
        }
        json_decref(root);
        if (ret < 0)
            return ret;
    }
    return 0;
}

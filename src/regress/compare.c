/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu compare: two inputs (media files decoded through vkcu's own stages,
 * or hash lists written by `vkcu hash`) aligned frame by frame on their
 * timestamps (align.c), so that one dropped frame is one count mismatch and
 * not a cascade of differences. Each pair gets FFmpeg's PSNR and SSIM and
 * the largest absolute difference (metrics.c); the worst pair can be drawn
 * as a PNG (diff_image.c). This file is the run: pairing, the per-frame
 * lines, VMAF's held lines, the summary and the verdict.
 *
 * Media inputs go through a pull-based frame source built from the same
 * stages vkcu_job_run strings together (frame_source.c), so the frames
 * compared are the frames `vkcu hash` hashes.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/avstring.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "compare_priv.h"
#include "util/array.h"
#include "core/decode.h"
#include "core/outfile.h"
#include "core/sink.h"
#include "gpu/vkdev.h"
#include "gpu/gpu.h"
#include "gpu/metrics.h"
#include "util/json.h"
#include "util/log.h"
#include "util/thread.h"
#include "report.h"
#include "vmaf.h"

void vkcu_compare_params_default(vkcu_compare_params *p)
{
    memset(p, 0, sizeof(*p));
    p->max_diff = -1;
    p->min_psnr = NAN;
    p->min_vmaf = NAN;
}

static void fmt_time(char *buf, size_t n, double secs)
{
    snprintf(buf, n, "%.3f s", secs);
}

/* A side's head picture in words: "320x240 yuv420p" (a media frame), or
 * "115200 bytes" (a hash list holds no more). */
static void shape_words(const side *s, char *buf, size_t n)
{
    if (s->is_list && s->entry && s->entry->width > 0)
        snprintf(buf, n, "%dx%d %s", s->entry->width, s->entry->height, s->entry->pix_fmt);
    else if (s->is_list)
        snprintf(buf, n, "%d bytes", s->entry ? s->entry->size : 0);
    else
        snprintf(buf, n, "%dx%d %s", s->frame->width, s->frame->height,
                 av_get_pix_fmt_name(vkcu_frame_sw_format(s->frame)));
}

/* Whether shape_words names the side's picture (not only its bytes). */
static int shaped(const side *s)
{
    return !s->is_list || (s->entry && s->entry->width > 0);
}

/* With --timing decoded: "; 320x240 yuv420p" (both sides alike) or "; A
 * 320x240 yuv420p, B 160x120 yuv420p", for a per-frame line's parenthesis
 * after the timestamp; "" otherwise. */
static void shapes_note(const compare_run *x, char *buf, size_t n)
{
    char sa[64], sb[64];
    buf[0] = 0;
    if (!x->decoded)
        return;
    shape_words(&x->a, sa, sizeof(sa));
    shape_words(&x->b, sb, sizeof(sb));
    if (!strcmp(sa, sb))
        snprintf(buf, n, "; %s", sa);
    else
        snprintf(buf, n, "; A %s, B %s", sa, sb);
}

static void print_metrics(FILE *o, const vkcu_frame_metrics *m)
{
    fprintf(o, "max diff %d (%c at %d,%d); PSNR", m->max_diff, m->comp_names[m->max_diff_comp], m->max_diff_x,
            m->max_diff_y);
    for (int i = 0; i < m->nb_comps; i++)
        fprintf(o, " %c:%.2f", m->comp_names[i], m->psnr[i]);
    fprintf(o, " avg:%.2f dB; SSIM", m->psnr_avg);
    for (int i = 0; i < m->nb_comps; i++)
        fprintf(o, " %c:%.5f", m->comp_names[i] - 32, m->ssim[i]);
    fprintf(o, " All:%.5f", m->ssim_all);
}

#define MAX_LINES 20

static FILE *line_out(compare_run *x, int always)
{
    FILE *o = x->held ? x->held : x->p->report;
    if (!o)
        return NULL;
    if (always || x->p->per_frame)
        return o;
    if (x->lines++ < MAX_LINES)
        return o;
    if (x->lines == MAX_LINES + 1)
        fprintf(o, "... (more differences not listed; %s lists every frame)\n", VKCU_SETTING_IS("per_frame", "1"));
    return NULL;
}

static void note_problem(compare_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_problem(compare_run *x, const char *fmt, ...)
{
    if (x->first_problem[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->first_problem, sizeof(x->first_problem), fmt, ap);
    va_end(ap);
}

static void unpaired(compare_run *x, side *s)
{
    vkcu_compare_result *r = x->r;
    char t[32];
    fmt_time(t, sizeof(t), s->secs);
    if (s->label == 'A')
        r->only_a++;
    else
        r->only_b++;
    note_problem(x, "%c frame %" PRId64 " (pts %s) has no partner in %c", s->label, s->index, t, s->label == 'A' ? 'B' : 'A');
    FILE *o = line_out(x, 0);
    if (o)
        fprintf(o, "%c frame %" PRId64 " (pts %s): only in %c (missing from %c)\n", s->label, s->index, t, s->label,
                s->label == 'A' ? 'B' : 'A');
}

static int pair_hashes(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    char ha[68], hb[68];
    int sa = 0, sb = 0;
    enum vkcu_hash_algo algo = a->is_list ? a->list.algo : b->list.algo;
    if (a->is_list) {
        snprintf(ha, sizeof(ha), "%s", a->entry->hash);
        sa = a->entry->size;
    } else if (vkcu_frame_hash(a->frame, algo, ha, sizeof(ha), &sa) < 0) {
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot hash frame %" PRId64, a->path, a->index);
        return AVERROR(ENOMEM);
    }
    if (b->is_list) {
        snprintf(hb, sizeof(hb), "%s", b->entry->hash);
        sb = b->entry->size;
    } else if (vkcu_frame_hash(b->frame, algo, hb, sizeof(hb), &sb) < 0) {
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot hash frame %" PRId64, b->path, b->index);
        return AVERROR(ENOMEM);
    }
    int same = !strcmp(ha, hb) && sa == sb;
    int concealed = vkcu_side_concealed(a) || vkcu_side_concealed(b);
    char t[32], note[64] = "", wa[64], wb[64], shapes[160];
    fmt_time(t, sizeof(t), a->secs);
    shape_words(a, wa, sizeof(wa));
    shape_words(b, wb, sizeof(wb));
    shapes_note(x, shapes, sizeof(shapes));
    if (concealed)
        snprintf(note, sizeof(note), " (concealed by the decoder %s%s)", vkcu_side_concealed_where(a, b),
                 x->p->exclude_concealed ? ", left out" : "");
    if (!same && concealed)
        x->r->concealed_differing++;
    if (!same && !(concealed && x->p->exclude_concealed)) {
        x->r->differing++;
        x->r->over_limit++;
        if (x->r->first_diff < 0) {
            x->r->first_diff = a->index;
            x->r->first_diff_time = a->secs;
        }
        /* A list of ffmpeg's timing holds every frame at the stream's first size; decoded frames keep theirs. */
        const side *plain = a->is_list && !a->list.decoded ? a : b->is_list && !b->list.decoded ? b : NULL;
        char hint[160] = "";
        if (plain && x->decoded)
            snprintf(hint, sizeof(hint), " (%s holds frames scaled to the stream's first size, as ffmpeg's: hash it "
                     "with %s)", plain->path, VKCU_SETTING_IS("timing", "decoded"));
        if (sa != sb) /* the pictures' sizes or formats differ: say so, with what each side knows of its picture */
            note_problem(x, "frame %" PRId64 " (pts %s): the pictures differ in size or format: A %s%s%d bytes, B %s%s%d "
                         "bytes%s", a->index, t, shaped(a) ? wa : "", shaped(a) ? ", " : "", sa, shaped(b) ? wb : "",
                         shaped(b) ? ", " : "", sb, hint);
        else
            note_problem(x, "frame %" PRId64 " (pts %s): %s of A %s, of B %s%s", a->index, t, vkcu_hash_algo_name(algo),
                         ha, hb, x->exact ? "" : " (a hash list cannot tell by how much: compare the pictures)");
    }
    FILE *o = same ? (x->p->per_frame ? x->p->report : NULL) : line_out(x, 0);
    if (o && same)
        fprintf(o, "frame %" PRId64 " (pts %s%s): same hash %s%s\n", a->index, t, shapes, ha, note);
    else if (o)
        fprintf(o, "frame %" PRId64 " (pts %s): hashes differ: A %s (%s%s%d bytes), B %s (%s%s%d bytes)%s\n", a->index, t,
                ha, shaped(a) ? wa : "", shaped(a) ? ", " : "", sa, hb, shaped(b) ? wb : "", shaped(b) ? ", " : "", sb,
                note);
    return 0;
}

/* --scale: replaces B's frame by one of ref's size and format. Bicubic,
 * with accurate rounding and bit-exact arithmetic, so that ffmpeg's
 * scale=W:H:flags=bicubic+accurate_rnd+bitexact gives the same pictures. */
static int scale_to(compare_run *x, side *b, const AVFrame *ref)
{
    AVFrame *in = b->frame;
    if (in->width == ref->width && in->height == ref->height && in->format == ref->format)
        return 0;
    x->sws = sws_getCachedContext(x->sws, in->width, in->height, in->format, ref->width, ref->height, ref->format,
                                  SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    AVFrame *out = av_frame_alloc();
    int ret = x->sws && out ? 0 : AVERROR(ENOMEM);
    if (ret >= 0) {
        out->width = ref->width;
        out->height = ref->height;
        out->format = ref->format;
        ret = av_frame_get_buffer(out, 0);
    }
    if (ret >= 0)
        ret = av_frame_copy_props(out, in);
    if (ret >= 0)
        ret = sws_scale(x->sws, (const uint8_t *const *)in->data, in->linesize, 0, in->height, out->data, out->linesize);
    if (ret < 0 || !x->sws) {
        av_frame_free(&out);
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot scale %dx%d %s to %dx%d %s", b->path, in->width,
                 in->height, av_get_pix_fmt_name(in->format), ref->width, ref->height, av_get_pix_fmt_name(ref->format));
        return ret < 0 ? ret : VKCU_ERR_USAGE;
    }
    av_frame_free(&b->frame);
    b->frame = out;
    return 0;
}

static int pending_push(compare_run *x, const frame_row *row)
{
    if (VKCU_ARRAY_GROW(x->pending, x->nb_pending, x->room_pending, 256) < 0)
        return AVERROR(ENOMEM);
    x->pending[x->nb_pending++] = *row;
    return 0;
}

/* Ends a paired frame's line: now, or (held for --vmaf) once its score is known. */
static int end_frame_line(compare_run *x, FILE *o)
{
    if (o != x->held) {
        fputc('\n', o);
        return 0;
    }
    if (VKCU_ARRAY_GROW(x->held_ends, x->nb_held_ends, x->room_held_ends, 256) < 0)
        return AVERROR(ENOMEM);
    long off = ftell(o);
    if (off < 0)
        return AVERROR(errno);
    x->held_ends[x->nb_held_ends++] = (struct held_end){ (size_t)off, x->nb_pending - 1 };
    return 0;
}

/* Prints the held lines, each paired frame's with its VMAF (scored: 1) or
 * without (the run failed before libvmaf finished). */
static void release_held(compare_run *x, int scored)
{
    if (!x->held)
        return;
    int bad = fclose(x->held) != 0;
    x->held = NULL;
    FILE *o = x->p->report;
    size_t at = 0;
    for (int64_t i = 0; i < x->nb_held_ends && !bad; i++) {
        const struct held_end *e = &x->held_ends[i];
        fwrite(x->held_buf + at, 1, e->offset - at, o);
        if (scored)
            fprintf(o, "; VMAF %.2f", x->pending[e->row].m.vmaf);
        fputc('\n', o);
        at = e->offset;
    }
    if (!bad && x->held_len > at)
        fwrite(x->held_buf + at, 1, x->held_len - at, o);
    free(x->held_buf);
    x->held_buf = NULL;
}

/* --vmaf after the last pair: every pending row gets its score, the held
 * lines and the rows go out, and the result gets the pooled mean. */
static int vmaf_settle(compare_run *x)
{
    vkcu_compare_result *r = x->r;
    double *scores = NULL, mean;
    int64_t n;
    char err[400];
    int ret = vkcu_vmaf_finish(x->vmaf, &scores, &n, &mean, err, sizeof(err));
    if (ret >= 0 && n != x->nb_pending) {
        snprintf(err, sizeof(err), "%s: libvmaf scored %" PRId64 " of %" PRId64 " pairs", VKCU_SETTING("vmaf"), n,
                 x->nb_pending);
        ret = AVERROR_BUG;
    }
    if (ret < 0) {
        free(scores);
        snprintf(r->error, sizeof(r->error), "%s", err);
        return ret;
    }
    r->vmaf = 1;
    r->vmaf_mean = mean;
    r->vmaf_min = NAN;
    for (int64_t i = 0; i < n; i++) {
        frame_row *row = &x->pending[i];
        row->m.vmaf = scores[i];
        if (isnan(r->vmaf_min) || scores[i] < r->vmaf_min) {
            r->vmaf_min = scores[i];
            r->vmaf_min_index = row->frame_a;
        }
        if (row->frame_a == r->worst_index)
            r->worst.vmaf = scores[i];
    }
    free(scores);
    release_held(x, 1);
    for (int64_t i = 0; i < n; i++)
        if ((ret = vkcu_compare_rows_add(x, &x->pending[i])) < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return ret;
        }
    return 0;
}

/* The side's frame on the host: a frame that stayed on the GPU (the GPU
 * backend's device pool) is brought over, for the steps that read pixels
 * on the CPU; its bytes are counted. */
static int side_on_host(compare_run *x, side *s)
{
    if (!s->frame || vkcu_frame_cuda_device(s->frame) < 0)
        return 0;
    AVFrame *host;
    char err[256];
    int ret = vkcu_frame_cuda_download(s->frame, &host, &x->r->frames_dtoh_bytes, err, sizeof(err));
    if (ret < 0) {
        snprintf(x->r->error, sizeof(x->r->error), "%s: frame %" PRId64 ": %s", s->path, s->index, err);
        return ret;
    }
    av_frame_free(&s->frame);
    s->frame = host;
    return 0;
}

static int pair_on_host(compare_run *x)
{
    int ret = side_on_host(x, &x->a);
    return ret < 0 ? ret : side_on_host(x, &x->b);
}

/* The pair's figures: on the GPU where both frames stayed there (the same
 * bits as the CPU's: kernels/metrics_math.h), else on the CPU's workers. */
static int measure(compare_run *x, vkcu_frame_metrics *m, char *err, size_t errlen)
{
    AVFrame *fa = x->a.frame, *fb = x->b.frame;
    int ret = vkcu_frame_metrics_mismatch(fa, fb, err, errlen);
    if (ret < 0)
        return ret;
    int dev = vkcu_frame_cuda_device(fa);
    if (dev >= 0 && dev == vkcu_frame_cuda_device(fb) && !x->gm && !x->gm_failed) {
        char why[256];
        if (vkcu_gpu_metrics_open(dev, &x->gm, why, sizeof(why)) < 0) {
            x->gm_failed = 1;
            vkcu_log(VKCU_LOG_WARNING, "compare: the metrics run on the CPU: %s", why);
        }
    }
    if (vkcu_gpu_metrics_takes(x->gm, fa, fb)) {
        vkcu_plane_stats st[4];
        if ((ret = vkcu_gpu_metrics_run(x->gm, fa, fb, st, err, errlen)) < 0)
            return ret;
        vkcu_frame_metrics_finish(fa, st, m);
        x->r->gpu_pairs++;
        return 0;
    }
    if ((ret = pair_on_host(x)) < 0) {
        av_strlcpy(err, x->r->error, errlen);
        return ret;
    }
    return vkcu_frame_metrics_compute_threads(x->a.frame, x->b.frame, x->threads, m, err, errlen);
}

/* One more pair for libvmaf: straight from device memory on a GPU scorer,
 * else from the host. */
static int vmaf_add_pair(compare_run *x, char *err, size_t errlen)
{
    const AVFrame *ref = x->p->vmaf_ref_b ? x->b.frame : x->a.frame, *dist = x->p->vmaf_ref_b ? x->a.frame : x->b.frame;
    int on_device = vkcu_frame_cuda_device(ref) >= 0 && vkcu_frame_cuda_device(dist) >= 0 &&
                    vkcu_vmaf_on_gpu(x->vmaf) && vkcu_vmaf_device_format_supported(ref->format);
    if (!x->vmaf_pairs)
        x->vmaf_device = on_device; /* libvmaf takes device pairs or host pairs, not both */
    x->vmaf_pairs++;
    if (on_device && x->vmaf_device) {
        vkcu_vmaf_device_frame dr = { .width = ref->width, .height = ref->height, .format = ref->format },
                               dd = { .width = dist->width, .height = dist->height, .format = dist->format };
        for (int i = 0; i < 4; i++) {
            dr.data[i] = ref->data[i];
            dr.pitch[i] = (size_t)ref->linesize[i];
            dd.data[i] = dist->data[i];
            dd.pitch[i] = (size_t)dist->linesize[i];
        }
        int ret = vkcu_vmaf_add_device(x->vmaf, &dr, &dd, NULL, err, errlen);
        /* libvmaf's copies run on the legacy stream: the pool writes these buffers again after them. */
        vkcu_frame_cuda_release_after(ref, 1);
        vkcu_frame_cuda_release_after(dist, 1);
        return ret;
    }
    if (x->vmaf_device) {
        snprintf(err, errlen, "libvmaf on the GPU got a frame in host memory after device frames (a format change?)");
        return AVERROR(EINVAL);
    }
    int ret = pair_on_host(x);
    if (ret < 0) {
        av_strlcpy(err, x->r->error, errlen);
        return ret;
    }
    ref = x->p->vmaf_ref_b ? x->b.frame : x->a.frame;
    dist = x->p->vmaf_ref_b ? x->a.frame : x->b.frame;
    return vkcu_vmaf_add(x->vmaf, ref, dist, err, errlen);
}

/* Keeps the pair as the worst so far, for --diff-image: a frame of a device
 * pool is copied on the GPU (the pool's buffer goes back to the decoder);
 * host frames are taken over. */
static int keep_worst(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    av_frame_free(&x->worst_a);
    av_frame_free(&x->worst_b);
    if (!x->p->diff_image)
        return 0; /* nothing draws it */
    for (int k = 0; k < 2; k++) {
        side *s = k ? b : a;
        AVFrame **keep = k ? &x->worst_b : &x->worst_a;
        char err[256];
        if (vkcu_frame_cuda_device(s->frame) >= 0) {
            int ret = vkcu_frame_cuda_copy(s->frame, keep, err, sizeof(err));
            if (ret < 0) {
                snprintf(x->r->error, sizeof(x->r->error), "%s: frame %" PRId64 ": %s", s->path, s->index, err);
                return ret;
            }
        } else {
            *keep = s->frame;
            s->frame = NULL;
        }
    }
    return 0;
}

/* A pair that cannot be measured (different picture sizes or formats):
 * counted as differing, said, and its row left unmeasured. */
static int pair_unmeasured(compare_run *x, frame_row *row, const char *t)
{
    side *a = &x->a, *b = &x->b;
    vkcu_compare_result *r = x->r;
    int ret;
    r->format_mismatch++;
    r->differing++;
    if (r->first_diff < 0) {
        r->first_diff = a->index;
        r->first_diff_time = a->secs;
    }
    /* What to do: --scale brings B to A's size and format (the verdict's line is the one users read). */
    char wa[64], wb[64];
    shape_words(a, wa, sizeof(wa));
    shape_words(b, wb, sizeof(wb));
    note_problem(x, "frame %" PRId64 " (pts %s): the pictures differ in %s: A %s, B %s%s%s%s", a->index, t,
                 a->frame->width != b->frame->width || a->frame->height != b->frame->height ? "size" : "format",
                 wa, wb, x->p->scale ? "" : " (", x->p->scale ? "" : VKCU_SETTING("scale"),
                 x->p->scale ? "" : " scales B to A's size and format)");
    FILE *o = line_out(x, 0);
    if (o)
        fprintf(o, "frame %" PRId64 " (pts %s): different picture sizes or formats: A %s, B %s\n", a->index, t, wa,
                wb);
    row->unmeasured = 1;
    if (x->vmaf)
        return 0; /* libvmaf's pending rows are measured pairs only */
    if ((ret = vkcu_compare_rows_add(x, row)) < 0)
        snprintf(r->error, sizeof(r->error), "out of memory");
    return ret;
}

/* A measured pair's row: into libvmaf's pending rows (its pair going to
 * the scorer) or straight into the table. */
static int add_measured_row(compare_run *x, const frame_row *row)
{
    side *a = &x->a;
    vkcu_compare_result *r = x->r;
    int ret;
    if (x->vmaf) {
        char verr[400];
        if ((ret = vmaf_add_pair(x, verr, sizeof(verr))) < 0) {
            snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": %s", a->path, a->index, verr);
            return ret;
        }
        ret = pending_push(x, row);
    } else {
        ret = vkcu_compare_rows_add(x, row);
    }
    if (ret < 0) {
        snprintf(r->error, sizeof(r->error), "out of memory");
        return ret;
    }
    return ret;
}

/* A measured pair's metrics into the run's sums (the averages), when it has
 * the components of the first measured pair. */
static void sum_metrics(compare_run *x, const vkcu_frame_metrics *m)
{
    vkcu_compare_result *r = x->r;
    if (!r->metrics) {
        r->metrics = 1;
        r->nb_comps = m->nb_comps;
        memcpy(r->comp_names, m->comp_names, sizeof(r->comp_names));
    }
    if (m->nb_comps == r->nb_comps) {
        for (int i = 0; i < m->nb_comps; i++)
            x->mse_sum[i] += m->mse[i];
        x->mse_avg_sum += m->mse_avg;
        x->metric_frames++;
        if (!isnan(m->ssim_all)) {
            for (int i = 0; i < m->nb_comps; i++)
                x->ssim_sum[i] += m->ssim[i];
            x->ssim_all_sum += m->ssim_all;
            x->ssim_frames++;
        }
        r->psnr_min = fmin(r->psnr_min, m->psnr_avg);
    }
}

/* A pair the decoder concealed, with --exclude-concealed: its line (when
 * it differs, or with per_frame), and nothing counted. */
static int show_concealed_pair(compare_run *x, const vkcu_frame_metrics *m, const char *t, const char *shapes,
                               int differs, const char *where)
{
    vkcu_compare_result *r = x->r;
    int ret;
    /* Counted apart: the decoder, not the pipeline, made these pixels. */
    FILE *o = differs ? line_out(x, 0) : (x->p->per_frame ? x->p->report : NULL);
    if (o) {
        fprintf(o, "frame %" PRId64 " (pts %s%s): %s (concealed by the decoder %s, left out): ", x->a.index, t,
                shapes, differs ? "differs" : "identical", where);
        print_metrics(o, m);
        if ((ret = end_frame_line(x, o)) < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return ret;
        }
    }
    return 0;
}

static int pair_frames(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    vkcu_compare_result *r = x->r;
    vkcu_frame_metrics m;
    char err[256], t[32], shapes[160];
    fmt_time(t, sizeof(t), a->secs);
    frame_row row = { .frame_a = a->index, .frame_b = b->index, .pts_a = a->secs, .pts_b = b->secs,
                      .width_a = a->frame->width, .height_a = a->frame->height,
                      .format_a = vkcu_frame_sw_format(a->frame) };
    if (x->p->scale && vkcu_frame_metrics_mismatch(a->frame, b->frame, err, sizeof(err)) < 0) {
        /* swscale runs on the host */
        int ret = pair_on_host(x);
        if (ret < 0 || (ret = scale_to(x, b, a->frame)) < 0)
            return ret;
    }
    row.width_b = b->frame->width;
    row.height_b = b->frame->height;
    row.format_b = vkcu_frame_sw_format(b->frame);
    shapes_note(x, shapes, sizeof(shapes));
    int ret = measure(x, &m, err, sizeof(err));
    if (ret == VKCU_ERR_MISMATCH)
        return pair_unmeasured(x, &row, t);
    if (ret < 0) {
        snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": %s", a->path, a->index, err);
        return ret;
    }
    row.m = m;
    if ((ret = add_measured_row(x, &row)) < 0)
        return ret;
    sum_metrics(x, &m);
    if (vkcu_compare_plot_wants(x, &m) && (ret = pair_on_host(x)) < 0)
        return ret;
    if ((ret = vkcu_compare_plot_offer(x, a->frame, b->frame, &m)) < 0) {
        snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": cannot make the report's thumbnails", a->path,
                 a->index);
        return ret;
    }
    if (m.max_diff > r->max_diff) {
        r->max_diff = m.max_diff;
        r->max_diff_index = a->index;
    }
    int concealed = vkcu_side_concealed(a) || vkcu_side_concealed(b);
    const char *where = concealed ? vkcu_side_concealed_where(a, b) : ""; /* before the frames may move to worst_a/b */
    int differs = m.max_diff > 0;
    int over = x->exact ? differs
                        : (x->p->max_diff >= 0 && m.max_diff > x->p->max_diff) ||
                              (!isnan(x->p->min_psnr) && m.psnr_avg < x->p->min_psnr);
    if (differs && concealed)
        r->concealed_differing++;
    if (concealed && x->p->exclude_concealed)
        return show_concealed_pair(x, &m, t, shapes, differs, where);
    r->max_diff = m.max_diff > r->max_diff ? m.max_diff : r->max_diff;
    if (differs) {
        r->differing++;
        if (r->first_diff < 0) {
            r->first_diff = a->index;
            r->first_diff_time = a->secs;
        }
        if (m.mse_avg > x->worst_mse || r->worst_index < 0) {
            x->worst_mse = m.mse_avg;
            r->worst = m;
            r->worst_index = a->index;
            if ((ret = keep_worst(x)) < 0)
                return ret;
        }
    }
    if (over) {
        r->over_limit++;
        if (x->exact)
            note_problem(x, "frame %" PRId64 " (pts %s) differs: max diff %d, PSNR %.2f dB", a->index, t, m.max_diff,
                         m.psnr_avg);
        else
            note_problem(x, "frame %" PRId64 " (pts %s) is outside the limits: max diff %d, PSNR %.2f dB", a->index, t,
                         m.max_diff, m.psnr_avg);
    }
    /* Frames within the limits are listed only with per_frame: a PASS is its summary. */
    FILE *o = over ? line_out(x, 0) : x->p->per_frame ? line_out(x, 1) : NULL;
    if (o) {
        fprintf(o, "frame %" PRId64 " (pts %s%s): %s", a->index, t, shapes,
                !differs ? "identical; " : over ? "DIFFERS: " : "differs (within limits): ");
        if (concealed)
            fprintf(o, "(concealed by the decoder %s) ", where);
        print_metrics(o, &m);
        if ((ret = end_frame_line(x, o)) < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return ret;
        }
    }
    return 0;
}

static int do_pair(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    vkcu_compare_result *r = x->r;
    r->paired++;
    if (vkcu_side_concealed(a) || vkcu_side_concealed(b))
        r->concealed++;
    int64_t dk = a->key - b->key;
    if (dk < 0)
        dk = -dk;
    if (dk > x->al.ts_tolerance) {
        char ta[32], tb[32];
        fmt_time(ta, sizeof(ta), a->secs);
        fmt_time(tb, sizeof(tb), b->secs);
        r->ts_mismatch++;
        note_problem(x, "frame %" PRId64 ": timestamps differ (A %s, B %s)", a->index, ta, tb);
        FILE *o = line_out(x, 0);
        if (o)
            fprintf(o, "frame %" PRId64 ": timestamps differ: A %s, B %s\n", a->index, ta, tb);
    }
    if (a->is_list || b->is_list)
        return pair_hashes(x);
    return pair_frames(x);
}

static void set_alignment(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    x->al.mode = x->p->align;
    if (x->al.mode == VKCU_ALIGN_INDEX) {
        /* Keys are frame numbers: n pairs with n, and timestamps are not checked. */
        x->al.tb = (AVRational){ 1, 1 };
        x->al.window = 0;
        x->al.ts_tolerance = INT64_MAX;
        return;
    }
    if (a->is_list || b->is_list) {
        /* Hash lists count in 1/frame-rate units: frames pair on equal timestamps. */
        x->al.tb = a->is_list ? a->list.tb : b->list.tb;
        x->al.window = 0;
        x->al.ts_tolerance = 0;
        return;
    }
    /* Two media files: frames pair within half a frame interval, and
     * timestamps closer than 1 ms (Matroska's precision) agree. Keys count
     * microseconds, or finer units where half a frame interval would be
     * fewer than 500 of them (a y4m at F1000000:1): rounding to a coarse
     * unit must not leave frames unpaired. */
    double fps = 0;
    if (a->src->frame_rate.num > 0)
        fps = av_q2d(a->src->frame_rate);
    if (b->src->frame_rate.num > 0)
        fps = fmax(fps, av_q2d(b->src->frame_rate));
    if (fps <= 0)
        fps = 25;
    int64_t units = 1000000;
    while (units <= INT_MAX / 10 && 0.5 * (double)units / fps < 500)
        units *= 10;
    x->al.tb = (AVRational){ 1, (int)units };
    x->al.window = (int64_t)(0.5 * (double)units / fps) - 1;
    if (x->al.window < 0)
        x->al.window = 0;
    x->al.ts_tolerance = FFMIN(units / 1000, x->al.window);
}

static void fmt_fps(char *buf, size_t n, AVRational q)
{
    int len = snprintf(buf, n, "%.3f", av_q2d(q));
    while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
        buf[--len] = 0;
    if (len > 0 && (size_t)len < n && buf[len - 1] == '.')
        buf[--len] = 0;
}

/* 1 (with the verdict set) when both inputs are media files that declare
 * different frame rates. Index alignment pairs frames whatever their rate. */
static int rate_differs(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    if (x->al.mode == VKCU_ALIGN_INDEX || a->is_list || b->is_list)
        return 0;
    AVRational ra = a->src->frame_rate, rb = b->src->frame_rate;
    if (ra.num <= 0 || ra.den <= 0 || rb.num <= 0 || rb.den <= 0)
        return 0;
    double fa = av_q2d(ra), fb = av_q2d(rb);
    if (fabs(fa - fb) <= 1e-4 * fmax(fa, fb))
        return 0;
    char ta[32], tb[32];
    fmt_fps(ta, sizeof(ta), ra);
    fmt_fps(tb, sizeof(tb), rb);
    snprintf(x->r->verdict, sizeof(x->r->verdict),
             "MISMATCH: frame rate differs: A %s fps, B %s fps (convert one to the other's rate, or %s)", ta,
             tb, VKCU_SETTING_IS("align", "index"));
    return 1;
}

static void print_header(compare_run *x, side *s)
{
    FILE *o = x->p->report;
    if (!o)
        return;
    if (s->is_list)
        fprintf(o, "%c: %s: hash list, %s, %d frames\n", s->label, s->path, vkcu_hash_algo_name(s->list.algo), s->list.nb);
    else
        fprintf(o, "%c: %s\n", s->label, s->path);
}

/* The first timestamp of side s that does not come after the one before
 * it, in words ("" when its timestamps rise throughout). */
static void disorder_words(const side *s, char *buf, size_t len)
{
    char t[32], prev[32];
    buf[0] = 0;
    if (s->disorder_index < 0)
        return;
    fmt_time(t, sizeof(t), s->disorder_secs);
    fmt_time(prev, sizeof(prev), s->disorder_prev_secs);
    if (s->disorder_repeat)
        snprintf(buf, len, "%c frame %" PRId64 " repeats the timestamp of frame %" PRId64 " (pts %s)", s->label,
                 s->disorder_index, s->disorder_index - 1, t);
    else
        snprintf(buf, len, "%c frame %" PRId64 " (pts %s) comes after frame %" PRId64 " (pts %s): out of order",
                 s->label, s->disorder_index, t, s->disorder_index - 1, prev);
}

/* Frames of one side without a partner: as many frames on both sides is no
 * count difference, and a repeated or backward timestamp (frames pair by
 * timestamp, in order) is named before the first frame left unpaired. */
static void count_verdict(compare_run *x)
{
    const vkcu_compare_result *r = x->r;
    char da[160], db[160], order[340] = "";
    disorder_words(&x->a, da, sizeof(da));
    disorder_words(&x->b, db, sizeof(db));
    if (da[0] || db[0])
        snprintf(order, sizeof(order), "%s%s%s; ", da, da[0] && db[0] ? ", " : "", db);
    if (r->frames_a == r->frames_b)
        snprintf(x->r->verdict, sizeof(x->r->verdict),
                 "MISMATCH: the timestamps differ (A and B have %" PRId64 " frames each, but %" PRId64 " only in A, "
                 "%" PRId64 " only in B): %sfirst unpaired: %s",
                 r->frames_a, r->only_a, r->only_b, order, x->first_problem);
    else
        snprintf(x->r->verdict, sizeof(x->r->verdict),
                 "MISMATCH: frame count differs: A has %" PRId64 ", B has %" PRId64 " (%" PRId64 " only in A, %" PRId64
                 " only in B; %sfirst: %s)",
                 r->frames_a, r->frames_b, r->only_a, r->only_b, order, x->first_problem);
}

static void summarize(compare_run *x)
{
    vkcu_compare_result *r = x->r;
    const vkcu_compare_params *p = x->p;
    FILE *o = p->report;
    if (r->metrics && x->metric_frames) {
        int peak = r->worst.peak;
        if (!peak) {
            /* no frame differed: the peak of the format does not matter for +inf */
            peak = 255;
        }
        for (int i = 0; i < r->nb_comps; i++)
            r->psnr[i] = vkcu_psnr_of(x->mse_sum[i] / x->metric_frames, peak);
        r->psnr_avg = vkcu_psnr_of(x->mse_avg_sum / x->metric_frames, peak);
        for (int i = 0; i < r->nb_comps && x->ssim_frames; i++)
            r->ssim[i] = x->ssim_sum[i] / x->ssim_frames;
        r->ssim_all = x->ssim_frames ? x->ssim_all_sum / x->ssim_frames : NAN;
        if (o) {
            fprintf(o, "PSNR");
            for (int i = 0; i < r->nb_comps; i++)
                fprintf(o, " %c:%f", r->comp_names[i], r->psnr[i]);
            fprintf(o, " average:%f min:%f\n", r->psnr_avg, r->psnr_min);
            fprintf(o, "SSIM");
            for (int i = 0; i < r->nb_comps; i++)
                fprintf(o, " %c:%f", r->comp_names[i] - 32, r->ssim[i]);
            fprintf(o, " All:%f\n", r->ssim_all);
            if (r->vmaf)
                fprintf(o, "VMAF mean:%f min:%f (frame %" PRId64 "), libvmaf model %s\n", r->vmaf_mean, r->vmaf_min,
                        r->vmaf_min_index, VKCU_VMAF_MODEL);
            /* Each figure with its own frame: the largest difference and the
             * largest MSE (lowest PSNR) need not be in the same one. */
            fprintf(o, "max diff: %d", r->max_diff);
            if (r->max_diff_index >= 0)
                fprintf(o, " (frame %" PRId64 ")", r->max_diff_index);
            fputc('\n', o);
            if (r->worst_index >= 0)
                fprintf(o, "worst frame: %" PRId64 " (lowest PSNR: %.2f dB, max diff %d)\n", r->worst_index,
                        r->worst.psnr_avg, r->worst.max_diff);
        }
    }
    if (o) {
        fprintf(o, "frames: A %" PRId64 ", B %" PRId64 ", paired %" PRId64 ", differing %" PRId64, r->frames_a,
                r->frames_b, r->paired, r->differing);
        if (r->concealed)
            fprintf(o, "; concealed by the decoder %" PRId64 " (%" PRId64 " of them differ%s)", r->concealed,
                    r->concealed_differing, p->exclude_concealed ? ", left out of the verdict" : "");
        fputc('\n', o);
        if (r->first_diff >= 0)
            fprintf(o, "first differing frame: %" PRId64 " (pts %.3f s)\n", r->first_diff, r->first_diff_time);
    }
    char limits[128] = "";
    if (x->exact)
        snprintf(limits, sizeof(limits), "identical frames required");
    else {
        int n = 0;
        if (p->max_diff >= 0)
            n += snprintf(limits + n, sizeof(limits) - n, "%s %d", VKCU_SETTING("max_diff"), p->max_diff);
        if (!isnan(p->min_psnr))
            n += snprintf(limits + n, sizeof(limits) - n, "%s%s %g", n ? ", " : "", VKCU_SETTING("min_psnr"),
                          p->min_psnr);
        if (!isnan(p->min_vmaf))
            snprintf(limits + n, sizeof(limits) - n, "%s%s %g", n ? ", " : "", VKCU_SETTING("min_vmaf"), p->min_vmaf);
    }
    int count_bad = r->only_a || r->only_b;
    /* The mean, as VMAF is quoted; a NAN mean (nothing scored) fails too. */
    int vmaf_low = !isnan(p->min_vmaf) && !(r->vmaf_mean >= p->min_vmaf);
    r->pass = !count_bad && !r->ts_mismatch && !r->format_mismatch && !r->over_limit && !vmaf_low;
    char concealed[160] = "";
    if (r->concealed && p->exclude_concealed)
        snprintf(concealed, sizeof(concealed), "; %" PRId64 " concealed by the decoder left out (%" PRId64 " differ)",
                 r->concealed, r->concealed_differing);
    else if (r->concealed_differing)
        snprintf(concealed, sizeof(concealed), "; %" PRId64 " of them concealed by the decoder: %s leaves those out",
                 r->concealed_differing, VKCU_SETTING_IS("exclude_concealed", "1"));
    if (r->pass && !r->differing && r->concealed && p->exclude_concealed)
        snprintf(r->verdict, sizeof(r->verdict), "PASS: %" PRId64 " of %" PRId64 " frames identical%s",
                 r->paired - r->concealed, r->paired, concealed);
    else if (r->pass && !r->differing)
        snprintf(r->verdict, sizeof(r->verdict), "IDENTICAL: %" PRId64 " frames", r->paired);
    else if (r->pass)
        snprintf(r->verdict, sizeof(r->verdict), "PASS: %" PRId64 " of %" PRId64 " frames differ, within %s%s",
                 r->differing, r->paired, limits, p->exclude_concealed ? concealed : "");
    else if (count_bad)
        count_verdict(x);
    else if (r->format_mismatch)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %s", x->first_problem);
    else if (r->over_limit)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %" PRId64 " of %" PRId64 " frames %s (%s%s); first: %s",
                 r->over_limit, r->paired, x->exact ? "differ" : "outside the limits", limits, concealed,
                 x->first_problem);
    else if (vmaf_low && isnan(r->vmaf_mean))
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: no frame was scored for %s %g", VKCU_SETTING("min_vmaf"),
                 p->min_vmaf);
    else if (vmaf_low)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: VMAF mean %.2f is below %s %g (lowest: frame %" PRId64
                 ", %.2f)", r->vmaf_mean, VKCU_SETTING("min_vmaf"), p->min_vmaf, r->vmaf_min_index, r->vmaf_min);
    else
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %" PRId64 " timestamp(s) differ; first: %s", r->ts_mismatch,
                 x->first_problem);
    if (o)
        fprintf(o, "result: %s\n", r->verdict);
}

/* What can be refused before anything is read or written: VMAF without
 * libvmaf, an output that would replace a file the job reads or exists
 * without overwrite, one file named for two outputs. */
static int check_outputs(const vkcu_compare_params *p, vkcu_compare_result *r)
{
    const char *inputs[] = { p->a, p->b, p->job->job.pipeline_file, NULL };
    int ret = 0;
    if ((p->vmaf || !isnan(p->min_vmaf)) && !vkcu_vmaf_available()) {
        vkcu_vmaf_missing(VKCU_SETTING(p->vmaf ? "vmaf" : "min_vmaf"), r->error, sizeof(r->error));
        return VKCU_ERR_USAGE; /* before anything is read or written */
    }
    if (p->diff_image && ((ret = vkcu_outfile_not_terminal(p->diff_image, VKCU_SETTING("diff_image"), r->error,
                                                           sizeof(r->error))) < 0 ||
                          (ret = vkcu_outfile_check(p->diff_image, p->overwrite, inputs, r->error, sizeof(r->error))) < 0))
        return ret; /* before decoding anything */
    if (p->report_html &&
        (ret = vkcu_outfile_check(p->report_html, p->overwrite, inputs, r->error, sizeof(r->error))) < 0)
        return ret;
    const char *outs[] = { p->diff_image, p->csv, p->json, p->report_html };
    for (int i = 0; i < 4; i++)
        for (int k = i + 1; k < 4; k++)
            if (outs[i] && outs[k] && !strcmp(outs[i], outs[k])) {
                snprintf(r->error, sizeof(r->error), "%s: given to two outputs; name a file for each", outs[i]);
                return VKCU_ERR_USAGE;
            }
    return 0;
}

/* Both sides opened: hash lists read, media files' jobs started. */
static int open_sides(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    int ret = vkcu_side_open_list(&x->a, p->a, 'A');
    if (ret >= 0)
        ret = vkcu_side_open_list(&x->b, p->b, 'B');
    if (ret < 0)
        return ret;
    /* Media sides give the frames their partner holds: against a hash
     * list those `vkcu hash` lists with the list's timing (a list of
     * every decoded frame says so); between media files every decoded
     * frame, timed as a list of every decoded frame with that timing. */
    vkcu_job_params ja = *p->job, jb = p->job_b ? *p->job_b : *p->job;
    int decoded = p->timing == VKCU_TIMING_DECODED || (x->a.is_list && x->a.list.decoded) ||
                  (x->b.is_list && x->b.list.decoded);
    ja.job.timing = jb.job.timing = decoded ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG;
    x->decoded = decoded;
    ja.callback_timing = jb.callback_timing = decoded || x->a.is_list || x->b.is_list;
    if (!x->a.is_list && !x->b.is_list) {
        /* On the GPU both inputs' frames stay in device memory, where
         * the metrics (and libvmaf's CUDA backend) read them: enough
         * buffers for the source's queue, the frame in hand and the ring. */
        ja.cuda_pool = VKCU_SOURCE_QUEUE + ja.settings.ring_size + 4;
        jb.cuda_pool = VKCU_SOURCE_QUEUE + jb.settings.ring_size + 4;
        /* Software decoding: the two inputs are paired frame by frame, so
         * the slower sets the pace; each takes half the cores (on two
         * cores one decoder each, not A's two pieces beside B's one). */
        ja.decode_share = jb.decode_share = 2;
        /* A decode queue (engine) for each input, said before A's
         * job makes the shared device: on one queue, which a process
         * of one stream claims, each input got half of the engine's
         * rate (H100, 4K: 88 pairs/s, one input alone 161 frames/s;
         * with a queue each 149). It was held back while a 4K input
         * decoded its first GOP wrong in some runs; those came with
         * each decoder's contexts spread over both queues, never with
         * one queue a decoder, which is now the rule (gpu/vkdev_acquire.c,
         * queues_per_stream; docs/performance.md).
         * VKCU_COMPARE_TWO_QUEUES=0 (a measurement, not a setting)
         * puts both on one queue. */
        const char *two = getenv("VKCU_COMPARE_TWO_QUEUES");
        if (!(two && !strcmp(two, "0")) &&
            (ja.settings.backend != VKCU_BACKEND_CPU || jb.settings.backend != VKCU_BACKEND_CPU))
            vkcu_vkdev_expect(2, 0);
    }
    ret = vkcu_side_open_media(&x->a, &ja);
    if (ret >= 0)
        ret = vkcu_side_open_media(&x->b, &jb);
    return ret;
}

/* What the two sides cannot do together (two hash algorithms, a trimmed
 * hash list, VMAF of a hash list); the rows' outputs and the VMAF scorer
 * opened. */
static int check_sides(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    int ret;
    if (x->a.is_list && x->b.is_list && x->a.list.algo != x->b.list.algo) {
        snprintf(r->error, sizeof(r->error), "%s uses %s and %s uses %s: hash both with the same %s", p->a,
                 vkcu_hash_algo_name(x->a.list.algo), p->b, vkcu_hash_algo_name(x->b.list.algo),
                 VKCU_SETTING("hash_algo"));
        return VKCU_ERR_INPUT;
    }
    const vkcu_job_params *trim = p->job;
    if ((x->a.is_list || x->b.is_list) && (trim->job.start_time >= 0 || trim->job.start_frame >= 0 ||
                                           trim->job.duration >= 0 || trim->job.frame_count >= 0)) {
        /* A list cannot be trimmed here, and a trimmed side starts at zero: nothing would pair. */
        const char *start = VKCU_SETTING("start_time"), *length = VKCU_SETTING("duration");
        snprintf(r->error, sizeof(r->error), "%s is a hash list: %s/%s trim media inputs only (hash the "
                 "media with the same %s/%s instead)", x->a.is_list ? p->a : p->b, start, length, start, length);
        return VKCU_ERR_USAGE;
    }
    if ((ret = vkcu_compare_rows_open(x)) < 0)
        return ret;
    if (p->vmaf || !isnan(p->min_vmaf)) {
        if (x->a.is_list || x->b.is_list) {
            snprintf(r->error, sizeof(r->error), "%s needs pictures, and %s is a hash list", VKCU_SETTING("vmaf"),
                     x->a.is_list ? p->a : p->b);
            return VKCU_ERR_USAGE;
        }
        /* Decoding on the GPU (or trying to): libvmaf's CUDA backend where it
         * can run, the CPU otherwise; the line after the headers says which. */
        vkcu_vmaf_params vp = VKCU_VMAF_PARAMS_DEFAULT;
        vp.gpu = p->job->settings.backend != VKCU_BACKEND_CPU;
        vp.device = p->job->settings.device;
        if ((ret = vkcu_vmaf_open(&x->vmaf, &vp, r->error, sizeof(r->error))) < 0)
            return ret;
        if (p->report && !(x->held = open_memstream(&x->held_buf, &x->held_len)))
            return AVERROR(ENOMEM);
    }
    return 0;
}

/* Reading error of a side: its line. */
static int read_error(compare_run *x, int ret)
{
    av_strlcpy(x->r->error, x->a.err[0] ? x->a.err : x->b.err[0] ? x->b.err : "read error", sizeof(x->r->error));
    return ret;
}

/* The two sides read in step: frames within the alignment window paired
 * and measured, the rest counted as unpaired. */
static int walk_pairs(compare_run *x)
{
    side *a = &x->a, *b = &x->b;
    int ret;
    if ((ret = vkcu_side_advance(a, &x->al)) < 0 || (ret = vkcu_side_advance(b, &x->al)) < 0)
        return read_error(x, ret);
    while (a->have || b->have) {
        if (a->have && b->have && llabs(a->key - b->key) <= x->al.window) {
            if ((ret = do_pair(x)) < 0)
                return ret;
            if ((ret = vkcu_side_advance(a, &x->al)) < 0 || (ret = vkcu_side_advance(b, &x->al)) < 0)
                return read_error(x, ret);
        } else if (!b->have || (a->have && a->key < b->key)) {
            unpaired(x, a);
            if ((ret = vkcu_side_advance(a, &x->al)) < 0)
                return read_error(x, ret);
        } else {
            unpaired(x, b);
            if ((ret = vkcu_side_advance(b, &x->al)) < 0)
                return read_error(x, ret);
        }
    }
    return 0;
}

/* --diff-image: the worst pair's difference, its frames brought to the
 * host if they are on the GPU; the report says what was written or why
 * not. */
static int write_diff_image(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    const char *why = NULL;
    int ret = 0;
    if (x->worst_a) {
        char err[256];
        AVFrame *ha = NULL, *hb = NULL;
        if (vkcu_frame_cuda_device(x->worst_a) >= 0 &&
            ((ret = vkcu_frame_cuda_download(x->worst_a, &ha, &r->frames_dtoh_bytes, err, sizeof(err))) < 0 ||
             (ret = vkcu_frame_cuda_download(x->worst_b, &hb, &r->frames_dtoh_bytes, err, sizeof(err))) < 0)) {
            snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": %s", p->a, r->worst_index, err);
            av_frame_free(&ha);
            return ret;
        }
        if (ha) {
            av_frame_free(&x->worst_a);
            av_frame_free(&x->worst_b);
            x->worst_a = ha;
            x->worst_b = hb;
        }
        ret = vkcu_draw_difference(p, x->worst_a, x->worst_b, r->error, sizeof(r->error));
    }
    else
        why = r->metrics ? "no frame differs" : "hash lists hold no pictures";
    if (why && p->report)
        fprintf(p->report, "diff image: not written (%s)\n", why);
    else if (ret >= 0 && p->report)
        fprintf(p->report, "diff image: %s (frame %" PRId64 ", differences amplified x%d)\n", p->diff_image,
                r->worst_index, r->worst.max_diff ? (255 + r->worst.max_diff - 1) / r->worst.max_diff : 1);
    return ret;
}

/* The end of every run: the HTML report and the plot (of a run that
 * finished), then everything freed. */
static int finish_run(compare_run *x, int ret)
{
    const vkcu_compare_params *p = x->p;
    release_held(x, 0);
    free(x->held_ends);
    free(x->pending);
    vkcu_vmaf_close(&x->vmaf);
    vkcu_gpu_metrics_close(&x->gm);
    if ((ret == 0 || ret == VKCU_ERR_MISMATCH) && x->plot) {
        if (!x->plot->nb_rows && !x->plot->why_empty)
            x->plot->why_empty = x->r->paired ? "no pair could be measured (their picture formats differ)"
                                              : "no frames were paired";
        int wr = p->report_html ? vkcu_compare_report_write(x) : 0;
        if (wr < 0)
            ret = wr;
        else if (p->plot_out)
            FFSWAP(vkcu_compare_plot *, *p->plot_out, x->plot);
    }
    vkcu_compare_plot_free(&x->plot);
    sws_freeContext(x->thumb_sws);
    if (x->csv)
        fclose(x->csv);
    if (x->csv_tmp[0])
        vkcu_outfile_abort(x->csv_tmp);
    json_decref(x->rows);
    sws_freeContext(x->sws);
    av_frame_free(&x->worst_a);
    av_frame_free(&x->worst_b);
    vkcu_side_close(&x->a);
    vkcu_side_close(&x->b);
    return ret;
}

/* The run's steps once its outputs are known to be allowed. */
static int run(compare_run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    int ret;
    if ((p->report_html || p->plot_out) && !(x->plot = vkcu_compare_plot_alloc()))
        return AVERROR(ENOMEM);
    if ((ret = open_sides(x)) < 0) {
        av_strlcpy(r->error, x->a.err[0] ? x->a.err : x->b.err, sizeof(r->error));
        return ret;
    }
    if ((ret = check_sides(x)) < 0)
        return ret;
    if (x->plot && (x->a.is_list || x->b.is_list))
        x->plot->why_empty = "a hash list holds no pictures";
    set_alignment(x);
    print_header(x, &x->a);
    print_header(x, &x->b);
    if (x->vmaf && p->report)
        fprintf(p->report, "VMAF: %s\n", vkcu_vmaf_engine(x->vmaf));
    if (rate_differs(x)) {
        /* Pairing by time would call every other frame missing: name the cause instead. */
        if (x->plot)
            x->plot->why_empty = "the frame rates differ, so no frames were paired";
        if (p->report)
            fprintf(p->report, "result: %s\n", r->verdict);
        return VKCU_ERR_MISMATCH;
    }
    if ((ret = walk_pairs(x)) < 0)
        return ret;
    r->frames_a = x->a.index;
    r->frames_b = x->b.index;
    for (int k = 0; k < 2; k++) {
        const side *s = k ? &x->b : &x->a;
        if (s->src)
            r->frames_dtoh_bytes += s->src->r.dtoh_bytes; /* the decoders' own downloads (host frames) */
    }
    if (x->vmaf && (ret = vmaf_settle(x)) < 0)
        return ret;
    summarize(x);
    if ((ret = vkcu_compare_rows_finish(x)) < 0)
        return ret;
    if (p->diff_image && (ret = write_diff_image(x)) < 0)
        return ret;
    return r->pass ? 0 : VKCU_ERR_MISMATCH;
}

int vkcu_compare_run(const vkcu_compare_params *p, vkcu_compare_result *r)
{
    compare_run x_ = { 0 }, *x = &x_;
    memset(r, 0, sizeof(*r));
    r->first_diff = r->worst_index = r->max_diff_index = -1;
    r->psnr_min = INFINITY;
    x->p = p;
    x->r = r;
    x->exact = p->max_diff < 0 && isnan(p->min_psnr) && isnan(p->min_vmaf);
    x->threads = vkcu_cpu_count();
    r->vmaf_mean = r->vmaf_min = NAN;
    r->vmaf_min_index = -1;
    int ret = check_outputs(p, r);
    if (ret < 0)
        return ret;
    return finish_run(x, run(x));
}

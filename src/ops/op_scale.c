/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `scale` operator: separable resampling (bilinear, bicubic, lanczos,
 * spline36) of every plane, with the chroma siting of the stream, to a size
 * given or derived from the display aspect. Keys and size rules, the CPU
 * reference (two passes over row bands) and the host side of the CUDA path.
 * The tap tables come from src/ops/scale_taps.c and the integer arithmetic from
 * kernels/scale_math.h, so both backends give the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/mathematics.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "util/log.h"
#include "op.h"
#include "kernels/scale_gpu.h"
#include "scale_taps.h"
#include "util/error.h"

#define SC_MAX_SIZE 16384

enum { SAR_SQUARE = 0, SAR_KEEP = 1 };

static const vkcu_op_key scale_keys[] = {
    { "w", VKCU_KEY_INT, NULL, -2, SC_MAX_SIZE, NULL,
      "output width in pixels; -1: from h and the display aspect; -2: the same, rounded to a multiple of 2" },
    { "h", VKCU_KEY_INT, NULL, -2, SC_MAX_SIZE, NULL,
      "output height in pixels; -1: from w and the display aspect; -2: the same, rounded to a multiple of 2" },
    { "filter", VKCU_KEY_ENUM, "lanczos", 0, 0, "bilinear|bicubic|lanczos|spline36",
      "resampling filter (bicubic: Catmull-Rom, B=0 C=1/2; lanczos: 3 lobes)" },
    { "sar", VKCU_KEY_ENUM, "square", 0, 0, "square|keep",
      "square: output pixels are square (SAR 1:1), sizes from -1/-2 keep the display aspect; "
      "keep: the input's SAR is kept" },
    { 0 },
};

typedef struct sc_plane {
    int ncomp;               /* interleaved components (2: NV12/P010 chroma) */
    int in_w, in_h, out_w, out_h;
    sc_taps th, tv;
    sc_gpu_taps gh, gv;
} sc_plane;

typedef struct scale_priv {
    int depth, bytes, shift, nb_planes;
    sc_plane pl[4];
    int16_t *mid[4];         /* CPU: pass-1 output, out_w * ncomp x in_h per plane */
    int gpu_ready;
    void *gout[4], *gmid[4];
    size_t gout_pitch[4], gmid_pitch[4];
} scale_priv;

static const enum AVPixelFormat supported[] = {
    AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10,
    AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
    AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10, AV_PIX_FMT_GBRP, AV_PIX_FMT_GBRP10,
};

static int scale_check(const vkcu_op *op, char *why, size_t whylen)
{
    int ws = vkcu_op_is_set(op, "w"), hs = vkcu_op_is_set(op, "h");
    int w = ws ? vkcu_op_int(op, "w") : -1, h = hs ? vkcu_op_int(op, "h") : -1;
    if (!ws && !hs) {
        snprintf(why, whylen, "set w or h (or both), e.g. scale=w=1280:h=-2");
        return -1;
    }
    if (w == 0 || h == 0) {
        snprintf(why, whylen, "%s=0: give a size in pixels, or -1/-2 to follow the other side", w == 0 ? "w" : "h");
        return -1;
    }
    if (w < 0 && h < 0) {
        snprintf(why, whylen, "w=%d and h=%d: at most one side may follow the other; give w or h in pixels", w, h);
        return -1;
    }
    return 0;
}

/* The side given as -1/-2 from the other one and the aspect num/den:
 * -1 rounds to the nearest pixel, -2 to the nearest multiple of 2 (as
 * FFmpeg's scale filter does), never less than that step. */
static int follow(int other, int64_t num, int64_t den, int mode)
{
    int step = mode == -2 ? 2 : 1;
    int64_t v = av_rescale_rnd(other, num, den * step, AV_ROUND_NEAR_INF) * step;
    if (v < step)
        v = step;
    return v > SC_MAX_SIZE ? -1 : (int)v;
}

/* Where chroma samples sit (in luma samples from the picture edge, the
 * first luma sample's centre at 0.5): co-sited with their first luma
 * sample, centred between the `sub` luma samples, or on the last one. */
static void siting(enum AVChromaLocation loc, int subw, int subh, double *offx, double *offy)
{
    int cosited_x = loc == AVCHROMA_LOC_UNSPECIFIED || loc == AVCHROMA_LOC_LEFT || loc == AVCHROMA_LOC_TOPLEFT ||
                    loc == AVCHROMA_LOC_BOTTOMLEFT;
    *offx = cosited_x ? 0.5 : subw / 2.0;
    if (loc == AVCHROMA_LOC_TOPLEFT || loc == AVCHROMA_LOC_TOP)
        *offy = 0.5;
    else if (loc == AVCHROMA_LOC_BOTTOMLEFT || loc == AVCHROMA_LOC_BOTTOM)
        *offy = subh - 0.5;
    else
        *offy = subh / 2.0;
}

static void free_tables(scale_priv *p)
{
    for (int i = 0; i < 4; i++) {
        vkcu_sc_taps_free(&p->pl[i].th);
        vkcu_sc_taps_free(&p->pl[i].tv);
        av_freep(&p->mid[i]);
    }
}

static int scale_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    scale_priv *p = op->priv;
    int ok = 0;
    for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
        ok |= in->pix_fmt == supported[i];
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->pix_fmt);
    if (!ok || !d) {
        LOGE("scale: input format %s is not supported (use nv12, p010, yuv420p, yuv420p10, "
             "yuv422p, yuv422p10, yuv444p, yuv444p10, gray, gray10, gbrp or gbrp10; add a convert step before scale)",
             d ? d->name : "unknown");
        return VKCU_ERR_USAGE;
    }
    char why[256];
    if (scale_check(op, why, sizeof(why)) < 0) {
        LOGE("scale: %s", why);
        return VKCU_ERR_USAGE;
    }
    int keep = vkcu_op_enum(op, "sar") == SAR_KEEP;
    AVRational sar = in->sar.num > 0 && in->sar.den > 0 ? in->sar : (AVRational){ 1, 1 };
    /* the display aspect num/den the followed side keeps */
    int64_t num = (int64_t)in->width * (keep ? 1 : sar.num), den = (int64_t)in->height * (keep ? 1 : sar.den);
    int w = vkcu_op_is_set(op, "w") ? vkcu_op_int(op, "w") : -1;
    int h = vkcu_op_is_set(op, "h") ? vkcu_op_int(op, "h") : -1;
    if (w < 0)
        w = follow(h, num, den, w);
    else if (h < 0)
        h = follow(w, den, num, h);
    if (w < 0 || h < 0) {
        LOGE("scale: %s=%d gives a %s over %d pixels (input %dx%d, SAR %d:%d); give both w and h",
             w < 0 ? "h" : "w", w < 0 ? h : w, w < 0 ? "width" : "height", SC_MAX_SIZE, in->width, in->height,
             sar.num, sar.den);
        return VKCU_ERR_USAGE;
    }
    *out = *in;
    out->width = w;
    out->height = h;
    out->sar = keep ? in->sar : (AVRational){ 1, 1 };

    free_tables(p);
    enum sc_filter f = (enum sc_filter)vkcu_op_enum(op, "filter");
    p->depth = d->comp[0].depth;
    p->bytes = p->depth > 8 ? 2 : 1;
    p->shift = d->comp[0].shift;
    p->nb_planes = av_pix_fmt_count_planes(in->pix_fmt);
    int subw = 1 << d->log2_chroma_w, subh = 1 << d->log2_chroma_h;
    double cx, cy;
    siting(in->chroma_loc, subw, subh, &cx, &cy);
    for (int i = 0; i < p->nb_planes; i++) {
        sc_plane *pl = &p->pl[i];
        int chroma = i > 0;
        int sx = chroma ? subw : 1, sy = chroma ? subh : 1;
        pl->ncomp = 0;
        for (int c = 0; c < d->nb_components; c++)
            pl->ncomp += d->comp[c].plane == i;
        pl->in_w = chroma ? AV_CEIL_RSHIFT(in->width, d->log2_chroma_w) : in->width;
        pl->in_h = chroma ? AV_CEIL_RSHIFT(in->height, d->log2_chroma_h) : in->height;
        pl->out_w = chroma ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w;
        pl->out_h = chroma ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        double ox = chroma ? cx : 0.5, oy = chroma ? cy : 0.5;
        if (vkcu_sc_taps_build(&pl->th, f, pl->in_w, pl->out_w, in->width, w, sx, ox, ox, why, sizeof(why)) < 0 ||
            vkcu_sc_taps_build(&pl->tv, f, pl->in_h, pl->out_h, in->height, h, sy, oy, oy, why, sizeof(why)) < 0) {
            LOGE("scale: %s", why);
            return AVERROR(ENOMEM);
        }
        p->mid[i] = av_malloc(sizeof(int16_t) * (size_t)pl->out_w * pl->ncomp * pl->in_h);
        if (!p->mid[i])
            return AVERROR(ENOMEM);
    }
    return 0;
}

/* ---- CPU reference ---- */

typedef struct pass_job {
    const scale_priv *p;
    const sc_plane *pl;
    const AVFrame *in;
    AVFrame *out;
    int16_t *mid;
    int plane;
    int failed;
} pass_job;

static void hpass_rows(void *ctx, int y0, int y1)
{
    pass_job *j = ctx;
    const sc_plane *pl = j->pl;
    const sc_taps *t = &pl->th;
    int nc = pl->ncomp, depth = j->p->depth, sh = j->p->shift;
    int *row = malloc(sizeof(int) * (size_t)pl->in_w);
    if (!row) {
        j->failed = 1;
        return;
    }
    for (int y = y0; y < y1; y++) {
        const uint8_t *s = j->in->data[j->plane] + (ptrdiff_t)y * j->in->linesize[j->plane];
        int16_t *m = j->mid + (size_t)y * pl->out_w * nc;
        for (int c = 0; c < nc; c++) {
            if (j->p->bytes == 1)
                for (int x = 0; x < pl->in_w; x++)
                    row[x] = s[x * nc + c];
            else
                for (int x = 0; x < pl->in_w; x++)
                    row[x] = ((const uint16_t *)s)[x * nc + c] >> sh;
            for (int x = 0; x < pl->out_w; x++)
                m[x * nc + c] = (int16_t)sc_pass1(sc_hsum(row + t->start[x], t->w + (size_t)x * t->taps, t->taps), depth);
        }
    }
    free(row);
}

static void vpass_rows(void *ctx, int y0, int y1)
{
    pass_job *j = ctx;
    const sc_plane *pl = j->pl;
    const sc_taps *t = &pl->tv;
    int n = pl->out_w * pl->ncomp, depth = j->p->depth, sh = j->p->shift;
    for (int y = y0; y < y1; y++) {
        const int16_t *col = j->mid + (size_t)t->start[y] * n;
        const int16_t *w = t->w + (size_t)y * t->taps;
        uint8_t *o = j->out->data[j->plane] + (ptrdiff_t)y * j->out->linesize[j->plane];
        if (j->p->bytes == 1)
            for (int x = 0; x < n; x++)
                o[x] = (uint8_t)sc_pass2(sc_vsum(col + x, n, w, t->taps), depth);
        else
            for (int x = 0; x < n; x++)
                ((uint16_t *)o)[x] = (uint16_t)(sc_pass2(sc_vsum(col + x, n, w, t->taps), depth) << sh);
    }
}

static int scale_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    scale_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (in->format != op->in.pix_fmt || in->width != op->in.width || in->height != op->in.height) {
        LOGE("scale: frame format or size changed mid-stream (%dx%d), which is not supported", in->width, in->height);
        return VKCU_ERR_INPUT;
    }
    for (int i = 0; i < p->nb_planes; i++) {
        pass_job j = { .p = p, .pl = &p->pl[i], .in = in, .out = out, .mid = p->mid[i], .plane = i };
        vkcu_parallel_rows(op->threads, p->pl[i].in_h, hpass_rows, &j);
        if (j.failed)
            return AVERROR(ENOMEM);
        vkcu_parallel_rows(op->threads, p->pl[i].out_h, vpass_rows, &j);
    }
    int ret = av_frame_copy_props(out, in);
    if (ret < 0)
        return ret;
    out->sample_aspect_ratio = op->out.sar;
    return 0;
}

/* ---- GPU ---- */

static int scale_init_gpu(vkcu_op *op)
{
    scale_priv *p = op->priv;
    int ret;
    if (p->gpu_ready)
        return 0;
    for (int i = 0; i < p->nb_planes; i++) {
        sc_plane *pl = &p->pl[i];
        if ((ret = vkcu_sc_gpu_alloc_pitch(&p->gout[i], &p->gout_pitch[i], (size_t)pl->out_w * pl->ncomp * p->bytes,
                                      pl->out_h)) < 0 ||
            (ret = vkcu_sc_gpu_taps_upload(&pl->gh, &pl->th)) < 0 || (ret = vkcu_sc_gpu_taps_upload(&pl->gv, &pl->tv)) < 0)
            return ret;
        /* the intermediate plane only where a tile's rows exceed shared memory */
        if ((size_t)pl->gv.span * 32 * pl->ncomp * sizeof(int16_t) > SC_TILE_SHMEM &&
            (ret = vkcu_sc_gpu_alloc_pitch(&p->gmid[i], &p->gmid_pitch[i], (size_t)pl->out_w * pl->ncomp * sizeof(int16_t),
                                      pl->in_h)) < 0)
            return ret;
    }
    p->gpu_ready = 1;
    return 0;
}

static int scale_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    scale_priv *p = op->priv;
    int ret = scale_init_gpu(op);
    if (ret < 0)
        return ret;
    if (!in)
        return AVERROR_EOF;
    if (in->fmt.pix_fmt != op->in.pix_fmt || in->fmt.width != op->in.width || in->fmt.height != op->in.height) {
        LOGE("scale: GPU frame format or size changed mid-stream (%dx%d), which is not supported", in->fmt.width,
             in->fmt.height);
        return VKCU_ERR_INPUT;
    }
    memset(out, 0, sizeof(*out));
    out->fmt = op->out;
    out->nb_planes = p->nb_planes;
    sc_gpu_pass a[4];
    for (int i = 0; i < p->nb_planes; i++) {
        const sc_plane *pl = &p->pl[i];
        out->plane[i] = (vkcu_gpu_plane){ .ptr = p->gout[i], .pitch = p->gout_pitch[i], .width = pl->out_w,
                                          .height = pl->out_h };
        a[i] = (sc_gpu_pass){ .ncomp = pl->ncomp, .bytes = p->bytes, .shift = p->shift, .depth = p->depth,
                              .mid = p->gmid[i], .mid_pitch = p->gmid_pitch[i], .in_h = pl->in_h, .out_w = pl->out_w,
                              .out_h = pl->out_h, .h = pl->gh, .v = pl->gv };
    }
    if ((ret = vkcu_sc_gpu_scale_frame(a, p->nb_planes, in->plane, out->plane, stream)) < 0)
        return ret;
    out->pts = in->pts;
    out->duration = in->duration;
    out->flags = in->flags; /* field order: the CPU side's av_frame_copy_props */
    out->repeat_pict = in->repeat_pict;
    return 0;
}

static void scale_uninit(vkcu_op *op)
{
    scale_priv *p = op->priv;
    if (!p)
        return;
    free_tables(p);
    for (int i = 0; i < 4; i++) {
        vkcu_sc_gpu_free(&p->gout[i]);
        vkcu_sc_gpu_free(&p->gmid[i]);
        vkcu_sc_gpu_taps_free(&p->pl[i].gh);
        vkcu_sc_gpu_taps_free(&p->pl[i].gv);
    }
    p->gpu_ready = 0;
}

const vkcu_op_class vkcu_op_scale = {
    .name = "scale",
    .help = "resize: w, h (-1/-2 follow the display aspect), filter=bilinear|bicubic|lanczos|spline36, sar=square|keep",
    .accuracy = "CPU and CUDA bytes identical (integer taps); within 1 LSB of zimg's resize on >= 99.9% of samples",
    .keys = scale_keys,
    .priv_size = sizeof(scale_priv),
    .per_frame = 1,
    .check = scale_check,
    .init = scale_init,
    .run_cpu = scale_run_cpu,
    .init_gpu = scale_init_gpu,
    .run_gpu = scale_run_gpu,
    .uninit = scale_uninit,
};

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `deinterlace` operator: bwdif-class motion-adaptive deinterlacing,
 * equal to FFmpeg's bwdif filter. Keys, format checks, the frame sequencing
 * (which frames and field each output is made from, and its timestamps),
 * the CPU reference (multithreaded over row bands) and the host side of the
 * CUDA path. The per-sample math is kernels/deint_math.h, shared by both.
 *
 * Sequencing follows FFmpeg's bwdif (yadif's frame handling) exactly, since
 * it decides bytes and timestamps at the ends of the stream:
 *   - an output needs the frames before and after it, so the first output
 *     waits for the second input; at the start the first frame stands in
 *     for the one before, at the end the last frame for the one after;
 *   - the stream's first field and its last are interpolated spatially only
 *     (DI_ROW_INTRA); the last frame's first field is filtered normally;
 *   - field mode: the second field of a frame is output when the next frame
 *     arrives (or at the end); its time is the mean of the two frames'.
 *     Timestamps are in half ticks of the input time base, as FFmpeg's.
 *   - deint=interlaced: a frame not flagged interlaced (or next to a
 *     progressive frame with repeat_pict, as 3:2 pulldown marks) passes
 *     through as one output, even in field mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/defs.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
#include <libavutil/rational.h>

#include "kernels/deint_gpu.h"
#include "kernels/deint_math.h"
#include "util/log.h"
#include "op.h"

enum { MODE_FRAME = 0, MODE_FIELD = 1 };
enum { PARITY_AUTO = 0, PARITY_TFF = 1, PARITY_BFF = 2 };
enum { DEINT_ALL = 0, DEINT_INTERLACED = 1 };

static const vkcu_op_key deint_keys[] = {
    { "mode", VKCU_KEY_ENUM, "field", 0, 0, "frame|field",
      "frame: one output frame per frame; field: one per field (doubles the frame rate)" },
    { "parity", VKCU_KEY_ENUM, "auto", 0, 0, "auto|tff|bff",
      "field order: auto follows each frame's flags (top field first when unflagged)" },
    { "deint", VKCU_KEY_ENUM, "all", 0, 0, "all|interlaced",
      "all: deinterlace every frame; interlaced: only frames flagged interlaced" },
    { 0 },
};

/* ---- sequencing (one instance per backend) ---- */

#define DI_RING 4 /* frames a push can involve: a pending second field reaches 3 back */
#define DI_QUEUE 4

/* Where a sequence is, as FFmpeg's yadif tracks it: the first field is
 * boundary; so is the last frame's second field (BACK_END turns into END
 * when it is made). */
enum { FS_END = 0, FS_NORMAL = 1, FS_BACK_END = -1 };

typedef struct di_ref {
    int slot; /* ring slot holding the samples; -1: none */
    int64_t pts, duration;
    int interlaced, tff, repeat_pict;
} di_ref;

typedef struct di_job {
    int prev, cur, next; /* ring slots (equal at the stream's ends) */
    int copy;            /* pass cur through unchanged */
    int second;          /* the second field of cur */
    int keep;            /* parity of the lines kept from cur */
    int boundary;
    int64_t pts, duration;
} di_job;

typedef struct di_seq {
    int field_mode, parity, only_interlaced;
    int mult;  /* 2: timestamps in half ticks (FFmpeg's output time base); 1: the input's */
    int state; /* FS_* */
    di_ref prev, cur, next;
    int pending, eof;
    int64_t nb_in;
    di_job q[DI_QUEUE];
    int qh, qn;
} di_seq;

static void seq_init(di_seq *s, int field_mode, int parity, int only_interlaced, int mult)
{
    memset(s, 0, sizeof(*s));
    s->field_mode = field_mode;
    s->parity = parity;
    s->only_interlaced = only_interlaced;
    s->mult = mult;
    s->state = FS_END;
    s->prev.slot = s->cur.slot = s->next.slot = -1;
}

static void seq_queue(di_seq *s, const di_job *j)
{
    /* at most two jobs per push or flush step: the queue cannot overflow */
    s->q[(s->qh + s->qn++) % DI_QUEUE] = *j;
}

/* One output from cur: its first field (or the frame), or its second field. */
static void seq_emit(di_seq *s, int second)
{
    int tff = s->parity == PARITY_AUTO ? (s->cur.interlaced ? s->cur.tff : 1) : s->parity == PARITY_TFF;
    di_job j = { .prev = s->prev.slot, .cur = s->cur.slot, .next = s->next.slot, .second = second };
    j.keep = tff ^ !second;
    if (second) {
        if (s->state == FS_BACK_END)
            s->state = FS_END;
        if (s->cur.pts != AV_NOPTS_VALUE && s->next.pts != AV_NOPTS_VALUE)
            j.pts = s->mult == 2 ? s->cur.pts + s->next.pts : (s->cur.pts + s->next.pts) >> 1;
        else
            j.pts = AV_NOPTS_VALUE;
        j.duration = s->mult == 2 ? s->cur.duration : s->cur.duration >> 1;
    } else {
        j.pts = s->cur.pts != AV_NOPTS_VALUE ? s->cur.pts * s->mult : AV_NOPTS_VALUE;
        j.duration = !s->field_mode ? s->cur.duration * s->mult
                                    : s->mult == 2 ? s->cur.duration : s->cur.duration >> 1;
    }
    j.boundary = s->state == FS_END;
    if (s->state == FS_END)
        s->state = FS_NORMAL;
    seq_queue(s, &j);
    s->pending = s->field_mode && !second;
}

static void seq_push(di_seq *s, const di_ref *f)
{
    if (s->pending)
        seq_emit(s, 1);
    s->prev = s->cur;
    s->cur = s->next;
    s->next = *f;
    if (s->cur.slot < 0) {
        s->cur = *f;
        s->state = FS_END;
    }
    if (s->prev.slot < 0)
        return;
    if (s->only_interlaced && (!s->cur.interlaced || (!s->prev.interlaced && s->prev.repeat_pict) ||
                               (!s->next.interlaced && s->next.repeat_pict))) {
        di_job j = { .prev = s->cur.slot, .cur = s->cur.slot, .next = s->cur.slot, .copy = 1 };
        j.pts = s->cur.pts != AV_NOPTS_VALUE ? s->cur.pts * s->mult : AV_NOPTS_VALUE;
        j.duration = s->cur.duration * s->mult;
        seq_queue(s, &j);
        return;
    }
    seq_emit(s, 0);
}

/* The next frame's ring slot, and its description. */
static int seq_slot(const di_seq *s)
{
    return (int)(s->nb_in % DI_RING);
}

static void seq_add(di_seq *s, int64_t pts, int64_t duration, int flags, int repeat_pict)
{
    di_ref f = { seq_slot(s), pts, duration, !!(flags & AV_FRAME_FLAG_INTERLACED),
                 !!(flags & AV_FRAME_FLAG_TOP_FIELD_FIRST), repeat_pict };
    s->nb_in++;
    seq_push(s, &f);
}

/* The end of the input: the last frame's outputs, with the last frame
 * standing in for the one after it, timed one frame interval later. */
static void seq_flush(di_seq *s)
{
    if (s->eof)
        return;
    if (s->pending)
        seq_emit(s, 1);
    if (s->cur.slot >= 0) {
        di_ref n = s->next;
        n.pts = n.pts != AV_NOPTS_VALUE && s->cur.pts != AV_NOPTS_VALUE ? n.pts * 2 - s->cur.pts : AV_NOPTS_VALUE;
        s->state = FS_BACK_END;
        seq_push(s, &n);
    }
    s->eof = 1;
    if (s->pending)
        seq_emit(s, 1);
}

static int seq_pop(di_seq *s, di_job *j)
{
    if (!s->qn)
        return 0;
    *j = s->q[s->qh];
    s->qh = (s->qh + 1) % DI_QUEUE;
    s->qn--;
    return 1;
}

/* ---- operator state ---- */

typedef struct di_plane {
    int samples, height; /* samples per row (interleaved components counted), rows */
    int comps;           /* interleaved components per element (2: NV12/P010 chroma) */
} di_plane;

typedef struct deint_priv {
    int depth, maxval, bytes, shift;
    int nb_planes;
    di_plane plane[4];

    di_seq cpu;
    AVFrame *ring[DI_RING];

    di_seq gpu;
    int gpu_ready;
    void *gring[DI_RING][4];
    int gring_flags[DI_RING], gring_repeat[DI_RING]; /* AVFrame flags and repeat_pict of each slot's frame */
    size_t gring_pitch[4];
    void *gout[2][4];
    size_t gout_pitch[2][4];
    int gout_next;
} deint_priv;

static const enum AVPixelFormat supported[] = {
    AV_PIX_FMT_YUV420P,   AV_PIX_FMT_YUV422P,   AV_PIX_FMT_YUV444P,   AV_PIX_FMT_YUV420P10,
    AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P10, AV_PIX_FMT_YUV420P12, AV_PIX_FMT_YUV422P12,
    AV_PIX_FMT_YUV444P12, AV_PIX_FMT_NV12,      AV_PIX_FMT_P010,
};

static int deint_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    deint_priv *p = op->priv;
    int ok = 0;
    for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
        ok |= in->pix_fmt == supported[i];
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->pix_fmt);
    if (!ok || !d) {
        LOGE("deinterlace: input format %s is not supported (use yuv420p, yuv422p or yuv444p at 8, 10 or 12 "
             "bits, nv12 or p010; add a convert step before deinterlace)", d ? d->name : "unknown");
        return VKCU_ERR_USAGE;
    }
    p->depth = d->comp[0].depth;
    p->maxval = (1 << p->depth) - 1;
    p->bytes = p->depth > 8 ? 2 : 1;
    p->shift = d->comp[0].shift;
    p->nb_planes = av_pix_fmt_count_planes(in->pix_fmt);
    for (int pl = 0; pl < p->nb_planes; pl++) {
        int w = pl ? AV_CEIL_RSHIFT(in->width, d->log2_chroma_w) : in->width;
        int h = pl ? AV_CEIL_RSHIFT(in->height, d->log2_chroma_h) : in->height;
        p->plane[pl].comps = 0;
        for (int c = 0; c < d->nb_components; c++)
            p->plane[pl].comps += d->comp[c].plane == pl;
        p->plane[pl].samples = w * p->plane[pl].comps;
        p->plane[pl].height = h;
        /* The filter reflects missing lines one step; below 3 lines a
         * reflected line would not exist either. */
        if (h < 3) {
            LOGE("deinterlace: frame size %dx%d is too small: every plane needs at least 3 lines (%s has %d in "
                 "plane %d)", in->width, in->height, d->name, h, pl);
            return VKCU_ERR_USAGE;
        }
    }
    *out = *in;
    if (out->field_order != AV_FIELD_UNKNOWN)
        out->field_order = AV_FIELD_PROGRESSIVE;
    int field_mode = vkcu_op_enum(op, "mode") == MODE_FIELD, mult = 1;
    if (field_mode) {
        /* Half ticks, as FFmpeg's bwdif: where the halved time base does
         * not fit (a denominator beyond INT_MAX), it keeps the input's and
         * the second field's time is rounded down. */
        AVRational tb = in->time_base;
        if (tb.num > 0 && tb.den > 0 && av_reduce(&out->time_base.num, &out->time_base.den, tb.num,
                                                  tb.den * 2LL, INT_MAX))
            mult = 2;
        else
            out->time_base = tb;
        if (in->frame_rate.num > 0 && in->frame_rate.den > 0)
            out->frame_rate = av_mul_q(in->frame_rate, (AVRational){ 2, 1 });
    }
    seq_init(&p->cpu, field_mode, vkcu_op_enum(op, "parity"), vkcu_op_enum(op, "deint") == DEINT_INTERLACED, mult);
    p->gpu = p->cpu;
    return 0;
}

/* ---- CPU ---- */

typedef struct cpu_job {
    const deint_priv *p;
    const di_job *job;
    int pl;
    const AVFrame *prev, *cur, *next;
    AVFrame *out;
} cpu_job;

static inline const uint8_t *line_of(const AVFrame *f, int pl, int y)
{
    return f->data[pl] + (ptrdiff_t)y * f->linesize[pl];
}

static inline int get(const uint8_t *row, int x, int bytes, int shift)
{
    return bytes == 1 ? row[x] : ((const uint16_t *)row)[x] >> shift;
}

static void cpu_rows(void *ctx, int y0, int y1)
{
    const cpu_job *j = ctx;
    const deint_priv *p = j->p;
    int pl = j->pl, n = p->plane[pl].samples, h = p->plane[pl].height;
    int bytes = p->bytes, sh = p->shift;
    const AVFrame *fa = j->job->second ? j->cur : j->prev, *fb = j->job->second ? j->next : j->cur;
    for (int y = y0; y < y1; y++) {
        uint8_t *o = j->out->data[pl] + (ptrdiff_t)y * j->out->linesize[pl];
        di_row r = di_row_plan(y, h, j->job->keep, j->job->boundary, bytes == 2);
        if (r.kind == DI_ROW_COPY) {
            memcpy(o, line_of(j->cur, pl, y), (size_t)n * bytes);
            continue;
        }
        const uint8_t *c1 = line_of(j->cur, pl, r.m1), *e1 = line_of(j->cur, pl, r.p1);
        const uint8_t *c3 = line_of(j->cur, pl, r.m3), *e3 = line_of(j->cur, pl, r.p3);
        const uint8_t *pm = line_of(j->prev, pl, r.m1), *pp = line_of(j->prev, pl, r.p1);
        const uint8_t *nm = line_of(j->next, pl, r.m1), *np = line_of(j->next, pl, r.p1);
        const uint8_t *a0 = line_of(fa, pl, y), *b0 = line_of(fb, pl, y);
        const uint8_t *a2m = line_of(fa, pl, r.m2), *b2m = line_of(fb, pl, r.m2);
        const uint8_t *a2p = line_of(fa, pl, r.p2), *b2p = line_of(fb, pl, r.p2);
        const uint8_t *a4m = line_of(fa, pl, r.m4), *b4m = line_of(fb, pl, r.m4);
        const uint8_t *a4p = line_of(fa, pl, r.p4), *b4p = line_of(fb, pl, r.p4);
        for (int x = 0; x < n; x++) {
            /* every row the plan names exists, so reading taps a kind does
             * not use is harmless */
            di_taps t = {
                get(c1, x, bytes, sh),  get(e1, x, bytes, sh),  get(c3, x, bytes, sh),  get(e3, x, bytes, sh),
                get(pm, x, bytes, sh),  get(pp, x, bytes, sh),  get(nm, x, bytes, sh),  get(np, x, bytes, sh),
                get(a0, x, bytes, sh),  get(b0, x, bytes, sh),  get(a2m, x, bytes, sh), get(b2m, x, bytes, sh),
                get(a2p, x, bytes, sh), get(b2p, x, bytes, sh), get(a4m, x, bytes, sh), get(b4m, x, bytes, sh),
                get(a4p, x, bytes, sh), get(b4p, x, bytes, sh),
            };
            int v = di_sample(&r, &t, p->maxval);
            if (bytes == 1)
                o[x] = (uint8_t)v;
            else
                ((uint16_t *)o)[x] = (uint16_t)(v << sh);
        }
    }
}

static int cpu_job_run(vkcu_op *op, const di_job *job, AVFrame *out)
{
    deint_priv *p = op->priv;
    const AVFrame *cur = p->ring[job->cur];
    int ret;
    if (job->copy) {
        if ((ret = av_frame_copy(out, cur)) < 0)
            return ret;
    } else {
        for (int pl = 0; pl < p->nb_planes; pl++) {
            cpu_job cj = { p, job, pl, p->ring[job->prev], cur, p->ring[job->next], out };
            vkcu_parallel_rows(op->threads, p->plane[pl].height, cpu_rows, &cj);
        }
    }
    if ((ret = av_frame_copy_props(out, cur)) < 0)
        return ret;
    if (!job->copy)
        out->flags &= ~AV_FRAME_FLAG_INTERLACED;
    out->pts = job->pts;
    out->duration = job->duration;
    return 0;
}

static int deint_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    deint_priv *p = op->priv;
    di_seq *s = &p->cpu;
    di_job job;
    if (in) {
        if (in->format != op->in.pix_fmt || in->width != op->in.width || in->height != op->in.height) {
            LOGE("deinterlace: frame format or size changed mid-stream (%dx%d), which is not supported",
                 in->width, in->height);
            return VKCU_ERR_INPUT;
        }
        int slot = seq_slot(s);
        if (!p->ring[slot] && !(p->ring[slot] = av_frame_alloc()))
            return AVERROR(ENOMEM);
        av_frame_unref(p->ring[slot]);
        int ret = av_frame_ref(p->ring[slot], in);
        if (ret < 0)
            return ret;
        seq_add(s, in->pts, in->duration, in->flags, in->repeat_pict);
    } else if (!s->qn) {
        seq_flush(s); /* nothing ready: the end of the stream */
    }
    if (!seq_pop(s, &job))
        return in ? AVERROR(EAGAIN) : AVERROR_EOF;
    int ret = cpu_job_run(op, &job, out);
    return ret < 0 ? ret : s->qn ? VKCU_OP_MORE : 0;
}

/* ---- GPU ---- */

static int deint_init_gpu(vkcu_op *op)
{
    deint_priv *p = op->priv;
    int ret;
    if (p->gpu_ready)
        return 0;
    for (int pl = 0; pl < p->nb_planes; pl++) {
        size_t wb = (size_t)p->plane[pl].samples * p->bytes;
        for (int s = 0; s < DI_RING; s++)
            if ((ret = vkcu_di_gpu_alloc_pitch(&p->gring[s][pl], &p->gring_pitch[pl], wb, p->plane[pl].height)) < 0)
                return ret;
        for (int s = 0; s < 2; s++)
            if ((ret = vkcu_di_gpu_alloc_pitch(&p->gout[s][pl], &p->gout_pitch[s][pl], wb, p->plane[pl].height)) < 0)
                return ret;
    }
    p->gpu_ready = 1;
    return 0;
}

static int gpu_job_run(vkcu_op *op, const di_job *job, vkcu_gpu_frame *out, void *stream)
{
    deint_priv *p = op->priv;
    /* two output sets: the one handed out stays valid while the next is made */
    int set = p->gout_next;
    p->gout_next ^= 1;
    memset(out, 0, sizeof(*out));
    out->fmt = op->out;
    out->nb_planes = p->nb_planes;
    for (int pl = 0; pl < p->nb_planes; pl++) {
        const di_plane *dp = &p->plane[pl];
        int ret;
        if (job->copy) {
            ret = vkcu_di_gpu_copy(p->gring[job->cur][pl], p->gring_pitch[pl], p->gout[set][pl], p->gout_pitch[set][pl],
                              (size_t)dp->samples * p->bytes, dp->height, stream);
        } else {
            di_gpu_args a = {
                .prev = p->gring[job->prev][pl], .cur = p->gring[job->cur][pl], .next = p->gring[job->next][pl],
                .pitch = p->gring_pitch[pl], .dst = p->gout[set][pl], .dst_pitch = p->gout_pitch[set][pl],
                .samples = dp->samples, .height = dp->height, .bytes = p->bytes, .shift = p->shift,
                .maxval = p->maxval, .keep = job->keep, .second = job->second, .boundary = job->boundary,
            };
            ret = vkcu_di_gpu_filter(&a, stream);
        }
        if (ret < 0)
            return ret;
        out->plane[pl].ptr = p->gout[set][pl];
        out->plane[pl].pitch = p->gout_pitch[set][pl];
        out->plane[pl].width = dp->samples / dp->comps;
        out->plane[pl].height = dp->height;
    }
    out->pts = job->pts;
    out->duration = job->duration;
    /* as the CPU side: the current frame's flags, progressive once filtered */
    out->flags = p->gring_flags[job->cur] & (job->copy ? ~0 : ~AV_FRAME_FLAG_INTERLACED);
    out->repeat_pict = p->gring_repeat[job->cur];
    return 0;
}

static int deint_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    deint_priv *p = op->priv;
    di_seq *s = &p->gpu;
    di_job job;
    int ret = deint_init_gpu(op);
    if (ret < 0)
        return ret;
    if (in) {
        if (in->fmt.pix_fmt != op->in.pix_fmt || in->fmt.width != op->in.width || in->fmt.height != op->in.height) {
            LOGE("deinterlace: GPU frame format or size changed mid-stream (%dx%d), which is not supported",
                 in->fmt.width, in->fmt.height);
            return VKCU_ERR_INPUT;
        }
        int slot = seq_slot(s);
        for (int pl = 0; pl < p->nb_planes; pl++)
            if ((ret = vkcu_di_gpu_ingest(&in->plane[pl], p->plane[pl].comps, p->bytes, p->gring[slot][pl],
                                     p->gring_pitch[pl], stream)) < 0)
                return ret;
        p->gring_flags[slot] = in->flags;
        p->gring_repeat[slot] = in->repeat_pict;
        seq_add(s, in->pts, in->duration, in->flags, in->repeat_pict);
    } else if (!s->qn) {
        seq_flush(s); /* nothing ready: the end of the stream */
    }
    if (!seq_pop(s, &job))
        return in ? AVERROR(EAGAIN) : AVERROR_EOF;
    ret = gpu_job_run(op, &job, out, stream);
    return ret < 0 ? ret : s->qn ? VKCU_OP_MORE : 0;
}

static void deint_uninit(vkcu_op *op)
{
    deint_priv *p = op->priv;
    if (!p)
        return;
    for (int s = 0; s < DI_RING; s++) {
        av_frame_free(&p->ring[s]);
        for (int pl = 0; pl < 4; pl++)
            vkcu_di_gpu_free(&p->gring[s][pl]);
    }
    for (int s = 0; s < 2; s++)
        for (int pl = 0; pl < 4; pl++)
            vkcu_di_gpu_free(&p->gout[s][pl]);
    p->gpu_ready = 0;
}

const vkcu_op_class vkcu_op_deinterlace = {
    .name = "deinterlace",
    .help = "deinterlace: motion-adaptive (bwdif, equal to FFmpeg's); mode=field doubles the frame rate",
    .accuracy = "exact: bytes and timestamps equal ffmpeg's bwdif filter; CPU and CUDA identical",
    .keys = deint_keys,
    .priv_size = sizeof(deint_priv),
    .init = deint_init,
    .run_cpu = deint_run_cpu,
    .init_gpu = deint_init_gpu,
    .run_gpu = deint_run_gpu,
    .uninit = deint_uninit,
};

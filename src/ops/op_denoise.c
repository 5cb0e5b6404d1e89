/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `denoise` operator: `tnr` (motion-adaptive temporal recursion with a
 * light spatial term, hqdn3d family) and `nlm` (spatio-temporal non-local
 * means). Keys, format checks, the CPU reference (multithreaded over row
 * bands) and the host side of the CUDA path. The per-sample math lives in
 * kernels/denoise_math.h so that both backends give the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "kernels/denoise_gpu.h"
#include "kernels/denoise_math.h"
#include "util/log.h"
#include "op.h"

enum { MODE_TNR = 0, MODE_NLM = 1 };
enum { PLANES_ALL = 0, PLANES_LUMA = 1, PLANES_CHROMA = 2 };

#define MAX_CH 4
#define MAX_WINDOW 7 /* 2 * max tradius + 1 */

static const vkcu_op_key denoise_keys[] = {
    { "mode", VKCU_KEY_ENUM, "tnr", 0, 0, "tnr|nlm",
      "tnr: temporal recursive filter (fast); nlm: non-local means (quality)" },
    { "sigma", VKCU_KEY_FLOAT, "5", 0.5, 50, NULL,
      "noise standard deviation in 8-bit code values (scaled for 10-bit)" },
    { "planes", VKCU_KEY_ENUM, "all", 0, 0, "all|luma|chroma", "which planes to filter" },
    { "spatial", VKCU_KEY_FLOAT, "1", 0, 4, NULL, "tnr: spatial strength multiplier (0: none)" },
    { "temporal", VKCU_KEY_FLOAT, "1", 0, 4, NULL, "tnr: temporal strength multiplier (0: none)" },
    { "patch", VKCU_KEY_INT, "2", 1, 4, NULL, "nlm: patch radius (patch is 2r+1 square)" },
    { "search", VKCU_KEY_INT, "5", 1, 15, NULL, "nlm: search radius (window is 2r+1 square)" },
    { "tradius", VKCU_KEY_INT, "1", 0, 3, NULL, "nlm: temporal radius in frames (0: spatial only)" },
    { "strength", VKCU_KEY_FLOAT, "1", 0.1, 4, NULL, "nlm: multiplier of the weight decay h" },
    { 0 },
};

/* One colour component of one plane. */
typedef struct dn_channel {
    int plane, ncomp, comp; /* comp-th of ncomp interleaved components */
    int bytes, shift;       /* bytes per component sample; value shift in it */
    int w, h;
} dn_channel;

typedef struct denoise_priv {
    int mode;
    int depth, maxval;
    int nb_planes;
    int plane_w[4], plane_h[4], plane_ncomp[4], plane_filter[4];
    int nb_ch;
    dn_channel ch[MAX_CH];
    int bytes;
    dn_tnr_params tp;
    /* nlm */
    int patch, search, tradius, window, pad, nlm_shift;
    uint16_t lut[DN_NLM_LUT];

    /* CPU state */
    AVFrame *prev; /* tnr: previous output */
    int has_prev;
    uint16_t *ring[MAX_WINDOW][MAX_CH]; /* nlm: padded channels of the window */
    AVFrame *ring_props[MAX_WINDOW];
    int64_t nb_in, nb_out;

    /* GPU state */
    int gpu_ready;
    void *gout[2][4];
    size_t gout_pitch[2][4];
    int gcur, g_has_prev;
    uint16_t *gring[MAX_WINDOW][MAX_CH];
    size_t gring_pitch[MAX_CH];
    int64_t gring_pts[MAX_WINDOW], gring_dur[MAX_WINDOW];
    int gring_flags[MAX_WINDOW], gring_repeat[MAX_WINDOW];
    int64_t g_nb_in, g_nb_out;
    void *glut;
} denoise_priv;

static const enum AVPixelFormat supported[] = {
    AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10,
    AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
};

static int slope_for(double threshold)
{
    if (threshold < 1)
        threshold = 1;
    double s = 65536.0 / threshold;
    return s > 65536 ? 65536 : (int)lrint(s);
}

/*
 * Tuning of tnr against the noise level s (sigma at the stream's depth), set
 * on the conformance clips of tests/unit/test_denoise_quality.c (see
 * docs/operators-denoise.md): neighbours more than 6 s away from the sample
 * get no spatial weight; the history weight is 0.85 on static content and
 * falls to 0 when the 3x3 sum of frame differences reaches 20 s (about six
 * times its noise) or the sample differs from the history by 6 s.
 */
static void tnr_setup(denoise_priv *p, double sigma, double spatial, double temporal)
{
    double sd = sigma * (1 << (p->depth - 8));
    p->tp.maxval = p->maxval;
    p->tp.sp_slope = slope_for(6.0 * sd * (spatial > 0 ? spatial : 1));
    p->tp.sp_amount = spatial > 0 ? (int)lrint(fmin(spatial, 1.0) * 256) : 0;
    p->tp.mo_slope = slope_for(20.0 * sd * (temporal > 0 ? temporal : 1));
    p->tp.px_slope = slope_for(6.0 * sd * (temporal > 0 ? temporal : 1));
    p->tp.k_max = temporal > 0 ? (int)lrint(fmin(0.85 * temporal, 0.94) * 256) : 0;
}

/*
 * The nlm weight table: w = exp(-max(d2 - 2 s^2, 0) / h^2) with d2 the mean
 * squared difference per patch sample, h = 0.8 * strength * s (s: sigma at
 * the stream's depth). The table is indexed by SSD >> shift, with the shift
 * chosen so that its 1024 entries span the distances where w is not ~0.
 */
static void nlm_setup(denoise_priv *p, double sigma, double strength)
{
    double sd = sigma * (1 << (p->depth - 8));
    int n = (2 * p->patch + 1) * (2 * p->patch + 1);
    double h = 0.8 * strength * sd;
    double h2 = h * h;
    /* distance per sample where w falls below 1/2 of one weight step */
    double d2_max = 2 * sd * sd + h2 * log(2.0 * DN_NLM_WMAX);
    double ssd_max = d2_max * n;
    int shift = 0;
    while ((ssd_max / (double)(1u << shift)) > DN_NLM_LUT - 1 && shift < 31)
        shift++;
    p->nlm_shift = shift;
    for (int q = 0; q < DN_NLM_LUT; q++) {
        /* centre of the bin; bin 0 starts at 0, where a patch equals itself */
        double ssd = q == 0 ? 0 : ((double)q + 0.5) * (double)(1u << shift);
        double d2 = ssd / n - 2 * sd * sd;
        double w = exp(-(d2 > 0 ? d2 : 0) / h2);
        p->lut[q] = (uint16_t)lrint(w * DN_NLM_WMAX);
    }
}

static int denoise_check(const vkcu_op *op, char *why, size_t whylen)
{
    if (vkcu_op_enum(op, "mode") != MODE_NLM)
        return 0;
    int search = vkcu_op_int(op, "search"), tradius = vkcu_op_int(op, "tradius");
    long cands = (long)(2 * search + 1) * (2 * search + 1) * (2 * tradius + 1);
    if (cands > DN_NLM_MAX_CANDIDATES) {
        snprintf(why, whylen, "search=%d with tradius=%d compares %ld candidates per sample, more than the %d "
                 "supported: lower search or tradius", search, tradius, cands, DN_NLM_MAX_CANDIDATES);
        return -1;
    }
    return 0;
}

static int denoise_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    denoise_priv *p = op->priv;
    int ok = 0;
    for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
        ok |= in->pix_fmt == supported[i];
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->pix_fmt);
    if (!ok || !d) {
        LOGE("denoise: input format %s is not supported (use nv12, p010, yuv420p, yuv420p10, "
             "yuv422p, yuv422p10, yuv444p or yuv444p10; add a convert step before denoise)",
             d ? d->name : "unknown");
        return VKCU_ERR_USAGE;
    }
    if (in->width < 2 || in->height < 2) {
        LOGE("denoise: frame size %dx%d is too small", in->width, in->height);
        return VKCU_ERR_USAGE;
    }
    *out = *in;
    p->mode = vkcu_op_enum(op, "mode");
    p->depth = d->comp[0].depth;
    p->maxval = (1 << p->depth) - 1;
    p->bytes = p->depth > 8 ? 2 : 1;
    p->nb_planes = av_pix_fmt_count_planes(in->pix_fmt);
    int which = vkcu_op_enum(op, "planes");
    for (int pl = 0; pl < p->nb_planes; pl++) {
        int chroma = pl > 0;
        p->plane_w[pl] = chroma ? AV_CEIL_RSHIFT(in->width, d->log2_chroma_w) : in->width;
        p->plane_h[pl] = chroma ? AV_CEIL_RSHIFT(in->height, d->log2_chroma_h) : in->height;
        p->plane_ncomp[pl] = 0;
        p->plane_filter[pl] = which == PLANES_ALL || (which == PLANES_LUMA) == !chroma;
    }
    p->nb_ch = 0;
    for (int c = 0; c < d->nb_components && c < MAX_CH; c++) {
        dn_channel *ch = &p->ch[p->nb_ch++];
        ch->plane = d->comp[c].plane;
        ch->bytes = p->bytes;
        ch->ncomp = d->comp[c].step / p->bytes;
        ch->comp = d->comp[c].offset / p->bytes;
        ch->shift = d->comp[c].shift;
        ch->w = p->plane_w[ch->plane];
        ch->h = p->plane_h[ch->plane];
        p->plane_ncomp[ch->plane] = ch->ncomp;
    }
    double sigma = vkcu_op_float(op, "sigma");
    if (p->mode == MODE_TNR) {
        tnr_setup(p, sigma, vkcu_op_float(op, "spatial"), vkcu_op_float(op, "temporal"));
    } else {
        p->patch = vkcu_op_int(op, "patch");
        p->search = vkcu_op_int(op, "search");
        p->tradius = vkcu_op_int(op, "tradius");
        p->window = 2 * p->tradius + 1;
        p->pad = p->patch + p->search;
        char why[256];
        if (denoise_check(op, why, sizeof(why)) < 0) { /* chain parsing refused it already; the kernels rely on it */
            LOGE("denoise: %s", why);
            return VKCU_ERR_USAGE;
        }
        nlm_setup(p, sigma, vkcu_op_float(op, "strength"));
    }
    return 0;
}

/* ---- sample access on AVFrames ---- */

static inline int ch_get(const dn_channel *ch, const uint8_t *row, int x)
{
    if (ch->bytes == 1)
        return row[x * ch->ncomp + ch->comp];
    return ((const uint16_t *)row)[x * ch->ncomp + ch->comp] >> ch->shift;
}

static inline void ch_put(const dn_channel *ch, uint8_t *row, int x, int v)
{
    if (ch->bytes == 1)
        row[x * ch->ncomp + ch->comp] = (uint8_t)v;
    else
        ((uint16_t *)row)[x * ch->ncomp + ch->comp] = (uint16_t)(v << ch->shift);
}

static void copy_channel(const dn_channel *ch, const AVFrame *src, AVFrame *dst, int y0, int y1)
{
    for (int y = y0; y < y1; y++) {
        const uint8_t *s = src->data[ch->plane] + (ptrdiff_t)y * src->linesize[ch->plane];
        uint8_t *o = dst->data[ch->plane] + (ptrdiff_t)y * dst->linesize[ch->plane];
        for (int x = 0; x < ch->w; x++)
            ch_put(ch, o, x, ch_get(ch, s, x));
    }
}

/* ---- tnr on the CPU ---- */

typedef struct tnr_job {
    const denoise_priv *p;
    const dn_channel *ch;
    const AVFrame *in, *prev;
    AVFrame *out;
    int has_prev;
    int *failed;
} tnr_job;

static void tnr_rows(void *ctx, int y0, int y1)
{
    const tnr_job *j = ctx;
    const dn_channel *ch = j->ch;
    int pl = ch->plane, w = ch->w;
    /* three rows of the current frame and of the history, unpacked once per
     * output row with one replicated sample on each side */
    int *line = malloc(sizeof(int) * 6 * (size_t)(w + 2));
    if (!line) {
        j->failed[0] = 1;
        return;
    }
    for (int y = y0; y < y1; y++) {
        for (int r = 0; r < 3; r++) {
            int yy = vkcu_clampi(y + r - 1, 0, ch->h - 1);
            const uint8_t *crow = j->in->data[pl] + (ptrdiff_t)yy * j->in->linesize[pl];
            int *cl = line + (size_t)r * (w + 2), *plin = line + (size_t)(3 + r) * (w + 2);
            for (int x = 0; x < w; x++)
                cl[x + 1] = ch_get(ch, crow, x);
            cl[0] = cl[1];
            cl[w + 1] = cl[w];
            if (j->has_prev) {
                const uint8_t *prow = j->prev->data[pl] + (ptrdiff_t)yy * j->prev->linesize[pl];
                for (int x = 0; x < w; x++)
                    plin[x + 1] = ch_get(ch, prow, x);
                plin[0] = plin[1];
                plin[w + 1] = plin[w];
            }
        }
        uint8_t *orow = j->out->data[pl] + (ptrdiff_t)y * j->out->linesize[pl];
        for (int x = 0; x < w; x++) {
            int cur[9], prev[9] = { 0 };
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    cur[r * 3 + c] = line[(size_t)r * (w + 2) + x + c];
                    if (j->has_prev)
                        prev[r * 3 + c] = line[(size_t)(3 + r) * (w + 2) + x + c];
                }
            ch_put(ch, orow, x, dn_tnr_sample(cur, prev, j->has_prev, &j->p->tp));
        }
    }
    free(line);
}

static int tnr_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    denoise_priv *p = op->priv;
    int ret;
    if (!in)
        return AVERROR_EOF;
    if (!p->prev) {
        p->prev = av_frame_alloc();
        if (!p->prev)
            return AVERROR(ENOMEM);
        p->prev->format = in->format;
        p->prev->width = in->width;
        p->prev->height = in->height;
        if ((ret = av_frame_get_buffer(p->prev, 0)) < 0)
            return ret;
    }
    for (int c = 0; c < p->nb_ch; c++) {
        const dn_channel *ch = &p->ch[c];
        if (!p->plane_filter[ch->plane]) {
            copy_channel(ch, in, out, 0, ch->h);
            continue;
        }
        int failed = 0;
        tnr_job job = { p, ch, in, p->prev, out, p->has_prev, &failed };
        vkcu_parallel_rows(op->threads, ch->h, tnr_rows, &job);
        if (failed)
            return AVERROR(ENOMEM);
    }
    if ((ret = av_frame_copy(p->prev, out)) < 0)
        return ret;
    p->has_prev = 1;
    return av_frame_copy_props(out, in);
}

/* ---- nlm on the CPU ---- */

static size_t ring_stride(const denoise_priv *p, const dn_channel *ch)
{
    return (size_t)ch->w + 2 * p->pad;
}

/* Stores one channel of `in` with edge replication into a padded plane. */
static void nlm_ingest(const denoise_priv *p, const dn_channel *ch, const AVFrame *in, uint16_t *dst)
{
    size_t stride = ring_stride(p, ch);
    int pad = p->pad;
    for (int y = -pad; y < ch->h + pad; y++) {
        int yy = vkcu_clampi(y, 0, ch->h - 1);
        const uint8_t *s = in->data[ch->plane] + (ptrdiff_t)yy * in->linesize[ch->plane];
        uint16_t *o = dst + (size_t)(y + pad) * stride;
        for (int x = -pad; x < ch->w + pad; x++)
            o[x + pad] = (uint16_t)ch_get(ch, s, vkcu_clampi(x, 0, ch->w - 1));
    }
}

typedef struct nlm_job {
    const denoise_priv *p;
    const dn_channel *ch;
    const uint16_t *frame[MAX_WINDOW];
    int nb_frames, cur;
    AVFrame *out;
    int failed;
} nlm_job;

/*
 * Rows [y0, y1) of one channel: for each candidate frame and offset, the
 * patch SSD of every sample comes from running sums (vertical over rows per
 * column, then horizontal along the row), so each offset costs a few
 * operations per sample whatever the patch size. All sums are exact
 * integers, so the order differs from the GPU's without changing a bit.
 */
static void nlm_rows(void *ctx, int y0, int y1)
{
    nlm_job *j = ctx;
    const denoise_priv *p = j->p;
    const dn_channel *ch = j->ch;
    int w = ch->w, P = p->patch, R = p->search, pad = p->pad;
    size_t stride = ring_stride(p, ch);
    int bh = y1 - y0;
    if (bh <= 0)
        return;
    uint32_t *wsum = calloc((size_t)w * bh, sizeof(*wsum));
    uint32_t *vsum = calloc((size_t)w * bh, sizeof(*vsum));
    uint32_t *cs = calloc((size_t)w + 2 * P, sizeof(*cs));
    if (!wsum || !vsum || !cs) {
        j->failed = 1;
        goto done;
    }
    const uint16_t *I = j->frame[j->cur] + (size_t)pad * stride + pad; /* I[y*stride + x] */
    for (int f = 0; f < j->nb_frames; f++) {
        const uint16_t *Jf = j->frame[f] + (size_t)pad * stride + pad;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++) {
                const uint16_t *J = Jf + (ptrdiff_t)dy * (ptrdiff_t)stride + dx;
                /* column sums of D over rows y0-P..y0+P, columns -P..w+P-1 */
                for (int x = -P; x < w + P; x++) {
                    uint32_t s = 0;
                    for (int v = -P; v <= P; v++) {
                        ptrdiff_t o = (ptrdiff_t)(y0 + v) * (ptrdiff_t)stride + x;
                        int d = (int)I[o] - (int)J[o];
                        s += (uint32_t)(d * d);
                    }
                    cs[x + P] = s;
                }
                for (int y = y0; y < y1; y++) {
                    if (y > y0) {
                        const uint16_t *Ia = I + (ptrdiff_t)(y + P) * (ptrdiff_t)stride;
                        const uint16_t *Ja = J + (ptrdiff_t)(y + P) * (ptrdiff_t)stride;
                        const uint16_t *Ir = I + (ptrdiff_t)(y - P - 1) * (ptrdiff_t)stride;
                        const uint16_t *Jr = J + (ptrdiff_t)(y - P - 1) * (ptrdiff_t)stride;
                        for (int x = -P; x < w + P; x++) {
                            int da = (int)Ia[x] - (int)Ja[x];
                            int dr = (int)Ir[x] - (int)Jr[x];
                            cs[x + P] += (uint32_t)(da * da) - (uint32_t)(dr * dr);
                        }
                    }
                    uint32_t s = 0;
                    for (int i = 0; i < 2 * P + 1; i++)
                        s += cs[i];
                    const uint16_t *Jc = J + (ptrdiff_t)y * (ptrdiff_t)stride;
                    uint32_t *ws = wsum + (size_t)(y - y0) * w, *vs = vsum + (size_t)(y - y0) * w;
                    for (int x = 0; x < w; x++) {
                        if (x > 0)
                            s += cs[x + 2 * P] - cs[x - 1];
                        uint32_t wt = (uint32_t)dn_nlm_weight(p->lut, p->nlm_shift, s);
                        ws[x] += wt;
                        vs[x] += wt * Jc[x];
                    }
                }
            }
    }
    for (int y = y0; y < y1; y++) {
        uint8_t *o = j->out->data[ch->plane] + (ptrdiff_t)y * j->out->linesize[ch->plane];
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)(y - y0) * w + x;
            ch_put(ch, o, x, vkcu_clampi(dn_nlm_finish(vsum[i], wsum[i]), 0, p->maxval));
        }
    }
done:
    free(wsum);
    free(vsum);
    free(cs);
}

static int nlm_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    denoise_priv *p = op->priv;
    int W = p->window, T = p->tradius;
    if (in) {
        int slot = (int)(p->nb_in % W);
        for (int c = 0; c < p->nb_ch; c++) {
            const dn_channel *ch = &p->ch[c];
            if (!p->ring[slot][c]) {
                p->ring[slot][c] = av_malloc(ring_stride(p, ch) * (ch->h + 2 * p->pad) * sizeof(uint16_t));
                if (!p->ring[slot][c])
                    return AVERROR(ENOMEM);
            }
            nlm_ingest(p, ch, in, p->ring[slot][c]);
        }
        if (!p->ring_props[slot] && !(p->ring_props[slot] = av_frame_alloc()))
            return AVERROR(ENOMEM);
        int ret = av_frame_copy_props(p->ring_props[slot], in);
        if (ret < 0)
            return ret;
        p->nb_in++;
        if (p->nb_in - 1 - p->nb_out < T)
            return AVERROR(EAGAIN);
    } else if (p->nb_out >= p->nb_in) {
        return AVERROR_EOF;
    }
    int64_t o = p->nb_out;
    int64_t first = o - T < 0 ? 0 : o - T;
    int64_t last = o + T > p->nb_in - 1 ? p->nb_in - 1 : o + T;
    nlm_job job = { .p = p, .out = out };
    for (int c = 0; c < p->nb_ch; c++) {
        const dn_channel *ch = &p->ch[c];
        job.ch = ch;
        job.nb_frames = 0;
        for (int64_t f = first; f <= last; f++) {
            if (f == o)
                job.cur = job.nb_frames;
            job.frame[job.nb_frames++] = p->ring[f % W][c];
        }
        if (!p->plane_filter[ch->plane]) {
            /* pass the channel through from the padded copy */
            size_t stride = ring_stride(p, ch);
            const uint16_t *s = job.frame[job.cur] + (size_t)p->pad * stride + p->pad;
            for (int y = 0; y < ch->h; y++) {
                uint8_t *row = out->data[ch->plane] + (ptrdiff_t)y * out->linesize[ch->plane];
                for (int x = 0; x < ch->w; x++)
                    ch_put(ch, row, x, s[(size_t)y * stride + x]);
            }
            continue;
        }
        vkcu_parallel_rows(op->threads, ch->h, nlm_rows, &job);
        if (job.failed)
            return AVERROR(ENOMEM);
    }
    int ret = av_frame_copy_props(out, p->ring_props[o % W]);
    if (ret < 0)
        return ret;
    p->nb_out++;
    return 0;
}

static int denoise_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    denoise_priv *p = op->priv;
    if (in && (in->format != op->in.pix_fmt || in->width != op->in.width || in->height != op->in.height)) {
        LOGE("denoise: frame format or size changed mid-stream (%dx%d), which is not supported",
             in->width, in->height);
        return VKCU_ERR_INPUT;
    }
    return p->mode == MODE_TNR ? tnr_run_cpu(op, in, out) : nlm_run_cpu(op, in, out);
}

/* ---- GPU ---- */

static int denoise_init_gpu(vkcu_op *op)
{
    denoise_priv *p = op->priv;
    int ret = 0;
    if (p->gpu_ready)
        return 0;
    int sets = p->mode == MODE_TNR ? 2 : 1;
    for (int s = 0; s < sets; s++)
        for (int pl = 0; pl < p->nb_planes; pl++) {
            size_t wb = (size_t)p->plane_w[pl] * p->plane_ncomp[pl] * p->bytes;
            if ((ret = vkcu_dn_gpu_alloc_pitch(&p->gout[s][pl], &p->gout_pitch[s][pl], wb, p->plane_h[pl])) < 0)
                return ret;
        }
    if (p->mode == MODE_NLM) {
        for (int c = 0; c < p->nb_ch; c++) {
            const dn_channel *ch = &p->ch[c];
            for (int s = 0; s < p->window; s++) {
                void *ptr;
                size_t wb = ((size_t)ch->w + 2 * p->pad) * sizeof(uint16_t);
                if ((ret = vkcu_dn_gpu_alloc_pitch(&ptr, &p->gring_pitch[c], wb, ch->h + 2 * p->pad)) < 0)
                    return ret;
                p->gring[s][c] = ptr;
            }
        }
        size_t pitch;
        if ((ret = vkcu_dn_gpu_alloc_pitch(&p->glut, &pitch, sizeof(p->lut), 1)) < 0)
            return ret;
        if ((ret = vkcu_dn_gpu_upload(p->glut, p->lut, sizeof(p->lut), NULL)) < 0)
            return ret;
    }
    p->gpu_ready = 1;
    return 0;
}

static void gpu_out_frame(const vkcu_op *op, int set, vkcu_gpu_frame *out)
{
    const denoise_priv *p = op->priv;
    memset(out, 0, sizeof(*out));
    out->fmt = op->out;
    out->nb_planes = p->nb_planes;
    for (int pl = 0; pl < p->nb_planes; pl++) {
        out->plane[pl].ptr = p->gout[set][pl];
        out->plane[pl].pitch = p->gout_pitch[set][pl];
        out->plane[pl].width = p->plane_w[pl];
        out->plane[pl].height = p->plane_h[pl];
    }
}

static int tnr_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    denoise_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    int set = p->gcur;
    vkcu_gpu_frame prev;
    gpu_out_frame(op, set ^ 1, &prev);
    gpu_out_frame(op, set, out);
    for (int pl = 0; pl < p->nb_planes; pl++) {
        dn_tnr_params tp = p->tp;
        int has_prev = p->g_has_prev;
        if (!p->plane_filter[pl]) {
            /* pass through: no spatial term and no history */
            tp.sp_amount = 0;
            has_prev = 0;
        }
        int ret = vkcu_dn_gpu_tnr(&in->plane[pl], has_prev ? &prev.plane[pl] : NULL, &out->plane[pl],
                             p->plane_ncomp[pl], p->bytes, p->ch[0].shift, &tp, stream);
        if (ret < 0)
            return ret;
    }
    out->pts = in->pts;
    out->duration = in->duration;
    out->flags = in->flags; /* field order, for a deinterlace later in the chain */
    out->repeat_pict = in->repeat_pict;
    p->gcur ^= 1;
    p->g_has_prev = 1;
    return 0;
}

static int nlm_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    denoise_priv *p = op->priv;
    int W = p->window, T = p->tradius, ret;
    if (in) {
        int slot = (int)(p->g_nb_in % W);
        for (int c = 0; c < p->nb_ch; c++) {
            const dn_channel *ch = &p->ch[c];
            if ((ret = vkcu_dn_gpu_nlm_ingest(&in->plane[ch->plane], ch->ncomp, ch->comp, ch->bytes, ch->shift,
                                         p->gring[slot][c], p->gring_pitch[c], p->pad, stream)) < 0)
                return ret;
        }
        p->gring_pts[slot] = in->pts;
        p->gring_dur[slot] = in->duration;
        p->gring_flags[slot] = in->flags;
        p->gring_repeat[slot] = in->repeat_pict;
        p->g_nb_in++;
        if (p->g_nb_in - 1 - p->g_nb_out < T)
            return AVERROR(EAGAIN);
    } else if (p->g_nb_out >= p->g_nb_in) {
        return AVERROR_EOF;
    }
    int64_t o = p->g_nb_out;
    int64_t first = o - T < 0 ? 0 : o - T;
    int64_t last = o + T > p->g_nb_in - 1 ? p->g_nb_in - 1 : o + T;
    gpu_out_frame(op, 0, out);
    for (int c = 0; c < p->nb_ch; c++) {
        const dn_channel *ch = &p->ch[c];
        dn_nlm_gpu_args a = { .pitch = p->gring_pitch[c], .width = ch->w, .height = ch->h, .pad = p->pad,
                              .patch = p->patch, .search = p->search, .shift = p->nlm_shift, .lut = p->glut };
        for (int64_t f = first; f <= last; f++) {
            if (f == o)
                a.cur = a.nb_frames;
            a.frame[a.nb_frames++] = p->gring[f % W][c];
        }
        if (!p->plane_filter[ch->plane]) {
            /* pass through: only the frame itself, with no other candidate */
            a.frame[0] = a.frame[a.cur];
            a.nb_frames = 1;
            a.cur = 0;
            a.search = 0;
            a.patch = 0;
        }
        if ((ret = vkcu_dn_gpu_nlm(&a, &out->plane[ch->plane], ch->ncomp, ch->comp, ch->bytes, ch->shift, stream)) < 0)
            return ret;
    }
    out->pts = p->gring_pts[o % W];
    out->duration = p->gring_dur[o % W];
    out->flags = p->gring_flags[o % W]; /* field order: the CPU side's av_frame_copy_props */
    out->repeat_pict = p->gring_repeat[o % W];
    p->g_nb_out++;
    return 0;
}

static int denoise_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    denoise_priv *p = op->priv;
    int ret = denoise_init_gpu(op);
    if (ret < 0)
        return ret;
    if (in && (in->fmt.pix_fmt != op->in.pix_fmt || in->fmt.width != op->in.width ||
               in->fmt.height != op->in.height)) {
        LOGE("denoise: GPU frame format or size changed mid-stream (%dx%d), which is not supported",
             in->fmt.width, in->fmt.height);
        return VKCU_ERR_INPUT;
    }
    return p->mode == MODE_TNR ? tnr_run_gpu(op, in, out, stream) : nlm_run_gpu(op, in, out, stream);
}

static void denoise_uninit(vkcu_op *op)
{
    denoise_priv *p = op->priv;
    if (!p)
        return;
    av_frame_free(&p->prev);
    for (int s = 0; s < MAX_WINDOW; s++) {
        av_frame_free(&p->ring_props[s]);
        for (int c = 0; c < MAX_CH; c++) {
            av_freep(&p->ring[s][c]);
            if (p->gring[s][c]) {
                void *ptr = p->gring[s][c];
                vkcu_dn_gpu_free(&ptr);
                p->gring[s][c] = NULL;
            }
        }
    }
    for (int s = 0; s < 2; s++)
        for (int pl = 0; pl < 4; pl++)
            vkcu_dn_gpu_free(&p->gout[s][pl]);
    vkcu_dn_gpu_free(&p->glut);
    p->gpu_ready = 0;
}

const vkcu_op_class vkcu_op_denoise = {
    .name = "denoise",
    .help = "denoise: mode=tnr (temporal recursive, fast) or mode=nlm (non-local means); sigma in 8-bit code values",
    .accuracy = "CPU and CUDA bytes identical (all-integer); PSNR against ffmpeg's hqdn3d/nlmeans in docs/operators-denoise.md",
    .keys = denoise_keys,
    .priv_size = sizeof(denoise_priv),
    .check = denoise_check,
    .init = denoise_init,
    .run_cpu = denoise_run_cpu,
    .init_gpu = denoise_init_gpu,
    .run_gpu = denoise_run_gpu,
    .uninit = denoise_uninit,
};

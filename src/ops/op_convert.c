/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `convert` (colour conversion) and `tonemap` (HDR to SDR) operators:
 * keys, colour description handling, the fixed-point coefficient builder,
 * and the CPU reference backend. Per-pixel math: kernels/convert_math.h and
 * kernels/tonemap_math.h; CUDA: kernels/convert.cu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "kernels/convert_gpu.h"
#include "kernels/convert_math.h"
#include "util/log.h"
#include "op.h"
#include "kernels/tonemap_math.h"

/* ---- coefficients ---- */

void vkcu_cv_matrix_kr_kb(enum cv_matrix m, double *kr, double *kb)
{
    switch (m) {
    case CV_MATRIX_BT601:
        *kr = 0.299, *kb = 0.114;
        break;
    case CV_MATRIX_BT2020:
        *kr = 0.2627, *kb = 0.0593;
        break;
    default:
        *kr = 0.2126, *kb = 0.0722;
        break;
    }
}

/* Code value offsets and scales of one side: normalised = (code - off) / scale. */
static void side_scale(const cv_side *s, double off[3], double scale[3])
{
    if (s->depth == 0) { /* half float: already normalised */
        for (int i = 0; i < 3; i++)
            off[i] = 0.0, scale[i] = 1.0;
        return;
    }
    double max = (double)((1 << s->depth) - 1), unit = (double)(1 << s->depth) / 256.0;
    if (s->matrix == CV_MATRIX_RGB) {
        for (int i = 0; i < 3; i++)
            off[i] = 0.0, scale[i] = max;
    } else if (s->full_range) {
        off[0] = 0.0, scale[0] = max;
        off[1] = off[2] = (double)(1 << (s->depth - 1));
        scale[1] = scale[2] = max;
    } else {
        off[0] = 16.0 * unit, scale[0] = 219.0 * unit;
        off[1] = off[2] = 128.0 * unit;
        scale[1] = scale[2] = 224.0 * unit;
    }
}

static void yuv_to_rgb(enum cv_matrix mx, double a[3][3])
{
    double kr, kb;
    vkcu_cv_matrix_kr_kb(mx, &kr, &kb);
    double kg = 1.0 - kr - kb;
    double m[3][3] = {
        { 1.0, 0.0, 2.0 * (1.0 - kr) },
        { 1.0, -2.0 * (1.0 - kb) * kb / kg, -2.0 * (1.0 - kr) * kr / kg },
        { 1.0, 2.0 * (1.0 - kb), 0.0 },
    };
    memcpy(a, m, sizeof(m));
}

static void rgb_to_yuv(enum cv_matrix mx, double a[3][3])
{
    double kr, kb;
    vkcu_cv_matrix_kr_kb(mx, &kr, &kb);
    double kg = 1.0 - kr - kb;
    double m[3][3] = {
        { kr, kg, kb },
        { -kr / (2.0 * (1.0 - kb)), -kg / (2.0 * (1.0 - kb)), 0.5 },
        { 0.5, -kg / (2.0 * (1.0 - kr)), -kb / (2.0 * (1.0 - kr)) },
    };
    memcpy(a, m, sizeof(m));
}

void vkcu_cv_affine_real(const cv_side *in, const cv_side *out, double m[3][3], double off[3])
{
    double ioff[3], iscale[3], ooff[3], oscale[3], a[3][3];
    side_scale(in, ioff, iscale);
    side_scale(out, ooff, oscale);
    int same = in->matrix == out->matrix;
    if (same || (in->matrix == CV_MATRIX_RGB) != (out->matrix == CV_MATRIX_RGB)) {
        /* identity, YUV->RGB or RGB->YUV */
        double id[3][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
        if (same)
            memcpy(a, id, sizeof(a));
        else if (out->matrix == CV_MATRIX_RGB)
            yuv_to_rgb(in->matrix, a);
        else
            rgb_to_yuv(out->matrix, a);
    } else { /* YUV -> YUV with another matrix, through RGB */
        double p[3][3], q[3][3];
        yuv_to_rgb(in->matrix, p);
        rgb_to_yuv(out->matrix, q);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                a[r][c] = q[r][0] * p[0][c] + q[r][1] * p[1][c] + q[r][2] * p[2][c];
    }
    for (int r = 0; r < 3; r++) {
        off[r] = ooff[r];
        for (int c = 0; c < 3; c++) {
            m[r][c] = oscale[r] * a[r][c] / iscale[c];
            off[r] -= m[r][c] * ioff[c];
        }
    }
}

void vkcu_cv_affine_build(cv_affine *a, const cv_side *in, const cv_side *out)
{
    double m[3][3], off[3], maxc = 0.0;
    vkcu_cv_affine_real(in, out, m, off);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            maxc = fmax(maxc, fabs(m[r][c]) / (1 << CV_FRAC));
    int shift = 50;
    while (shift > CV_FRAC + 1 && ldexp(maxc, shift) >= 1073741824.0)
        shift--;
    memset(a, 0, sizeof(*a));
    a->shift = shift;
    a->fscale = (float)ldexp(1.0, -shift);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            a->c[r][c] = (int32_t)llround(ldexp(m[r][c], shift - CV_FRAC));
        a->k[r] = llround(ldexp(off[r], shift)) + (out->depth ? (int64_t)1 << (shift - 1) : 0);
        a->maxv[r] = out->depth ? (1 << out->depth) - 1 : 0;
    }
}

/* ---- formats ---- */

typedef struct fmt_info {
    const char *name; /* format= value, NULL for input-only layouts */
    enum AVPixelFormat pix_fmt;
    cv_layout l;
} fmt_info;

#define YUV(kind, depth, bytes, shift, ssx, ssy) { kind, depth, bytes, shift, ssx, ssy, 3, 0, 0 }
#define RGB(depth, bytes, ncomp, half) { CV_PACKED, depth, bytes, 0, 0, 0, ncomp, half, 1 }

/* Order matches the format= choices. */
static const fmt_info formats[] = {
    { "yuv420p", AV_PIX_FMT_YUV420P, YUV(CV_PLANAR, 8, 1, 0, 1, 1) },
    { "yuv420p10", AV_PIX_FMT_YUV420P10LE, YUV(CV_PLANAR, 10, 2, 0, 1, 1) },
    { "yuv422p", AV_PIX_FMT_YUV422P, YUV(CV_PLANAR, 8, 1, 0, 1, 0) },
    { "yuv422p10", AV_PIX_FMT_YUV422P10LE, YUV(CV_PLANAR, 10, 2, 0, 1, 0) },
    { "yuv444p", AV_PIX_FMT_YUV444P, YUV(CV_PLANAR, 8, 1, 0, 0, 0) },
    { "yuv444p10", AV_PIX_FMT_YUV444P10LE, YUV(CV_PLANAR, 10, 2, 0, 0, 0) },
    { "yuv444p16", AV_PIX_FMT_YUV444P16LE, YUV(CV_PLANAR, 16, 2, 0, 0, 0) },
    { "nv12", AV_PIX_FMT_NV12, YUV(CV_SEMIPLANAR, 8, 1, 0, 1, 1) },
    { "p010", AV_PIX_FMT_P010LE, YUV(CV_SEMIPLANAR, 10, 2, 6, 1, 1) },
    { "rgb24", AV_PIX_FMT_RGB24, RGB(8, 1, 3, 0) },
    { "rgba", AV_PIX_FMT_RGBA, RGB(8, 1, 4, 0) },
    { "rgb48", AV_PIX_FMT_RGB48LE, RGB(16, 2, 3, 0) },
    { "rgba64", AV_PIX_FMT_RGBA64LE, RGB(16, 2, 4, 0) },
    { "rgbaf16", AV_PIX_FMT_RGBAF16LE, RGB(0, 2, 4, 1) },
};
#define FORMAT_CHOICES \
    "yuv420p|yuv420p10|yuv422p|yuv422p10|yuv444p|yuv444p10|yuv444p16|nv12|p010|rgb24|rgba|rgb48|rgba64|rgbaf16"
#define NB_FORMATS ((int)(sizeof(formats) / sizeof(formats[0])))

/* FFmpeg's names of the formats whose vkcu name differs (vkcu prints
 * FFmpeg's: hash headers, `vkcu formats`, errors), taken by format= too. */
static const vkcu_op_alias format_aliases[] = {
    { "format", "yuv420p10le", "yuv420p10" }, { "format", "yuv422p10le", "yuv422p10" },
    { "format", "yuv444p10le", "yuv444p10" }, { "format", "yuv444p16le", "yuv444p16" },
    { "format", "p010le", "p010" },           { "format", "rgb48le", "rgb48" },
    { "format", "rgba64le", "rgba64" },       { "format", "rgbaf16le", "rgbaf16" },
    { 0 },
};

static const fmt_info *fmt_find(enum AVPixelFormat pf)
{
    for (int i = 0; i < NB_FORMATS; i++)
        if (formats[i].pix_fmt == pf)
            return &formats[i];
    return NULL;
}

int vkcu_convert_writes(enum AVPixelFormat pf)
{
    const fmt_info *f = fmt_find(pf);
    return f && f->name;
}

int vkcu_convert_reads(enum AVPixelFormat pf)
{
    const fmt_info *f = fmt_find(pf);
    return f && !f->l.is_rgb && pf != AV_PIX_FMT_YUV444P16LE; /* as common_init takes them */
}

static const char *pf_name(enum AVPixelFormat pf)
{
    const char *n = av_get_pix_fmt_name(pf);
    return n ? n : "none";
}

/* ---- keys ---- */

#define MATRIX_CHOICES "bt601|bt709|bt2020"
#define SITING_CHOICES "left|center|topleft|top|bottomleft|bottom"
static const enum AVChromaLocation siting_loc[] = { AVCHROMA_LOC_LEFT, AVCHROMA_LOC_CENTER, AVCHROMA_LOC_TOPLEFT,
                                                    AVCHROMA_LOC_TOP, AVCHROMA_LOC_BOTTOMLEFT, AVCHROMA_LOC_BOTTOM };
static const enum AVColorSpace matrix_spc[] = { AVCOL_SPC_SMPTE170M, AVCOL_SPC_BT709, AVCOL_SPC_BT2020_NCL };
#define PRIM_CHOICES "bt709|bt2020|bt601|bt470bg"
static const enum AVColorPrimaries prim_val[] = { AVCOL_PRI_BT709, AVCOL_PRI_BT2020, AVCOL_PRI_SMPTE170M, AVCOL_PRI_BT470BG };
#define TRC_CHOICES "bt709|pq|hlg|srgb|bt601"
static const enum AVColorTransferCharacteristic trc_val[] = { AVCOL_TRC_BT709, AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67,
                                                              AVCOL_TRC_IEC61966_2_1, AVCOL_TRC_SMPTE170M };

#define COMMON_KEYS                                                                                                  \
    { "format", VKCU_KEY_ENUM, NULL, 0, 0, FORMAT_CHOICES,                                                           \
      "output layout (default: the input's); FFmpeg's names too (yuv420p10le, p010le, ...)" },                       \
    { "range", VKCU_KEY_ENUM, NULL, 0, 0, "limited|full", "output YUV range (default: the input's; RGB is full)" }, \
    { "chroma_loc", VKCU_KEY_ENUM, NULL, 0, 0, SITING_CHOICES,                                                       \
      "output chroma siting of subsampled outputs (default: the input's)" },                                         \
    { "in_matrix", VKCU_KEY_ENUM, NULL, 0, 0, MATRIX_CHOICES, "input matrix (default: from the stream)" },           \
    { "in_range", VKCU_KEY_ENUM, NULL, 0, 0, "limited|full", "input range (default: from the stream)" },             \
    { "in_chroma_loc", VKCU_KEY_ENUM, NULL, 0, 0, SITING_CHOICES, "input chroma siting (default: from the stream)" }, \
    { "in_primaries", VKCU_KEY_ENUM, NULL, 0, 0, PRIM_CHOICES, "input primaries (default: from the stream)" }

static const vkcu_op_key convert_keys[] = {
    { "matrix", VKCU_KEY_ENUM, NULL, 0, 0, MATRIX_CHOICES, "output YUV matrix (default: the input's)" },
    COMMON_KEYS,
    { "in_transfer", VKCU_KEY_ENUM, NULL, 0, 0, TRC_CHOICES, "input transfer tag (default: from the stream)" },
    { 0 },
};

static const vkcu_op_key tonemap_keys[] = {
    { "matrix", VKCU_KEY_ENUM, "bt709", 0, 0, MATRIX_CHOICES, "output YUV matrix" },
    COMMON_KEYS,
    { "in_transfer", VKCU_KEY_ENUM, NULL, 0, 0, "pq|hlg", "input transfer (default: from the stream)" },
    { "curve", VKCU_KEY_ENUM, "bt2390", 0, 0, "bt2390|hable|reinhard|clip", "tone curve" },
    { "peak", VKCU_KEY_FLOAT, "100", 10, 10000, NULL, "target (SDR) peak in cd/m2" },
    { "src_peak", VKCU_KEY_FLOAT, NULL, 10, 10000, NULL,
      "source peak in cd/m2 (default: MaxCLL, else mastering peak, else 1000; HLG: display peak 1000)" },
    { "sdr_input", VKCU_KEY_ENUM, "fail", 0, 0, "fail|convert",
      "input not tagged PQ or HLG (and no in_transfer): refused, or converted as convert does, without tone mapping" },
    { 0 },
};

/* ---- operator state ---- */

typedef struct convert_priv {
    cv_desc desc;
    tm_params tmp;
    float *tm_block; /* host tables (tonemap) */
    tm_tables tm;
    cv_gpu *gpu;
} convert_priv;

static int fail_usage(const vkcu_op *op, const char *key, const char *fmt, const char *detail)
{
    LOGE("%s: %s%s%s", op->cls->name, key ? key : "", key ? ": " : "", fmt);
    if (detail)
        LOGE("%s: %s", op->cls->name, detail);
    return VKCU_ERR_USAGE;
}

static int siting_offsets(enum AVChromaLocation loc, int *ox, int *oy)
{
    switch (loc) {
    case AVCHROMA_LOC_UNSPECIFIED:
    case AVCHROMA_LOC_LEFT: *ox = CV_OFF_COSITED, *oy = CV_OFF_CENTER; return 0;
    case AVCHROMA_LOC_CENTER: *ox = CV_OFF_CENTER, *oy = CV_OFF_CENTER; return 0;
    case AVCHROMA_LOC_TOPLEFT: *ox = CV_OFF_COSITED, *oy = CV_OFF_COSITED; return 0;
    case AVCHROMA_LOC_TOP: *ox = CV_OFF_CENTER, *oy = CV_OFF_COSITED; return 0;
    case AVCHROMA_LOC_BOTTOMLEFT: *ox = CV_OFF_COSITED, *oy = CV_OFF_ODD; return 0;
    case AVCHROMA_LOC_BOTTOM: *ox = CV_OFF_CENTER, *oy = CV_OFF_ODD; return 0;
    default: return -1;
    }
}

static int matrix_from_spc(enum AVColorSpace spc, int height, int tonemap, enum cv_matrix *m)
{
    switch (spc) {
    case AVCOL_SPC_BT709: *m = CV_MATRIX_BT709; return 0;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
    case AVCOL_SPC_SMPTE240M: /* close enough to be what such streams mean */
        *m = spc == AVCOL_SPC_SMPTE240M ? CV_MATRIX_BT709 : CV_MATRIX_BT601;
        return 0;
    case AVCOL_SPC_BT2020_NCL: *m = CV_MATRIX_BT2020; return 0;
    case AVCOL_SPC_UNSPECIFIED:
        /* the usual guess of players: HD and up is BT.709, SD is BT.601 */
        *m = tonemap ? CV_MATRIX_BT2020 : height > 576 ? CV_MATRIX_BT709 : CV_MATRIX_BT601;
        return 0;
    default: return -1;
    }
}

/* The input's side (matrix, range, depth) and chroma siting, from the keys
 * in_* or the stream's tags. */
static int input_side(vkcu_op *op, const vkcu_video_format *in, const fmt_info *fi, int tonemap, cv_side *is)
{
    convert_priv *p = op->priv;
    cv_desc *d = &p->desc;
    *is = (cv_side){ CV_MATRIX_BT709, 0, fi->l.depth };
    int k = vkcu_op_enum(op, "in_matrix");
    if (k >= 0)
        is->matrix = (enum cv_matrix)k;
    else if (matrix_from_spc(in->matrix, in->height, tonemap, &is->matrix) < 0)
        return fail_usage(op, NULL, av_color_space_name(in->matrix) ? av_color_space_name(in->matrix) : "matrix",
                          "the stream's matrix is not supported: set in_matrix=bt601|bt709|bt2020");
    k = vkcu_op_enum(op, "in_range");
    is->full_range = k >= 0 ? k == 1 : in->range == AVCOL_RANGE_JPEG;
    k = vkcu_op_enum(op, "in_chroma_loc");
    if (siting_offsets(k >= 0 ? siting_loc[k] : in->chroma_loc, &d->off_in_x, &d->off_in_y) < 0)
        return fail_usage(op, NULL, "the stream's chroma location is not supported", "set in_chroma_loc=");
    return 0;
}

/* The output's side and chroma siting (out_loc): the keys', else the
 * input's; RGB formats are full-range RGB. */
static int output_side(vkcu_op *op, const vkcu_video_format *in, const fmt_info *fo, const cv_side *is, cv_side *os,
                       enum AVChromaLocation *out_loc)
{
    convert_priv *p = op->priv;
    cv_desc *d = &p->desc;
    int k = vkcu_op_enum(op, "matrix");
    os->matrix = k >= 0 ? (enum cv_matrix)k : is->matrix;
    k = vkcu_op_enum(op, "range");
    os->full_range = k >= 0 ? k == 1 : is->full_range;
    os->depth = fo->l.depth;
    *out_loc = in->chroma_loc == AVCHROMA_LOC_UNSPECIFIED ? AVCHROMA_LOC_LEFT : in->chroma_loc;
    k = vkcu_op_enum(op, "in_chroma_loc");
    if (k >= 0)
        *out_loc = siting_loc[k];
    k = vkcu_op_enum(op, "chroma_loc");
    if (k >= 0)
        *out_loc = siting_loc[k];
    if (siting_offsets(*out_loc, &d->off_out_x, &d->off_out_y) < 0)
        return fail_usage(op, "chroma_loc", "unsupported output siting", NULL);
    if (fo->l.is_rgb) {
        os->matrix = CV_MATRIX_RGB;
        os->full_range = 1;
    }
    return 0;
}

/* tonemap: input -> 16-bit R'G'B' (BT.2020), tables, 16-bit BT.709 R'G'B' -> output;
 * the transfer and peaks from the keys or the stream's tags and light levels. */
static int tonemap_setup(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out, const cv_side *is,
                         const cv_side *os)
{
    convert_priv *p = op->priv;
    cv_desc *d = &p->desc;
    tm_params *t = &p->tmp;
    int k = vkcu_op_enum(op, "in_transfer");
    if (k >= 0)
        t->transfer = k == 1 ? TM_HLG : TM_PQ;
    else if (in->transfer == AVCOL_TRC_SMPTE2084)
        t->transfer = TM_PQ;
    else if (in->transfer == AVCOL_TRC_ARIB_STD_B67)
        t->transfer = TM_HLG;
    else
        return fail_usage(op, NULL, "input is not tagged PQ or HLG",
                          "set in_transfer=pq|hlg if it is HDR; for SDR input use convert, or sdr_input=convert");
    if (k < 0 && in->primaries != AVCOL_PRI_BT2020 && in->primaries != AVCOL_PRI_UNSPECIFIED && vkcu_op_enum(op, "in_primaries") < 0)
        LOGW("tonemap: input primaries are %s, treating them as BT.2020", av_color_primaries_name(in->primaries));
    t->curve = vkcu_op_enum(op, "curve");
    t->peak = vkcu_op_float(op, "peak");
    if (vkcu_op_is_set(op, "src_peak"))
        t->src_peak = vkcu_op_float(op, "src_peak");
    else if (t->transfer == TM_PQ && in->has_cll && in->cll.MaxCLL > 0)
        t->src_peak = in->cll.MaxCLL;
    else if (t->transfer == TM_PQ && in->has_mastering && in->mastering.has_luminance &&
             av_q2d(in->mastering.max_luminance) > 0)
        t->src_peak = av_q2d(in->mastering.max_luminance);
    else
        t->src_peak = 1000.0;
    if (t->src_peak < 10.0)
        t->src_peak = 10.0;
    free(p->tm_block);
    p->tm_block = vkcu_tm_tables_build(t, &p->tm);
    if (!p->tm_block)
        return AVERROR(ENOMEM);
    cv_side rgb16 = { CV_MATRIX_RGB, 1, 16 };
    vkcu_cv_affine_build(&d->aff, is, &rgb16);
    vkcu_cv_affine_build(&d->aff_out, &rgb16, os);
    out->primaries = AVCOL_PRI_BT709;
    out->transfer = AVCOL_TRC_BT709;
    out->has_mastering = 0;
    out->has_cll = 0;
    memset(&out->mastering, 0, sizeof(out->mastering));
    memset(&out->cll, 0, sizeof(out->cll));
    LOGV("tonemap: %s, src_peak %.0f -> peak %.0f cd/m2", t->transfer == TM_HLG ? "HLG" : "PQ", t->src_peak, t->peak);
    return 0;
}

static int common_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out, int tonemap)
{
    convert_priv *p = op->priv;
    cv_desc *d = &p->desc;
    memset(d, 0, sizeof(*d));
    const fmt_info *fi = fmt_find(in->pix_fmt);
    if (!fi || in->pix_fmt == AV_PIX_FMT_YUV444P16LE || fi->l.is_rgb)
        return fail_usage(op, NULL, "unsupported input layout",
                          "inputs are nv12, p010, yuv420p, yuv420p10, yuv422p, yuv422p10, yuv444p, yuv444p10");
    if (in->width < 1 || in->height < 1)
        return fail_usage(op, NULL, "empty picture", NULL);
    const fmt_info *fo = fi;
    int fidx = vkcu_op_enum(op, "format");
    if (fidx >= 0)
        fo = &formats[fidx];
    if (tonemap && vkcu_op_enum(op, "in_transfer") < 0 && in->transfer != AVCOL_TRC_SMPTE2084 &&
        in->transfer != AVCOL_TRC_ARIB_STD_B67 && vkcu_op_enum(op, "sdr_input") == 1) {
        /* SDR input of a chain made for both (the web presets): convert's work alone */
        LOGV("tonemap: the input is SDR (transfer %s): converted without tone mapping",
             av_color_transfer_name(in->transfer) ? av_color_transfer_name(in->transfer) : "unknown");
        tonemap = 0;
    }
    d->in = fi->l;
    d->out = fo->l;
    d->width = in->width;
    d->height = in->height;
    d->tonemap = tonemap;

    cv_side is, os;
    enum AVChromaLocation out_loc;
    int ret;
    if ((ret = input_side(op, in, fi, tonemap, &is)) < 0)
        return ret;
    if ((ret = output_side(op, in, fo, &is, &os, &out_loc)) < 0)
        return ret;

    *out = *in;
    out->pix_fmt = fo->pix_fmt;
    out->matrix = os.matrix == CV_MATRIX_RGB ? AVCOL_SPC_RGB : matrix_spc[os.matrix];
    out->range = os.full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    out->chroma_loc = fo->l.ssx || fo->l.ssy ? out_loc : AVCHROMA_LOC_UNSPECIFIED;
    int k = vkcu_op_enum(op, "in_primaries");
    if (k >= 0)
        out->primaries = prim_val[k];

    if (!tonemap) {
        k = vkcu_op_enum(op, "in_transfer");
        if (k >= 0)
            out->transfer = trc_val[k];
        vkcu_cv_affine_build(&d->aff, &is, &os);
        return 0;
    }
    return tonemap_setup(op, in, out, &is, &os);
}

static int convert_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    return common_init(op, in, out, 0);
}

static int tonemap_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    return common_init(op, in, out, 1);
}

/* ---- CPU reference ---- */

typedef struct cpu_job {
    const cv_desc *d;
    const tm_tables *tm;
    const AVFrame *in;
    AVFrame *out;
} cpu_job;

/* Input sample of component comp (0: Y, 1: Cb, 2: Cr) at plane coordinates
 * (clamped into the plane). */
static inline int in_sample(const cv_desc *d, const AVFrame *f, int comp, int x, int y)
{
    int w = d->width, h = d->height, plane = comp, step = 1, idx = 0;
    if (comp) {
        w = (w + d->in.ssx) >> d->in.ssx;
        h = (h + d->in.ssy) >> d->in.ssy;
        if (d->in.kind == CV_SEMIPLANAR)
            plane = 1, step = 2, idx = comp - 1;
    }
    x = vkcu_clampi(x, 0, w - 1);
    y = vkcu_clampi(y, 0, h - 1);
    const uint8_t *row = f->data[plane] + (ptrdiff_t)y * f->linesize[plane];
    if (d->in.bytes == 1)
        return row[x * step + idx];
    return ((const uint16_t *)row)[x * step + idx] >> d->in.shift;
}

/* Chroma of the input resampled with taps tx, ty (CV_FRAC fractional bits). */
static inline int32_t gather_chroma(const cv_desc *d, const AVFrame *f, int comp, const cv_taps *tx, const cv_taps *ty)
{
    int32_t s = 0;
    for (int j = 0; j < ty->n; j++) {
        int32_t r = 0;
        for (int i = 0; i < tx->n; i++)
            r += tx->w[i] * in_sample(d, f, comp, tx->i0 + i, ty->i0 + j);
        s += ty->w[j] * r;
    }
    return s;
}

static inline void store_plane(const cv_desc *d, AVFrame *f, int comp, int x, int y, int v)
{
    int plane = comp, step = 1, idx = 0;
    if (comp && d->out.kind == CV_SEMIPLANAR)
        plane = 1, step = 2, idx = comp - 1;
    uint8_t *row = f->data[plane] + (ptrdiff_t)y * f->linesize[plane];
    if (d->out.bytes == 1)
        row[x * step + idx] = (uint8_t)v;
    else
        ((uint16_t *)row)[x * step + idx] = (uint16_t)(v << d->out.shift);
}

static inline void store_packed(const cv_desc *d, AVFrame *f, int x, int y, const cv_affine *a, const int32_t s[3])
{
    uint8_t *row = f->data[0] + (ptrdiff_t)y * f->linesize[0];
    int n = d->out.ncomp;
    if (d->out.is_half) {
        uint16_t *p = (uint16_t *)row + x * 4;
        for (int c = 0; c < 3; c++)
            p[c] = cv_apply_half(a, c, s[0], s[1], s[2]);
        p[3] = 0x3c00; /* 1.0 */
    } else if (d->out.bytes == 1) {
        uint8_t *p = row + x * n;
        for (int c = 0; c < 3; c++)
            p[c] = (uint8_t)cv_apply(a, c, s[0], s[1], s[2]);
        if (n == 4)
            p[3] = 255;
    } else {
        uint16_t *p = (uint16_t *)row + x * n;
        for (int c = 0; c < 3; c++)
            p[c] = (uint16_t)cv_apply(a, c, s[0], s[1], s[2]);
        if (n == 4)
            p[3] = 65535;
    }
}

/* Tonemap: SDR 16-bit R'G'B' at luma position (x, y), clamped into the picture. */
static inline void tm_at(const cpu_job *j, int x, int y, int rgb[3])
{
    const cv_desc *d = j->d;
    x = vkcu_clampi(x, 0, d->width - 1);
    y = vkcu_clampi(y, 0, d->height - 1);
    cv_taps tx, ty;
    cv_taps_chroma(x, d->in.ssx, 0, d->off_in_x, 0, &tx);
    cv_taps_chroma(y, d->in.ssy, 0, d->off_in_y, 0, &ty);
    int32_t yv = in_sample(d, j->in, 0, x, y) << CV_FRAC;
    int32_t u = gather_chroma(d, j->in, 1, &tx, &ty), v = gather_chroma(d, j->in, 2, &tx, &ty);
    int hdr[3];
    for (int c = 0; c < 3; c++)
        hdr[c] = cv_apply(&d->aff, c, yv, u, v);
    tm_pixel(j->tm, hdr, rgb);
}

static void cpu_rows(void *ctx, int y0, int y1)
{
    const cpu_job *j = ctx;
    const cv_desc *d = j->d;
    const cv_affine *a = d->tonemap ? &d->aff_out : &d->aff;
    int sub = d->out.ssx || d->out.ssy;
    int need_chroma = !sub || d->tonemap || a->c[0][1] || a->c[0][2];

    /* samples at luma positions: every component, or luma of subsampled outputs */
    for (int y = y0; y < y1; y++) {
        cv_taps ty;
        cv_taps_chroma(y, d->in.ssy, 0, d->off_in_y, 0, &ty);
        for (int x = 0; x < d->width; x++) {
            int32_t s[3] = { 0, 0, 0 };
            if (d->tonemap) {
                int rgb[3];
                tm_at(j, x, y, rgb);
                for (int c = 0; c < 3; c++)
                    s[c] = rgb[c] << CV_FRAC;
            } else {
                s[0] = in_sample(d, j->in, 0, x, y) << CV_FRAC;
                if (need_chroma) {
                    cv_taps tx;
                    cv_taps_chroma(x, d->in.ssx, 0, d->off_in_x, 0, &tx);
                    s[1] = gather_chroma(d, j->in, 1, &tx, &ty);
                    s[2] = gather_chroma(d, j->in, 2, &tx, &ty);
                }
            }
            if (d->out.kind == CV_PACKED) {
                store_packed(d, j->out, x, y, a, s);
            } else {
                store_plane(d, j->out, 0, x, y, cv_apply(a, 0, s[0], s[1], s[2]));
                if (!sub) {
                    store_plane(d, j->out, 1, x, y, cv_apply(a, 1, s[0], s[1], s[2]));
                    store_plane(d, j->out, 2, x, y, cv_apply(a, 2, s[0], s[1], s[2]));
                }
            }
        }
    }
    if (!sub)
        return;

    /* chroma sites of subsampled outputs whose rows start in this band */
    int cw = (d->width + d->out.ssx) >> d->out.ssx;
    for (int cy = y0 >> d->out.ssy; cy < (y1 + d->out.ssy) >> d->out.ssy; cy++) {
        cv_taps lty, cty;
        cv_taps_luma(cy, d->out.ssy, d->off_out_y, &lty);
        cv_taps_chroma(cy, d->in.ssy, d->out.ssy, d->off_in_y, d->off_out_y, &cty);
        for (int cx = 0; cx < cw; cx++) {
            cv_taps ltx, ctap;
            cv_taps_luma(cx, d->out.ssx, d->off_out_x, &ltx);
            int32_t s[3] = { 0, 0, 0 };
            if (d->tonemap) {
                for (int jy = 0; jy < lty.n; jy++)
                    for (int ix = 0; ix < ltx.n; ix++) {
                        int rgb[3], w = ltx.w[ix] * lty.w[jy];
                        tm_at(j, ltx.i0 + ix, lty.i0 + jy, rgb);
                        for (int c = 0; c < 3; c++)
                            s[c] += w * rgb[c];
                    }
            } else {
                cv_taps_chroma(cx, d->in.ssx, d->out.ssx, d->off_in_x, d->off_out_x, &ctap);
                if (a->c[1][0] || a->c[2][0]) {
                    for (int jy = 0; jy < lty.n; jy++) {
                        int yy = vkcu_clampi(lty.i0 + jy, 0, d->height - 1);
                        int32_t r = 0;
                        for (int ix = 0; ix < ltx.n; ix++)
                            r += ltx.w[ix] * in_sample(d, j->in, 0, ltx.i0 + ix, yy);
                        s[0] += lty.w[jy] * r;
                    }
                }
                s[1] = gather_chroma(d, j->in, 1, &ctap, &cty);
                s[2] = gather_chroma(d, j->in, 2, &ctap, &cty);
            }
            store_plane(d, j->out, 1, cx, cy, cv_apply(a, 1, s[0], s[1], s[2]));
            store_plane(d, j->out, 2, cx, cy, cv_apply(a, 2, s[0], s[1], s[2]));
        }
    }
}

static void set_tags(const vkcu_video_format *f, AVFrame *out, int drop_hdr)
{
    out->colorspace = f->matrix;
    out->color_range = f->range;
    out->color_primaries = f->primaries;
    out->color_trc = f->transfer;
    out->chroma_location = f->chroma_loc;
    if (drop_hdr) {
        av_frame_remove_side_data(out, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
        av_frame_remove_side_data(out, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
    }
}

static int convert_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    convert_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (in->width != p->desc.width || in->height != p->desc.height || in->format != op->in.pix_fmt) {
        LOGE("%s: frame is %dx%d %s, the operator was set up for %dx%d %s", op->cls->name, in->width, in->height,
             pf_name(in->format), p->desc.width, p->desc.height, pf_name(op->in.pix_fmt));
        return VKCU_ERR_INPUT;
    }
    int ret = av_frame_copy_props(out, in);
    if (ret < 0)
        return ret;
    set_tags(&op->out, out, p->desc.tonemap);
    cpu_job j = { &p->desc, &p->tm, in, out };
    vkcu_parallel_rows(op->threads, p->desc.height, cpu_rows, &j);
    return 0;
}

/* ---- GPU ---- */

/* The kernels' failure codes as vkcu's, with their reason logged. */
static int gpu_status(int ret, const char *err)
{
    if (ret >= 0)
        return ret;
    LOGE("convert: %s", err);
    return ret == CV_GPU_ERR_INPUT ? VKCU_ERR_INPUT : VKCU_ERR_DEVICE;
}

static int convert_init_gpu(vkcu_op *op)
{
    convert_priv *p = op->priv;
    char err[512] = "";
    vkcu_cv_gpu_destroy(&p->gpu);
    return gpu_status(vkcu_cv_gpu_create(&p->gpu, &p->desc, p->desc.tonemap ? p->tm_block : NULL, &p->tm, err,
                                         sizeof(err)), err);
}

static int convert_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    convert_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (!p->gpu) {
        int ret = convert_init_gpu(op);
        if (ret < 0)
            return ret;
    }
    if (in->fmt.width != p->desc.width || in->fmt.height != p->desc.height) {
        LOGE("%s: frame is %dx%d, the operator was set up for %dx%d", op->cls->name, in->fmt.width,
             in->fmt.height, p->desc.width, p->desc.height);
        return VKCU_ERR_INPUT;
    }
    char err[512] = "";
    int ret = gpu_status(vkcu_cv_gpu_run(p->gpu, in, out, stream, err, sizeof(err)), err);
    if (ret < 0)
        return ret;
    out->fmt = op->out;
    out->pts = in->pts;
    out->duration = in->duration;
    out->flags = in->flags; /* field order, for a deinterlace later in the chain */
    out->repeat_pict = in->repeat_pict;
    return 0;
}

static void convert_uninit(vkcu_op *op)
{
    convert_priv *p = op->priv;
    vkcu_cv_gpu_destroy(&p->gpu);
    free(p->tm_block);
    p->tm_block = NULL;
}

const vkcu_op_class vkcu_op_convert = {
    .name = "convert",
    .help = "colour conversion: matrix, range, chroma siting and layout (YUV 4:2:0/4:2:2/4:4:4, RGB, half float)",
    .accuracy = "CPU and CUDA bytes identical (fixed point); 8/10-bit within 1 LSB of zimg, >= 99.9% exact",
    .keys = convert_keys,
    .priv_size = sizeof(convert_priv),
    .per_frame = 1,
    .init = convert_init,
    .run_cpu = convert_run_cpu,
    .init_gpu = convert_init_gpu,
    .run_gpu = convert_run_gpu,
    .uninit = convert_uninit,
    .aliases = format_aliases,
};

const vkcu_op_class vkcu_op_tonemap = {
    .name = "tonemap",
    .help = "HDR (PQ, HLG; BT.2020) to SDR BT.709 tone mapping, with convert's output keys",
    .accuracy = "CPU and CUDA bytes identical (curve tables built once in double precision)",
    .keys = tonemap_keys,
    .priv_size = sizeof(convert_priv),
    .per_frame = 1,
    .init = tonemap_init,
    .run_cpu = convert_run_cpu,
    .init_gpu = convert_init_gpu,
    .run_gpu = convert_run_gpu,
    .uninit = convert_uninit,
    .aliases = format_aliases,
};

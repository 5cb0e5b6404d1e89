/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `crop` and `pad` operators. Both are a placement (kernels/croppad.h):
 * a rectangle of input elements copied to a place in an output of another
 * size, the rest filled with one colour. The host works out the rectangle
 * of every plane once, at init; the CPU reference copies rows, the CUDA
 * kernel copies elements, and both read the same numbers.
 *
 * Rectangles stay on the chroma grid: an edge between kept picture and
 * cropped-away picture or padding must not cut through a chroma sample
 * (else one chroma sample would describe pixels of two pictures, and the
 * result would depend on a rounding that FFmpeg's own filters do
 * differently). The picture's outer edge may be odd. Values that would cut
 * one are refused with the key and the multiple it needs.
 *
 * The fill colour is converted to the frame's YUV as FFmpeg's pad filter
 * does (drawutils: RGB in [0, 1] times the matrix's RGB->YCbCr table, range
 * scaling, times the maximum code value, rounded), so the padded bytes equal
 * `ffmpeg -vf pad`'s for the same matrix and range.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/csp.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/avstring.h>
#include <libavutil/parseutils.h>
#include <libavutil/pixdesc.h>
#include <cuda_runtime_api.h>

#include "kernels/croppad.h"
#include "util/log.h"
#include "op.h"

typedef struct place_priv {
    int nb_planes;
    vkcu_place_plane g[4];
    uint8_t *fill_row[4]; /* one output row of the fill colour, per plane */
    /* GPU output planes, allocated at the first frame */
    uint8_t *mem[4];
    size_t pitch[4];
} place_priv;

/* Sample layout of one plane, or why the format has none we can place. */
typedef struct plane_layout {
    int step;         /* bytes per element */
    int sample_bytes; /* 1 or 2 */
    int log2_w, log2_h;
} plane_layout;

static int layouts_of(enum AVPixelFormat fmt, plane_layout lay[4], int *nb_planes, char *why, size_t whylen)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    const char *reason = d && (d->flags & AV_PIX_FMT_FLAG_HWACCEL) ? "hardware frames" : vkcu_layout_unsupported(d);
    memset(lay, 0, 4 * sizeof(*lay));
    for (int c = 0; d && !reason && c < d->nb_components; c++) {
        const AVComponentDescriptor *cd = &d->comp[c];
        int bytes = cd->depth > 8 ? 2 : 1;
        plane_layout *l = &lay[cd->plane];
        if (cd->depth < 8 || cd->depth > 16 || (cd->shift && cd->shift + cd->depth != 8 * bytes))
            reason = "samples neither 8 to 16 bits in the low nor the high bits of their bytes";
        else if ((l->step && (l->step != cd->step || l->sample_bytes != bytes)) || cd->step > 8 ||
                 cd->step % bytes || cd->offset % bytes)
            reason = "irregular interleaving";
        l->step = cd->step;
        l->sample_bytes = bytes;
        l->log2_w = cd->plane == 1 || cd->plane == 2 ? d->log2_chroma_w : 0;
        l->log2_h = cd->plane == 1 || cd->plane == 2 ? d->log2_chroma_h : 0;
    }
    if (reason) {
        snprintf(why, whylen, "input format %s is not supported (%s)", d ? d->name : "unknown", reason);
        return -1;
    }
    *nb_planes = av_pix_fmt_count_planes(fmt);
    return 0;
}

/* "4:2:0" for the subsampling of a format, for messages. */
static const char *subsampling_name(int lw, int lh)
{
    static const char *const names[3][3] = { { "4:4:4", "4:4:0", "4:4:0 (vertical 1/4)" },
                                             { "4:2:2", "4:2:0", "4:2:0 (vertical 1/4)" },
                                             { "4:1:1", "4:1:1 (vertical 1/2)", "4:1:0" } };
    return lw <= 2 && lh <= 2 ? names[lw][lh] : "subsampled";
}

/* Fills priv->g from a placement in luma (picture) coordinates. Every
 * offset is on the chroma grid by now; a copied width that is not ends at
 * the picture's outer edge, where the plane's own size rounds up the same. */
static int place_setup(vkcu_op *op, const plane_layout lay[4], int nb_planes, int out_w, int out_h, int dst_x,
                       int dst_y, int copy_w, int copy_h, int src_x, int src_y)
{
    place_priv *p = op->priv;
    p->nb_planes = nb_planes;
    for (int i = 0; i < nb_planes; i++) {
        vkcu_place_plane *g = &p->g[i];
        int lw = lay[i].log2_w, lh = lay[i].log2_h;
        g->out_w = AV_CEIL_RSHIFT(out_w, lw);
        g->out_h = AV_CEIL_RSHIFT(out_h, lh);
        g->dst_x = dst_x >> lw;
        g->dst_y = dst_y >> lh;
        g->copy_w = AV_CEIL_RSHIFT(copy_w, lw);
        g->copy_h = AV_CEIL_RSHIFT(copy_h, lh);
        g->src_x = src_x >> lw;
        g->src_y = src_y >> lh;
        g->sample_bytes = lay[i].sample_bytes;
        g->comps = lay[i].step / lay[i].sample_bytes;
        size_t row = (size_t)g->out_w * lay[i].step;
        p->fill_row[i] = av_malloc(row ? row : 1);
        if (!p->fill_row[i])
            return AVERROR(ENOMEM);
        for (int x = 0; x < g->out_w; x++)
            memcpy(p->fill_row[i] + (size_t)x * lay[i].step, g->fill, lay[i].step);
    }
    return 0;
}

/* ---- colour (pad) ---- */

/* The fill colour of every plane's element. FFmpeg's drawutils recipe:
 * the RGB->YCbCr rows of the luma coefficients (Y = cr R + cg G + cb B;
 * Cb, Cr scaled to +-0.5), limited range scaled by 219/255 and 224/255 and
 * offset by 16/255 and 128/255 (full-range chroma by 0.5), then times the
 * maximum code value plus one half, truncated. Unspecified matrix: BT.601
 * (SMPTE 170M); unspecified range: limited. The arithmetic is kept in the
 * same order, in doubles, so the values are FFmpeg's to the last bit. One
 * difference: a format that keeps its samples in the high bits (P010) gets
 * the value of its planar twin (yuv420p10) shifted up, so that the GPU's
 * P010 frames hash as the CPU's yuv420p10 frames do. */
static int fill_color(const vkcu_video_format *fmt, const uint8_t rgba[4], vkcu_place_plane g[4], char *why,
                      size_t whylen)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt->pix_fmt);
    int rgb = !!(d->flags & AV_PIX_FMT_FLAG_RGB);
    double v[4], in[4];
    for (int i = 0; i < 4; i++)
        in[i] = rgba[i] / 255.;
    enum AVColorSpace csp = fmt->matrix;
    if (csp == AVCOL_SPC_UNSPECIFIED)
        csp = rgb ? AVCOL_SPC_RGB : AVCOL_SPC_SMPTE170M;
    enum AVColorRange range = fmt->range;
    if (range == AVCOL_RANGE_UNSPECIFIED)
        range = csp == AVCOL_SPC_RGB ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    if (rgb) {
        memcpy(v, in, 3 * sizeof(double));
    } else {
        const AVLumaCoefficients *luma = av_csp_luma_coeffs_from_avcsp(csp);
        if (!luma) {
            snprintf(why, whylen, "no RGB to YCbCr conversion for matrix %s: tag the input with one (convert=matrix=...)",
                     av_color_space_name(csp) ? av_color_space_name(csp) : "unknown");
            return -1;
        }
        double cr = av_q2d(luma->cr), cg = av_q2d(luma->cg), cb = av_q2d(luma->cb), m[3][3];
        if (cr == 0.25 && cg == 0.5 && cb == 0.25) { /* YCgCo has its own rows */
            double ycgco[3][3] = { { 0.25, 0.5, 0.25 }, { -0.25, 0.5, -0.25 }, { 0.5, 0, -0.5 } };
            memcpy(m, ycgco, sizeof(m));
        } else {
            double bscale = 0.5 / (cb - 1.0), rscale = 0.5 / (cr - 1.0);
            double rows[3][3] = { { cr, cg, cb }, { bscale * cr, bscale * cg, 0.5 }, { 0.5, rscale * cg, rscale * cb } };
            memcpy(m, rows, sizeof(m));
        }
        for (int i = 0; i < 3; i++)
            v[i] = in[0] * m[i][0] + in[1] * m[i][1] + in[2] * m[i][2];
    }
    v[3] = in[3];
    for (int i = 0; i < 3; i++) {
        int chroma = !rgb && i > 0;
        if (range == AVCOL_RANGE_MPEG) {
            v[i] *= (chroma ? 224. : 219.) / 255.;
            v[i] += (chroma ? 128. : 16.) / 255.;
        } else if (chroma) {
            v[i] += 0.5;
        }
    }
    if (d->nb_components <= 2) /* gray + alpha: the second component is alpha */
        v[1] = v[3];
    for (int c = 0; c < d->nb_components; c++) {
        const AVComponentDescriptor *cd = &d->comp[c];
        double maxv = (1 << cd->depth) - 1;
        double x = v[c] * maxv + 0.5;
        unsigned val = x <= 0 ? 0 : x >= maxv ? (unsigned)maxv : (unsigned)x;
        val <<= cd->shift;
        uint8_t *e = g[cd->plane].fill + cd->offset;
        e[0] = (uint8_t)val;
        if (cd->depth > 8)
            e[1] = (uint8_t)(val >> 8);
    }
    return 0;
}

/* ---- keys ---- */

static const vkcu_op_key crop_keys[] = {
    { "w", VKCU_KEY_INT, NULL, 1, 32768, NULL, "output width (default: the input's)" },
    { "h", VKCU_KEY_INT, NULL, 1, 32768, NULL, "output height (default: the input's)" },
    { "x", VKCU_KEY_INT, NULL, 0, 32767, NULL,
      "left edge in the input (default: centred as ffmpeg's crop: (in_w-w)/2 rounded half to even, then down to "
      "the chroma grid)" },
    { "y", VKCU_KEY_INT, NULL, 0, 32767, NULL, "top edge in the input (default: centred, as x)" },
    { 0 },
};

static const vkcu_op_key pad_keys[] = {
    { "w", VKCU_KEY_INT, NULL, 1, 32768, NULL, "output width (default: the input's)" },
    { "h", VKCU_KEY_INT, NULL, 1, 32768, NULL, "output height (default: the input's)" },
    { "x", VKCU_KEY_INT, "0", -1, 32767, NULL,
      "where the input's left edge goes (-1: centred, (w-in_w)/2 rounded down to the chroma grid)" },
    { "y", VKCU_KEY_INT, "0", -1, 32767, NULL, "where the input's top edge goes (-1: centred, as x)" },
    { "color", VKCU_KEY_STRING, "black", 0, 0, NULL,
      "fill colour: a name (black, white, gray, navy, ...) or 0xRRGGBB / #RRGGBB, as ffmpeg's pad takes it" },
    { 0 },
};

/* Refuses an edge at `pos` (a key's value or a sum) off the chroma grid of
 * `sub` samples. `end` is the picture's outer edge, always allowed. */
static int on_grid(const char *op, const char *what, int pos, int sub, int end, const char *ssname,
                   const char *need)
{
    if (pos % sub == 0 || pos == end)
        return 1;
    LOGE("%s: %s=%d would split a %s chroma sample: %s", op, what, pos, ssname, need);
    return 0;
}

/* ffmpeg's crop centres with its expression (in_w-out_w)/2 evaluated in
 * doubles and rounded by lrint (half to even: 16.5 -> 16, 15.5 -> 16), then
 * moved down onto the chroma grid. The same, in integers. */
static int crop_centre(int spare, int sub)
{
    int c = spare >> 1;
    if ((spare & 1) && (c & 1))
        c++;
    return c & ~(sub - 1);
}

static int crop_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    plane_layout lay[4];
    int nb_planes;
    char why[256];
    if (layouts_of(in->pix_fmt, lay, &nb_planes, why, sizeof(why)) < 0) {
        LOGE("crop: %s", why);
        return VKCU_ERR_USAGE;
    }
    int sw = 1 << lay[1].log2_w, sh = 1 << lay[1].log2_h;
    const char *ss = subsampling_name(lay[1].log2_w, lay[1].log2_h);
    int w = vkcu_op_is_set(op, "w") ? vkcu_op_int(op, "w") : in->width;
    int h = vkcu_op_is_set(op, "h") ? vkcu_op_int(op, "h") : in->height;
    if (w > in->width || h > in->height) {
        LOGE("crop: %s=%d is larger than the input's %s (%dx%d); use pad to make a picture larger",
             w > in->width ? "w" : "h", w > in->width ? w : h, w > in->width ? "width" : "height", in->width,
             in->height);
        return VKCU_ERR_USAGE;
    }
    int x = vkcu_op_is_set(op, "x") ? vkcu_op_int(op, "x") : crop_centre(in->width - w, sw);
    int y = vkcu_op_is_set(op, "y") ? vkcu_op_int(op, "y") : crop_centre(in->height - h, sh);
    if (x + w > in->width || y + h > in->height) {
        int horiz = x + w > in->width;
        LOGE("crop: %s=%d plus %s=%d reaches past the input's %s (%d); at most %s=%d", horiz ? "x" : "y",
             horiz ? x : y, horiz ? "w" : "h", horiz ? w : h, horiz ? "width" : "height",
             horiz ? in->width : in->height, horiz ? "x" : "y", horiz ? in->width - w : in->height - h);
        return VKCU_ERR_USAGE;
    }
    char need[160];
    snprintf(need, sizeof(need), "x must be a multiple of %d", sw);
    if (!on_grid("crop", "x", x, sw, -1, ss, need))
        return VKCU_ERR_USAGE;
    snprintf(need, sizeof(need), "y must be a multiple of %d", sh);
    if (!on_grid("crop", "y", y, sh, -1, ss, need))
        return VKCU_ERR_USAGE;
    snprintf(need, sizeof(need), "w must be a multiple of %d, or end at the input's right edge (x+w=%d)", sw,
             in->width);
    if (!on_grid("crop", "x+w", x + w, sw, in->width, ss, need))
        return VKCU_ERR_USAGE;
    snprintf(need, sizeof(need), "h must be a multiple of %d, or end at the input's bottom edge (y+h=%d)", sh,
             in->height);
    if (!on_grid("crop", "y+h", y + h, sh, in->height, ss, need))
        return VKCU_ERR_USAGE;
    *out = *in;
    out->width = w;
    out->height = h;
    LOGV("crop: %dx%d at %d,%d of %dx%d", w, h, x, y, in->width, in->height);
    return place_setup(op, lay, nb_planes, w, h, 0, 0, w, h, x, y);
}

static int pad_check(const vkcu_op *op, char *why, size_t whylen)
{
    const char *c = vkcu_op_str(op, "color");
    uint8_t rgba[4];
    if (!av_strcasecmp(c, "random")) {
        snprintf(why, whylen, "color=random would make every run's output differ; name a colour");
        return -1;
    }
    if (av_parse_color(rgba, c, -1, NULL) < 0) {
        snprintf(why, whylen, "color='%s' is not a colour (a name such as black or navy, or 0xRRGGBB / #RRGGBB)", c);
        return -1;
    }
    return 0;
}

static int pad_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    place_priv *p = op->priv;
    plane_layout lay[4];
    int nb_planes;
    char why[256];
    if (layouts_of(in->pix_fmt, lay, &nb_planes, why, sizeof(why)) < 0) {
        LOGE("pad: %s", why);
        return VKCU_ERR_USAGE;
    }
    int sw = 1 << lay[1].log2_w, sh = 1 << lay[1].log2_h;
    const char *ss = subsampling_name(lay[1].log2_w, lay[1].log2_h);
    int w = vkcu_op_is_set(op, "w") ? vkcu_op_int(op, "w") : in->width;
    int h = vkcu_op_is_set(op, "h") ? vkcu_op_int(op, "h") : in->height;
    if (w < in->width || h < in->height) {
        LOGE("pad: %s=%d is smaller than the input's %s (%dx%d); use crop to make a picture smaller",
             w < in->width ? "w" : "h", w < in->width ? w : h, w < in->width ? "width" : "height", in->width,
             in->height);
        return VKCU_ERR_USAGE;
    }
    int x = vkcu_op_int(op, "x"), y = vkcu_op_int(op, "y");
    if (x < 0)
        x = ((w - in->width) / 2) & ~(sw - 1);
    if (y < 0)
        y = ((h - in->height) / 2) & ~(sh - 1);
    if (x + in->width > w || y + in->height > h) {
        int horiz = x + in->width > w;
        LOGE("pad: %s=%d puts the input (%s %d) past the output's %s %s=%d; at most %s=%d (or -1 to centre)",
             horiz ? "x" : "y", horiz ? x : y, horiz ? "width" : "height", horiz ? in->width : in->height,
             horiz ? "width" : "height", horiz ? "w" : "h", horiz ? w : h, horiz ? "x" : "y",
             horiz ? w - in->width : h - in->height);
        return VKCU_ERR_USAGE;
    }
    char need[160];
    snprintf(need, sizeof(need), "x must be a multiple of %d", sw);
    if (!on_grid("pad", "x", x, sw, -1, ss, need))
        return VKCU_ERR_USAGE;
    snprintf(need, sizeof(need), "y must be a multiple of %d", sh);
    if (!on_grid("pad", "y", y, sh, -1, ss, need))
        return VKCU_ERR_USAGE;
    /* The input's own right/bottom edge meets padding unless it is the output's edge. */
    snprintf(need, sizeof(need), "the input width %d must be a multiple of %d to pad on its right (crop it first, "
             "or make w=%d)", in->width, sw, x + in->width);
    if (!on_grid("pad", "x+in_w", x + in->width, sw, w, ss, need))
        return VKCU_ERR_USAGE;
    snprintf(need, sizeof(need), "the input height %d must be a multiple of %d to pad below it (crop it first, "
             "or make h=%d)", in->height, sh, y + in->height);
    if (!on_grid("pad", "y+in_h", y + in->height, sh, h, ss, need))
        return VKCU_ERR_USAGE;
    uint8_t rgba[4];
    if (av_parse_color(rgba, vkcu_op_str(op, "color"), -1, NULL) < 0) {
        LOGE("pad: color='%s' is not a colour", vkcu_op_str(op, "color"));
        return VKCU_ERR_USAGE;
    }
    memset(p->g, 0, sizeof(p->g));
    if (fill_color(in, rgba, p->g, why, sizeof(why)) < 0) {
        LOGE("pad: %s", why);
        return VKCU_ERR_USAGE;
    }
    *out = *in;
    out->width = w;
    out->height = h;
    LOGV("pad: %dx%d into %dx%d at %d,%d, colour %02x%02x%02x", in->width, in->height, w, h, x, y, rgba[0],
         rgba[1], rgba[2]);
    return place_setup(op, lay, nb_planes, w, h, x, y, in->width, in->height, 0, 0);
}

/* ---- running ---- */

static int place_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    place_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (in->format != op->in.pix_fmt || in->width != op->in.width || in->height != op->in.height) {
        LOGE("%s: frame is %dx%d %s, the operator was set up for %dx%d %s", op->cls->name, in->width, in->height,
             av_get_pix_fmt_name(in->format), op->in.width, op->in.height, av_get_pix_fmt_name(op->in.pix_fmt));
        return VKCU_ERR_INPUT;
    }
    for (int i = 0; i < p->nb_planes; i++) {
        const vkcu_place_plane *g = &p->g[i];
        size_t step = (size_t)g->sample_bytes * g->comps;
        for (int y = 0; y < g->out_h; y++) {
            uint8_t *row = out->data[i] + (ptrdiff_t)y * out->linesize[i];
            int sx, sy;
            if (!vkcu_place_source(g, g->dst_x, y, &sx, &sy)) {
                memcpy(row, p->fill_row[i], (size_t)g->out_w * step);
                continue;
            }
            const uint8_t *src = in->data[i] + (ptrdiff_t)sy * in->linesize[i] + (size_t)sx * step;
            int right = g->dst_x + g->copy_w;
            memcpy(row, p->fill_row[i], (size_t)g->dst_x * step);
            memcpy(row + (size_t)g->dst_x * step, src, (size_t)g->copy_w * step);
            memcpy(row + (size_t)right * step, p->fill_row[i], (size_t)(g->out_w - right) * step);
        }
    }
    return av_frame_copy_props(out, in);
}

static int place_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    place_priv *p = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (in->fmt.width != op->in.width || in->fmt.height != op->in.height || in->nb_planes != p->nb_planes) {
        LOGE("%s: GPU frame is %dx%d, the operator was set up for %dx%d", op->cls->name, in->fmt.width,
             in->fmt.height, op->in.width, op->in.height);
        return VKCU_ERR_INPUT;
    }
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < p->nb_planes; i++) {
        const vkcu_place_plane *g = &p->g[i];
        if (!p->mem[i]) {
            size_t row = (size_t)(g->out_w ? g->out_w : 1) * g->sample_bytes * g->comps;
            if (cudaMallocPitch((void **)&p->mem[i], &p->pitch[i], row, g->out_h ? g->out_h : 1) != cudaSuccess) {
                p->mem[i] = NULL;
                return AVERROR(ENOMEM);
            }
        }
        out->plane[i] = (vkcu_gpu_plane){ .ptr = p->mem[i], .pitch = p->pitch[i], .width = g->out_w,
                                          .height = g->out_h };
        int e = vkcu_cuda_place(&in->plane[i], &out->plane[i], g, stream);
        if (e) {
            LOGE("%s: CUDA kernel failed: %s", op->cls->name, cudaGetErrorString((cudaError_t)e));
            return AVERROR_EXTERNAL;
        }
    }
    out->fmt = op->out;
    out->fmt.pix_fmt = in->fmt.pix_fmt;
    out->nb_planes = p->nb_planes;
    out->pts = in->pts;
    out->duration = in->duration;
    out->flags = in->flags; /* field order: the CPU side's av_frame_copy_props */
    out->repeat_pict = in->repeat_pict;
    return 0;
}

static void place_uninit(vkcu_op *op)
{
    place_priv *p = op->priv;
    for (int i = 0; i < 4; i++) {
        av_freep(&p->fill_row[i]);
        if (p->mem[i])
            cudaFree(p->mem[i]);
        p->mem[i] = NULL;
    }
}

const vkcu_op_class vkcu_op_crop = {
    .name = "crop",
    .help = "cut a rectangle out of the picture, on the chroma grid (bytes as ffmpeg's crop)",
    .accuracy = "exact: bytes equal ffmpeg's crop filter; CPU and CUDA identical",
    .keys = crop_keys,
    .priv_size = sizeof(place_priv),
    .per_frame = 1,
    .init = crop_init,
    .run_cpu = place_run_cpu,
    .run_gpu = place_run_gpu,
    .uninit = place_uninit,
};

const vkcu_op_class vkcu_op_pad = {
    .name = "pad",
    .help = "place the picture on a larger canvas of one colour (bytes as ffmpeg's pad)",
    .accuracy = "exact: bytes equal ffmpeg's pad filter, colour included; CPU and CUDA identical",
    .keys = pad_keys,
    .priv_size = sizeof(place_priv),
    .per_frame = 1,
    .check = pad_check,
    .init = pad_init,
    .run_cpu = place_run_cpu,
    .run_gpu = place_run_gpu,
    .uninit = place_uninit,
};

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scale against zimg's resize (its C API, dither none, the same filter for
 * luma and chroma, the same chroma siting): 8- and 10-bit 4:2:0, 4:2:2 and
 * 4:4:4, every filter, up- and down-scaling with integer and non-integer
 * ratios, three chroma sitings. Pass: at least 99.9% of samples within 1
 * LSB of zimg's, per case (docs/operators-scale.md says where zimg rounds
 * differently). Then the size rules (-1/-2, SAR), the key errors, and odd
 * sizes down to 1x1 (defined output, flat pictures stay flat).
 */
#include <zimg.h>

#include "test_scale_util.h"

static int failures;

static zimg_chroma_location_e zloc(enum AVChromaLocation l)
{
    switch (l) {
    case AVCHROMA_LOC_CENTER: return ZIMG_CHROMA_CENTER;
    case AVCHROMA_LOC_TOPLEFT: return ZIMG_CHROMA_TOP_LEFT;
    case AVCHROMA_LOC_TOP: return ZIMG_CHROMA_TOP;
    case AVCHROMA_LOC_BOTTOMLEFT: return ZIMG_CHROMA_BOTTOM_LEFT;
    case AVCHROMA_LOC_BOTTOM: return ZIMG_CHROMA_BOTTOM;
    default: return ZIMG_CHROMA_LEFT;
    }
}

static void zfmt(zimg_image_format *f, const AVPixFmtDescriptor *d, int w, int h, enum AVChromaLocation loc)
{
    zimg_image_format_default(f, ZIMG_API_VERSION);
    f->width = (unsigned)w;
    f->height = (unsigned)h;
    f->pixel_type = d->comp[0].depth > 8 ? ZIMG_PIXEL_WORD : ZIMG_PIXEL_BYTE;
    f->depth = (unsigned)d->comp[0].depth;
    f->subsample_w = (unsigned)d->log2_chroma_w;
    f->subsample_h = (unsigned)d->log2_chroma_h;
    f->color_family = ZIMG_COLOR_YUV;
    f->matrix_coefficients = ZIMG_MATRIX_BT709;
    f->transfer_characteristics = ZIMG_TRANSFER_BT709;
    f->color_primaries = ZIMG_PRIMARIES_BT709;
    f->pixel_range = ZIMG_RANGE_LIMITED;
    f->chroma_location = zloc(loc);
}

static AVFrame *zimg_scale(const AVFrame *in, int ow, int oh, zimg_resample_filter_e filter, enum AVChromaLocation loc)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->format);
    zimg_image_format sf, df;
    zfmt(&sf, d, in->width, in->height, loc);
    zfmt(&df, d, ow, oh, loc);
    zimg_graph_builder_params p;
    zimg_graph_builder_params_default(&p, ZIMG_API_VERSION);
    p.resample_filter = filter;
    p.resample_filter_uv = filter;
    p.dither_type = ZIMG_DITHER_NONE;
    zimg_filter_graph *g = zimg_filter_graph_build(&sf, &df, &p);
    AVFrame *out = tu_frame(in->format, ow, oh);
    void *tmp = NULL;
    size_t tmp_size = 0;
    if (!g || !out) {
        char msg[256];
        zimg_get_last_error(msg, sizeof(msg));
        printf("zimg: %s\n", msg);
        goto fail;
    }
    if (zimg_filter_graph_get_tmp_size(g, &tmp_size) || posix_memalign(&tmp, 64, tmp_size))
        goto fail;
    zimg_image_buffer_const src = { ZIMG_API_VERSION, { { 0 } } };
    zimg_image_buffer dst = { ZIMG_API_VERSION, { { 0 } } };
    for (int c = 0; c < 3; c++) {
        src.plane[c].data = in->data[c];
        src.plane[c].stride = in->linesize[c];
        src.plane[c].mask = ZIMG_BUFFER_MAX;
        dst.plane[c].data = out->data[c];
        dst.plane[c].stride = out->linesize[c];
        dst.plane[c].mask = ZIMG_BUFFER_MAX;
    }
    if (zimg_filter_graph_process(g, &src, &dst, tmp, NULL, NULL, NULL, NULL) != ZIMG_ERROR_SUCCESS)
        goto fail;
    free(tmp);
    zimg_filter_graph_free(g);
    return out;
fail:
    free(tmp);
    zimg_filter_graph_free(g);
    av_frame_free(&out);
    return NULL;
}

static AVFrame *vkcu_scale(const AVFrame *in, const char *chain, enum AVChromaLocation loc, vkcu_video_format *of,
                           int threads)
{
    vkcu_video_format f = ct_format(in->format, in->width, in->height, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG);
    f.chroma_loc = loc;
    vkcu_chain ch;
    if (ct_op(&ch, chain, &f, of, threads) < 0)
        return NULL;
    AVFrame *o = ct_run(&ch, in, of);
    vkcu_chain_free(&ch);
    return o;
}

static const struct {
    const char *name;
    zimg_resample_filter_e z;
} filters[] = {
    { "bilinear", ZIMG_RESIZE_BILINEAR },
    { "bicubic", ZIMG_RESIZE_BICUBIC },
    { "lanczos", ZIMG_RESIZE_LANCZOS },
    { "spline36", ZIMG_RESIZE_SPLINE36 },
};

static long long all_n, all_within, all_exact;
static int all_max;

static void oracle_case(enum AVPixelFormat pf, int iw, int ih, int ow, int oh, int fi, enum AVChromaLocation loc)
{
    AVFrame *in = tu_frame(pf, iw, ih);
    fill_picture(in, (uint64_t)(iw * 131 + ih * 7 + fi));
    char chain[128];
    snprintf(chain, sizeof(chain), "scale=w=%d:h=%d:filter=%s", ow, oh, filters[fi].name);
    vkcu_video_format of;
    AVFrame *a = vkcu_scale(in, chain, loc, &of, 2);
    AVFrame *b = zimg_scale(in, ow, oh, filters[fi].z, loc);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(pf);
    if (!a || !b) {
        printf("FAIL %s %dx%d -> %dx%d %s: no output\n", d->name, iw, ih, ow, oh, filters[fi].name);
        failures++;
        goto done;
    }
    long long n = 0, within = 0, exact = 0;
    int maxe = 0;
    for (int c = 0; c < d->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(ow, d->log2_chroma_w) : ow, h = c ? AV_CEIL_RSHIFT(oh, d->log2_chroma_h) : oh;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int e = abs(tu_get(a, c, x, y) - tu_get(b, c, x, y));
                n++;
                within += e <= 1;
                exact += e == 0;
                maxe = e > maxe ? e : maxe;
            }
    }
    all_n += n;
    all_within += within;
    all_exact += exact;
    all_max = maxe > all_max ? maxe : all_max;
    int ok = within * 1000 >= n * 999;
    if (!ok)
        failures++;
    printf("%s %-10s %4dx%-4d -> %4dx%-4d %-8s loc=%-7s exact %6.2f%% within 1 %7.3f%% max %d\n", ok ? "ok  " : "FAIL",
           d->name, iw, ih, ow, oh, filters[fi].name, av_chroma_location_name(loc), 100.0 * exact / n,
           100.0 * within / n, maxe);
done:
    av_frame_free(&in);
    av_frame_free(&a);
    av_frame_free(&b);
}

/* The output size and SAR init gives for a chain on an input. */
static int size_case(const char *chain, int iw, int ih, AVRational sar, int ew, int eh, AVRational esar)
{
    vkcu_video_format f = ct_format(AV_PIX_FMT_YUV420P, iw, ih, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), of;
    f.sar = sar;
    vkcu_chain ch;
    if (ct_op(&ch, chain, &f, &of, 1) < 0) {
        printf("FAIL %s on %dx%d: refused\n", chain, iw, ih);
        return 1;
    }
    vkcu_chain_free(&ch);
    if (of.width != ew || of.height != eh || av_cmp_q(of.sar, esar)) {
        printf("FAIL %s on %dx%d SAR %d:%d: %dx%d SAR %d:%d, expected %dx%d SAR %d:%d\n", chain, iw, ih, sar.num,
               sar.den, of.width, of.height, of.sar.num, of.sar.den, ew, eh, esar.num, esar.den);
        return 1;
    }
    return 0;
}

/* A chain the parser refuses, with a message containing `want`. */
static int refused(const char *chain, const char *want)
{
    vkcu_chain ch;
    char err[512] = "";
    if (vkcu_chain_parse(chain, &ch, err, sizeof(err)) == 0) {
        vkcu_chain_free(&ch);
        printf("FAIL %s: accepted\n", chain);
        return 1;
    }
    if (!strstr(err, want)) {
        printf("FAIL %s: message '%s' lacks '%s'\n", chain, err, want);
        return 1;
    }
    return 0;
}

static int size_rules(void)
{
    AVRational one = { 1, 1 }, pal = { 16, 15 }, hdv = { 4, 3 }, unk = { 0, 1 };
    int f = 0;
    f += size_case("scale=w=1280:h=-1", 1920, 1080, one, 1280, 720, one);
    f += size_case("scale=w=-2:h=720", 1920, 1080, one, 1280, 720, one);
    f += size_case("scale=w=1280", 1920, 1080, unk, 1280, 720, one);           /* h unset: follows, SAR unknown = 1:1 */
    f += size_case("scale=w=855:h=-1", 1920, 1080, one, 855, 481, one);       /* 480.9 to the nearest */
    f += size_case("scale=w=855:h=-2", 1920, 1080, one, 855, 480, one);       /* to the nearest even */
    f += size_case("scale=h=576:w=-1", 720, 576, pal, 768, 576, one);         /* square pixels: the display aspect */
    f += size_case("scale=h=576:w=-1:sar=keep", 720, 576, pal, 720, 576, pal);
    f += size_case("scale=w=-2:h=720", 1440, 1080, hdv, 1280, 720, one);      /* HDV anamorphic to square */
    f += size_case("scale=w=-2:h=720:sar=keep", 1440, 1080, hdv, 960, 720, hdv);
    f += size_case("scale=w=1:h=-2", 1920, 1080, one, 1, 2, one);             /* never below the step */
    f += size_case("scale=w=1:h=-1", 1920, 1080, one, 1, 1, one);
    f += size_case("scale=w=7:h=3", 1920, 1080, pal, 7, 3, one);              /* both given: as asked, square pixels */
    f += refused("scale", "set w or h");
    f += refused("scale=filter=bicubic", "set w or h");
    f += refused("scale=w=0:h=720", "w=0");
    f += refused("scale=w=1280:h=0", "h=0");
    f += refused("scale=w=-1:h=-2", "at most one side");
    f += refused("scale=w=-3:h=720", "w='-3'");
    f += refused("scale=w=20000:h=720", "w='20000'");
    f += refused("scale=w=1280:filter=box", "filter=box: expected one of bilinear|bicubic|lanczos|spline36");
    f += refused("scale=w=1280:sar=wide", "sar=wide");
    /* a derived side past the limit is refused at init, naming the key */
    vkcu_video_format in = ct_format(AV_PIX_FMT_YUV420P, 16, 1080, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), of;
    vkcu_chain ch;
    if (ct_op(&ch, "scale=w=16384:h=-1", &in, &of, 1) == 0) {
        printf("FAIL scale=w=16384:h=-1 on 16x1080: accepted (%dx%d)\n", of.width, of.height);
        vkcu_chain_free(&ch);
        f++;
    }
    in.pix_fmt = AV_PIX_FMT_RGB24;
    if (ct_op(&ch, "scale=w=8:h=8", &in, &of, 1) == 0) {
        printf("FAIL scale on rgb24: accepted\n");
        vkcu_chain_free(&ch);
        f++;
    }
    printf("%s size rules and key errors\n", f ? "FAIL" : "ok  ");
    return f;
}

/* Odd sizes: a flat picture stays flat at any size (each output's taps sum
 * to one), 1x1 in or out included, and the bytes do not depend on the number
 * of threads. Sizes not divisible by the subsampling have ceil-sized chroma
 * planes, resampled like any other (the picture maps edge to edge). */
static int odd_sizes(void)
{
    static const enum AVPixelFormat fmts[] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P,
                                               AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_GRAY10, AV_PIX_FMT_GBRP };
    static const int sizes[][4] = { { 1, 1, 7, 5 }, { 7, 5, 1, 1 }, { 1, 1, 1, 1 }, { 5, 3, 3, 7 },
                                    { 33, 17, 1, 9 }, { 3, 1, 64, 2 }, { 17, 33, 16, 32 } };
    int f = 0;
    for (size_t fi = 0; fi < sizeof(fmts) / sizeof(fmts[0]); fi++) {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmts[fi]);
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            for (int k = 0; k < 4; k++) {
                int iw = sizes[s][0], ih = sizes[s][1], ow = sizes[s][2], oh = sizes[s][3];
                AVFrame *flat = tu_frame(fmts[fi], iw, ih), *tex = tu_frame(fmts[fi], iw, ih);
                int val[4];
                for (int c = 0; c < d->nb_components; c++) {
                    val[c] = (40 + 50 * c) << (d->comp[c].depth - 8);
                    int w = c ? AV_CEIL_RSHIFT(iw, d->log2_chroma_w) : iw;
                    int h = c ? AV_CEIL_RSHIFT(ih, d->log2_chroma_h) : ih;
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++)
                            tu_set(flat, c, x, y, val[c]);
                }
                fill_picture(tex, (uint64_t)(s * 4 + k));
                char chain[128];
                snprintf(chain, sizeof(chain), "scale=w=%d:h=%d:filter=%s", ow, oh, filters[k].name);
                vkcu_video_format of;
                AVFrame *a = vkcu_scale(flat, chain, AVCHROMA_LOC_LEFT, &of, 1);
                AVFrame *t1 = vkcu_scale(tex, chain, AVCHROMA_LOC_CENTER, &of, 1);
                AVFrame *t3 = vkcu_scale(tex, chain, AVCHROMA_LOC_CENTER, &of, 3);
                int bad = !a || !t1 || !t3 || a->width != ow || a->height != oh;
                for (int c = 0; !bad && c < d->nb_components; c++) {
                    int w = c ? AV_CEIL_RSHIFT(ow, d->log2_chroma_w) : ow;
                    int h = c ? AV_CEIL_RSHIFT(oh, d->log2_chroma_h) : oh;
                    for (int y = 0; !bad && y < h; y++)
                        for (int x = 0; !bad && x < w; x++) {
                            if (tu_get(a, c, x, y) != val[c]) {
                                printf("FAIL %s %s %dx%d -> %dx%d: flat %d became %d at comp %d (%d,%d)\n",
                                       d->name, filters[k].name, iw, ih, ow, oh, val[c], tu_get(a, c, x, y), c, x, y);
                                bad = 1;
                            }
                            if (tu_get(t1, c, x, y) != tu_get(t3, c, x, y)) {
                                printf("FAIL %s %s %dx%d -> %dx%d: 1 and 3 threads differ\n", d->name,
                                       filters[k].name, iw, ih, ow, oh);
                                bad = 1;
                            }
                        }
                }
                f += bad;
                av_frame_free(&flat);
                av_frame_free(&tex);
                av_frame_free(&a);
                av_frame_free(&t1);
                av_frame_free(&t3);
            }
    }
    printf("%s odd sizes (1x1 in and out, sizes not divisible by the subsampling), nv12/p010/gray10/gbrp included\n",
           f ? "FAIL" : "ok  ");
    return f;
}

/* The same size is a copy, whatever the filter. */
static int identity(void)
{
    int f = 0;
    for (int k = 0; k < 4; k++) {
        AVFrame *in = tu_frame(AV_PIX_FMT_YUV420P10, 66, 38);
        fill_picture(in, 9);
        char chain[64];
        snprintf(chain, sizeof(chain), "scale=w=66:h=38:filter=%s", filters[k].name);
        vkcu_video_format of;
        AVFrame *o = vkcu_scale(in, chain, AVCHROMA_LOC_LEFT, &of, 1);
        for (int c = 0; o && c < 3; c++)
            for (int y = 0; y < (c ? 19 : 38); y++)
                for (int x = 0; x < (c ? 33 : 66); x++)
                    if (tu_get(o, c, x, y) != tu_get(in, c, x, y) && !f++)
                        printf("FAIL %s at 1:1 changed comp %d (%d,%d)\n", filters[k].name, c, x, y);
        f += !o;
        av_frame_free(&in);
        av_frame_free(&o);
    }
    printf("%s the same size is a copy\n", f ? "FAIL" : "ok  ");
    return f;
}

int main(void)
{
    static const enum AVPixelFormat fmts[] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P,
                                               AV_PIX_FMT_YUV420P10, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P10 };
    static const int sizes[][4] = {
        { 192, 108, 128, 72 },  /* 1.5x down */
        { 160, 120, 80, 60 },   /* 2x down */
        { 120, 68, 200, 114 },  /* up, non-integer */
        { 96, 64, 250, 38 },    /* up in x, down in y */
    };
    static const enum AVChromaLocation locs[] = { AVCHROMA_LOC_LEFT, AVCHROMA_LOC_CENTER, AVCHROMA_LOC_TOPLEFT };
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            for (int fi = 0; fi < 4; fi++)
                oracle_case(fmts[f], sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3], fi, locs[(s + fi) % 3]);
    printf("all: %lld samples, exact %.3f%%, within 1 LSB %.4f%%, max %d\n", all_n, 100.0 * all_exact / all_n,
           100.0 * all_within / all_n, all_max);
    failures += size_rules();
    failures += odd_sizes();
    failures += identity();
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}

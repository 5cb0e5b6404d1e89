/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crop and pad on the CPU reference: every component of every output pixel
 * against a per-pixel definition (inside the placed rectangle the input
 * sample it names, outside the fill colour), over planar, semi-planar,
 * gray and RGB layouts, odd sizes and 1x1; the fill values FFmpeg's pad
 * gives (including its 10-bit chroma 514 for black and luma 943 for white);
 * and NV12/P010 (what the GPU ring carries) giving exactly the samples of
 * their planar twins yuv420p/yuv420p10, so that both backends hash alike.
 */
#include "croppad_util.h"

typedef struct placement {
    int dx, dy, cw, ch, sx, sy; /* luma coordinates */
} placement;

/* The sample of component c at (x, y) of its own grid, per the definition. */
static int expect_sample(const AVFrame *in, const AVFrame *out, const placement *pl, int c, int x, int y, int fill)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(out->format);
    int sub = (d->comp[c].plane == 1 || d->comp[c].plane == 2);
    int lw = sub ? d->log2_chroma_w : 0, lh = sub ? d->log2_chroma_h : 0;
    int x0 = pl->dx >> lw, y0 = pl->dy >> lh;
    int w = AV_CEIL_RSHIFT(pl->cw, lw), h = AV_CEIL_RSHIFT(pl->ch, lh);
    if (x < x0 || y < y0 || x >= x0 + w || y >= y0 + h)
        return fill;
    return tu_get(in, c, (pl->sx >> lw) + x - x0, (pl->sy >> lh) + y - y0);
}

static void check_geometry(const char *text, enum AVPixelFormat fmt, int w, int h, placement pl, const int fill[4])
{
    vkcu_chain chain;
    vkcu_video_format of;
    const char *name = av_get_pix_fmt_name(fmt);
    if (cp_make(&chain, text, fmt, w, h, &of) < 0) {
        CHECK(0, "%s on %s %dx%d: refused", text, name, w, h);
        return;
    }
    AVFrame *in = cp_random_frame(fmt, w, h, (uint64_t)w * 31 + h);
    AVFrame *out = cp_run_cpu(chain.ops[0], in);
    CHECK(out, "%s %s: run_cpu failed", text, name);
    if (out) {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
        long bad = 0;
        for (int c = 0; c < d->nb_components; c++) {
            int sub = (d->comp[c].plane == 1 || d->comp[c].plane == 2);
            int cw = sub ? AV_CEIL_RSHIFT(out->width, d->log2_chroma_w) : out->width;
            int chh = sub ? AV_CEIL_RSHIFT(out->height, d->log2_chroma_h) : out->height;
            for (int y = 0; y < chh; y++)
                for (int x = 0; x < cw; x++) {
                    int want = expect_sample(in, out, &pl, c, x, y, fill[c]), got = tu_get(out, c, x, y);
                    if (want != got && bad++ < 3)
                        fprintf(stderr, "%s %s %dx%d: component %d at %d,%d is %d, expected %d\n", text, name, w, h, c,
                                x, y, got, want);
                }
        }
        CHECK(!bad, "%s on %s %dx%d: %ld samples misplaced", text, name, w, h, bad);
        CHECK(out->pts == in->pts && out->duration == in->duration, "%s: timestamps not copied", text);
    }
    av_frame_free(&in);
    av_frame_free(&out);
    vkcu_chain_free(&chain);
}

/* NV12/P010 twin of a planar 4:2:0 frame. */
static AVFrame *semi_twin(const AVFrame *planar, enum AVPixelFormat fmt)
{
    AVFrame *f = tu_frame(fmt, planar->width, planar->height);
    for (int c = 0; c < 3; c++) {
        int cw = c ? (planar->width + 1) / 2 : planar->width, ch = c ? (planar->height + 1) / 2 : planar->height;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                tu_set(f, c, x, y, tu_get(planar, c, x, y));
    }
    f->pts = planar->pts;
    return f;
}

static void check_twin(const char *text, enum AVPixelFormat planar, enum AVPixelFormat semi, int w, int h)
{
    vkcu_chain a, b;
    vkcu_video_format oa, ob;
    if (cp_make(&a, text, planar, w, h, &oa) < 0 || cp_make(&b, text, semi, w, h, &ob) < 0) {
        CHECK(0, "%s: refused", text);
        return;
    }
    AVFrame *in = cp_random_frame(planar, w, h, 7), *in2 = semi_twin(in, semi);
    AVFrame *ra = cp_run_cpu(a.ops[0], in), *rb = cp_run_cpu(b.ops[0], in2);
    long bad = 0;
    for (int c = 0; c < 3 && ra && rb; c++) {
        int cw = c ? (ra->width + 1) / 2 : ra->width, ch = c ? (ra->height + 1) / 2 : ra->height;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                bad += tu_get(ra, c, x, y) != tu_get(rb, c, x, y);
    }
    CHECK(ra && rb && !bad, "%s: %s and %s outputs differ in %ld samples", text, av_get_pix_fmt_name(planar),
          av_get_pix_fmt_name(semi), bad);
    av_frame_free(&in);
    av_frame_free(&in2);
    av_frame_free(&ra);
    av_frame_free(&rb);
    vkcu_chain_free(&a);
    vkcu_chain_free(&b);
}

/* The fill of a pad over the whole output (a 1-pixel-high input at the bottom right). */
static void check_fill(const char *color, enum AVPixelFormat fmt, enum AVColorRange range, const int want[3])
{
    char text[128];
    snprintf(text, sizeof(text), "pad=w=8:h=8:x=6:y=6:color=%s", color);
    vkcu_chain chain;
    char err[256];
    vkcu_video_format in = { .pix_fmt = fmt, .width = 2, .height = 2, .matrix = AVCOL_SPC_BT709, .range = range }, of;
    int ok = vkcu_chain_parse(text, &chain, err, sizeof(err)) >= 0 && vkcu_chain_init(&chain, &in, &of, err, sizeof(err)) >= 0;
    CHECK(ok, "%s: %s", text, err);
    if (!ok)
        return;
    AVFrame *src = cp_random_frame(fmt, 2, 2, 3), *out = cp_run_cpu(chain.ops[0], src);
    for (int c = 0; c < 3 && out; c++)
        CHECK(tu_get(out, c, 0, 0) == want[c], "%s on %s %s range: component %d is %d, ffmpeg's pad gives %d", color,
              av_get_pix_fmt_name(fmt), range == AVCOL_RANGE_JPEG ? "full" : "limited", c, tu_get(out, c, 0, 0),
              want[c]);
    av_frame_free(&src);
    av_frame_free(&out);
    vkcu_chain_free(&chain);
}

int main(void)
{
    static const enum AVPixelFormat fmts[] = {
        AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10, AV_PIX_FMT_NV12,   AV_PIX_FMT_P010,    AV_PIX_FMT_YUV422P,
        AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10, AV_PIX_FMT_GRAY8, AV_PIX_FMT_GBRP,
        AV_PIX_FMT_RGB24,   AV_PIX_FMT_YUVA420P,
    };
    int cases = 0;
    for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        enum AVPixelFormat f = fmts[i];
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
        int rgb = !!(d->flags & AV_PIX_FMT_FLAG_RGB), deep = d->comp[0].depth > 8;
        /* black, limited range (RGB: 0) */
        int black[4] = { rgb ? 0 : deep ? 64 : 16, rgb ? 0 : deep ? 514 : 128, rgb ? 0 : deep ? 514 : 128,
                         deep ? 1023 : 255 };
        if (d->nb_components == 1)
            black[1] = black[2] = 0;
        check_geometry("crop=w=64:h=32:x=10:y=6", f, 150, 78, (placement){ 0, 0, 64, 32, 10, 6 }, black);
        int sw = 1 << d->log2_chroma_w, sh = 1 << d->log2_chroma_h;
        /* centred: 86/2 = 43 and 46/2 = 23, then down to the chroma grid */
        check_geometry("crop=w=64:h=32", f, 150, 78, (placement){ 0, 0, 64, 32, 43 & -sw, 23 & -sh }, black);
        check_geometry("crop", f, 150, 78, (placement){ 0, 0, 150, 78, 0, 0 }, black);
        check_geometry("crop=w=51:h=27:x=100:y=50", f, 151, 77, (placement){ 0, 0, 51, 27, 100, 50 }, black);
        check_geometry("crop=w=1:h=1:x=150:y=76", f, 151, 77, (placement){ 0, 0, 1, 1, 150, 76 }, black);
        check_geometry("crop", f, 1, 1, (placement){ 0, 0, 1, 1, 0, 0 }, black);
        check_geometry("pad=w=200:h=100:x=-1:y=-1", f, 150, 78, (placement){ 25 & -sw, 11 & -sh, 150, 78, 0, 0 }, black);
        check_geometry("pad=w=151:h=81:y=2", f, 150, 78, (placement){ 0, 2, 150, 78, 0, 0 }, black);
        check_geometry("pad=h=81:y=4", f, 151, 77, (placement){ 0, 4, 151, 77, 0, 0 }, black);
        check_geometry("pad=w=3:h=3:x=2:y=2", f, 1, 1, (placement){ 2, 2, 1, 1, 0, 0 }, black);
        check_geometry("pad", f, 1, 1, (placement){ 0, 0, 1, 1, 0, 0 }, black);
        cases += 11;
    }
    static const char *twins[] = {
        "crop=w=64:h=32:x=10:y=6", "crop=w=51:h=27:x=100:y=50", "pad=w=200:h=100:x=-1:y=-1:color=0x3050a0",
        "pad=h=81:y=4:color=white", "pad=w=160:h=80:x=2:y=2:color=orange",
    };
    for (size_t i = 0; i < sizeof(twins) / sizeof(twins[0]); i++) {
        int odd = strstr(twins[i], "x=100") || strstr(twins[i], "h=81");
        check_twin(twins[i], AV_PIX_FMT_YUV420P, AV_PIX_FMT_NV12, odd ? 151 : 150, odd ? 77 : 78);
        check_twin(twins[i], AV_PIX_FMT_YUV420P10, AV_PIX_FMT_P010, odd ? 151 : 150, odd ? 77 : 78);
        cases += 2;
    }
    /* ffmpeg's pad values (drawutils' doubles), checked by tests/cli/croppad.sh on real clips too. */
    check_fill("black", AV_PIX_FMT_YUV420P, AVCOL_RANGE_MPEG, (int[]){ 16, 128, 128 });
    check_fill("black", AV_PIX_FMT_YUV420P10, AVCOL_RANGE_MPEG, (int[]){ 64, 514, 514 });
    check_fill("white", AV_PIX_FMT_YUV420P10, AVCOL_RANGE_MPEG, (int[]){ 943, 514, 514 });
    check_fill("black", AV_PIX_FMT_P010, AVCOL_RANGE_MPEG, (int[]){ 64, 514, 514 });
    check_fill("white", AV_PIX_FMT_YUV444P, AVCOL_RANGE_JPEG, (int[]){ 255, 128, 128 });
    check_fill("red", AV_PIX_FMT_YUV420P, AVCOL_RANGE_MPEG, (int[]){ 63, 102, 240 });
    cases += 6;
    if (tu_failures) {
        printf("test_croppad: %d of %d cases FAILED\n", tu_failures, cases);
        return 1;
    }
    printf("test_croppad: %d cases: crop/pad place every sample as defined on 12 layouts (odd sizes, 1x1), "
           "NV12/P010 equal their planar twins, fills are ffmpeg's: ok\n", cases);
    return 0;
}

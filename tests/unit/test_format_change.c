/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stream that changes format mid-way, on the CPU (issue 26): what counts
 * as a change (vkcu_format_change: the decision the job and the GPU ring
 * make), and the operators set up again for the new format
 * (vkcu_chain_reinit): after it, a chain with state (tnr's history, fps's
 * clock, scale's weights) gives exactly what a chain set up for the new
 * format from the start gives, while the chain left as it was refuses the
 * new frames. The GPU session's drain and rebuild run on the H200
 * (tests/gpu.d/streams.sh).
 */
#include <string.h>
#include <libavutil/error.h>

#include "ops/op.h"
#include "util/format.h"
#include "util/log.h"
#include "test_util.h"

typedef struct collect {
    int n;
    AVFrame *f[64];
} collect;

static int keep(void *opaque, AVFrame *f)
{
    collect *c = opaque;
    if (c->n >= 64)
        return AVERROR(ENOSPC);
    c->f[c->n++] = av_frame_clone(f);
    return c->f[c->n - 1] ? 0 : AVERROR(ENOMEM);
}

static void collect_free(collect *c)
{
    for (int i = 0; i < c->n; i++)
        av_frame_free(&c->f[i]);
    c->n = 0;
}

static vkcu_video_format format_of(enum AVPixelFormat pix, int w, int h)
{
    vkcu_video_format f;
    memset(&f, 0, sizeof(f));
    f.pix_fmt = pix;
    f.width = w;
    f.height = h;
    f.matrix = AVCOL_SPC_BT709;
    f.range = AVCOL_RANGE_MPEG;
    f.time_base = (AVRational){ 1, 25 };
    f.frame_rate = (AVRational){ 25, 1 };
    f.sar = (AVRational){ 1, 1 };
    return f;
}

/* Frame i of a noisy moving pattern, in the format's layout. */
static AVFrame *pattern(const vkcu_video_format *fmt, int i, uint64_t *seed)
{
    AVFrame *f = tu_frame(fmt->pix_fmt, fmt->width, fmt->height);
    if (!f)
        return NULL;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt->pix_fmt);
    int top = (1 << d->comp[0].depth) - 1;
    for (int c = 0; c < d->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(fmt->width, d->log2_chroma_w) : fmt->width;
        int h = c ? AV_CEIL_RSHIFT(fmt->height, d->log2_chroma_h) : fmt->height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                tu_set(f, c, x, y, (int)(((x + 3 * i) * top / (w + 8) + tu_rand(seed) % 9) % (top + 1)));
    }
    f->pts = i;
    f->duration = 1;
    f->color_range = fmt->range;
    f->colorspace = fmt->matrix;
    return f;
}

static int same_picture(const AVFrame *a, const AVFrame *b)
{
    if (a->format != b->format || a->width != b->width || a->height != b->height || a->pts != b->pts)
        return 0;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    for (int c = 0; c < d->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(a->width, d->log2_chroma_w) : a->width;
        int h = c ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (tu_get(a, c, x, y) != tu_get(b, c, x, y))
                    return 0;
    }
    return 1;
}

static void test_change_bits(void)
{
    vkcu_video_format a = format_of(AV_PIX_FMT_YUV420P, 208, 176), b = a;
    CHECK(vkcu_format_change(&a, &b) == 0, "the same format is no change");
    b.time_base = (AVRational){ 1, 90000 };
    b.frame_rate = (AVRational){ 30, 1 };
    b.field_order = 1;
    CHECK(vkcu_format_change(&a, &b) == 0, "timing and field order are no format change");
    b = a;
    b.width = 320;
    CHECK(vkcu_format_change(&a, &b) == VKCU_CHANGE_SIZE, "width: %d", vkcu_format_change(&a, &b));
    b = a;
    b.height = 240;
    CHECK(vkcu_format_change(&a, &b) == VKCU_CHANGE_SIZE, "height: %d", vkcu_format_change(&a, &b));
    b = a;
    b.pix_fmt = AV_PIX_FMT_YUV420P10LE;
    CHECK(vkcu_format_change(&a, &b) == VKCU_CHANGE_LAYOUT, "8 -> 10 bits: %d", vkcu_format_change(&a, &b));
    b.pix_fmt = AV_PIX_FMT_NV12;
    CHECK(vkcu_format_change(&a, &b) == VKCU_CHANGE_LAYOUT, "planar -> semi-planar: %d", vkcu_format_change(&a, &b));
    b = a;
    b.range = AVCOL_RANGE_JPEG;
    CHECK(vkcu_format_change(&a, &b) == VKCU_CHANGE_COLOUR, "range: %d", vkcu_format_change(&a, &b));
    b = a;
    b.matrix = AVCOL_SPC_BT470BG;
    b.width = 64;
    b.pix_fmt = AV_PIX_FMT_YUV422P;
    CHECK(vkcu_format_change(&a, &b) == (VKCU_CHANGE_SIZE | VKCU_CHANGE_LAYOUT | VKCU_CHANGE_COLOUR), "all: %d",
          vkcu_format_change(&a, &b));
    char buf[96];
    CHECK(!strcmp(vkcu_format_describe(&a, buf, sizeof(buf)), "yuv420p 208x176, bt709 tv"), "describe: %s", buf);
}

/* Runs frames [first, first + n) of `fmt` through `ch`, flushing at the end. */
static int feed(vkcu_chain *ch, const vkcu_video_format *fmt, int first, int n, collect *c)
{
    uint64_t seed = 0x5eed0000u + (uint64_t)first;
    for (int i = first; i < first + n; i++) {
        AVFrame *f = pattern(fmt, i, &seed);
        int ret = f ? vkcu_chain_feed_cpu(ch, 0, f, keep, c, NULL) : AVERROR(ENOMEM);
        av_frame_free(&f);
        if (ret < 0)
            return ret;
    }
    return vkcu_chain_feed_cpu(ch, 0, NULL, keep, c, NULL);
}

/* One chain over a stream whose format changes from `a` to `b` at frame 6
 * (flushed, then set up again) against a chain made for `b` from the start. */
static void test_reinit(const char *text, vkcu_video_format a, vkcu_video_format b, int size_bound)
{
    vkcu_chain ch, fresh, stale;
    vkcu_video_format out, out_fresh, out_stale;
    char err[256];
    collect got = { 0 }, want = { 0 }, before = { 0 };
    if (vkcu_chain_parse(text, &ch, err, sizeof(err)) < 0 || vkcu_chain_parse(text, &fresh, err, sizeof(err)) < 0 ||
        vkcu_chain_parse(text, &stale, err, sizeof(err)) < 0) {
        CHECK(0, "%s: %s", text, err);
        return;
    }
    CHECK(vkcu_chain_init(&ch, &a, &out, err, sizeof(err)) == 0, "%s: init: %s", text, err);
    CHECK(feed(&ch, &a, 0, 6, &before) == 0 && before.n > 0, "%s: %d frames before the change", text, before.n);
    CHECK(vkcu_chain_reinit(&ch, &b, &out, err, sizeof(err)) == 0, "%s: reinit: %s", text, err);
    CHECK(feed(&ch, &b, 6, 8, &got) == 0, "%s: frames after the change", text);
    CHECK(vkcu_chain_init(&fresh, &b, &out_fresh, err, sizeof(err)) == 0, "%s: fresh init: %s", text, err);
    CHECK(feed(&fresh, &b, 6, 8, &want) == 0, "%s: fresh chain", text);
    CHECK(got.n == want.n && got.n > 0, "%s: %d frames after the change, a fresh chain gives %d", text, got.n, want.n);
    CHECK(out.width == out_fresh.width && out.height == out_fresh.height && out.pix_fmt == out_fresh.pix_fmt,
          "%s: output format %dx%d, a fresh chain's %dx%d", text, out.width, out.height, out_fresh.width,
          out_fresh.height);
    for (int i = 0; i < got.n && i < want.n; i++)
        CHECK(same_picture(got.f[i], want.f[i]), "%s: frame %d after the change differs from a fresh chain's", text, i);
    /* The chain left set up for `a` refuses frames of `b` (its error said
     * quietly): the change must be seen. fps keeps no picture state. */
    collect junk = { 0 };
    CHECK(vkcu_chain_init(&stale, &a, &out_stale, err, sizeof(err)) == 0, "%s: stale init: %s", text, err);
    int level = vkcu_log_level();
    vkcu_set_log_level(VKCU_LOG_QUIET);
    int refused = feed(&stale, &b, 6, 2, &junk) < 0;
    vkcu_set_log_level((enum vkcu_log_level)level);
    CHECK(refused || !size_bound, "%s: a chain set up for %dx%d took %dx%d frames", text, a.width, a.height, b.width,
          b.height);
    collect_free(&junk);
    collect_free(&got);
    collect_free(&want);
    collect_free(&before);
    vkcu_chain_free(&ch);
    vkcu_chain_free(&fresh);
    vkcu_chain_free(&stale);
}

int main(void)
{
    test_change_bits();
    vkcu_video_format s8 = format_of(AV_PIX_FMT_YUV420P, 96, 64), l8 = format_of(AV_PIX_FMT_YUV420P, 128, 80);
    vkcu_video_format l10 = format_of(AV_PIX_FMT_YUV420P10LE, 128, 80);
    test_reinit("denoise=tnr:sigma=8", s8, l8, 1);
    test_reinit("denoise=tnr:sigma=8", l8, l10, 1);
    test_reinit("denoise=nlm:sigma=6", l10, s8, 1);
    test_reinit("scale=w=80:h=48", s8, l8, 1);
    test_reinit("scale=w=80:h=48:filter=lanczos,denoise=tnr", l8, l10, 1);
    test_reinit("crop=w=64:h=48,copy", s8, l10, 1);
    test_reinit("fps=30", s8, l8, 0);
    printf("%s\n", tu_failures ? "FAILED" : "format changes: decision bits and operators set up again");
    return tu_failures ? 1 : 0;
}
